#pragma once

#include <caf/actor_clock.hpp>

#include "troupe/runtime/clock.hpp"

/// @file
/// A clock_source over CAF's actor clock.

namespace troupe::runtime {

/// Reads `caf::actor_clock::now()`: the real steady clock under CAF's
/// normal schedulers and the simulated time under the test coordinator, so
/// deterministic tests see the same time as the actors' timers.
/// Thread-safety: as CAF's clock (the test clock is single-threaded).
class caf_clock_source final : public clock_source {
public:
  explicit caf_clock_source(const caf::actor_clock& clock) : clock_(&clock) {}

  timestamp now() const noexcept override {
    return clock_->now();
  }

  timespan resolution() const noexcept override {
    return timespan{0};
  }

private:
  const caf::actor_clock* clock_;
};

} // namespace troupe::runtime
