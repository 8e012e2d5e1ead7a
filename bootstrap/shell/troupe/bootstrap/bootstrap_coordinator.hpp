#pragma once

#include <memory>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "troupe/bootstrap/bootstrap_process.hpp"
#include "troupe/bootstrap/contact_point_discovery.hpp"
#include "troupe/cluster/cluster_handle.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_client.hpp"
#include "troupe/runtime/module.hpp"

/// @file
/// The bootstrap coordinator: one actor per node that forms or joins a
/// cluster from discovered contact points (Akka Management's
/// `BootstrapCoordinator`). It owns a `bootstrap_process`
/// (bootstrap_process.hpp: every rule lives there) and carries out its
/// effects: runs discovery through a `contact_point_discovery`, probes
/// `GET http://host:port/bootstrap/seed-nodes` with the runtime's HTTP
/// client, and hands the decision to the cluster daemon
/// (`cluster_handle::join` with the reported seed nodes, or with this
/// node itself to found). It follows the daemon's view and tells the
/// process when this node is a member; from then on it asks nothing.
///
/// Logging (component "bootstrap"): one INFO line per change of the
/// process's status and per decision; a WARNING when a contact point's
/// probe fails with a new cause (connection refused, timeout, HTTP status,
/// a bad answer) or discovery fails with a new cause, and an INFO when it
/// answers again.
///
/// Threading: the process lives in the actor's state; discovery answers
/// arrive as messages. `bootstrap_handle::start` may be called from any
/// thread.

namespace troupe::bootstrap {

/// The bootstrap module: the `cluster.bootstrap.*` keys (the settings' and
/// every method's) and the message types of the coordinator.
runtime::module bootstrap_module();

/// What the coordinator needs.
struct bootstrap_coordinator_settings {
  bootstrap_settings bootstrap;
  /// The discovery method (not null).
  std::shared_ptr<contact_point_discovery> discovery;
  /// The clock of the process's timestamps; null: the actor system's.
  const runtime::clock_source* clock = nullptr;
  /// The HTTP client of the probes; null: the coordinator spawns its own
  /// (tests pass one that answers from simulated nodes).
  runtime::http_client_actor http;
  /// Only for planted-bug tests.
  planted_bug bug = planted_bug::none;
};

/// A running coordinator (or none, when bootstrap is off).
class bootstrap_handle {
public:
  bootstrap_handle() = default;

  /// Spawns the coordinator for `cluster`'s node and starts it. The
  /// daemon must have no seed nodes (it waits for a join).
  static bootstrap_handle start(caf::actor_system& sys,
                                cluster::cluster_handle cluster,
                                bootstrap_coordinator_settings settings);

  /// Reads `cluster.bootstrap.*` from `node`'s configuration; when a
  /// discovery method is set, builds it (the management port of this
  /// node, `management_port`, is the fallback contact-point port unless
  /// `cluster.bootstrap.contact_point_port` is set) and starts the
  /// coordinator, which the node stops in its coordinated shutdown.
  /// Errors name the key (bad settings, a method that cannot start).
  static runtime::expected<bootstrap_handle>
  start(runtime::node& node, cluster::cluster_handle cluster,
        uint16_t management_port);

  /// False when bootstrap is off.
  bool enabled() const noexcept {
    return static_cast<bool>(actor_);
  }

  const caf::actor& actor() const noexcept {
    return actor_;
  }

private:
  caf::actor actor_;
};

} // namespace troupe::bootstrap
