#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "membership_fixtures.hpp"
#include "troupe/cluster/membership_state.hpp"

using namespace troupe::cluster;
using namespace std::chrono_literals;
using membership_test::make_gossip;
using membership_test::member_specs;
using membership_test::node;
using membership_test::nodes;

namespace {

const wall_time now{std::chrono::hours{500000}};

/// Renders the actions as "b:joining>up c:leaving>exiting".
std::string actions(const leader_actions_result& r) {
  std::string result;
  for (const auto& a : r.actions) {
    if (!result.empty())
      result += ' ';
    result += a.address.host + ':' + to_string(a.from) + '>' + to_string(a.to);
  }
  return result;
}

} // namespace

TEST_CASE("leader actions: moves and removals at convergence, a table") {
  // members | seen | observations | self | exiting confirmed |
  // min_nr_of_members | verdict | members after | actions
  auto [members, seen, observations, self, confirmed, min_nr, verdict, after,
        moves]
    = GENERATE(table<std::string, std::string, std::string, char, std::string,
                     size_t, leader_actions_verdict, std::string, std::string>({
      {"a:joining", "a", "", 'a', "", 1, leader_actions_verdict::changed,
       "a:up:1", "a:joining>up"},
      {"a:up:1 b:joining c:joining", "a", "", 'a', "", 1,
       leader_actions_verdict::changed, "a:up:1 b:up:2 c:up:3",
       "b:joining>up c:joining>up"},
      {"a:up:1 b:weakly_up", "a", "", 'a', "", 1,
       leader_actions_verdict::changed, "a:up:1 b:up:2", "b:weakly_up>up"},
      // up_numbers continue after the highest of any member
      {"a:up:1 b:down:5 c:joining", "a", "", 'a', "", 1,
       leader_actions_verdict::changed, "a:up:1 b:down:5 c:up:6",
       "c:joining>up"},
      {"a:up:1 b:leaving:2", "ab", "", 'a', "", 1,
       leader_actions_verdict::changed, "a:up:1 b:exiting:2",
       "b:leaving>exiting"},
      {"a:up:1 b:exiting:2", "a", "a>b", 'a', "", 1,
       leader_actions_verdict::changed, "a:up:1", "b:exiting>removed"},
      {"a:up:1 b:down:2", "a", "a>b", 'a', "", 1,
       leader_actions_verdict::changed, "a:up:1", "b:down>removed"},
      {"a:up:1 b:exiting:2", "a", "", 'a', "b", 1,
       leader_actions_verdict::changed, "a:up:1", "b:exiting>removed"},
      // seen as unreachable only by a down member: still removed
      {"a:up:1 b:down:2 c:down:3", "a", "c>b", 'a', "", 1,
       leader_actions_verdict::changed, "a:up:1 c:down:3", "b:down>removed"},
      // a reachable down member waits until it is unreachable
      {"a:up:1 b:down:2", "a", "", 'a', "", 1,
       leader_actions_verdict::unchanged, "a:up:1 b:down:2", ""},
      {"a:up:1 b:leaving:2 c:joining d:down:3", "ab", "a>d", 'a', "", 1,
       leader_actions_verdict::changed, "a:up:1 b:exiting:2 c:up:4",
       "b:leaving>exiting c:joining>up d:down>removed"},
      // min_nr_of_members holds joining members back
      {"a:joining b:joining", "", "", 'a', "", 3,
       leader_actions_verdict::unchanged, "a:joining b:joining", ""},
      {"a:joining b:joining", "", "", 'a', "", 2,
       leader_actions_verdict::changed, "a:up:1 b:up:2",
       "a:joining>up b:joining>up"},
      {"a:up:1 b:leaving:2 c:joining", "ab", "", 'a', "", 4,
       leader_actions_verdict::changed, "a:up:1 b:exiting:2 c:joining",
       "b:leaving>exiting"},
      // only the leader, only at convergence
      {"a:up:1 b:up:2 c:joining", "ab", "", 'b', "", 1,
       leader_actions_verdict::not_leader, "a:up:1 b:up:2 c:joining", ""},
      {"a:up:1 b:up:2 c:joining", "a", "", 'a', "", 1,
       leader_actions_verdict::no_convergence, "a:up:1 b:up:2 c:joining", ""},
      {"a:up:1 b:up:2 c:joining", "ab", "b>c", 'a', "", 1,
       leader_actions_verdict::no_convergence, "a:up:1 b:up:2 c:joining", ""},
      // a node that others find unreachable does not lead (ADR 0006)...
      {"a:up:1 b:up:2", "ab", "b>a", 'a', "", 1,
       leader_actions_verdict::not_leader, "a:up:1 b:up:2", ""},
      // ...unless only down members do
      {"a:exiting:1 b:down:2", "", "b>a", 'a', "", 1,
       leader_actions_verdict::unchanged, "a:exiting:1 b:down:2", ""},
      // the leader does not remove itself
      {"a:exiting:1", "", "", 'a', "a", 1, leader_actions_verdict::unchanged,
       "a:exiting:1", ""},
    }));
  INFO(members << " | seen " << seen << " | " << observations << " | self "
               << self << " | confirmed " << confirmed << " | min " << min_nr);
  membership_state state{make_gossip(members, seen, observations), node(self)};
  leader_actions_settings settings;
  settings.min_nr_of_members = min_nr;
  auto result = leader_actions(state, nodes(confirmed), now, settings);
  CHECK(to_string(result.verdict) == std::string{to_string(verdict)});
  CHECK(member_specs(result.next) == after);
  CHECK(actions(result) == moves);
  CHECK(check_invariants(result.next).value_or("ok") == "ok");
  for (const auto& a : result.actions)
    if (a.to == member_status::removed)
      CHECK(result.next.tombstones().at(a.address) == now);
  // Not versioned: the caller stamps the change.
  CHECK(result.next.version() == state.latest_gossip().version());
}

