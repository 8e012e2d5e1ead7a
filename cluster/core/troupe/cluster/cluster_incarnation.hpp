#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include "troupe/cluster/wall_time.hpp"

/// @file
/// The identity of one formation of a cluster (docs/design/cluster.md,
/// "Cluster incarnations"): troupe's own; Akka has none.
///
/// A node that founds a cluster (joins itself) draws a random id and stamps
/// the founding time; every node welcomed into that cluster adopts both
/// from the welcome's gossip, and the gossip carries them for as long as
/// the cluster lives. Two clusters of the same `cluster.name` that were
/// formed apart (a partition during formation, a seed restarted behind
/// one) therefore differ in their incarnation, and nodes that meet can
/// tell so: gossip of another incarnation is never merged, and the merge
/// rule (cluster_merge.hpp) makes one of the two leave and rejoin the
/// other.
///
/// Plain value; thread-safe as any value.

namespace troupe::cluster {

/// A cluster incarnation: a random nonzero id and the wall-clock time of
/// the founding. `id == 0` means "none" (a node that is not a member of
/// any cluster yet): such a value is never compared as an incarnation.
///
/// Order (`operator<=>`): older first, i.e. the earlier `founded_at`, then
/// the smaller id. So `a < b` reads "a is older than b", and the older
/// incarnation wins a merge between clusters of equal size.
struct cluster_incarnation {
  /// Random, nonzero once set (drawn from the founding engine's seeded
  /// generator).
  uint64_t id = 0;
  /// When the founding node joined itself (its wall clock).
  wall_time founded_at{};

  /// True once set (a member's view always has one).
  bool is_set() const noexcept {
    return id != 0;
  }

  friend bool operator==(const cluster_incarnation&, const cluster_incarnation&)
    = default;

  friend std::strong_ordering operator<=>(const cluster_incarnation& x,
                                          const cluster_incarnation& y) {
    if (auto c = x.founded_at <=> y.founded_at; c != 0)
      return c;
    return x.id <=> y.id;
  }
};

/// CAF-free inspection: the id, then the founding time.
template <class Inspector>
auto inspect(Inspector& f, cluster_incarnation& x) {
  return f(x.id, x.founded_at);
}

/// The incarnation a node founds at `now` from the random draw `random`
/// (0 is replaced by 1: an id is never 0).
cluster_incarnation found_incarnation(uint64_t random, wall_time now) noexcept;

/// True if `x` is older than `y` (both set): founded earlier, or at the
/// same millisecond with the smaller id.
inline bool is_older(const cluster_incarnation& x,
                     const cluster_incarnation& y) noexcept {
  return x < y;
}

/// `16 hex digits@ISO-8601 UTC time`, e.g.
/// `00000000000004d2@2023-11-14T22:13:20.000Z`; `none` when not set.
std::string to_string(const cluster_incarnation& x);

} // namespace troupe::cluster
