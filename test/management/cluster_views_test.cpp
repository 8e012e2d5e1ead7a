// The members view of membership states written in the membership tests'
// notation (membership_fixtures.hpp): leader, oldest and reachability as
// the cluster core computes them.

#include <map>
#include <optional>

#include <catch2/catch.hpp>

#include "membership_fixtures.hpp"
#include "troupe/management/cluster_views.hpp"
#include "troupe/management/errc.hpp"

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

TEST_CASE("management: the members view shows each member's app_version and "
          "the singleton target apart from the oldest") {
  // A rolling update: c and d (version 2) are up; a is the oldest, d the
  // target (2.0.0 is newer than c's 2.0.0-RC1).
  auto g = make_gossip("a:up:1@1 b:up:2:web@1 c:up:3@2.0-RC1 d:up:4:web@2");
  membership_state s{g, node('b')};
  auto v = members_of(s);
  REQUIRE(v.oldest);
  CHECK(*v.oldest == "a:2552#1");
  REQUIRE(v.singleton_target);
  CHECK(*v.singleton_target == "d:2552#1");
  REQUIRE(v.members.size() == 4);
  CHECK(v.members[0].app_version == "1.0.0");
  CHECK(v.members[2].app_version == "2.0.0-RC1");
  CHECK(v.members[3].app_version == "2.0.0");
  // With a role: among the members with it.
  v = members_of(s, "web");
  CHECK(*v.oldest == "b:2552#1");
  CHECK(*v.singleton_target == "d:2552#1");
  // One version: the target is the oldest.
  auto same
    = members_of(membership_state{make_gossip("a:up:2 b:up:1"), node('a')});
  CHECK(*same.singleton_target == "b:2552#1");
  CHECK(same.members[0].app_version == "0.0.0");
  CHECK(!members_of(s, "nobody").singleton_target);
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

TEST_CASE("management: a member address names one member, with or without "
          "its uid") {
  using troupe::management::errc;
  using troupe::management::find_member;
  // b restarted: the view still holds the old incarnation (uid 1, down) and
  // the new one (uid 7).
  auto g = make_gossip("a:up:1 b:down:2 c:up:3");
  auto members = g.members();
  unique_address b7{"b", 2552, 7};
  members.push_back(
    member{b7, member_status::joining, {}, member::no_up_number});
  membership_state s{gossip{members}, node('a')};
  struct row {
    const char* address;
    std::optional<unique_address> want;
    errc fault;
  };
  std::vector<row> rows{
    {"a:2552#1", node('a'), errc::none},
    {"a:2552", node('a'), errc::none},
    {"b:2552#1", node('b'), errc::none},
    {"b:2552", b7, errc::none}, // the newest incarnation
    {"b:2552#7", b7, errc::none},
    {"b:2552#2", std::nullopt, errc::unknown_member},
    {"z:2552", std::nullopt, errc::unknown_member},
    {"a:2553", std::nullopt, errc::unknown_member},
    {"a", std::nullopt, errc::invalid_address},
    {"a:port", std::nullopt, errc::invalid_address},
    {"a:2552#x", std::nullopt, errc::invalid_address},
    {"", std::nullopt, errc::invalid_address},
  };
  for (auto& r : rows) {
    INFO(r.address);
    auto got = find_member(s, r.address);
    if (r.want) {
      REQUIRE(got);
      CHECK(*got == *r.want);
    } else {
      REQUIRE_FALSE(got);
      CHECK(got.error().code == static_cast<uint8_t>(r.fault));
      CHECK_THAT(got.error().message, Catch::Contains(r.address));
    }
  }
}

TEST_CASE("management: member counts cover every status and the "
          "unreachable") {
  auto g
    = make_gossip("a:up:1 b:up:2 c:leaving:3 d:joining e:down:4", "", "a>b");
  membership_state s{g, node('a')};
  auto counts = troupe::management::count_members(s);
  std::map<std::string, uint64_t> by(counts.by_status.begin(),
                                     counts.by_status.end());
  CHECK(by.size() == 7);
  CHECK(by["up"] == 2);
  CHECK(by["leaving"] == 1);
  CHECK(by["joining"] == 1);
  CHECK(by["down"] == 1);
  CHECK(by["weakly_up"] == 0);
  CHECK(by["exiting"] == 0);
  CHECK(by["removed"] == 0);
  CHECK(counts.unreachable == 1);
}

TEST_CASE("management: the members view shows this node's cluster "
          "incarnation, its merge mark and the other clusters it met") {
  auto g = make_gossip("a:up:1 b:up:2");
  membership_state plain{g, node('a')};
  auto none = members_of(plain);
  CHECK_FALSE(none.incarnation);
  CHECK_FALSE(none.merging_into);
  CHECK(none.foreign_clusters.empty());
  cluster_incarnation own{
    0x4d2, wall_time{std::chrono::milliseconds{1'700'000'000'000}}};
  cluster_incarnation other{
    0xabc, wall_time{std::chrono::milliseconds{1'600'000'000'000}}};
  g.set_incarnation(own);
  g.mark_merging_into(other);
  membership_state s{g, node('a')};
  auto v = members_of(s);
  REQUIRE(v.incarnation);
  CHECK(*v.incarnation == "00000000000004d2@2023-11-14T22:13:20.000Z");
  REQUIRE(v.merging_into);
  CHECK(*v.merging_into == "0000000000000abc@2020-09-13T12:26:40.000Z");
  incarnation_report report{own, other, {}};
  foreign_cluster met;
  met.incarnation = other;
  met.size = 5;
  met.seen_via = node('x');
  met.last_seen = wall_time{std::chrono::milliseconds{1'700'000'001'250}};
  foreign_cluster unsized;
  unsized.incarnation = cluster_incarnation{7, other.founded_at};
  unsized.seen_via = node('y');
  unsized.merging_into = other;
  report.foreign = {met, unsized};
  troupe::management::add_foreign_clusters(v, report);
  REQUIRE(v.foreign_clusters.size() == 2);
  auto& f = v.foreign_clusters[0];
  CHECK(f.incarnation == to_string(other));
  CHECK(f.size == 5u);
  CHECK(f.seen_via == "x:2552#1");
  CHECK(f.last_seen == "2023-11-14T22:13:21.250Z");
  CHECK_FALSE(f.merging_into);
  CHECK_FALSE(v.foreign_clusters[1].size);
  CHECK(v.foreign_clusters[1].merging_into == to_string(other));
}
