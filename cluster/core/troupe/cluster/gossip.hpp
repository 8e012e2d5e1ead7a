#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "troupe/cluster/cluster_incarnation.hpp"
#include "troupe/cluster/member.hpp"
#include "troupe/cluster/reachability.hpp"
#include "troupe/cluster/vector_clock.hpp"

/// @file
/// The replicated membership state: Akka Cluster's `Gossip`.

namespace troupe::cluster {

/// The seen set and the reachability table of a gossip (Akka's
/// `GossipOverview`).
struct gossip_overview {
  /// The nodes that have seen this exact version of the gossip.
  std::set<unique_address> seen;
  cluster::reachability reachability;

  friend bool operator==(const gossip_overview&, const gossip_overview&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, gossip_overview& x) {
  return f(x.seen, x.reachability);
}

/// The membership state that nodes gossip to each other (Akka's `Gossip`):
/// the members, the overview (seen set and reachability), the version (a
/// vector clock with one entry per node that changed the state) and the
/// tombstones of removed members.
///
/// Invariants (`check_invariants` reports a violation in words):
/// - members are sorted by address, unique, and never have status removed;
/// - no member is tombstoned (a removed unique address never returns);
/// - the seen set, the reachability observers, subjects and observer
///   versions are members;
/// - the version has no entry for a tombstoned node;
/// - a merge mark (`merging_into`) needs an incarnation and differs from
///   it.
///
/// Mutations follow Akka's `Gossip` methods; they do not version the
/// gossip: the node that changes it calls `increment(self)` and
/// `only_seen(self)` afterwards, as Akka's `updateLatestGossip`. A plain
/// value; thread-safe as any value.
class gossip {
public:
  gossip() = default;

  /// A gossip with `members` (sorted here), nothing seen, no reachability
  /// records, version empty.
  explicit gossip(std::vector<member> members);

  /// The members, sorted by address.
  const std::vector<member>& members() const noexcept {
    return members_;
  }

  /// The member with `node`'s unique address, or null.
  const member* find(const unique_address& node) const noexcept;

  bool has_member(const unique_address& node) const noexcept {
    return find(node) != nullptr;
  }

  const gossip_overview& overview() const noexcept {
    return overview_;
  }

  const cluster::reachability& reachability() const noexcept {
    return overview_.reachability;
  }

  /// The reachability table, for the failure detector's verdicts
  /// (observer = this node). Observers and subjects must be members.
  cluster::reachability& reachability() noexcept {
    return overview_.reachability;
  }

  const vector_clock& version() const noexcept {
    return version_;
  }

  /// Removed unique addresses with the time of their removal.
  const std::map<unique_address, wall_time>& tombstones() const noexcept {
    return tombstones_;
  }

  /// Adds `m` when no member has its address (Akka's `:+`). A tombstoned
  /// address is refused (returns false): a removed incarnation never
  /// comes back; it must join again with a new uid.
  bool add(member m);

  /// Replaces the members with the same addresses as `changed`, adding
  /// those that are missing (Akka's `update`).
  void update(std::span<const member> changed);

  /// Bumps this gossip's version at `node` (Akka's `:+ vclockNode`).
  void increment(const unique_address& node);

  /// Marks this version as seen by `node`.
  void seen(const unique_address& node);

  /// Replaces the seen set with `{node}` (after a local change).
  void only_seen(const unique_address& node);

  /// Empties the seen set.
  void clear_seen();

  /// Adds `other`'s seen set (for two gossips of the same version, Akka's
  /// `mergeSeen`).
  void merge_seen(const gossip& other);

  /// Whether `node` has seen this version.
  bool is_seen_by(const unique_address& node) const {
    return overview_.seen.count(node) > 0;
  }

  const std::set<unique_address>& seen_by() const noexcept {
    return overview_.seen;
  }

  /// Moves `node` to down and drops it from the seen set (Akka's
  /// `markAsDown`). Returns false (and changes nothing) when `node` is not
  /// a member or is already down.
  bool mark_as_down(const unique_address& node);

  /// Removes the member `node` (Akka's `remove`): drops it from members,
  /// seen set and reachability (as observer and subject), prunes it from
  /// the version, and tombstones it with `at`, so that a merge with an
  /// older gossip does not bring it back.
  void remove(const unique_address& node, wall_time at);

  /// Prunes `node` from the version only (Akka's `prune`).
  void prune(const unique_address& node);

  /// Drops tombstones older than or equal to `remove_earlier_than`
  /// (Akka's `pruneTombstones`; the leader calls it with now minus
  /// `prune_gossip_tombstones_after`).
  void prune_tombstones(wall_time remove_earlier_than);

