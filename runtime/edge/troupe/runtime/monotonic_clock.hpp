#pragma once

#include "troupe/runtime/clock.hpp"

/// @file
/// The host's real monotonic clocks.

namespace troupe::runtime {

/// CLOCK_MONOTONIC_COARSE: a vDSO read of the kernel's last tick, several
/// times cheaper than CLOCK_MONOTONIC, lagging it by at most `resolution()`
/// (one kernel tick, typically 1-4 ms). Used by lease `check_alive()`,
/// which subtracts the resolution from its deadline (DESIGN.md §10).
/// Thread-safe and lock-free.
class coarse_monotonic_clock final : public clock_source {
public:
  coarse_monotonic_clock() noexcept;
  timestamp now() const noexcept override;
  timespan resolution() const noexcept override;

private:
  timespan resolution_;
};

/// CLOCK_MONOTONIC (std::chrono::steady_clock). Thread-safe, lock-free.
class precise_monotonic_clock final : public clock_source {
public:
  timestamp now() const noexcept override {
    return std::chrono::steady_clock::now();
  }

  timespan resolution() const noexcept override {
    return timespan{0};
  }
};

/// A process-wide coarse clock instance (never destroyed).
const clock_source& default_coarse_clock() noexcept;

} // namespace troupe::runtime
