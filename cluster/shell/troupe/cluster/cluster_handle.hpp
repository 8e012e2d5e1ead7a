#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/fwd.hpp>

#include "troupe/cluster/cluster_daemon.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/node.hpp"

/// @file
/// The application's view of cluster membership (Akka's `Cluster`
/// extension): join, leave, down, subscribe to events, read the state.
///
/// Semantics are Akka Cluster's (docs/guides/cluster.md explains them for
/// operators; docs/design/cluster-daemon.md the shell): `leave` is the
/// graceful way out (leaving -> exiting -> removed, moved by the leader at
/// convergence), `down` the forced one (the leader removes a down member at
/// the next convergence even if it is unreachable). A node that learns it
/// was downed or removed, or that gives up joining, stops: the shutdown
/// hook runs.
///
/// Subscribers (any actor) first receive `current_cluster_state`, then the
/// events as the alternatives of `cluster_event` (`member_up`,
/// `unreachable_member`, ...), in the order the node saw them. A subscriber
/// that stops is unsubscribed.
///
/// Threading: every member may be called from any thread. The blocking
/// queries (`self_member`, `state`) must not be called from inside an actor
/// (use `request(actor(), timeout, state_atom::value)` there) nor under
/// CAF's deterministic test coordinator (it would wait forever).

namespace troupe::cluster {

/// A reading of `membership_counters` (cluster_daemon.hpp).
struct membership_counter_values {
  uint64_t gossip_sent = 0;
  uint64_t gossip_received = 0;
  uint64_t leader_changes = 0;
  /// Other clusters of this name met (membership_counters).
  uint64_t foreign_detections = 0;
};

/// A small value over the node's cluster daemon; copies share it.
/// Default-constructed: invalid (commands do nothing, queries fail with
/// remoting_errc::not_running).
class cluster_handle {
public:
  /// Spawns the daemon on `remoting`'s node and starts it (which joins
  /// `settings.membership.seed_nodes` if any). Errors: remoting's publish
  /// errors (name_taken when a daemon already runs on this node,
  /// not_running).
  static runtime::expected<cluster_handle>
  start(caf::actor_system& sys, remoting_handle remoting,
        cluster_daemon_settings settings);

  /// Starts the daemon of `node` from its configuration: the membership
  /// keys (`cluster.*`, `cluster.failure_detector.*`; a non-empty
  /// `cluster.seed_nodes` joins at start), the join configuration
  /// (`cluster.name` and `troupe.protocol_major`, both must match, and
  /// every key a module marked with `config_schema::check_on_join`, which
  /// must match when both nodes have it: join_config_of and
  /// join_config_checker_of in join_config_checker.hpp).
  ///
  /// Coordinated shutdown (coordinated_shutdown.hpp): when the daemon
  /// decides this node must stop, `hook` runs (if any), the stop is logged
  /// (ERROR when the cluster stopped the node: downed, removed without
  /// leaving, refused), and the node's coordinated shutdown starts with the
  /// matching reason (cluster_downing, cluster_removed,
  /// cluster_join_unsuccessful, cluster_merge when its cluster left to join
  /// another of the same name, or cluster_leaving after its own leave);
  /// when this node first sees itself leaving (a leave asked here or by
  /// another member, e.g. through the management API) it starts with
  /// cluster_leaving, as Akka's does. Both also set the process's stop
  /// flag (`runtime::request_stop`) so that a main loop wakes up. The
  /// daemon adds its tasks: `cluster_leave` (leave, unless the cluster
  /// stopped the node, and wait until leaving), `cluster_exiting` (wait
  /// until exiting: the singletons were handed over), `cluster_exiting_done`
  /// (wait until removed, or exiting when no member stays to remove it),
  /// `cluster_shutdown` (stop the daemon). Errors: invalid_settings naming
  /// the key, and those of the other `start`.
  static runtime::expected<cluster_handle>
  start(runtime::node& node, remoting_handle remoting, shutdown_hook hook = {});

  cluster_handle() = default;

  bool valid() const noexcept {
    return sys_ != nullptr;
  }

  /// The daemon actor (protocol in cluster_daemon.hpp).
  const cluster_daemon& actor() const noexcept {
    return daemon_;
  }

