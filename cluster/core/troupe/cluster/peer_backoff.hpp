#pragma once

#include <cstdint>
#include <random>

#include "troupe/runtime/clock.hpp"

/// @file
/// Reconnect delays: exponential backoff with jitter.

namespace troupe::cluster {

/// The delay before each reconnect attempt to one peer.
///
/// After `n` consecutive failures the next attempt waits
/// `min(max, min_delay * 2^(n-1)) * (1 - jitter * u)` with `u` uniform in
/// [0, 1) drawn from the caller's generator; the first attempt (no failure
/// yet) goes at once. Jitter only shortens a delay, so `max` is a true
/// bound, and peers that lost the same node at the same moment spread out
/// instead of reconnecting in lockstep (Akka's backoff supervisor uses a
/// random factor the same way, but upwards).
///
/// A success (`reset`) starts over at zero failures. A plain value; not
/// thread-safe.
class peer_backoff {
public:
  /// Share of a delay that jitter may take away.
  static constexpr double jitter = 0.2;

  /// Delays between `min_delay` and `max_delay` (both > 0, min <= max;
  /// asserts).
  peer_backoff(runtime::timespan min_delay, runtime::timespan max_delay);

  /// Records a failed attempt and returns the delay before the next one.
  runtime::timespan on_failure(std::mt19937_64& rng);

  /// The delay before the next attempt without recording a failure: zero
  /// after a success or at the start.
  runtime::timespan current(std::mt19937_64& rng) const;

  /// Records a success: the next failure starts again at `min_delay`.
  void reset() noexcept {
    failures_ = 0;
  }

  /// Consecutive failures so far.
  uint32_t failures() const noexcept {
    return failures_;
  }

private:
  runtime::timespan min_;
  runtime::timespan max_;
  uint32_t failures_ = 0;
};

} // namespace troupe::cluster