TEST_CASE("leader actions: an action names the member, both statuses and "
          "the up_number") {
  membership_state state{make_gossip("a:up:1 b:joining", "a"), node('a')};
  auto result = leader_actions(state, {}, now, {});
  REQUIRE(result.actions.size() == 1);
  CHECK(to_string(result.actions[0]) == "b:2552#1 joining -> up (up_number 2)");
}

TEST_CASE("leader actions: tombstones older than "
          "prune_gossip_tombstones_after are dropped") {
  auto g = make_gossip("a:up:1 b:down:2 c:down:3", "a");
  g.remove(node('b'), now - 24h - 1ms);
  g.remove(node('c'), now - 24h + 1ms);
  membership_state state{g, node('a')};
  auto result = leader_actions(state, {}, now, {});
  CHECK(result.verdict == leader_actions_verdict::changed);
  CHECK(result.actions.empty());
  CHECK(result.tombstones_pruned);
  CHECK(result.next.tombstones().count(node('b')) == 0);
  CHECK(result.next.tombstones().count(node('c')) == 1);
  leader_actions_settings longer;
  longer.prune_gossip_tombstones_after = 48h;
  auto kept = leader_actions(state, {}, now, longer);
  CHECK(kept.verdict == leader_actions_verdict::unchanged);
  CHECK_FALSE(kept.tombstones_pruned);
}

TEST_CASE("leader actions: joining members move to weakly_up while "
          "convergence is blocked, a table") {
  // members | seen | observations | self | min_nr_of_members | verdict |
  // members after
  auto [members, seen, observations, self, min_nr, verdict, after]
    = GENERATE(table<std::string, std::string, std::string, char, size_t,
                     leader_actions_verdict, std::string>({
      {"a:up:1 b:up:2 c:joining", "ab", "a>b", 'a', 1,
       leader_actions_verdict::changed, "a:up:1 b:up:2 c:weakly_up"},
      // an unreachable joining member stays joining
      {"a:up:1 b:up:2 c:joining d:joining", "ab", "a>b a>d", 'a', 1,
       leader_actions_verdict::changed, "a:up:1 b:up:2 c:weakly_up d:joining"},
      // only unreachability seen by a down member does not hold it back
      {"a:up:1 b:up:2 c:down:3 d:joining", "a", "c>d", 'a', 1,
       leader_actions_verdict::changed, "a:up:1 b:up:2 c:down:3 d:weakly_up"},
      {"a:up:1 b:up:2 c:joining", "ab", "a>b", 'a', 4,
       leader_actions_verdict::unchanged, "a:up:1 b:up:2 c:joining"},
      {"a:up:1 b:up:2 c:joining", "ab", "a>b", 'b', 1,
       leader_actions_verdict::not_leader, "a:up:1 b:up:2 c:joining"},
      {"a:up:1 b:up:2 c:joining", "ab", "", 'a', 1,
       leader_actions_verdict::has_convergence, "a:up:1 b:up:2 c:joining"},
    }));
  INFO(members << " | seen " << seen << " | " << observations << " | self "
               << self << " | min " << min_nr);
  membership_state state{make_gossip(members, seen, observations), node(self)};
  leader_actions_settings settings;
  settings.min_nr_of_members = min_nr;
  auto result = move_joining_to_weakly_up(state, {}, settings);
  CHECK(to_string(result.verdict) == std::string{to_string(verdict)});
  CHECK(member_specs(result.next) == after);
  for (const auto& a : result.actions) {
    CHECK(a.from == member_status::joining);
    CHECK(a.to == member_status::weakly_up);
  }
}
