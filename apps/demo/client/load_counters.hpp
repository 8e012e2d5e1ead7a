#pragma once

#include <chrono>
#include <cstdint>

/// @file
/// What the load driver reports at one moment (demo_client.hpp), as plain
/// values for the launcher's console (console_view.hpp). Pure.

namespace troupe::demo::client {

/// The driver's counters, all read at one moment `at`. `sent` = `acked` +
/// `failed` + `unfinished` + `in_flight`.
struct load_counters {
  /// When they were read: time since the load started.
  std::chrono::nanoseconds at{0};
  /// Deposits started (first attempts).
  uint64_t sent = 0;
  uint64_t acked = 0;
  /// Every attempt failed (the cluster refused or did not answer).
  uint64_t failed = 0;
  /// The client stopped while they waited for a retry (never acked).
  uint64_t unfinished = 0;
  uint64_t in_flight = 0;
  /// Deposits due by 100 ms before `at` under the rate that no worker has
  /// started yet (every worker is busy); 0 without a rate.
  uint64_t behind = 0;
  /// Requests including retries.
  uint64_t attempts = 0;
  /// Latency from `sent` to `acked` (retries included), over every acked
  /// deposit so far; within ~3% (a log-linear histogram's bucket bound).
  /// Zero before the first ack.
  std::chrono::microseconds p50{0};
  std::chrono::microseconds p90{0};
  std::chrono::microseconds p99{0};
  std::chrono::microseconds max{0};
  /// p99 of the deposits acked in the last recent_seconds (the current
  /// second and the ones before it; recent_latency.hpp); zero when none.
  std::chrono::microseconds recent_p99{0};
  int64_t recent_seconds = 0;
};

} // namespace troupe::demo::client
