// How far a graceful leave has come (leave_progress.hpp): the rule the
// coordinated shutdown's cluster phases wait on, one row per status.

#include <catch2/catch.hpp>

#include <optional>
#include <vector>

#include "membership_fixtures.hpp"
#include "troupe/cluster/leave_progress.hpp"

using namespace troupe::cluster;
using membership_test::node;

TEST_CASE("leave progress: each stage is reached by the statuses at or past "
          "it, and exiting counts as removed only when nobody stays") {
  struct row {
    std::optional<member_status> self; // none: no longer a member
    bool other_stays;                  // another member is up
    bool leaving, exiting, removed;    // reached per stage
  };
  using s = member_status;
  std::vector<row> rows{
    {s::joining, true, false, false, false},
    {s::weakly_up, true, false, false, false},
    {s::up, true, false, false, false},
    {s::leaving, true, true, false, false},
    {s::exiting, true, true, true, false},
    {s::exiting, false, true, true, true},
    {s::down, true, true, true, true},
    {s::removed, true, true, true, true},
    {std::nullopt, true, true, true, true},
  };
  for (auto& r : rows) {
    std::vector<member> members;
    std::optional<member> me;
    if (r.self) {
      me = member{node('a'), *r.self, {}, 1};
      members.push_back(*me);
    }
    if (r.other_stays)
      members.push_back(member{node('b'), s::up, {}, 2});
    INFO((r.self ? to_string(*r.self) : "not a member")
         << (r.other_stays ? ", b up" : ", alone"));
    auto* self = me ? &*me : nullptr;
    CHECK(leave_reached(leave_stage::leaving, self, members) == r.leaving);
    CHECK(leave_reached(leave_stage::exiting, self, members) == r.exiting);
    CHECK(leave_reached(leave_stage::removed, self, members) == r.removed);
  }
}
