#pragma once

#include <cstdint>
#include <string>

#include "troupe/runtime/clock.hpp"

/// @file
/// What the split brain resolver decided: Akka's `DowningStrategy.Decision`
/// closed set (akka.cluster.sbr).

namespace troupe::downing {

using runtime::timespan;

/// The kind of a decision. Which nodes each one downs is
/// `nodes_to_down` (strategy.hpp); the table is in docs/design/downing.md.
enum class decision_kind : uint8_t {
  /// Down the unreachable members (this side survives).
  down_unreachable = 0,
  /// Down the reachable members, self included (this side goes).
  down_reachable,
  /// Down every member.
  down_all,
  /// Down the indirectly connected nodes, plus what the strategy decides
  /// for the rest once their observations are ignored.
  down_indirectly_connected,
  /// After a lease was refused for `acquire_lease_and_down_indirectly_
  /// connected`: down the indirectly connected and the reachable members.
  reverse_down_indirectly_connected,
  /// Another node quarantined this one: down self only (the shell takes
  /// it from the transport, no strategy decides it).
  down_self_quarantined_by_remote,
  /// lease_majority: acquire the lease after `acquire_delay`; when
  /// acquired, down the unreachable, else down the reachable.
  acquire_lease_and_down_unreachable,
  /// lease_majority with indirectly connected nodes: acquire the lease
  /// (no delay); when acquired, as down_indirectly_connected, else as
  /// reverse_down_indirectly_connected.
  acquire_lease_and_down_indirectly_connected,
};

/// The enumerator's name, e.g. "down_unreachable".
const char* to_string(decision_kind x) noexcept;

/// One decision of a strategy. A plain value.
struct decision {
  decision_kind kind = decision_kind::down_unreachable;
  /// For the acquire_lease_* kinds: how long to wait before trying to
  /// acquire (lease_majority: acquire_lease_delay_for_minority on the
  /// minority side, zero otherwise). Zero for every other kind.
  timespan acquire_delay{0};
  /// Not empty when the decision was forced by a rule violation the shell
  /// must log as an error, e.g. static_quorum's cluster that is larger
  /// than 2 * quorum_size - 1 (down_all).
  std::string error;

  /// Whether this decision downs indirectly connected nodes (Akka's
  /// `isIndirectlyConnected`).
  bool is_indirectly_connected() const noexcept;

  /// Whether the lease must be acquired before acting.
  bool is_acquire_lease() const noexcept;

  friend bool operator==(const decision&, const decision&) = default;
};

/// Renders e.g. `down_unreachable` or
/// `acquire_lease_and_down_unreachable (delay 2s)`.
std::string to_string(const decision& x);

} // namespace troupe::downing
