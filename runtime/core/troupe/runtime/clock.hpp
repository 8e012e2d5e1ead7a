#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

/// @file
/// Monotonic time as troupe's cores and shells see it.
///
/// Cores never read a clock: time comes in as a `timestamp` argument.
/// Shells read `clock_source::now()`, which is the real monotonic clock in
/// production and the simulated clock of CAF's test coordinator in
/// deterministic tests (runtime/shell caf_clock_source).

namespace troupe::runtime {

/// A point on the host's monotonic clock (CLOCK_MONOTONIC on Linux; shared
/// by every process of one host, not across hosts).
using timestamp = std::chrono::steady_clock::time_point;

/// A span of monotonic time; nanosecond resolution.
using timespan = std::chrono::nanoseconds;

/// A source of monotonic time.
///
/// Thread-safety: `now()` may be called from any thread concurrently; an
/// implementation must be lock-free (lease `check_alive()` depends on it).
class clock_source {
public:
  virtual ~clock_source() = default;

  /// The current monotonic time.
  virtual timestamp now() const noexcept = 0;

  /// The largest amount by which `now()` can lag the precise monotonic
  /// clock (zero for a precise clock; the tick for a coarse one).
  virtual timespan resolution() const noexcept = 0;
};

/// A clock that only moves when told to: for core tests and the simulator.
/// Thread-safe (the time is an atomic).
class manual_clock final : public clock_source {
public:
  explicit manual_clock(timestamp start = timestamp{std::chrono::hours{1}})
    : ns_(start.time_since_epoch().count()) {}

  timestamp now() const noexcept override {
    return timestamp{timespan{ns_.load(std::memory_order_acquire)}};
  }

  timespan resolution() const noexcept override {
    return timespan{0};
  }

  /// Moves the clock forward by `d` (which must not be negative).
  void advance(timespan d) noexcept {
    ns_.fetch_add(d.count(), std::memory_order_acq_rel);
  }

private:
  std::atomic<int64_t> ns_;
};

} // namespace troupe::runtime
