#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

#include <caf/actor_clock.hpp>

#include "troupe/runtime/clock.hpp"

/// @file
/// A clock_source over CAF's actor clock, and the one-shot timer the
/// shells over pure engines share (`schedule_tick`).

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

/// Arms the timer of an actor over a pure engine: sends `(atom, due)` to
/// `self` when `next` (the engine's `next_tick()`) is reached on `clock`,
/// `due` being `next` in nanoseconds since the clock's epoch, unless a tick
/// due at or before `next` is already in flight (`scheduled`, which the
/// tick handler resets when the tick it names arrives). Nothing for none.
template <class Self, class Atom>
void schedule_tick(Self self, Atom atom, std::optional<timestamp>& scheduled,
                   std::optional<timestamp> next, const clock_source& clock) {
  if (!next || (scheduled && *scheduled <= *next))
    return;
  scheduled = *next;
  auto delay = std::max(*next - clock.now(), timespan{0});
  self->delayed_send(self, delay, atom,
                     static_cast<int64_t>(next->time_since_epoch().count()));
}

} // namespace troupe::runtime
