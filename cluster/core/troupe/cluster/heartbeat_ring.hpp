#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "troupe/runtime/unique_address.hpp"

/// @file
/// Which nodes a node sends heartbeats to: Akka's `HeartbeatNodeRing`.
///
/// The members are placed on a ring in the order of a deterministic hash of
/// their unique address (so that the neighbours of a node are not the nodes
/// next to it in address order, which are often on the same rack or host),
/// and each node heartbeats the next `monitored_by_nr_of_members` nodes
/// after itself. Every node computes the same ring from the same member set,
/// so every node is monitored by about that many others.
///
/// Differences from Akka, and why:
/// - The ring hash is `ring_hash` below (FNV-1a over the address bytes plus
///   a 64-bit finalizer). Akka uses the JVM hash code of `UniqueAddress`
///   (the uid's); troupe needs one that is the same on every platform and
///   spreads nodes even when tests use small, sequential uids.
/// - The ring is a mutable value with add/remove instead of an immutable
///   case class; copy it to keep the old one.

namespace troupe::cluster {

using runtime::unique_address;

/// The position of `x` on the heartbeat ring: FNV-1a 64 (offset basis
/// 14695981039346656037, prime 1099511628211) over the host's bytes, one 0
/// byte, the port as 2 bytes big-endian and the uid as 8 bytes big-endian,
/// then the splitmix64 finalizer (x ^= x >> 30; x *= 0xbf58476d1ce4e5b9;
/// x ^= x >> 27; x *= 0x94d049bb133111eb; x ^= x >> 31) so that addresses
/// that differ in one byte land far apart. Stable across platforms and
/// releases: changing it changes who monitors whom during a rolling
/// upgrade (harmless, but noisy).
uint64_t ring_hash(const unique_address& x) noexcept;

/// The ring of members for heartbeat target selection.
///
/// Invariants: `self` is always one of `nodes()`; `unreachable()` is a
/// subset of what was marked and not since removed (it may name nodes that
/// are not in `nodes()`, as in Akka, which only matters for removal).
/// A plain value; not thread-safe.
class heartbeat_node_ring {
public:
  /// A ring of `nodes` plus `self`, of which `unreachable` are currently
  /// unreachable; `monitored_by_nr_of_members` must be at least 1
  /// (asserts).
  heartbeat_node_ring(unique_address self, std::set<unique_address> nodes,
                      std::set<unique_address> unreachable,
                      size_t monitored_by_nr_of_members);

  /// The receivers of `sender`'s heartbeats (`sender` need not be on the
  /// ring). When the ring has at most `monitored_by_nr_of_members` nodes
  /// besides `sender`, that is every other node. Otherwise the walk starts
  /// after `sender` in ring order, wraps around once, and takes reachable
  /// nodes until it has `monitored_by_nr_of_members` of them; an
  /// unreachable node met on the way is taken too (without counting) as
  /// long as fewer than `monitored_by_nr_of_members` nodes were taken in
  /// total, and skipped after that. Akka keeps those unreachable nodes
  /// monitored so that the leader can still act (e.g. remove downed nodes)
  /// when many nodes stop at once and nobody else monitors some of them
  /// (Akka issue #16624).
  std::set<unique_address> receivers(const unique_address& sender) const;

  /// `receivers(self())`, cached.
  const std::set<unique_address>& my_receivers() const noexcept {
    return my_receivers_;
  }

  /// Adds `node` (no-op when present).
  void add(const unique_address& node);

  /// Removes `node` from the nodes and from the unreachable set (no-op
  /// when in neither). Removing `self` is a programmer error (asserts).
  void remove(const unique_address& node);

  /// Marks `node` unreachable or reachable again.
  void set_unreachable(const unique_address& node, bool unreachable);

  /// Replaces the nodes (`self` is added) and the unreachable set.
  void reset(std::set<unique_address> nodes,
             std::set<unique_address> unreachable);

  bool contains(const unique_address& node) const {
    return nodes_.count(node) != 0;
  }

  const unique_address& self() const noexcept {
    return self_;
  }

  const std::set<unique_address>& nodes() const noexcept {
    return nodes_;
  }

  const std::set<unique_address>& unreachable() const noexcept {
    return unreachable_;
  }

  size_t monitored_by_nr_of_members() const noexcept {
    return monitored_by_nr_of_members_;
  }

  /// The nodes in ring order (ascending `ring_hash`, ties by address).
  const std::vector<unique_address>& ring_order() const noexcept {
    return ring_;
  }

private:
  void rebuild();

  unique_address self_;
  std::set<unique_address> nodes_;
  std::set<unique_address> unreachable_;
  size_t monitored_by_nr_of_members_;
  std::vector<unique_address> ring_;
  std::set<unique_address> my_receivers_;
};

} // namespace troupe::cluster
