// The coordinated shutdown's core: phase order, timeouts, reasons, late
// tasks (shutdown_sequence.hpp). Simulated time only.

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "troupe/runtime/shutdown_sequence.hpp"

using namespace troupe::runtime;
using namespace std::chrono_literals;

namespace {

const timestamp t0{std::chrono::hours{1}};

std::vector<std::string> names(const shutdown_sequence& s,
                               const std::vector<size_t>& ids) {
  std::vector<std::string> out;
  for (auto id : ids)
    out.push_back(s.task_name(id));
  return out;
}

} // namespace

TEST_CASE("shutdown phases: Akka's order and defaults, plus release_leases "
          "before the actor system stops") {
  auto& all = all_shutdown_phases();
  std::vector<std::string> got;
  for (auto p : all)
    got.emplace_back(to_string(p));
  CHECK(got
        == std::vector<std::string>{
          "before_service_unbind", "service_unbind", "service_requests_done",
          "service_stop", "before_cluster_shutdown",
          "cluster_sharding_shutdown_region", "cluster_leave",
          "cluster_exiting", "cluster_exiting_done", "cluster_shutdown",
          "release_leases", "before_actor_system_terminate",
          "actor_system_terminate"});
  for (auto p : all)
    CHECK(parse_shutdown_phase(to_string(p)) == p);
  CHECK_FALSE(parse_shutdown_phase("cluster-leave"));
  auto d = shutdown_timeouts::defaults();
  CHECK(d.of(shutdown_phase::cluster_sharding_shutdown_region) == 10s);
  CHECK(d.of(shutdown_phase::cluster_exiting) == 10s);
  CHECK(d.of(shutdown_phase::actor_system_terminate) == 10s);
  CHECK(d.of(shutdown_phase::cluster_leave) == 5s);
  CHECK(d.of(shutdown_phase::release_leases) == 5s);
  // 10 phases of 5 s and 3 of 10 s: what the Kubernetes manifests' grace
  // period must exceed (docs/guides/operations.md).
  CHECK(d.total() == 80s);
}

TEST_CASE(
  "shutdown reasons: the cluster's stops exit 1 (a merge 75), the others 0") {
  struct row {
    shutdown_reason reason;
    const char* name;
    int code;
  };
  for (auto r : std::vector<row>{
         {shutdown_reason::signal, "signal", 0},
         {shutdown_reason::application, "application", 0},
         {shutdown_reason::cluster_leaving, "cluster_leaving", 0},
         {shutdown_reason::cluster_downing, "cluster_downing", 1},
         {shutdown_reason::cluster_removed, "cluster_removed", 1},
         {shutdown_reason::cluster_join_unsuccessful,
          "cluster_join_unsuccessful", 1},
         // 75, EX_TEMPFAIL: "restart me" (the supervisor restarts it and it
         // joins the cluster it merges into), told apart from a failure.
         {shutdown_reason::cluster_merge, "cluster_merge", 75},
       }) {
    INFO(r.name);
    CHECK(to_string(r.reason) == r.name);
    CHECK(exit_code(r.reason) == r.code);
    CHECK(stopped_by_cluster(r.reason) == (r.code != 0));
  }
}

TEST_CASE("shutdown sequence: phases run in order, a phase's tasks start "
          "together, empty phases pass at once") {
  shutdown_sequence s{shutdown_timeouts::defaults()};
  auto leave = s.add_task(shutdown_phase::cluster_leave, "leave");
  auto region_a
    = s.add_task(shutdown_phase::cluster_sharding_shutdown_region, "region a");
  auto region_b
    = s.add_task(shutdown_phase::cluster_sharding_shutdown_region, "region b");
  auto lease = s.add_task(shutdown_phase::release_leases, "lease");
  REQUIRE(leave);
  REQUIRE(region_a);
  REQUIRE(region_b);
  REQUIRE(lease);
  auto st = s.start(shutdown_reason::signal, t0);
  CHECK(st.phase == shutdown_phase::cluster_sharding_shutdown_region);
  CHECK(names(s, st.start) == std::vector<std::string>{"region a", "region b"});
  CHECK(st.deadline == t0 + 10s);
  CHECK(st.wake_at == t0 + 10s);
  CHECK(st.ended.size() == 5); // the empty phases before it
  CHECK(s.current_phase() == shutdown_phase::cluster_sharding_shutdown_region);
  // One of two done: the phase goes on.
  auto st2 = s.task_done(*region_b, t0 + 1s);
  CHECK(st2.start.empty());
  CHECK(st2.ended.empty());
  CHECK(st2.wake_at == t0 + 10s);
  // Both done: cluster_leave starts with its own deadline.
  auto st3 = s.task_done(*region_a, t0 + 2s);
  REQUIRE(st3.ended.size() == 1);
  CHECK(st3.ended[0].phase == shutdown_phase::cluster_sharding_shutdown_region);
  CHECK(st3.ended[0].outcome == phase_outcome::completed);
  CHECK(st3.ended[0].ended == t0 + 2s);
  CHECK(names(s, st3.start) == std::vector<std::string>{"leave"});
  CHECK(st3.deadline == t0 + 2s + 5s);
  auto st4 = s.task_done(*leave, t0 + 3s);
  CHECK(st4.phase == shutdown_phase::release_leases);
  CHECK(names(s, st4.start) == std::vector<std::string>{"lease"});
  auto st5 = s.task_done(*lease, t0 + 4s);
  CHECK(st5.complete);
  CHECK_FALSE(st5.wake_at);
  CHECK(s.complete());
  auto& rep = s.report();
  CHECK(rep.reason == shutdown_reason::signal);
  CHECK(rep.started == t0);
  CHECK(rep.ended == t0 + 4s);
  CHECK(rep.phases.size() == shutdown_phase_count);
  CHECK(rep.clean());
  for (size_t i = 0; i < rep.phases.size(); ++i)
    CHECK(rep.phases[i].phase == all_shutdown_phases()[i]);
}

