#pragma once

#include <cstddef>
#include <map>

#include "troupe/cluster/phi_accrual_detector.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// One phi accrual failure detector per monitored node, as Akka's
/// `DefaultFailureDetectorRegistry`.
///
/// Keyed by `unique_address` where Akka keys by `Address` (host:port): a
/// restarted node (same host:port, new uid) is a new member and starts
/// with a fresh detector instead of inheriting the old incarnation's
/// history.

namespace troupe::cluster {

using runtime::unique_address;

/// The failure detectors of the nodes this node monitors.
///
/// A node without a detector (never heard from, or removed) is available
/// and not monitored, as in Akka. A plain value; not thread-safe.
class failure_detector_registry {
public:
  /// A registry whose detectors use `s` (which must pass `validate`).
  explicit failure_detector_registry(phi_accrual_settings s);

  /// Records a heartbeat from `node` at `now`, creating its detector on
  /// the first one.
  void heartbeat(const unique_address& node, timestamp now);

  /// False only when `node` has a detector whose phi at `now` is at or
  /// above the threshold.
  bool is_available(const unique_address& node, timestamp now) const;

  /// True when `node` has a detector that received a heartbeat.
  bool is_monitoring(const unique_address& node) const;

  /// phi of `node` at `now`; 0 without a detector.
  double phi(const unique_address& node, timestamp now) const;

  /// Forgets `node`: its next heartbeat starts a new history.
  void remove(const unique_address& node);

  /// Forgets every node.
  void reset();

  /// The detector of `node`, or nullptr.
  const phi_accrual_detector* find(const unique_address& node) const;

  /// The number of nodes with a detector.
  size_t size() const noexcept {
    return detectors_.size();
  }

  const phi_accrual_settings& settings() const noexcept {
    return settings_;
  }

private:
  phi_accrual_settings settings_;
  std::map<unique_address, phi_accrual_detector> detectors_;
};

} // namespace troupe::cluster
