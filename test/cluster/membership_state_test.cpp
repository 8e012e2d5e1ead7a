#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "membership_fixtures.hpp"
#include "troupe/cluster/membership_state.hpp"

using namespace troupe::cluster;
using membership_test::letter;
using membership_test::make_gossip;
using membership_test::node;
using membership_test::nodes;

namespace {

membership_state state_of(const std::string& members, const std::string& seen,
                          const std::string& observations, char self) {
  return membership_state{make_gossip(members, seen, observations), node(self)};
}

} // namespace

TEST_CASE("membership_state: convergence, a table") {
  // members | seen | observations (o>s unreachable, o!s terminated) | self |
  // exiting confirmed | convergence
  auto [members, seen, observations, self, confirmed, expected] = GENERATE(
    table<std::string, std::string, std::string, char, std::string, bool>({
      {"a:up:1 b:up:2", "ab", "", 'a', "", true},
      {"a:up:1 b:up:2", "a", "", 'a', "", false},
      // joining, weakly_up, exiting and down members need not have seen it
      {"a:up:1 b:joining", "a", "", 'a', "", true},
      {"a:up:1 b:weakly_up", "a", "", 'a', "", true},
      {"a:up:1 b:exiting:2", "a", "", 'a', "", true},
      {"a:up:1 b:down:2", "a", "", 'a', "", true},
      {"a:up:1 b:leaving:2", "a", "", 'a', "", false},
      // an unreachable member blocks unless it is down or exiting
      {"a:up:1 b:up:2 c:up:3", "abc", "a>c", 'a', "", false},
      {"a:up:1 b:up:2 c:joining", "ab", "a>c", 'a', "", false},
      {"a:up:1 b:up:2 c:down:3", "ab", "a>c", 'a', "", true},
      {"a:up:1 b:up:2 c:exiting:3", "ab", "b>c", 'a', "", true},
      {"a:up:1 b:up:2", "ab", "a!b", 'a', "", false},
      // what a down member observes does not count
      {"a:up:1 b:up:2 c:down:3", "ab", "c>b", 'a', "", true},
      // self is never an obstacle for itself
      {"a:up:1 b:up:2", "ab", "b>a", 'a', "", true},
      {"a:up:1 b:up:2", "ab", "b>a", 'b', "", false},
      // confirmed exiting members neither need to see nor to be reachable
      {"a:up:1 b:up:2 c:up:3", "ab", "a>c", 'a', "c", true},
      {"a:up:1 b:leaving:2", "a", "", 'a', "b", true},
    }));
  INFO(members << " | seen " << seen << " | " << observations << " | self "
               << self << " | confirmed " << confirmed);
  auto state = state_of(members, seen, observations, self);
  CHECK(state.convergence(nodes(confirmed)) == expected);
}

TEST_CASE("membership_state: leader, a table") {
  // members | observations | self | leader ("-" = none)
  auto [members, observations, self, expected]
    = GENERATE(table<std::string, std::string, char, std::string>({
      {"a:up:1 b:up:2", "", 'b', "a"},
      {"a:joining b:up:1", "", 'a', "b"},
      {"a:leaving:1 b:up:2", "", 'b', "a"},
      {"a:down:1 b:up:2", "", 'b', "b"},
      {"a:exiting:1 b:up:2", "", 'a', "b"},
      // unreachable members are skipped, self too (ADR 0006; Akka lets
      // self lead in its own view)
      {"a:up:1 b:up:2 c:up:3", "b>a", 'c', "b"},
      {"a:up:1 b:up:2 c:up:3", "b>a", 'a', "b"},
      {"a:up:1 b:up:2", "a>b b>a", 'b', "-"},
      // no up/leaving member: weakly_up, then joining, then exiting
      {"a:exiting:1 b:joining c:weakly_up", "", 'a', "c"},
      {"a:exiting:1 c:joining b:joining", "", 'a', "b"},
      {"a:exiting:1", "", 'a', "a"},
      {"a:down:1", "", 'a', "-"},
      {"", "", 'a', "-"},
    }));
  INFO(members << " | " << observations << " | self " << self);
  auto state = state_of(members, "", observations, self);
  CHECK(letter(state.leader()) == expected);
  CHECK(state.is_leader(node(expected[0])) == (expected != "-"));
}

TEST_CASE("membership_state: role leader among the members with the role") {
  auto state
    = state_of("a:up:1:x b:up:2:y c:up:3:x,y d:joining:-:z", "", "c>b", 'a');
  CHECK(letter(state.role_leader("x")) == "a");
  CHECK(letter(state.role_leader("y")) == "c");
  CHECK(letter(state.role_leader("z")) == "d");
  CHECK(letter(state.role_leader("none")) == "-");
  auto others = state.latest_gossip().members();
  others.erase(others.begin()); // all but a
  CHECK(letter(state.leader_of(others)) == "c");
}

TEST_CASE("membership_state: oldest by up_number among up and leaving, "
          "a table") {
  // members | role ("" = any) | oldest ("-" = none)
  auto [members, role, expected]
    = GENERATE(table<std::string, std::string, std::string>({
      {"a:up:2 b:up:1", "", "b"},
      {"a:up:1 b:up:1", "", "a"},
      {"a:joining b:up:3 c:leaving:2", "", "c"},
      {"a:exiting:1 b:up:2", "", "b"},
      {"a:down:1 b:up:2", "", "b"},
      {"a:weakly_up b:joining", "", "-"},
      {"a:up:1:x b:up:2:y c:up:3:y", "y", "b"},
      {"a:up:1:x", "y", "-"},
    }));
  INFO(members << " | role " << role);
  auto state = state_of(members, "", "", 'a');
  auto oldest = role.empty() ? state.oldest() : state.oldest(role);
  CHECK(letter(oldest ? std::optional{oldest->address} : std::nullopt)
        == expected);
}

