#pragma once

#include <string>
#include <vector>

#include "troupe/runtime/clock.hpp"

/// @file
/// The demo cluster's shortened timing (DESIGN.md §10: heartbeat 200 ms,
/// acceptable pause 1 s, stable_after 2 s, lease ttl 3 s), the node flags
/// that carry it, and the failover floor that follows from it. Pure.

namespace troupe::demo {

/// The settings that decide how fast a failover can be. Defaults are the
/// demo's.
struct demo_timing {
  runtime::timespan heartbeat_interval = std::chrono::milliseconds{200};
  runtime::timespan acceptable_heartbeat_pause = std::chrono::seconds{1};
  /// The failure detector's lower bound on the heartbeat deviation and its
  /// threshold (the defaults of cluster.failure_detector.*).
  runtime::timespan min_std_deviation = std::chrono::milliseconds{100};
  double threshold = 8.0;
  runtime::timespan gossip_interval = std::chrono::milliseconds{200};
  runtime::timespan leader_actions_interval = std::chrono::milliseconds{200};
  /// downing.stable_after and down_all_when_unstable (Akka's 3/4 of
  /// stable_after, without its 4 s floor, so that sharding's removal
  /// margin, stable_after + down_all_when_unstable (ADR 0007), stays short).
  runtime::timespan stable_after = std::chrono::seconds{2};
  runtime::timespan down_all_when_unstable = std::chrono::milliseconds{1500};
  /// lease.ttl; renewal every ttl / 3 (the lease's default).
  runtime::timespan lease_ttl = std::chrono::seconds{3};
  runtime::timespan lease_retry_interval = std::chrono::milliseconds{500};
  /// True for the Kubernetes backend: as client-go's leader election, a
  /// contender judges a record expired only after it has seen it unchanged
  /// for a full ttl on its own clock, and the new oldest first looks at the
  /// record when it may take over.
  bool lease_expiry_observed = false;
  /// sharding.number_of_shards: few, so that the console's shard counts
  /// read at a glance.
  uint32_t number_of_shards = 30;
  /// demo.tick_interval: the scheduler's ledger writes.
  runtime::timespan tick_interval = std::chrono::milliseconds{500};

  /// ttl / 3.
  runtime::timespan renewal_interval() const {
    return lease_ttl / 3;
  }

  /// sharding.down_removal_margin's `auto`: stable_after +
  /// down_all_when_unstable.
  runtime::timespan removal_margin() const {
    return stable_after + down_all_when_unstable;
  }

  /// The `--key=value` flags of every node that set the above (failure
  /// detector, gossip, downing keep_majority, lease ttl, singleton and
  /// coordinator leases, the scheduler's tick), plus fast joins and
  /// reconnects.
  std::vector<std::string> node_flags() const;
};

/// The least time a failover after a SIGKILL of the singleton's host can
/// take, and its parts.
struct failover_floor {
  /// The failure detector's time to suspect the host after its last
  /// heartbeat (phi reaches the threshold: mean + acceptable pause +
  /// y * min_std_deviation), minus one heartbeat interval (the last
  /// heartbeat may have arrived up to one interval before the kill).
  runtime::timespan detection{};
  /// detection + stable_after: the earliest the resolver downs the host
  /// (then it is removed at the leader's next action, at best at once).
  runtime::timespan downed{};
  /// The earliest the dead holder's lease record expires: ttl after its
  /// last renewal, which came at most one renewal interval before the kill.
  runtime::timespan lease_expiry{};
  /// The singleton's floor: max(downed, lease_expiry) (with a lease its
  /// down_removal_margin is 0), then the new instance's first write; with
  /// `lease_expiry_observed`, downed + ttl.
  runtime::timespan singleton{};
  /// The floor of the first acknowledged deposit for an account of the
  /// killed host: downed + sharding's removal margin (the coordinator
  /// re-allocates a downed member's shards only after it), and at least the
  /// singleton's floor (the coordinator is a singleton under a lease too).
  runtime::timespan shards{};
};

/// The floor that follows from `t` (see failover_floor).
failover_floor floor_of(const demo_timing& t);

/// One line for people, e.g. `floor 3.52s = detection 1.52s (heartbeat
/// 200ms, acceptable pause 1s, phi threshold 8) + stable_after 2s; the
/// lease (ttl 3s, renewed every 1s) may expire from 2.00s on, before the
/// host is downed, so it does not lengthen the floor`.
std::string explain_singleton_floor(const demo_timing& t,
                                    const failover_floor& f);

/// Likewise for the shards: `floor 7.02s = downed 3.52s + removal margin
/// 3.5s (stable_after 2s + down_all_when_unstable 1.5s)`.
std::string explain_shard_floor(const demo_timing& t, const failover_floor& f);

/// "3.52s" (two decimals).
std::string seconds_text(runtime::timespan d);

} // namespace troupe::demo
