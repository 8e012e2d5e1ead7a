#include <catch2/catch.hpp>

#include <string>

#include "membership_fixtures.hpp"
#include "troupe/cluster/cluster_events.hpp"

using namespace troupe::cluster;
using membership_test::letter;
using membership_test::letters;
using membership_test::make_gossip;
using membership_test::node;

namespace {

/// Renders events compactly: "removed:b(exiting) up:c unreachable:d
/// leader:a role_leader:x=a".
std::string events(const std::vector<cluster_event>& xs) {
  struct visitor {
    std::string operator()(const member_joined& e) {
      return "joined:" + e.member.address.host;
    }
    std::string operator()(const member_weakly_up& e) {
      return "weakly_up:" + e.member.address.host;
    }
    std::string operator()(const member_up& e) {
      return "up:" + e.member.address.host;
    }
    std::string operator()(const member_left& e) {
      return "left:" + e.member.address.host;
    }
    std::string operator()(const member_exited& e) {
      return "exited:" + e.member.address.host;
    }
    std::string operator()(const member_downed& e) {
      return "downed:" + e.member.address.host;
    }
    std::string operator()(const member_removed& e) {
      CHECK(e.member.status == member_status::removed);
      return "removed:" + e.member.address.host + "("
             + to_string(e.previous_status) + ")";
    }
    std::string operator()(const unreachable_member& e) {
      return "unreachable:" + e.member.address.host;
    }
    std::string operator()(const reachable_member& e) {
      return "reachable:" + e.member.address.host;
    }
    std::string operator()(const leader_changed& e) {
      return "leader:" + letter(e.leader);
    }
    std::string operator()(const role_leader_changed& e) {
      return "role_leader:" + e.role + "=" + letter(e.leader);
    }
  };
  std::string result;
  for (const auto& x : xs) {
    if (!result.empty())
      result += ' ';
    result += std::visit(visitor{}, x);
  }
  return result;
}

} // namespace

TEST_CASE("cluster events: diff of two membership states, a table") {
  // before: members | observations; after: members | observations; self;
  // events in Akka's order
  auto [before, before_obs, after, after_obs, self, expected]
    = GENERATE(table<std::string, std::string, std::string, std::string, char,
                     std::string>({
      {"a:up:1", "", "a:up:1", "", 'a', ""},
      {"", "", "a:joining", "", 'a', "joined:a leader:a"},
      {"a:joining", "", "a:up:1", "", 'a', "up:a"},
      {"a:up:1", "", "a:up:1 b:joining c:up:2", "", 'a', "joined:b up:c"},
      {"a:up:1 b:joining", "", "a:up:1 b:weakly_up", "", 'a', "weakly_up:b"},
      {"a:up:1 b:weakly_up", "", "a:up:1 b:up:2", "", 'a', "up:b"},
      {"a:up:1 b:up:2", "", "a:up:1 b:leaving:2", "", 'a', "left:b"},
      {"a:up:1 b:leaving:2", "", "a:up:1 b:exiting:2", "", 'a', "exited:b"},
      {"a:up:1 b:up:2", "", "a:up:1 b:down:2", "", 'a', "downed:b"},
      // an up_number change alone is reported again as up
      {"a:up:1 b:up:3", "", "a:up:1 b:up:2", "", 'a', "up:b"},
      // removals come first, with the previous status
      {"a:up:1 b:exiting:2 c:down:3", "", "a:up:1 d:joining", "", 'a',
       "removed:b(exiting) removed:c(down) joined:d"},
      // the leader goes: removal, then the new leader
      {"a:exiting:1 b:up:2", "", "b:up:2", "", 'b', "removed:a(exiting)"},
      {"a:leaving:1 b:up:2", "", "a:exiting:1 b:up:2", "", 'b',
       "exited:a leader:b"},
      // reachability: newly unreachable or terminated, then reachable again
      {"a:up:1 b:up:2 c:up:3", "", "a:up:1 b:up:2 c:up:3", "a>b a!c", 'a',
       "unreachable:b unreachable:c"},
      {"a:up:1 b:up:2 c:up:3", "a>b a>c", "a:up:1 b:up:2 c:up:3", "a>c", 'a',
       "reachable:b"},
      {"a:up:1 b:up:2", "a>b", "a:up:1 b:up:2", "a>b", 'a', ""},
      // self is never reported (un)reachable, but it no longer leads
      // (ADR 0006: not even in its own view)
      {"a:up:1 b:up:2", "", "a:up:1 b:up:2", "b>a", 'a', "leader:b"},
      // an unreachable leader is replaced
      {"a:up:1 b:up:2 c:up:3", "", "a:up:1 b:up:2 c:up:3", "b>a", 'c',
       "unreachable:a leader:b"},
      {"a:up:1 b:down:2", "a>b", "a:up:1", "", 'a', "removed:b(down)"},
      // roles
      {"a:up:1:x", "", "a:up:1:x b:up:2:y", "", 'a', "up:b role_leader:y=b"},
      {"a:up:1:x b:up:2:x,y", "", "a:leaving:1:x b:up:2:x,y", "", 'a',
       "left:a"},
      {"a:up:1:x b:up:2:x", "", "a:down:1:x b:up:2:x", "", 'b',
       "downed:a leader:b role_leader:x=b"},
    }));
  INFO(before << " | " << before_obs << " => " << after << " | " << after_obs
              << " | self " << self);
  membership_state old_state{make_gossip(before, "", before_obs), node(self)};
  membership_state new_state{make_gossip(after, "", after_obs), node(self)};
  CHECK(events(diff(old_state, new_state)) == expected);
}

TEST_CASE("cluster events: the snapshot a subscriber gets first") {
  membership_state state{
    make_gossip("a:up:1:x b:up:2:y c:down:3 d:joining:-:y", "ab", "b>a a>c"),
    node('a')};
  auto s = snapshot(state);
  REQUIRE(s.members.size() == 4);
  CHECK(s.members[3].address == node('d'));
  REQUIRE(s.unreachable.size() == 1); // c; self (a) is left out
  CHECK(s.unreachable[0].address == node('c'));
  CHECK(letters(s.seen_by) == "ab");
  // b finds a unreachable: a leads neither the cluster nor its role x,
  // not even in its own view (ADR 0006).
  CHECK(letter(s.leader) == "b");
  REQUIRE(s.role_leaders.size() == 2);
  CHECK(letter(s.role_leaders.at("x")) == "-");
  CHECK(letter(s.role_leaders.at("y")) == "b");
  // A subscriber that starts from an empty state and applies the diff to
  // this state sees every member and the leader.
  membership_state empty{gossip{}, node('a')};
  CHECK(events(diff(empty, state))
        == "up:a up:b downed:c joined:d unreachable:c leader:b "
           "role_leader:y=b");
}

TEST_CASE("cluster events: to_string renders each event") {
  auto m = membership_test::parse_member("b:up:2");
  CHECK(to_string(cluster_event{member_up{m}})
        == "member_up b:2552#1 up (up_number 2, roles [])");
  auto gone = m;
  gone.status = member_status::removed;
  CHECK(to_string(cluster_event{member_removed{gone, member_status::down}})
        == "member_removed b:2552#1 removed (up_number 2, roles []) (was "
           "down)");
  CHECK(to_string(cluster_event{leader_changed{node('a')}})
        == "leader_changed a:2552#1");
  CHECK(to_string(cluster_event{leader_changed{}}) == "leader_changed none");
  CHECK(to_string(cluster_event{role_leader_changed{"web", std::nullopt}})
        == "role_leader_changed web none");
}
