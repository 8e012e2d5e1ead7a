#pragma once

#include <cstdint>
#include <optional>

#include "troupe/sim/membership_world.hpp"

/// @file
/// The scenario family "two clusters made apart, then connected"
/// (docs/design/cluster.md, "A second cluster is detected and healed", and
/// its simulator section): two groups of nodes form two clusters of one
/// name in a partition, each through its own seeds; then the network
/// heals and nodes get a shared contact list. The merge rule must make
/// one of the two leave; the world restarts every node whose engine
/// stopped (as a supervisor would: a new uid, every node as a seed), and
/// at the end there must be exactly one cluster.
///
/// Its checker, `one_cluster_at_end`, is an oracle written here from the
/// live nodes' views alone (their gossips), independent of the engine's
/// own notion of incarnations and merges.

namespace troupe::sim {

/// The checker `one_cluster_at_end`: `expected` nodes are running (when
/// given: a node that stopped and was not restarted does not escape the
/// verdict), every live node is a member, and every live node's view
/// holds exactly the live nodes' current incarnations, all up, with one
/// cluster incarnation. The violation lists the distinct views
/// (incarnation and members) and who holds each.
std::optional<violation> one_cluster_at_end(const membership_world& w,
                                            std::optional<size_t> expected
                                            = std::nullopt);

/// One seed of the family: 2 to 8 nodes in two groups (each of at least
/// one node, seeds: the group's first two), formed apart; at 12-17 s the
/// partition heals and every node (or, by the seed, only one group's
/// nodes) gets every node's endpoint as a contact; for 10 s after that,
/// by the seed, message loss (2-10%) and a clogged link between the
/// groups; stopped nodes restart after 0.5-2 s with every node as a seed.
/// The run ends once one cluster holds for 5 s, or at the heal + 120 s;
/// then `one_cluster_at_end` must hold. `liveness_rounds` is the gossip
/// rounds from the heal to one cluster. `bug` is planted in every node.
scenario_result run_merge_scenario(uint64_t seed, cluster::planted_bug bug
                                                  = cluster::planted_bug::none);

} // namespace troupe::sim
