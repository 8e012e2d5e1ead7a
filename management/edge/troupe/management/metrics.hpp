#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "troupe/runtime/shutdown_sequence.hpp"

/// @file
/// The management API's `/metrics` (docs/design/management.md, "Metrics"):
/// a snapshot of the node's counters rendered in the Prometheus text format
/// 0.0.4 by prometheus-cpp's core types and `TextSerializer`.
///
/// The shell fills a `metrics_snapshot` from the modules' own counters at
/// each scrape (the hot paths gain no new atomics) and renders it here.
/// Counters are monotonic since the node started (a restart resets them, as
/// Prometheus expects); gauges are the value now. Every name is prefixed
/// `troupe_`. Pure apart from prometheus-cpp; thread-safe (no shared
/// state).

namespace troupe::management {

/// One lease actor's counters.
struct lease_metrics {
  std::string name;
  uint64_t acquisitions = 0;
  uint64_t losses = 0;
};

/// One shard region's figures.
struct region_metrics {
  std::string type;
  uint64_t shards = 0;
  uint64_t entities = 0;
  /// Messages delivered to a local entity, forwarded to another region,
  /// buffered while a shard had no home, and dropped.
  uint64_t delivered = 0;
  uint64_t forwarded = 0;
  uint64_t buffered = 0;
  uint64_t dropped = 0;
};

/// Everything `/metrics` shows.
struct metrics_snapshot {
  /// Members of this node's view by status name (every status, zeros
  /// included, so a dashboard sees a 0 rather than a gap).
  std::vector<std::pair<std::string, uint64_t>> members_by_status;
  uint64_t unreachable_members = 0;
  uint64_t leader_changes = 0;
  /// Other clusters of this cluster's name that this node met and has not
  /// forgotten (cluster_merge.hpp): 0 in a healthy deployment.
  uint64_t foreign_incarnations = 0;
  /// Meetings with another cluster of this name (each first sighting of a
  /// foreign incarnation, logged as an error).
  uint64_t foreign_incarnation_detections = 0;
  /// Full gossip messages sent: a round whose target has already seen
  /// this version sends only a status (Akka's GossipStatus), which is not
  /// counted, so the count stays flat while membership does not change.
  uint64_t gossip_rounds = 0;
  uint64_t gossip_received = 0;
  std::vector<lease_metrics> leases;
  /// Singleton types with a manager here: 1 if the instance runs here.
  std::vector<std::pair<std::string, bool>> singletons_running;
  std::vector<region_metrics> regions;
  /// Remote messages sent and delivered here.
  uint64_t remoting_sent = 0;
  uint64_t remoting_delivered = 0;
  uint64_t remoting_dead_letters = 0;
  uint64_t transport_bytes_out = 0;
  uint64_t transport_bytes_in = 0;
  /// Frames dropped by reason name (queue_overflow, ...).
  std::vector<std::pair<std::string, uint64_t>> transport_drops;
  /// The coordinated shutdown's running phase (none: not shutting down,
  /// or done).
  std::optional<runtime::shutdown_phase> shutdown_phase;
};

/// The Prometheus text exposition of `s`.
std::string render_metrics(const metrics_snapshot& s);

} // namespace troupe::management
