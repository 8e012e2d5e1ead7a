#pragma once

#include <chrono>
#include <string>

/// @file
/// Wall-clock time as the membership gossip carries it.

namespace troupe::cluster {

/// Wall-clock time in milliseconds since the epoch, for the values that
/// travel between hosts: tombstones and a cluster incarnation's founding
/// time (cluster_incarnation.hpp).
///
/// Such times must mean the same on every host; the monotonic
/// `runtime::timestamp` does not (each host's steady clock has its own
/// epoch). Akka uses `System.currentTimeMillis()` for the same reason.
/// Tombstones are pruned after `prune_gossip_tombstones_after` (24 h by
/// default), so clock skew between hosts of seconds or minutes does not
/// matter; the founding time only orders incarnations (the older wins a
/// merge tie), where skew can only change which of two equal-sized
/// clusters survives, never that one does.
using wall_time = std::chrono::time_point<std::chrono::system_clock,
                                          std::chrono::milliseconds>;

/// ISO 8601 in UTC with milliseconds, e.g. `2023-11-14T22:13:20.000Z`.
std::string format_wall_time(wall_time t);

} // namespace troupe::cluster
