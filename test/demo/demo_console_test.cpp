// Unit tests of the demo launcher's console (console_view.hpp): members
// sorted by up number, shards and client figures in one status line per
// interval, event lines only on change, a failed poll named as such; how a
// run ends (run_outcome.hpp).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "console_view.hpp"
#include "run_outcome.hpp"

using namespace std::chrono_literals;
using namespace troupe::demo;
using troupe::demo::client::load_counters;

namespace {

std::string short_name(std::string_view address) {
  return "n" + std::string{address.substr(10, 1)};
}

member_row member(int n, const char* status, int32_t up,
                  bool reachable = true) {
  return {fmt::format("127.0.0.1:{}#{}", n, n), status, reachable, up};
}

// Three up members; n3 joined first (up number 1) and is the oldest.
cluster_snapshot three_up() {
  cluster_snapshot s;
  s.members_answered = true;
  s.members = {member(1, "up", 2), member(2, "up", 3), member(3, "up", 1)};
  s.leader = "127.0.0.1:1#1";
  s.oldest = "127.0.0.1:3#3";
  s.singleton_host = "127.0.0.1:3#3";
  s.singleton_token = 1;
  s.lease_holder = "127.0.0.1:3#3";
  s.lease_token = 1;
  s.shards_answered = true;
  s.shards = {{"127.0.0.1:1#1", {"1", "2"}}, {"127.0.0.1:3#3", {"3"}}};
  return s;
}

load_counters counters(std::chrono::nanoseconds at, uint64_t acked,
                       uint64_t in_flight = 0, uint64_t behind = 0) {
  load_counters c;
  c.at = at;
  c.acked = acked;
  c.sent = acked + in_flight;
  c.in_flight = in_flight;
  c.behind = behind;
  c.recent_p99 = 11ms;
  c.recent_seconds = 5;
  return c;
}

} // namespace

TEST_CASE("console: members are sorted by up number, never-up ones last") {
  auto s = three_up();
  s.members.push_back(member(4, "joining", 0));
  s.members[1].reachable = false;
  CHECK(members_line(s, short_name)
        == "members (by up number): n3 up (oldest), n1 up (leader), n2 up "
           "unreachable, n4 joining");
  cluster_snapshot none;
  none.members_answered = true;
  CHECK(members_line(none, short_name) == "members (by up number): none");
}

TEST_CASE("console: the singleton line names a missing host and holder") {
  auto s = three_up();
  CHECK(singleton_line(s, short_name)
        == "singleton scheduler: n3 token 1 | its lease: n3 token 1");
  s.singleton_host.reset();
  s.singleton_token.reset();
  s.lease_holder.reset();
  CHECK(singleton_line(s, short_name)
        == "singleton scheduler: none reported | its lease: none reported");
}

TEST_CASE("console: shards allocated, none yet, or no answer") {
  auto [what, answered, regions, expected]
    = GENERATE(table<std::string, bool, size_t, std::string>({
      {"allocated", true, 2, "shards n1 2, n3 1"},
      {"the coordinator has none yet", true, 0, "shards none allocated yet"},
      {"no node answered", false, 0, "shards: no answer"},
    }));
  CAPTURE(what);
  auto s = three_up();
  s.shards_answered = answered;
  s.shards.resize(regions);
  CHECK(shards_text(s, short_name) == expected);
}

TEST_CASE("console: shards are listed by node name, and regions that all "
          "host none are none allocated yet") {
  auto s = three_up();
  s.shards = {{"127.0.0.1:3#3", {"3"}}, {"127.0.0.1:1#1", {"1", "2"}}};
  CHECK(shards_text(s, short_name) == "shards n1 2, n3 1");
  s.shards = {{"127.0.0.1:3#3", {}}, {"127.0.0.1:1#1", {}}};
  CHECK(shards_text(s, short_name) == "shards none allocated yet");
}