TEST_CASE("membership_state: the singleton target is the oldest member of "
          "the highest app_version, the oldest stays the oldest, a table") {
  // members | role ("" = any) | oldest | singleton target ("-" = none)
  auto [members, role, oldest, target]
    = GENERATE(table<std::string, std::string, std::string, std::string>({
      // one version everywhere: the target is the oldest
      {"a:up:2 b:up:1 c:up:3", "", "b", "b"},
      {"a:up:1@1 b:up:2@1", "", "a", "a"},
      // a rolling update: the first new member up is the target at once
      {"a:up:1@1 b:up:2@1 c:up:3@1 d:up:4@2", "", "a", "d"},
      // ... and stays it as more new members come up (no move per restart)
      {"a:up:1@1 b:up:2@1 c:up:3@1 d:up:4@2 e:up:5@2", "", "a", "d"},
      {"b:up:2@1 c:up:3@1 d:up:4@2 e:up:5@2 f:up:6@2", "", "b", "d"},
      // a joining or weakly up new member is not a candidate yet
      {"a:up:1@1 d:joining@2", "", "a", "a"},
      {"a:up:1@1 d:weakly_up@2", "", "a", "a"},
      // a leaving new member still is (as the oldest is while leaving),
      // an exiting or down one no longer
      {"a:up:1@1 d:leaving:2@2", "", "a", "d"},
      {"a:up:1@1 d:exiting:2@2", "", "a", "a"},
      {"a:up:1@1 d:down:2@2", "", "a", "a"},
      // numerically, and a release over its pre-release
      {"a:up:1@1.9 b:up:2@1.10", "", "a", "b"},
      {"a:up:1@2-RC1 b:up:2@2", "", "a", "b"},
      // the role filter applies first
      {"a:up:1:x@1 b:up:2:y@2 c:up:3:x@1.5", "x", "a", "c"},
      {"a:up:1:x@1 b:up:2:y@2", "y", "b", "b"},
      {"a:up:1:x@2", "y", "-", "-"},
      {"a:joining@2", "", "-", "-"},
    }));
  INFO(members << " | role " << role);
  auto state = state_of(members, "", "", 'a');
  auto r = role.empty() ? std::nullopt : std::optional<std::string_view>{role};
  auto o = state.oldest(r);
  auto t = state.singleton_target(r);
  CHECK(letter(o ? std::optional{o->address} : std::nullopt) == oldest);
  CHECK(letter(t ? std::optional{t->address} : std::nullopt) == target);
  // The candidates' order starts with the target, and every node computes
  // the same target from the same members.
  auto candidates = singleton_candidates(state.latest_gossip(), r);
  CHECK(letter(candidates.empty() ? std::nullopt
                                  : std::optional{candidates.front().address})
        == target);
  CHECK(std::is_sorted(candidates.begin(), candidates.end(),
                       by_singleton_preference{}));
  for (char self : std::string{"abcdef"}) {
    auto other = membership_state{make_gossip(members), node(self)};
    auto t2 = other.singleton_target(r);
    CHECK(letter(t2 ? std::optional{t2->address} : std::nullopt) == target);
  }
}

TEST_CASE("membership_state: valid gossip targets are not self and not "
          "unreachable from self") {
  auto state = state_of("a:up:1 b:up:2 c:up:3 d:up:4", "", "a>b c>d", 'a');
  CHECK_FALSE(state.valid_node_for_gossip(node('a')));
  CHECK_FALSE(state.valid_node_for_gossip(node('b')));
  CHECK(state.valid_node_for_gossip(node('c')));
  CHECK(state.valid_node_for_gossip(node('d'))); // only c sees d unreachable
  CHECK(state.is_reachable_excluding_downed_observers(node('c')));
  CHECK_FALSE(state.is_reachable_excluding_downed_observers(node('d')));
  CHECK_FALSE(state.is_reachable_excluding_downed_observers(node('x')));
  REQUIRE(state.self_member() != nullptr);
  CHECK(state.self_member()->up_number == 1);
}

TEST_CASE("membership_state: min_nr_of_members overall and per role") {
  auto state = state_of("a:up:1:x b:joining:-:y c:joining:-:x", "", "", 'a');
  leader_actions_settings settings;
  CHECK(state.is_min_nr_of_members_fulfilled(settings));
  settings.min_nr_of_members = 3;
  CHECK(state.is_min_nr_of_members_fulfilled(settings));
  settings.min_nr_of_members = 4;
  CHECK_FALSE(state.is_min_nr_of_members_fulfilled(settings));
  settings.min_nr_of_members = 1;
  settings.min_nr_of_members_of_role = {{"x", 2}, {"y", 1}};
  CHECK(state.is_min_nr_of_members_fulfilled(settings));
  settings.min_nr_of_members_of_role["y"] = 2;
  CHECK_FALSE(state.is_min_nr_of_members_fulfilled(settings));
}
