#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/caf_glue.hpp"

/// @file
/// A deterministic CAF actor system for Catch2 tests (caf-notes.md §4,
/// approach C): CAF's test coordinator, simulated time, no sleeps. CAF's own
/// `expect()` DSL crashes inside Catch2, so this fixture has its own small
/// API.

namespace troupe::test {

using namespace std::chrono_literals;

/// A closure to run later on the simulated clock (see `defer`).
struct deferred_call {
  std::function<void()> fn;
};

template <class Inspector>
auto inspect(Inspector& f, deferred_call&) {
  return f(caf::meta::type_name("deferred_call"));
}

/// One deterministic actor system with simulated time.
///
/// `InitFns` are called with the config before the system starts (module
/// type registrations such as lease::add_lease_types).
class deterministic_system {
public:
  struct config : caf::actor_system_config {
    explicit config(
      const std::vector<std::function<void(caf::actor_system_config&)>>& init) {
      set("scheduler.policy", caf::atom("testing"));
      set("logger.file-verbosity", caf::atom("quiet"));
      runtime::add_runtime_types(*this);
      add_message_type<deferred_call>("troupe.test.deferred_call");
      for (auto& f : init)
        f(*this);
    }
  };

  explicit deterministic_system(
    std::vector<std::function<void(caf::actor_system_config&)>> init = {})
    : cfg_(init), sys_(cfg_),
      sched_(dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler())),
      clock_(sys_.clock()) {
    sched_.clock().current_time += std::chrono::hours{1};
    runner_ = sys_.spawn([](caf::event_based_actor*) -> caf::behavior {
      return {[](deferred_call& call) { call.fn(); }};
    });
  }

  ~deterministic_system() {
    // Stop the test's long-lived actors while the system is whole: jobs that
    // run during the system's own teardown would touch half-destroyed parts.
    for (auto& a : tracked_)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    sched_.run();
    caf::anon_send_exit(runner_, caf::exit_reason::user_shutdown);
    sched_.run();
    // Long-lived actors of a test (lease actors, ...) would keep the
    // system's destructor waiting forever under the test coordinator.
    sys_.await_actors_before_shutdown(false);
  }

  /// Stops `handle` (exit user_shutdown) when the system is torn down.
  template <class Handle>
  void track(const Handle& handle) {
    tracked_.push_back(caf::actor_cast<caf::actor>(handle));
  }

  caf::actor_system& sys() noexcept {
    return sys_;
  }

  caf::scheduler::test_coordinator& sched() noexcept {
    return sched_;
  }

  /// The simulated clock as a troupe clock_source.
  const runtime::clock_source& clock() const noexcept {
    return clock_;
  }

  runtime::timestamp now() const noexcept {
    return sched_.clock().now();
  }

  /// Runs every pending job at the current simulated time; returns the
  /// number of jobs run.
  size_t run() {
    return sched_.run();
  }

  /// The time of the next pending timer, if any.
  std::optional<runtime::timestamp> next_timer() const {
    auto& schedule = sched_.clock().schedule();
    if (schedule.empty())
      return std::nullopt;
    return schedule.begin()->first;
  }

  /// Runs jobs and fires timers in time order until the clock reads `t`.
  /// `after_each` (if set) runs after every job and every clock move: the
  /// place for invariant checks at every simulated instant.
  void run_until(runtime::timestamp t,
                 const std::function<void()>& after_each = {}) {
    for (;;) {
      while (sched_.try_run_once())
        if (after_each)
          after_each();
      auto next = next_timer();
      if (!next || *next > t)
        break;
      if (*next > now()) {
        sched_.clock().current_time = *next;
        if (after_each)
          after_each();
      }
      sched_.trigger_timeout();
    }
    if (t > now()) {
      sched_.clock().current_time = t;
      if (after_each)
        after_each();
    }
  }

  /// Advances simulated time by `d`, running everything due on the way.
  void advance(runtime::timespan d,
               const std::function<void()>& after_each = {}) {
    run_until(now() + d, after_each);
  }

  /// Moves the clock without running anything (no message is processed).
  void set_clock_only(runtime::timestamp t) {
    sched_.clock().current_time = t;
  }

  /// Runs `fn` after `d` of simulated time (the faulty backend's scheduler).
  void defer(runtime::timespan d, std::function<void()> fn) {
    caf::delayed_anon_send(runner_, d, deferred_call{std::move(fn)});
  }

  /// A scheduler function for faulty_lease_backend.
  std::function<void(runtime::timespan, std::function<void()>)> scheduler() {
    return [this](runtime::timespan d, std::function<void()> fn) {
      defer(d, std::move(fn));
    };
  }

private:
  config cfg_;
  caf::actor_system sys_;
  caf::scheduler::test_coordinator& sched_;
  runtime::caf_clock_source clock_;
  caf::actor runner_;
  std::vector<caf::actor> tracked_;
};

/// Sends requests as plain messages and collects replies without blocking,
/// so that a test can interleave requests with simulated time.
class probe {
public:
  explicit probe(caf::actor_system& sys) : self_(sys) {}

  template <class Handle, class... Ts>
  void send(const Handle& dest, Ts&&... xs) {
    self_->send(dest, std::forward<Ts>(xs)...);
  }

  /// The next reply of type T (or an error) if one arrived.
  template <class T>
  std::optional<caf::expected<T>> poll() {
    std::optional<caf::expected<T>> result;
    self_->receive(
      [&](T& x) { result = caf::expected<T>{std::move(x)}; },
      [&](caf::error& err) { result = caf::expected<T>{std::move(err)}; },
      caf::after(std::chrono::seconds{0}) >> [] {});
    return result;
  }

  caf::actor handle() {
    return caf::actor_cast<caf::actor>(self_.ptr());
  }

  caf::scoped_actor& self() {
    return self_;
  }

private:
  caf::scoped_actor self_;
};

} // namespace troupe::test
