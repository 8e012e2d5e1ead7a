#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>

#include "membership_fixtures.hpp"
#include "troupe/cluster/member.hpp"
#include "troupe/cluster/membership_errc.hpp"

using namespace troupe::cluster;
using membership_test::node;
using membership_test::parse_member;

TEST_CASE("member_status: names round-trip and unknown names are errors") {
  for (auto x : all_member_statuses) {
    auto parsed = parse_member_status(to_string(x));
    REQUIRE(parsed);
    CHECK(*parsed == x);
  }
  auto bad = parse_member_status("Up");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().category == "membership");
  CHECK(bad.error().code
        == static_cast<uint8_t>(membership_errc::unknown_status));
  CHECK(bad.error().message.find("\"Up\"") != std::string::npos);
}

TEST_CASE("member_status: the allowed-transition table, every pair") {
  // Akka's MemberStatus.allowedTransitions, written out as the set of
  // (from, to) pairs that are allowed; every other pair of the 7 x 7 is not.
  using enum member_status;
  const std::vector<std::pair<member_status, member_status>> allowed{
    {joining, weakly_up}, {joining, up},      {joining, leaving},
    {joining, down},      {joining, removed}, {weakly_up, up},
    {weakly_up, leaving}, {weakly_up, down},  {weakly_up, removed},
    {up, leaving},        {up, down},         {up, removed},
    {leaving, exiting},   {leaving, down},    {leaving, removed},
    {exiting, removed},   {exiting, down},    {down, removed},
  };
  int checked = 0;
  for (auto from : all_member_statuses) {
    for (auto to : all_member_statuses) {
      bool expected
        = std::find(allowed.begin(), allowed.end(), std::pair{from, to})
          != allowed.end();
      INFO(to_string(from) << " -> " << to_string(to));
      CHECK(is_allowed_transition(from, to) == expected);
      member m{node('a'), from, {}, 1};
      auto moved = m.with_status(to);
      CHECK(moved.has_value() == (expected || from == to));
      ++checked;
    }
  }
  CHECK(checked == 49);
}

TEST_CASE("member: a refused transition names the member and both statuses") {
  auto m = parse_member("a:up:1");
  auto moved = m.with_status(member_status::joining);
  REQUIRE_FALSE(moved);
  CHECK(moved.error().code
        == static_cast<uint8_t>(membership_errc::invalid_transition));
  CHECK(moved.error().message
        == "member a:2552#1: status transition up -> joining is not allowed "
           "(allowed from up: leaving, down, removed)");
  auto removed = member{node('a'), member_status::removed, {}, 1};
  CHECK(removed.with_status(member_status::up).error().message
        == "member a:2552#1: status transition removed -> up is not allowed "
           "(allowed from removed: none)");
}

TEST_CASE("member: with_up sets the up_number and the status") {
  auto m = member::joining(node('a'), {"web", "api", "web"});
  CHECK(m.roles == std::vector<std::string>{"api", "web"});
  CHECK(m.up_number == member::no_up_number);
  auto up = m.with_up(4);
  REQUIRE(up);
  CHECK(up->status == member_status::up);
  CHECK(up->up_number == 4);
  CHECK(up->has_role("web"));
  CHECK_FALSE(up->has_role("db"));
  CHECK_FALSE(parse_member("a:down:2").with_up(5));
}

TEST_CASE("member: is_older_than is lower up_number, ties by address") {
  auto [x, y, older] = GENERATE(table<std::string, std::string, bool>({
    {"a:up:1", "b:up:2", true},
    {"b:up:1", "a:up:2", true},
    {"a:up:2", "b:up:1", false},
    {"a:up:3", "b:up:3", true},
    {"b:up:3", "a:up:3", false},
    {"a:up:3", "b:joining", true},
    {"a:joining", "b:joining", true},
  }));
  INFO(x << " older than " << y);
  CHECK(parse_member(x).is_older_than(parse_member(y)) == older);
}

