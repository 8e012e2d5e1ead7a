#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "troupe/chaos/nemesis_ops.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// How long the nemesis's faults must last to matter and how long the
/// cluster needs to recover, from the cluster's timing. Pure.

namespace troupe::chaos {

/// The cluster's timing that decides how long a fault must last to matter
/// and how long the cluster needs to recover. Defaults are the demo's
/// shortened timing (apps/demo/demo_timing.hpp).
struct nemesis_timing {
  /// cluster.failure_detector.*: the failure detection time follows from
  /// them (phi accrual, a steady history of heartbeat_interval).
  std::chrono::milliseconds heartbeat_interval{200};
  std::chrono::milliseconds acceptable_heartbeat_pause{1000};
  std::chrono::milliseconds min_std_deviation{100};
  double threshold = 8.0;
  /// downing.stable_after and down_all_when_unstable.
  std::chrono::milliseconds stable_after{2000};
  std::chrono::milliseconds down_all_when_unstable{1500};
  /// lease.ttl.
  std::chrono::milliseconds lease_ttl{3000};
  /// cluster.gossip_interval: a round of gossip.
  std::chrono::milliseconds gossip_interval{200};
  /// Added to every least hold and to the recovery gap: the time a process
  /// needs beyond the protocol's floor (scheduling, a retry, a join).
  std::chrono::milliseconds slack{1000};
  /// etcd_slow's delay is drawn from [etcd_delay_min, etcd_delay_max].
  std::chrono::milliseconds etcd_delay_min{100};
  std::chrono::milliseconds etcd_delay_max{1500};
  /// A slow_restart's link delay is drawn from [link_delay_min,
  /// link_delay_max] (issue 24: links to a restarting node 0.5-2 s slow).
  std::chrono::milliseconds link_delay_min{500};
  std::chrono::milliseconds link_delay_max{2000};
};

/// The least and the most time from a fault's start to its end.
struct hold_range {
  std::chrono::milliseconds min{0};
  std::chrono::milliseconds max{0};
};

/// What follows from a `nemesis_timing` (all rounded up to whole ms).
struct nemesis_rules {
  /// Failure detection: the time after the last heartbeat at which phi
  /// reaches the threshold (cluster::detection_time).
  std::chrono::milliseconds detection{0};
  /// detection + stable_after: the earliest the resolver downs a node.
  std::chrono::milliseconds downed{0};
  /// stable_after + down_all_when_unstable: sharding's removal margin.
  std::chrono::milliseconds removal_margin{0};
  /// downed + removal_margin + lease_ttl + slack: the least quiet gap after
  /// the faults end (a downed node restarted and joined, shards and the
  /// singleton started elsewhere under a fresh lease); also the first
  /// fault's least offset. Gaps are drawn from [recovery, 1.5 recovery].
  std::chrono::milliseconds recovery{0};
  /// downed + down_all_when_unstable + 5 gossip rounds + slack: how long
  /// membership takes to settle after a node fault ends or a node starts
  /// or ends (the resolver's decision, the downed node's exit, a restarted
  /// node's join, gossip spreading it). The checker's quiet periods start
  /// this long after the last such event (docs/design/chaos.md, I4); the
  /// driver writes it into run_start (`quiet_after_ms`).
  std::chrono::milliseconds quiet_after{0};
  /// The holds, per kind:
  /// - kill: [detection, 2 downed + slack] (restarted before or after the
  ///   resolver downs the old incarnation); majority_restart the same;
  /// - slow_restart: the kill's hold, then `slow_links` after the restart
  ///   (its hold is the sum of the two);
  /// - pause: [p, 2p], p = max(downed, lease_ttl) + slack (the frozen node
  ///   is downed and its lease expired when it resumes);
  /// - partitions: [p, 2p], p = downed + slack (the minority is downed);
  /// - etcd_stop, etcd_slow: [e, 2e], e = lease_ttl + slack (renewals fail
  ///   or lag for a whole ttl);
  /// - lease_delete: [0, 0] (one step).
  hold_range kill, pause, partition, etcd;
  /// How long a slow_restart's links stay slow after its restart: [p, 2p],
  /// p = downed + slack (the restarted node's join attempts, and the
  /// others' failure detection of its old incarnation, run over the slow
  /// links).
  hold_range slow_links;

  /// The hold range of `kind` (from its first step to its last).
  hold_range hold(fault_kind kind) const noexcept;
};

/// The rules of `t`; a non-positive duration (slack, etcd_delay_min and
/// link_delay_min may be 0), threshold <= 0, etcd_delay_min >
/// etcd_delay_max or link_delay_min > link_delay_max is runtime
/// errc::bad_config_value naming the field and its value.
runtime::expected<nemesis_rules> rules_of(const nemesis_timing& t);

/// The most nodes that may be faulty at once: a minority, (n - 1) / 2
/// (2 of 5, 1 of 3, 0 of 2).
size_t minority_of(size_t nodes) noexcept;

/// The least majority of `nodes`: nodes / 2 + 1 (3 of 5, 2 of 3, 3 of 4).
size_t majority_of(size_t nodes) noexcept;

/// The least duration that fits one fault of the enabled kinds: the longest
/// quiet start (1.5 recovery) + the longest least hold among `kinds`.
std::chrono::milliseconds least_duration(const nemesis_rules& rules,
                                         const std::vector<fault_kind>& kinds);

} // namespace troupe::chaos
