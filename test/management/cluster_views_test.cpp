// The members view of membership states written in the membership tests'
// notation (membership_fixtures.hpp): leader, oldest and reachability as
// the cluster core computes them.

#include <catch2/catch.hpp>

#include "membership_fixtures.hpp"
#include "troupe/management/cluster_views.hpp"

using namespace troupe;
using namespace troupe::cluster;
using namespace membership_test;
using troupe::management::members_of;

TEST_CASE("management: the members view keeps leader, oldest and "
          "reachability apart") {
  // a is the leader (lowest address among up members), c the oldest
  // (lowest up number), the oldest with role web is b; a sees d
  // unreachable, c sees it terminated.
  auto g = make_gossip("a:up:3 b:up:2:web c:up:1 d:up:4:web,api e:joining", "",
                       "a>d c!d");
  membership_state s{g, node('b')};
  auto v = members_of(s);
  CHECK(v.self == "b:2552#1");
  REQUIRE(v.leader);
  CHECK(*v.leader == "a:2552#1");
  REQUIRE(v.oldest);
  CHECK(*v.oldest == "c:2552#1");
  REQUIRE(v.members.size() == 5);
  CHECK(v.members[0].address == "a:2552#1");
  CHECK(v.members[0].status == "up");
  CHECK(v.members[0].up_number == 3);
  CHECK(v.members[1].roles == std::vector<std::string>{"web"});
  CHECK(v.members[3].roles == std::vector<std::string>{"api", "web"});
  CHECK_FALSE(v.members[3].reachable);
  CHECK(v.members[2].reachable);
  CHECK(v.members[4].status == "joining");
  CHECK(v.members[4].up_number == 0); // never up
  REQUIRE(v.unreachable.size() == 1);
  CHECK(v.unreachable[0].address == "d:2552#1");
  CHECK(v.unreachable[0].observed_by
        == std::vector<std::string>{"a:2552#1", "c:2552#1"});
  // The oldest with a role.
  v = members_of(s, "web");
  REQUIRE(v.oldest);
  CHECK(*v.oldest == "b:2552#1");
  CHECK(!members_of(s, "nobody").oldest);
}

TEST_CASE("management: the members view of a node alone and joining has no "
          "leader and no oldest") {
  membership_state s{make_gossip("a:joining"), node('a')};
  auto v = members_of(s);
  CHECK(v.self == "a:2552#1");
  CHECK(!v.oldest);
  CHECK(v.unreachable.empty());
  REQUIRE(v.members.size() == 1);
  CHECK(v.members[0].reachable);
}