  /// This node's unique address.
  const unique_address& self_address() const noexcept {
    return self_;
  }

  /// Joins a cluster through `seeds` (Akka's `joinSeedNodes`); ignored once
  /// this node is a member.
  void join(std::vector<endpoint> seeds) const;

  /// Asks `node` to leave (graceful). Ignored unless it is a member that
  /// is not yet leaving.
  void leave(const unique_address& node) const;

  /// Marks `node` down (forced).
  void down(const unique_address& node) const;

  /// Sets the endpoints (cluster host:port, besides `cluster.seed_nodes`)
  /// that this node probes every `cluster.incarnation_probe_interval` for
  /// another cluster of its name (membership_engine::set_contact_endpoints):
  /// the bootstrap coordinator hands it the cluster addresses of the
  /// contact points it discovered. Replaces the previous list.
  void set_contact_endpoints(std::vector<endpoint> endpoints) const;

  /// This node's cluster incarnation, its merge mark and the other clusters
  /// of its name that it met (lock-protected copy; any thread, also inside
  /// actors: it never waits for the daemon). Empty for an invalid handle.
  incarnation_report incarnation() const;

  /// Holds (`hold` true) or lets go (false) this node's exit from the
  /// cluster for `holder` (a name such as `singleton:<type>`; idempotent per
  /// holder). While any holder holds it, this node, once exiting, does not
  /// confirm its exit, so the leader does not remove it while it is
  /// reachable: the cluster singleton manager holds it while it may still
  /// run its instance or hold its lease, and lets go when it has handed
  /// over (Akka: CoordinatedShutdown's cluster-exiting phase waits for the
  /// singleton's hand-over). Letting go of the last hold of an exiting node
  /// confirms at once. A holder must let go in bounded time; a node that
  /// the others see as unreachable is removed anyway
  /// (membership_engine::hold_exit).
  void hold_exit(std::string holder, bool hold) const;

  /// `subscriber` receives the current state, then every event.
  void subscribe(const caf::actor& subscriber) const;

  template <class Handle>
  void subscribe(const Handle& subscriber) const {
    subscribe(caf::actor_cast<caf::actor>(subscriber));
  }

  /// `subscriber` receives `(view_atom, gossip)`: the latest gossip now
  /// and whenever it changes (cluster_daemon.hpp; for the split brain
  /// resolver, which needs the reachability records).
  void subscribe_view(const caf::actor& subscriber) const;

  /// Stops the events (and views) to `subscriber`.
  void unsubscribe(const caf::actor& subscriber) const;

  /// This node's member record (blocking). Errors: membership_errc::
  /// unknown_member while not a member, and once this node's membership
  /// stopped (it learned it was removed or downed, or was refused); CAF's
  /// request_timeout after `timeout`.
  runtime::expected<member> self_member(runtime::timespan timeout
                                        = std::chrono::seconds{5}) const;

  /// A snapshot of the membership as this node sees it (blocking).
  runtime::expected<current_cluster_state>
  state(runtime::timespan timeout = std::chrono::seconds{5}) const;

  /// The daemon's counters (gossip, leader changes) for metrics; all zero
  /// for an invalid handle. Lock-free.
  membership_counter_values counters() const noexcept;

  /// When the cluster last confirmed this node: the send time (this
  /// node's clock since its epoch, the daemon's clock) of the newest
  /// heartbeat that a member it monitors answered
  /// (heartbeat_sender_state::latest_answered; a member that has this
  /// node down or removed does not answer). `timespan::max()` while this node
  /// monitors no other member (it is alone: nobody can take over its
  /// work) and for an invalid handle; `timespan::min()` before the first
  /// answer and once the node stops. A frozen or cut-off node sees it stop
  /// moving while the others may already be downing it: sharding's
  /// entity_context::member_confirmed compares it with the clock. troupe's
  /// own; Akka has no such reading. Lock-free; any thread.
  runtime::timespan last_confirmed() const noexcept;

  /// Unpublishes and stops the daemon without leaving (as a crash would
  /// look to the others). Idempotent.
  void stop() const;

private:
  caf::actor_system* sys_ = nullptr;
  cluster_daemon daemon_;
  std::shared_ptr<membership_counters> counters_;
  unique_address self_;
  remoting_handle remoting_;
};

} // namespace troupe::cluster