TEST_CASE("member: highest_priority_of keeps the higher status, then the "
          "lower up_number") {
  auto [x, y, kept] = GENERATE(table<std::string, std::string, std::string>({
    {"a:down:1", "a:up:1", "a:down:1"},
    {"a:exiting:1", "a:down:1", "a:down:1"},
    {"a:leaving:1", "a:exiting:1", "a:exiting:1"},
    {"a:up:1", "a:leaving:1", "a:leaving:1"},
    {"a:weakly_up", "a:up:1", "a:up:1"},
    {"a:joining", "a:weakly_up", "a:weakly_up"},
    {"a:joining", "a:up:2", "a:up:2"},
    {"a:up:2", "a:up:1", "a:up:1"},
    {"a:removed", "a:down:1", "a:removed"},
    {"a:up:1:x", "a:up:1:y", "a:up:1:x"},
    // records of one member never differ in app_version between correct
    // nodes; the lower one keeps the merge commutative anyway
    {"a:up:1@2", "a:up:1@1.5", "a:up:1@1.5"},
    {"a:up:1:x@2", "a:up:1:y@1", "a:up:1:x@2"},
  }));
  INFO(x << " vs " << y);
  auto mx = parse_member(x);
  auto my = parse_member(y);
  auto expected = parse_member(kept);
  CHECK(highest_priority_of(mx, my) == expected);
  CHECK(highest_priority_of(my, mx) == expected);
  CHECK(highest_priority_of(mx, mx) == mx);
}

TEST_CASE("member: to_string shows address, status, up_number and roles") {
  CHECK(to_string(parse_member("a:up:3:web,api"))
        == "a:2552#1 up (up_number 3, roles [api,web])");
  CHECK(to_string(parse_member("b:joining"))
        == "b:2552#1 joining (up_number none, roles [])");
  CHECK(to_string(parse_member("c:up:2@1.2-RC1"))
        == "c:2552#1 up (up_number 2, roles [], app_version 1.2.0-RC1)");
}

TEST_CASE("member: the singleton host order is the highest app_version, then "
          "the oldest, then the lowest address") {
  // x | y | x precedes y
  auto [x, y, precedes] = GENERATE(table<std::string, std::string, bool>({
    // one version: the age order
    {"a:up:1", "b:up:2", true},
    {"b:up:1", "a:up:2", true},
    {"a:up:3", "b:up:3", true},
    {"b:up:3", "a:up:3", false},
    // a higher version wins over age and address
    {"b:up:5@2", "a:up:1@1", true},
    {"a:up:1@1", "b:up:5@2", false},
    {"a:up:1", "b:up:9@0.0.1", false},
    // numerically: 1.10 is newer than 1.9
    {"a:up:2@1.10", "b:up:1@1.9", true},
    // a release is newer than its pre-release
    {"a:up:2@1.2.3", "b:up:1@1.2.3-RC1", true},
    // the same version: the oldest, then the address
    {"c:up:2@2", "d:up:3@2", true},
    {"d:up:3@2", "c:up:2@2", false},
    {"a:up:4@2.0", "b:up:4@2", true},
    // irreflexive
    {"a:up:1@2", "a:up:1@2", false},
  }));
  INFO(x << " before " << y);
  auto mx = parse_member(x);
  auto my = parse_member(y);
  CHECK(precedes_as_singleton_host(mx, my) == precedes);
  CHECK(by_singleton_preference{}(mx, my) == precedes);
  // A strict total order: exactly one of two distinct members precedes.
  if (mx.address != my.address)
    CHECK(precedes_as_singleton_host(my, mx) == !precedes);
  // The age order itself is untouched by the version.
  CHECK(mx.is_older_than(my)
        == (mx.up_number != my.up_number ? mx.up_number < my.up_number
                                         : mx.address < my.address));
}

TEST_CASE("member: someone stays while another member is joining, up or "
          "leaving, not when all others exit or are down") {
  using membership_test::members;
  struct row {
    std::string view;
    bool stays;
  };
  auto x = GENERATE(values<row>({
    {"a:exiting:1", false},
    {"a:exiting:1 b:exiting:2", false},
    {"a:exiting:1 b:down:2 c:exiting:3", false},
    {"a:exiting:1 b:leaving:2", true},
    {"a:exiting:1 b:up:2", true},
    {"a:exiting:1 b:weakly_up", true},
    {"a:exiting:1 b:joining", true},
    {"a:up:1", false},
  }));
  INFO(x.view);
  CHECK(someone_stays(members(x.view), node('a')) == x.stays);
}