  /// The reachability table without the observations of down members
  /// (Akka's `reachabilityExcludingDownedObservers`).
  cluster::reachability reachability_excluding_downed_observers() const;

  /// Whether `from` can reach `to`: `to` is a member and `from` has no
  /// unreachable/terminated record of it.
  bool is_reachable(const unique_address& from, const unique_address& to) const;

  /// Every role of every member.
  std::set<std::string> all_roles() const;

  /// The cluster incarnation this gossip belongs to (cluster_incarnation.hpp):
  /// set by the founding node, carried unchanged ever after. Not set in a
  /// gossip that no cluster owns yet (the empty gossip of a node that has
  /// not joined).
  const cluster_incarnation& incarnation() const noexcept {
    return incarnation_;
  }

  /// Sets the incarnation (the founding node, once).
  void set_incarnation(const cluster_incarnation& x) noexcept {
    incarnation_ = x;
  }

  /// Set when this cluster decided to leave and join the cluster of that
  /// incarnation (cluster_merge.hpp): every member that sees it stops
  /// (coordinated shutdown, reason cluster_merge) and is restarted into
  /// the other cluster. Monotonic: once set it stays set; of two winners
  /// the older one is kept (`mark_merging_into`, `merge`).
  const cluster_incarnation& merging_into() const noexcept {
    return merging_into_;
  }

  /// Marks this cluster as leaving to join `winner` (not this gossip's own
  /// incarnation). Keeps an older winner that is already marked; returns
  /// true if the mark changed.
  bool mark_merging_into(const cluster_incarnation& winner) noexcept;

  friend bool operator==(const gossip&, const gossip&) = default;

  template <class Inspector>
  friend auto inspect(Inspector& f, gossip& x) {
    return f(x.members_, x.overview_, x.version_, x.tombstones_, x.incarnation_,
             x.merging_into_);
  }

  friend gossip merge(const gossip& x, const gossip& y);

private:
  std::vector<member> members_;
  gossip_overview overview_;
  vector_clock version_;
  std::map<unique_address, wall_time> tombstones_;
  cluster_incarnation incarnation_;
  cluster_incarnation merging_into_;
};

/// Merges two gossips with concurrent versions (Akka's `Gossip.merge`):
/// 1. tombstones: union; for a node in both, the later removal time;
/// 2. version: pointwise maximum, then every tombstoned node pruned;
/// 3. members: per address the `highest_priority_of` both records, then
///    every tombstoned address dropped;
/// 4. reachability: `merge` restricted to the merged members;
/// 5. seen set: empty; nobody has seen the merged version yet (the caller
///    marks itself as seen, as Akka's `receiveGossip`);
/// 6. incarnation: the one that is set (of two different ones, which the
///    membership engine never merges, the older, so the laws hold);
///    merging_into: the one that is set, of two the older (monotonic).
///
/// Laws (checked by `check_merge_laws` and the property tests): on gossips
/// that satisfy the invariants, merge is commutative and associative on
/// the whole gossip, and idempotent on the convergent state (members,
/// reachability, version, tombstones): `merge(a, a)` equals `a` except
/// for the seen set, which the merge empties by Akka's rule.
///
/// Differences from Akka, both needed for the laws: Akka's tombstone
/// union keeps its argument's time (not commutative), and Akka drops a
/// tombstoned or down/exiting member only when it is in one gossip alone
/// (not associative: a member up in one gossip, down in a second and
/// missing in a third survives or vanishes depending on the grouping).
/// Here every tombstoned member is dropped and a member present in either
/// gossip is kept otherwise; tombstones cover what Akka's one-sided rule
/// did before tombstones existed.
gossip merge(const gossip& x, const gossip& y);

/// Whether the convergent state (members, reachability, version,
/// tombstones, incarnation and merge mark) of `x` and `y` is equal; the
/// seen set is not compared.
bool same_convergent_state(const gossip& x, const gossip& y);

/// The first violated invariant of `x` (see `gossip`) in words, or none.
std::optional<std::string> check_invariants(const gossip& x);

/// Checks the merge laws on three gossips: commutativity on each pair,
/// associativity on the triple (both on the whole gossip), idempotence of
/// each on the convergent state. Returns the first violation in words
/// (naming the law and the part that differs), or none. The simulator
/// calls it on every gossip exchanged. Inputs should satisfy the
/// invariants (a violation of them shows up as a failed idempotence).
std::optional<std::string> check_merge_laws(const gossip& a, const gossip& b,
                                            const gossip& c);

/// A multi-line rendering: incarnation (and merge mark), members, seen set,
/// reachability, version, tombstones.
std::string to_string(const gossip& x);

} // namespace troupe::cluster