TEST_CASE("console: the client's rate is the acked delta over the time "
          "between the two samples") {
  auto [what, before, now, expected]
    = GENERATE(table<std::string, load_counters, load_counters, std::string>({
      {"steady", counters(1s, 200), counters(2s, 400),
       "client 400 acked (+200 in 1.00s: 200/s), 0 failed, 0 in flight, p99 "
       "11ms (last 5s)"},
      {"a slow poll: the window is longer, the rate still agrees",
       counters(1s, 200), counters(2500ms, 500),
       "client 500 acked (+300 in 1.50s: 200/s), 0 failed, 0 in flight, p99 "
       "11ms (last 5s)"},
      {"every worker busy, deposits waiting", counters(10s, 1000),
       counters(11s, 1000, 8, 180),
       "client 1000 acked (+0 in 1.00s: 0/s), 0 failed, 8 in flight, 180 "
       "behind schedule, p99 11ms (last 5s)"},
      {"the first line counts from the load's start", load_counters{},
       counters(500ms, 90, 1),
       "client 90 acked (+90 in 0.50s: 180/s), 0 failed, 1 in flight, p99 "
       "11ms (last 5s)"},
    }));
  CAPTURE(what);
  CHECK(client_text(before, now) == expected);
  auto quiet = now;
  quiet.recent_p99 = 0us;
  CHECK_THAT(client_text(before, quiet),
             Catch::EndsWith(", no ack in the last 5s"));
}

TEST_CASE("console: events on change, one status line per interval") {
  console_view v{1s};
  auto s = three_up();
  // The first poll: the members and the singleton, then the status.
  auto lines = v.on_poll(s, std::nullopt, 0ms, short_name);
  CHECK(lines
        == std::vector<std::string>{
          "members (by up number): n3 up (oldest), n1 up (leader), n2 up",
          "singleton scheduler: n3 token 1 | its lease: n3 token 1",
          "status: 3 up | shards n1 2, n3 1"});
  // Nothing changed and no status due: nothing.
  CHECK(v.on_poll(s, std::nullopt, 400ms, short_name).empty());
  // A member unreachable: its event at once, the status when due (a poll
  // loop of 1s may come a little early).
  s.members[2].reachable = false;
  CHECK(v.on_poll(s, std::nullopt, 600ms, short_name)
        == std::vector<std::string>{"members (by up number): n3 up unreachable "
                                    "(oldest), n1 up (leader), n2 up"});
  CHECK(v.on_poll(s, std::nullopt, 950ms, short_name)
        == std::vector<std::string>{"status: 2 up | shards n1 2, n3 1"});
  // A failed poll: no event (nothing known changed), the status says so.
  cluster_snapshot failed;
  CHECK(
    v.on_poll(failed, std::nullopt, 2000ms, short_name)
    == std::vector<std::string>{"status: no node answered the poll within 1s"});
  // The same cluster answers again: no repeated events.
  CHECK(v.on_poll(s, std::nullopt, 2100ms, short_name).empty());
}

TEST_CASE("console: consecutive status lines' acked counts differ by the "
          "delta they show, and the best rate is kept") {
  console_view v{1s};
  auto s = three_up();
  v.on_poll(s, counters(1s, 200), 1s, short_name);
  auto lines = v.on_poll(s, counters(2s, 410), 2s, short_name);
  REQUIRE(!lines.empty());
  CHECK_THAT(lines.back(), Catch::Contains("410 acked (+210 in 1.00s: 210/s)"));
  lines = v.on_poll(s, counters(4s, 610), 4s, short_name);
  CHECK_THAT(lines.back(), Catch::Contains("610 acked (+200 in 2.00s: 100/s)"));
  CHECK(v.best_rate() == Approx(210));
}

TEST_CASE("run outcome: interrupted is never judged, setup errors have no "
          "verdict") {
  auto [what, interrupted, setup_failed, completed, passed, end, code]
    = GENERATE(table<std::string, bool, bool, bool, bool, run_end, int>({
      {"a run that passed", false, false, true, true, run_end::judged, 0},
      {"a run that failed a check", false, false, true, false, run_end::judged,
       1},
      {"a node did not start", false, true, false, false, run_end::setup_error,
       2},
      {"the run did not complete", false, false, false, false,
       run_end::setup_error, 2},
      {"interrupted under load", true, false, true, true, run_end::interrupted,
       130},
      {"interrupted while the cluster formed", true, true, false, false,
       run_end::interrupted, 130},
    }));
  CAPTURE(what);
  auto got = end_of_run(interrupted, setup_failed, completed);
  CHECK(got == end);
  CHECK(exit_code(got, passed) == code);
}

TEST_CASE("run outcome: an interrupted run says so instead of a verdict") {
  auto text = interrupted_text("running under load", "/tmp/x");
  CHECK(text
        == "interrupted (SIGINT or SIGTERM) while running under load: the run "
           "did not end, so it is not judged (files: /tmp/x)\nINTERRUPTED\n");
  CHECK_THAT(text, !Catch::Contains("PASS"));
}
