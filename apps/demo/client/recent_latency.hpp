#pragma once

#include <array>
#include <chrono>
#include <cstdint>

#include "client/latency_histogram.hpp"

/// @file
/// Latencies of the last few seconds, for the console's p99 (the whole
/// run's figure stays in a latency_histogram for the final summary).

namespace troupe::demo::client {

/// The latencies of acks in a sliding window of whole seconds: one
/// latency_histogram per second, the oldest reused as time moves on. A
/// value belongs to the second it was added in (the ack's, not the
/// deposit's send time). Pure: the second comes in as an argument (seconds
/// since any fixed start, never decreasing between calls). Constant memory
/// (about 9 KiB per second of the window); not thread-safe.
class recent_latency {
public:
  /// Seconds in the window: the current (partial) second and the four
  /// before it.
  static constexpr int64_t window_seconds = 5;

  /// Adds `d`, acked in second `second`.
  void add(int64_t second, std::chrono::microseconds d) noexcept;

  /// The histogram of the values added in seconds `now - window_seconds +
  /// 1` through `now`.
  latency_histogram window(int64_t now) const noexcept;

private:
  struct slot {
    /// The second this slot holds; -1: none yet.
    int64_t second = -1;
    latency_histogram values;
  };
  std::array<slot, window_seconds> slots_{};
};

} // namespace troupe::demo::client
