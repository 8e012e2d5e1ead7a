#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The phi accrual failure detector of one monitored node, as Akka's
/// `akka.remote.PhiAccrualFailureDetector` (Hayashibara et al., "The phi
/// accrual failure detector", 2004).
///
/// phi = -log10(1 - F(t)), where t is the time since the last heartbeat and
/// F is the cumulative distribution function of a normal distribution whose
/// mean is the mean heartbeat inter-arrival time plus
/// `acceptable_heartbeat_pause`, and whose standard deviation is that of the
/// inter-arrival times (at least `min_std_deviation`). F is Akka's logistic
/// approximation 1 / (1 + exp(-y (1.5976 + 0.070566 y^2))) with
/// y = (t - mean) / std_deviation (error below 0.00014).
///
/// Differences from Akka, and why:
/// - Intervals are kept in microseconds, not milliseconds: tests and the
///   simulator use heartbeat intervals of a few milliseconds, where Akka's
///   millisecond truncation would distort the statistics. The formulas are
///   evaluated in milliseconds as in Akka, so phi values agree with Akka's
///   for whole-millisecond inputs.
/// - Time comes in as an argument (STYLE.md §1) instead of a clock; the
///   detector is a plain value, not a lock-free shared object.
/// - No warning is logged when an interval reaches half the acceptable
///   pause; the caller can compare `history()` itself.
///
/// docs/design/cluster.md has the math, worked numbers
/// and a table of detection time against the settings.

namespace troupe::cluster {

using runtime::timespan;
using runtime::timestamp;

/// Milliseconds as a floating point number: the unit of the statistics.
using fractional_ms = std::chrono::duration<double, std::milli>;

/// Settings of a phi accrual failure detector (field: default; meaning).
///
/// - threshold: 8.0; phi at or above which the node counts as unavailable.
///   Lower detects sooner with more false suspicions.
/// - max_sample_size: 1000; inter-arrival times kept for mean and variance.
/// - min_std_deviation: 100ms; lower bound of the standard deviation, so
///   that a very regular history does not make the detector oversensitive.
/// - acceptable_heartbeat_pause: 3s; added to the mean: lost or delayed
///   heartbeats (GC, network) tolerated before phi rises quickly.
/// - first_heartbeat_estimate: 1s (the heartbeat interval); the history
///   starts with two intervals, estimate - estimate/4 and estimate +
///   estimate/4, so that a node heard from once still becomes unavailable.
///
/// Units are std::chrono types; nothing else is assumed about their size.
struct phi_accrual_settings {
  double threshold = 8.0;
  size_t max_sample_size = 1000;
  timespan min_std_deviation = std::chrono::milliseconds{100};
  timespan acceptable_heartbeat_pause = std::chrono::seconds{3};
  timespan first_heartbeat_estimate = std::chrono::seconds{1};
};

/// Checks Akka's rules for `s`: threshold > 0, max_sample_size >= 1,
/// min_std_deviation > 0, acceptable_heartbeat_pause >= 0 and
/// first_heartbeat_estimate > 0. The error (cluster errc::invalid_settings)
/// names the field and the value, e.g. `failure detector threshold 0 must
/// be > 0`. (membership_settings adds stricter, configuration-level rules.)
runtime::error validate(const phi_accrual_settings& s);

/// The heartbeat inter-arrival times of one node: at most `max_sample_size`
/// intervals (the oldest dropped first) with their running sum and sum of
/// squares, as Akka's `HeartbeatHistory`. Intervals are whole microseconds.
/// A plain value.
class heartbeat_history {
public:
  /// An empty history; `max_sample_size` must be at least 1 (asserts).
  explicit heartbeat_history(size_t max_sample_size);

  /// Appends `interval` (negative values count as zero), dropping the
  /// oldest interval when full.
  void add(timespan interval);

  /// The number of intervals held.
  size_t size() const noexcept {
    return intervals_.size();
  }

  /// The mean interval (the history must not be empty; asserts).
  fractional_ms mean() const;

  /// The population variance of the intervals in ms^2 (not empty).
  double variance_ms2() const;

  /// The square root of the variance (not empty).
  fractional_ms std_deviation() const;

private:
  size_t max_sample_size_;
  std::deque<int64_t> intervals_; // microseconds
  int64_t sum_ = 0;               // microseconds
  // Exact while below 2^53 us^2 (1000 intervals of 95 s); beyond that the
  // relative rounding error is 1e-16, far below what phi can show.
  double squared_sum_ = 0; // us^2
};

/// phi for a time `time_diff` since the last heartbeat, given the `mean`
/// (acceptable pause already added) and `std_deviation` of the expected
/// arrival: Akka's `phi(timeDiff, mean, stdDeviation)`. Never negative;
/// grows monotonically with `time_diff`. For `time_diff > mean` it is
/// computed as -log10(e / (1 + e)), otherwise as -log10(1 - 1 / (1 + e)),
/// e = exp(-y (1.5976 + 0.070566 y^2)), which keeps precision on both
/// sides. Reaches +infinity only for absurd inputs (e underflows to 0).
double phi_of(fractional_ms time_diff, fractional_ms mean,
              fractional_ms std_deviation);

/// The failure detector of one monitored node.
///
/// Before the first heartbeat the node is not monitored: phi is 0 and it
/// counts as available (Akka treats unmanaged connections as healthy). The
/// first heartbeat starts the history from `first_heartbeat_estimate`; a
/// later heartbeat adds its interval only when the node was still available
/// at that moment: the first heartbeat after a failure is not added, since
/// the long pause would skew the statistics (Akka).
///
/// Invariant: once monitored, the history holds at least two intervals.
/// A plain value; not thread-safe.
class phi_accrual_detector {
public:
  /// A detector with settings `s`, which must pass `validate` (asserts).
  explicit phi_accrual_detector(phi_accrual_settings s);

  /// Records a heartbeat that arrived at `now`.
  void heartbeat(timestamp now);

  /// The suspicion level at `now` (0 when not monitoring).
  double phi(timestamp now) const;

  /// True when `phi(now) < threshold`.
  bool is_available(timestamp now) const;

  /// True once a heartbeat was recorded.
  bool is_monitoring() const noexcept {
    return last_heartbeat_.has_value();
  }

  /// When the last heartbeat arrived, if any.
  std::optional<timestamp> last_heartbeat() const noexcept {
    return last_heartbeat_;
  }

  /// The inter-arrival history (the bootstrap intervals included).
  const heartbeat_history& history() const noexcept {
    return history_;
  }

  const phi_accrual_settings& settings() const noexcept {
    return settings_;
  }

  /// The time after the last heartbeat at which phi reaches the threshold
  /// with the current history: how long this node would take to be
  /// suspected if it stopped now (0 when not monitoring). Found by bisection
  /// to within one microsecond.
  timespan detection_time() const;

private:
  phi_accrual_settings settings_;
  heartbeat_history history_;
  std::optional<timestamp> last_heartbeat_;
};

/// The time since the last heartbeat at which phi reaches `threshold` for a
/// history with `mean` and `std_deviation` (before the min_std_deviation
/// bound) under `s`: mean + acceptable_heartbeat_pause + y *
/// max(std_deviation, min_std_deviation), where y solves
/// -log10(1 - F(y)) = threshold. To within one microsecond.
timespan detection_time(const phi_accrual_settings& s, fractional_ms mean,
                        fractional_ms std_deviation);

} // namespace troupe::cluster
