#pragma once

#include <chrono>
#include <cstddef>
#include <set>
#include <string>
#include <variant>

#include "troupe/cluster/transport.hpp"
#include "troupe/downing/decision.hpp"
#include "troupe/downing/downing_view.hpp"

/// @file
/// The split brain resolver's strategies and their decision rules: Akka's
/// `KeepMajority`, `StaticQuorum`, `KeepOldest`, `DownAllNodes`,
/// `LeaseMajority` (akka.cluster.sbr, DowningStrategy.scala) and the
/// keep-referee strategy of Lightbend's original resolver (kept by
/// Akka.NET). Pure functions of a `downing_view`; docs/design/downing.md
/// has the decision table. An empty `role` means "every member"; a role
/// means "count only the members with this role" (scenario D6), never
/// "only members with this role decide".

namespace troupe::downing {

/// Keep the side with more counted members; on equal halves the side with
/// the lowest address (among the counted members) survives.
struct keep_majority {
  std::string role;
  friend bool operator==(const keep_majority&, const keep_majority&) = default;
};

/// Keep the side with at least `quorum_size` counted members. With more
/// than 2 * quorum_size - 1 counted members at decision time: down_all
/// with an error (Akka; DESIGN.md §10).
struct static_quorum {
  /// At least 1 (validated by the settings).
  size_t quorum_size = 0;
  std::string role;
  friend bool operator==(const static_quorum&, const static_quorum&) = default;
};

/// Keep the side with the oldest counted member; with `down_if_alone`, an
/// oldest that is alone against at least two others goes instead.
struct keep_oldest {
  bool down_if_alone = true;
  std::string role;
  friend bool operator==(const keep_oldest&, const keep_oldest&) = default;
};

/// Down every member on any unreachability.
struct down_all_nodes {
  friend bool operator==(const down_all_nodes&, const down_all_nodes&)
    = default;
};

/// The side that acquires the lease `lease_name` survives; the minority
/// waits `acquire_lease_delay_for_minority` before trying, so that the
/// majority usually wins. `release_after`: how long the holder keeps the
/// lease after the downed members were removed (the shell's timer).
struct lease_majority {
  std::string role;
  /// Empty: the shell's default (`<cluster name>-troupe-sbr`).
  std::string lease_name;
  timespan acquire_lease_delay_for_minority = std::chrono::seconds{2};
  timespan release_after = std::chrono::seconds{40};
  friend bool operator==(const lease_majority&, const lease_majority&)
    = default;
};

/// Keep the side that reaches the `referee` (host and port; any uid);
/// when that side has fewer than `down_all_if_less_than_nodes` counted
/// members, down all. A side without the referee downs itself.
struct keep_referee {
  cluster::endpoint referee;
  size_t down_all_if_less_than_nodes = 1;
  friend bool operator==(const keep_referee&, const keep_referee&) = default;
};

/// A configured strategy: a closed set.
using strategy = std::variant<keep_majority, static_quorum, keep_oldest,
                              down_all_nodes, lease_majority, keep_referee>;

/// The strategy's configuration name: "keep_majority", "static_quorum",
/// "keep_oldest", "down_all", "lease_majority" or "keep_referee".
const char* name_of(const strategy& x) noexcept;

/// The decision of `s` for `view` (Akka's `decide`). Meant for a view with
/// unreachable members, once it has been stable (stability_tracker).
/// With indirectly connected nodes every strategy but down_all decides
/// down_indirectly_connected (lease_majority: acquire_lease_and_down_
/// indirectly_connected with no delay).
decision decide(const strategy& s, const downing_view& view);

/// The nodes `d` downs in `view` (Akka's `nodesToDown`), always a subset
/// of `view.downable()`. For the acquire_lease_* kinds it assumes the
/// lease was acquired; use `after_lease` first otherwise.
///
/// For the indirectly connected kinds: the indirectly connected nodes plus
/// the nodes that `decide(s, ...)` downs in the view without the
/// observations of every indirectly connected node. Akka drops only the
/// records between two indirectly connected nodes and, when that second
/// decision is indirectly connected again, downs all (the double decision
/// of scenario D1, akka/akka#30391); troupe drops every record an
/// indirectly connected node observed (as akka/akka PR #32794 proposes):
/// they are being downed, so what they observe no longer matters, and the
/// second decision cannot be indirectly connected. Should it be anyway,
/// the result is every downable node (Akka's fallback).
std::set<unique_address> nodes_to_down(const strategy& s, const decision& d,
                                       const downing_view& view);

/// The decision to act on once the lease outcome of an acquire_lease_*
/// decision is known (Akka's `reverseDecision`): `acquired` keeps `d`
/// (this side survives and downs the other); not acquired turns
/// acquire_lease_and_down_unreachable into down_reachable and
/// acquire_lease_and_down_indirectly_connected into
/// reverse_down_indirectly_connected (this side goes). Any other decision
/// is returned unchanged. "Acquired" is whatever the lease reports as
/// held: a backend's benign "already exists" on create must reach here as
/// acquired = true (scenario D3).
decision after_lease(const decision& d, bool acquired);

} // namespace troupe::downing
