#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "troupe/sim/sharding_world.hpp"

/// @file
/// A rolling update in the simulation (issue 11, "Rolling upgrades"): three
/// nodes of `cluster.app_version` 1 run the shard coordinator (a cluster
/// singleton) and regions under client traffic; they are replaced one at a
/// time, oldest first (by up number), by three nodes of version 2, each new
/// node started and up before the old one leaves gracefully (a Deployment's
/// maxSurge 1). The world's checkers (I1, I2, one_coordinator: scenario S4's
/// hazard) run throughout; the run records where the singleton instance started
/// and where shards were allocated.
///
/// With `new_version` false the new nodes run version 1 too: the cluster
/// cannot tell old from new, which is what placement by age alone does
/// (the control run that shows what the app_version preference changes).
///
/// Node indexes: 0, 1, 2 the old nodes (in age order), 3, 4, 5 their
/// replacements. Not thread-safe; one run on one thread.

namespace troupe::sim {

struct rolling_update_options {
  /// The replacements run version 2 (false: version 1, the control run).
  bool new_version = true;
  /// The coordinator runs behind the singleton's lease.
  bool use_lease = false;
  /// Records the trace.
  bool trace = true;
};

struct rolling_update_result : scenario_result {
  /// The old nodes in the order they were replaced (oldest first).
  std::vector<size_t> replaced;
  /// The node of every instance start of the singleton (the coordinator),
  /// in order.
  std::vector<size_t> instance_hosts;
  /// Starts on another node than the start before (the first start is
  /// not a move).
  size_t singleton_moves = 0;
  /// Allocations (`host_shard`, also after a rebalance) once the first
  /// replacement was up in every live view, and how many of those went to
  /// an old node.
  size_t allocations_after_new_up = 0;
  size_t old_allocations_after_new_up = 0;
  /// Shards with a home on an old node at the end, and shards with a home.
  size_t shards_on_old_nodes = 0;
  size_t shards_with_home = 0;
  /// Messages handled by entities.
  uint64_t acks = 0;
};

rolling_update_result run_rolling_update(uint64_t seed,
                                         const rolling_update_options& o);

} // namespace troupe::sim
