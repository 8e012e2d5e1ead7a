#pragma once

#include <memory>
#include <optional>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "troupe/cluster/cluster_handle.hpp"
#include "troupe/downing/downing_engine.hpp"
#include "troupe/downing/downing_settings.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/node.hpp"

/// @file
/// The downing actor: the split brain resolver of one node (Akka's
/// `SplitBrainResolver` actor), a thin shell over `downing_engine`
/// (downing_engine.hpp has the rules, docs/design/downing.md the spec).
///
/// It subscribes to the cluster daemon's views (`cluster_handle::
/// subscribe_view`: the latest gossip, first at once, then on every
/// change), feeds them to the engine with the clock's time, runs the
/// engine's timer (`next_tick`), and carries out the effects in the
/// engine's order: release the lease, down the nodes through the cluster
/// handle (self last; a downed node stops through membership's
/// `cluster.shutdown_when_downed`, and the transport's quarantine keeps
/// its uid out), acquire the lease (its answer, a failure or a timeout
/// being `false`, goes back to the engine), write the log lines with
/// `runtime::logger{"downing"}` at their level.
///
/// Protocol (untyped; for tests and the transport's hook):
/// - `(view_atom, gossip)`: from the daemon;
/// - `(tick_atom, int64_t due)`: the actor's own timer;
/// - `(quarantined_atom)`: another node quarantined this one: down self
///   (Akka's `ThisActorSystemQuarantinedEvent`).
///
/// Threading: the engine lives in the actor's state. `downing_handle` may
/// be used from any thread.

namespace troupe::downing {

using quarantined_atom = caf::atom_constant<caf::atom("quarantin")>;

/// What the actor needs besides the actor system and the cluster.
struct downing_actor_settings {
  downing_engine_settings engine;
  /// The resolver's lease (lease_majority); empty: every acquire counts as
  /// refused (logged at ERROR).
  std::optional<lease::lease_handle> lease;
  /// The monotonic clock; nullptr: the actor system's clock (simulated
  /// under CAF's test coordinator). Must outlive the actor.
  const runtime::clock_source* clock = nullptr;
  /// Simulator-style planted bugs (tests only).
  downing_bug bug = downing_bug::none;
};

/// A small value over the node's downing actor; copies share it.
/// Default-constructed (or started with `downing.active_strategy = off`):
/// inactive, `stop` does nothing.
class downing_handle {
public:
  /// Spawns the actor for `cluster`'s node and subscribes it to the views.
  /// Errors: downing::errc::invalid_settings when the settings fail
  /// `validate` (naming the key).
  static runtime::expected<downing_handle>
  start(caf::actor_system& sys, cluster::cluster_handle cluster,
        downing_actor_settings settings);

  /// Starts the resolver of `node` from its configuration (`downing.*`);
  /// nothing (an inactive handle) when `downing.active_strategy` is off.
  /// For lease_majority the lease comes from the `lease.*` keys, named
  /// `downing.lease_majority.lease_name` (empty: `<cluster.name>-troupe-sbr`)
  /// and owned by this node's address. The node's shutdown stops the
  /// actor. Errors: invalid_settings naming the key; the lease's errors.
  static runtime::expected<downing_handle>
  start(runtime::node& node, cluster::cluster_handle cluster);

  downing_handle() = default;

  bool active() const noexcept {
    return static_cast<bool>(actor_);
  }

  const caf::actor& actor() const noexcept {
    return actor_;
  }

  /// Stops the actor. Idempotent.
  void stop() const;

private:
  caf::actor actor_;
};

} // namespace troupe::downing
