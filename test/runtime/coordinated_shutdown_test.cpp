// The coordinated shutdown's runner (coordinated_shutdown.hpp): real
// threads, never timed. A phase's timeout is exercised with a task that
// blocks until the test releases it after the sequence went on.

#include <catch2/catch.hpp>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "troupe/runtime/coordinated_shutdown.hpp"

using namespace troupe::runtime;
using namespace std::chrono_literals;

namespace {

// A gate a task waits at until the test opens it.
struct gate {
  std::mutex mtx;
  std::condition_variable cv;
  bool open = false;

  void wait() {
    std::unique_lock lock{mtx};
    cv.wait(lock, [&] { return open; });
  }
  void release() {
    std::lock_guard guard{mtx};
    open = true;
    cv.notify_all();
  }
};

} // namespace

TEST_CASE("coordinated shutdown: tasks of one phase run concurrently, "
          "phases one after the other") {
  coordinated_shutdown cs;
  std::atomic<int> in_region{0};
  std::atomic<int> both_seen{0};
  std::atomic<bool> leave_saw_regions_done{false};
  std::atomic<int> regions_done{0};
  // Each region task waits until the other one runs too, at most until
  // its phase's deadline: both see each other only when they run at the
  // same time (run one after the other, the first gives up and the check
  // below fails instead of hanging).
  for (auto name : {"region a", "region b"})
    REQUIRE_FALSE(cs.add_task(shutdown_phase::cluster_sharding_shutdown_region,
                              name, [&](const shutdown_context& ctx) {
                                ++in_region;
                                while (in_region.load() < 2
                                       && ctx.remaining() > 0s)
                                  std::this_thread::yield();
                                if (in_region.load() == 2)
                                  ++both_seen;
                                ++regions_done;
                              }));
  REQUIRE_FALSE(cs.add_task(shutdown_phase::cluster_leave, "leave",
                            [&](const shutdown_context& ctx) {
                              CHECK(ctx.phase == shutdown_phase::cluster_leave);
                              CHECK(ctx.reason == shutdown_reason::signal);
                              leave_saw_regions_done = regions_done == 2;
                            }));
  CHECK(cs.run(shutdown_reason::signal));
  auto report = cs.wait();
  CHECK(both_seen == 2);
  CHECK(leave_saw_regions_done);
  CHECK(report.clean());
  CHECK(report.reason == shutdown_reason::signal);
  CHECK(cs.complete());
  CHECK_FALSE(cs.current_phase());
}

TEST_CASE("coordinated shutdown: a phase that times out is left behind, "
          "the next phases run, and the late task is not waited for") {
  auto timeouts = shutdown_timeouts::defaults();
  timeouts.set(shutdown_phase::cluster_exiting, 20ms);
  coordinated_shutdown cs{timeouts};
  // Shared with the task, which outlives this test case's frame.
  struct shared {
    gate g;
    std::atomic<bool> returned{false};
  };
  auto stuck = std::make_shared<shared>();
  std::atomic<bool> after_ran{false};
  REQUIRE_FALSE(cs.add_task(shutdown_phase::cluster_exiting, "stuck",
                            [stuck](const shutdown_context&) {
                              stuck->g.wait();
                              stuck->returned = true;
                            }));
  REQUIRE_FALSE(
    cs.add_task(shutdown_phase::release_leases, "after",
                [&](const shutdown_context&) { after_ran = true; }));
  auto report = cs.run_and_wait(shutdown_reason::application);
  CHECK(after_ran);
  CHECK_FALSE(stuck->returned);
  REQUIRE(report.phases.size() == shutdown_phase_count);
  auto& exiting
    = report.phases[static_cast<size_t>(shutdown_phase::cluster_exiting)];
  CHECK(exiting.outcome == phase_outcome::timed_out);
  CHECK(exiting.unfinished == std::vector<std::string>{"stuck"});
  CHECK_FALSE(report.clean());
  stuck->g.release(); // the detached task ends by itself
}

TEST_CASE("coordinated shutdown: run twice keeps the first reason, a "
          "throwing task is reported, a task for a passed phase is refused") {
  coordinated_shutdown cs;
  gate g;
  std::atomic<int> runs{0};
  REQUIRE_FALSE(cs.add_task(shutdown_phase::service_unbind, "blocks",
                            [&](const shutdown_context&) {
                              ++runs;
                              g.wait();
                            }));
  REQUIRE_FALSE(cs.add_task(shutdown_phase::service_stop, "throws",
                            [](const shutdown_context&) -> void {
                              throw std::runtime_error{"disk on fire"};
                            }));
  CHECK(cs.run(shutdown_reason::cluster_downing));
  CHECK_FALSE(cs.run(shutdown_reason::signal));
  CHECK(cs.started());
  CHECK(cs.reason() == shutdown_reason::cluster_downing);
  // While service_unbind runs, it and earlier phases refuse new tasks.
  while (cs.current_phase() != shutdown_phase::service_unbind)
    std::this_thread::yield();
  auto err = cs.add_task(shutdown_phase::before_service_unbind, "too late",
                         [](const shutdown_context&) {});
  CHECK(err);
  CHECK_THAT(err.message, Catch::Contains("\"too late\""));
  g.release();
  auto report = cs.wait();
  CHECK(runs == 1);
  CHECK(report.reason == shutdown_reason::cluster_downing);
  auto& stop = report.phases[static_cast<size_t>(shutdown_phase::service_stop)];
  CHECK(stop.failed == std::vector<std::string>{"throws: disk on fire"});
  // Waiting again returns the same report at once.
  CHECK(cs.wait().phases.size() == shutdown_phase_count);
}

TEST_CASE("coordinated shutdown: the context's deadline is the phase's "
          "start plus its timeout") {
  auto timeouts = shutdown_timeouts::defaults();
  timeouts.set(shutdown_phase::cluster_leave, 7s);
  coordinated_shutdown cs{timeouts};
  timespan remaining{0};
  auto before = std::chrono::steady_clock::now();
  timestamp deadline{};
  REQUIRE_FALSE(cs.add_task(shutdown_phase::cluster_leave, "leave",
                            [&](const shutdown_context& ctx) {
                              remaining = ctx.remaining();
                              deadline = ctx.deadline;
                            }));
  cs.run_and_wait(shutdown_reason::signal);
  auto after = std::chrono::steady_clock::now();
  CHECK(deadline >= before + 7s);
  CHECK(deadline <= after + 7s);
  CHECK(remaining > 0s);
  CHECK(remaining <= 7s);
}

TEST_CASE("coordinated shutdown: the destructor runs a sequence nobody "
          "started") {
  std::atomic<bool> ran{false};
  {
    coordinated_shutdown cs;
    REQUIRE_FALSE(cs.add_task(shutdown_phase::actor_system_terminate, "last",
                              [&](const shutdown_context& ctx) {
                                ran
                                  = ctx.reason == shutdown_reason::application;
                              }));
  }
  CHECK(ran);
}