TEST_CASE("shutdown sequence: a phase times out at its deadline, names its "
          "unfinished tasks, and the sequence goes on") {
  auto timeouts = shutdown_timeouts::defaults();
  timeouts.set(shutdown_phase::cluster_exiting, 3s);
  shutdown_sequence s{timeouts};
  auto stuck = s.add_task(shutdown_phase::cluster_exiting, "stuck");
  auto quick = s.add_task(shutdown_phase::cluster_exiting, "quick");
  auto after = s.add_task(shutdown_phase::cluster_shutdown, "after");
  auto st = s.start(shutdown_reason::cluster_leaving, t0);
  CHECK(st.deadline == t0 + 3s);
  s.task_done(*quick, t0 + 1s);
  // Before the deadline a tick changes nothing.
  auto early = s.tick(t0 + 3s - 1ns);
  CHECK(early.ended.empty());
  CHECK(early.wake_at == t0 + 3s);
  auto late = s.tick(t0 + 3s);
  REQUIRE(late.ended.size() == 2); // cluster_exiting, then exiting_done
  CHECK(late.ended[0].outcome == phase_outcome::timed_out);
  CHECK(late.ended[0].unfinished == std::vector<std::string>{"stuck"});
  CHECK(late.ended[1].phase == shutdown_phase::cluster_exiting_done);
  CHECK(late.ended[1].outcome == phase_outcome::empty);
  CHECK(names(s, late.start) == std::vector<std::string>{"after"});
  // The stuck task's late report changes nothing.
  auto ignored = s.task_done(*stuck, t0 + 4s);
  CHECK(ignored.ended.empty());
  CHECK(ignored.start.empty());
  CHECK(s.current_phase() == shutdown_phase::cluster_shutdown);
  s.task_done(*after, t0 + 5s);
  CHECK(s.complete());
  CHECK_FALSE(s.report().clean());
}

TEST_CASE("shutdown sequence: a failed task counts as finished and is "
          "named in the report") {
  shutdown_sequence s{shutdown_timeouts::defaults()};
  auto bad = s.add_task(shutdown_phase::service_stop, "bad");
  s.start(shutdown_reason::application, t0);
  auto st = s.task_failed(*bad, "boom", t0 + 1s);
  REQUIRE_FALSE(st.ended.empty());
  CHECK(st.ended[0].outcome == phase_outcome::completed);
  CHECK(st.ended[0].failed == std::vector<std::string>{"bad: boom"});
  CHECK(st.complete);
  CHECK_FALSE(s.report().clean());
}

TEST_CASE("shutdown sequence: a second start keeps the first reason, and "
          "tasks for a phase that started are refused") {
  shutdown_sequence s{shutdown_timeouts::defaults()};
  auto leave = s.add_task(shutdown_phase::cluster_leave, "leave");
  s.start(shutdown_reason::cluster_downing, t0);
  auto again = s.start(shutdown_reason::signal, t0 + 1s);
  CHECK(again.start.empty());
  CHECK(again.ended.empty());
  CHECK(s.reason() == shutdown_reason::cluster_downing);
  // The running phase and earlier ones: refused, naming task and phase.
  auto late = s.add_task(shutdown_phase::cluster_leave, "late");
  REQUIRE_FALSE(late);
  CHECK_THAT(late.error().message, Catch::Contains("\"late\""));
  CHECK_THAT(late.error().message, Catch::Contains("cluster_leave"));
  CHECK_THAT(late.error().message, Catch::Contains("already started"));
  auto earlier = s.add_task(shutdown_phase::service_unbind, "earlier");
  REQUIRE_FALSE(earlier);
  CHECK_THAT(earlier.error().message, Catch::Contains("already ran"));
  // A later phase: accepted, and run.
  auto later = s.add_task(shutdown_phase::release_leases, "later");
  REQUIRE(later);
  auto st = s.task_done(*leave, t0 + 2s);
  CHECK(st.phase == shutdown_phase::release_leases);
  CHECK(names(s, st.start) == std::vector<std::string>{"later"});
  s.task_done(*later, t0 + 3s);
  CHECK(s.complete());
  CHECK_FALSE(s.add_task(shutdown_phase::actor_system_terminate, "x"));
}

TEST_CASE("shutdown sequence: no tasks at all completes at the start") {
  shutdown_sequence s{shutdown_timeouts::defaults()};
  CHECK_FALSE(s.started());
  CHECK_FALSE(s.reason());
  auto st = s.start(shutdown_reason::signal, t0);
  CHECK(st.complete);
  CHECK(st.ended.size() == shutdown_phase_count);
  CHECK(s.report().ended == t0);
  // Inputs after the end change nothing.
  CHECK(s.tick(t0 + 1h).ended.empty());
  CHECK(s.task_done(0, t0).ended.empty());
}

TEST_CASE("shutdown sequence: each task starts once, even when its phase "
          "is reached through several empty phases in one call") {
  shutdown_sequence s{shutdown_timeouts::defaults()};
  std::set<size_t> ids;
  for (auto p : all_shutdown_phases())
    ids.insert(*s.add_task(p, std::string{to_string(p)}));
  std::multiset<size_t> started;
  auto st = s.start(shutdown_reason::signal, t0);
  auto now = t0;
  while (!st.complete) {
    REQUIRE(st.start.size() == 1);
    started.insert(st.start.begin(), st.start.end());
    now += 1ms;
    st = s.task_done(st.start.front(), now);
  }
  CHECK(started.size() == ids.size());
  CHECK(std::set<size_t>(started.begin(), started.end()) == ids);
}
