#pragma once

#include <atomic>
#include <limits>
#include <memory>
#include <mutex>

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "troupe/cluster/cluster_events.hpp"
#include "troupe/cluster/join_config_checker.hpp"
#include "troupe/cluster/membership_engine.hpp"
#include "troupe/cluster/membership_settings.hpp"
#include "troupe/cluster/remote_ref.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// The cluster daemon: one actor per node that owns the node's
/// `membership_engine` (Akka's ClusterCoreDaemon, heartbeat sender and
/// event publisher in one thin shell). It turns membership messages from
/// other nodes, commands and its own timer into engine calls, and carries
/// out the engine's effects in the engine's order: send (over remoting, on
/// the transport's control lane), publish events to subscribers, tell
/// remoting about removed nodes (`node_removed`: remote watches on them
/// fire at once, the transport quarantines them
/// `quarantine_removed_after` later), log INFO lines, and finally call the
/// shutdown hook. Applications use `cluster_handle`
/// (cluster_handle.hpp); this header is the actor's protocol.
///
/// Threading: the engine lives in the actor's state and is touched only by
/// the actor; `spawn_cluster_daemon` may be called from any thread. The
/// shutdown hook runs on the daemon's thread and must not block on the
/// actor system (request a stop instead). docs/design/cluster-daemon.md
/// explains the effects, the timer and the quarantine delay.

namespace troupe::cluster {

/// The name the daemon is published under on every node; membership
/// messages are sent to `remote_ref{node, daemon_name}` (uid 0 for a seed
/// whose incarnation is not known yet).
inline constexpr const char* daemon_name = "troupe.cluster.daemon";

using join_atom = caf::atom_constant<caf::atom("join")>;
using leave_atom = caf::atom_constant<caf::atom("leave")>;
using down_atom = caf::atom_constant<caf::atom("down")>;
using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
using unsubscribe_atom = caf::atom_constant<caf::atom("unsubscr")>;
using self_member_atom = caf::atom_constant<caf::atom("selfmember")>;
using state_atom = caf::atom_constant<caf::atom("state")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using start_atom = caf::atom_constant<caf::atom("start")>;
using view_atom = caf::atom_constant<caf::atom("view")>;
using hold_exit_atom = caf::atom_constant<caf::atom("holdexit")>;
using contacts_atom = caf::atom_constant<caf::atom("contacts")>;
using foreign_atom = caf::atom_constant<caf::atom("foreign")>;

namespace detail {

template <class Variant>
struct daemon_actor_of;

template <class... Ts>
struct daemon_actor_of<std::variant<Ts...>> {
  using type = caf::typed_actor<
    caf::reacts_to<remote_ref, Ts>...,
    caf::reacts_to<join_atom, std::vector<endpoint>>,
    caf::reacts_to<leave_atom, unique_address>,
    caf::reacts_to<down_atom, unique_address>,
    caf::reacts_to<hold_exit_atom, std::string, bool>,
    caf::reacts_to<contacts_atom, std::vector<endpoint>>,
    caf::reacts_to<foreign_atom, unique_address, cluster_incarnation>,
    caf::reacts_to<subscribe_atom, caf::actor>,
    caf::reacts_to<unsubscribe_atom, caf::actor>,
    caf::reacts_to<subscribe_atom, view_atom, caf::actor>,
    caf::replies_to<self_member_atom>::with<member>,
    caf::replies_to<state_atom>::with<current_cluster_state>,
    caf::reacts_to<tick_atom, int64_t>, caf::reacts_to<start_atom>>;
};

} // namespace detail

/// The daemon's protocol:
/// - `(remote_ref from, m)` for every alternative `m` of
///   `membership_message`: a message from the engine of node `from.node`
///   (delivered by remoting, which authenticated the node);
/// - `(join, seeds)`, `(leave, node)`, `(down, node)`: the commands;
/// - `(holdexit, holder, hold)`: holds (true) or lets go (false) this
///   node's exit for `holder` (membership_engine::hold_exit: an exiting
///   node confirms its exit only when no holder holds it);
/// - `(contacts, endpoints)`: the endpoints probed for another cluster of
///   this name besides the seed nodes
///   (membership_engine::set_contact_endpoints);
/// - `(foreign, peer, incarnation)`: a handshake with `peer` named another
///   cluster incarnation (sent by remoting's transport listener;
///   membership_engine::foreign_incarnation_met);
/// - `(subscribe, actor)`: `actor` receives `current_cluster_state`, then
///   every cluster event (the alternative of `cluster_event`, e.g.
///   `member_up`) in order, until `(unsubscribe, actor)` or it stops;
/// - `(subscribe, view, actor)`: `actor` receives `(view, gossip)` with the
///   latest gossip now and after every call that changed it (members,
///   reachability records, seen set), until `(unsubscribe, actor)` or it
///   stops. For the split brain resolver, which needs the reachability
///   records (observer and subject) the events leave out (Akka's resolver
///   subscribes to the internal `ReachabilityChanged` and `SeenChanged`);
/// - `(selfmember) -> member` (error `membership_errc::unknown_member`
///   while this node is not a member), `(state) -> current_cluster_state`;
/// - `(tick, due)`: the daemon's own timer (nanoseconds since the clock's
///   epoch of the tick it was scheduled for);
/// - `(start)`: starts the engine (sent once by `spawn_cluster_daemon`
///   after publishing, so that no answer to the first InitJoin finds the
///   name unpublished).
using cluster_daemon = detail::daemon_actor_of<membership_message>::type;

/// Called once, on the daemon's thread, when the engine decides this node
/// must stop (it was downed or removed with `cluster.shutdown_when_downed`,
/// it was removed after leaving, or it gave up joining). The argument is
/// the engine's decision. Must not block (it runs in the daemon's actor).
using shutdown_hook = std::function<void(const self_stop& stop)>;

/// Called once, on the daemon's thread, when this node first sees itself
/// leaving (its own leave or one asked by another member, e.g. through the
/// management API). Akka runs the node's coordinated shutdown then; so does
/// `cluster_handle::start` on a runtime node. Must not block.
using leaving_hook = std::function<void()>;

/// Counters of one daemon for metrics (management's `/metrics`): written
/// by the daemon's thread, read from any (relaxed atomics; each value is
/// monotonic, two values need not be from one instant).
struct membership_counters {
  /// Gossip messages sent (`gossip_envelope`: one per gossip round and
  /// target, Akka's gossip ticks, plus the replies that carry a newer
  /// version).
  std::atomic<uint64_t> gossip_sent{0};
  /// Gossip messages received from other members.
  std::atomic<uint64_t> gossip_received{0};
  /// `leader_changed` events this node published (its view of the leader
  /// changed, including to and from none).
  std::atomic<uint64_t> leader_changes{0};
  /// heartbeat_sender_state::latest_answered in nanoseconds of this node's
  /// clock since its epoch: max() while this node has no active receiver
  /// (alone: no other member can take over its work), min() before the
  /// first answer. Written by the daemon after every step; read by
  /// cluster_handle::last_confirmed.
  std::atomic<int64_t> last_confirmed_ns{std::numeric_limits<int64_t>::min()};
  /// Other clusters of this name met for the first time (or again after
  /// they were forgotten): one per detection that was logged as an error.
  std::atomic<uint64_t> foreign_detections{0};

  /// The latest incarnation report (written by the daemon when it changes).
  incarnation_report report() const {
    std::lock_guard guard{report_mtx_};
    return report_;
  }

  /// Replaces the report (the daemon).
  void set_report(incarnation_report r) {
    std::lock_guard guard{report_mtx_};
    report_ = std::move(r);
  }

private:
  mutable std::mutex report_mtx_;
  incarnation_report report_;
};

/// What the daemon needs besides the actor system.
struct cluster_daemon_settings {
  /// The membership settings (`cluster.*`; seed_nodes non-empty: join at
  /// start).
  membership_settings membership;
  /// This node's join configuration (values of the checked keys).
  join_config config;
  /// The keys checked on join (default: protocol version and cluster
  /// name).
  join_config_checker checker = default_join_config_checker();
  /// Seed of the gossip-target choice (0: drawn from the node's uid).
  uint64_t seed = 0;
  /// See `shutdown_hook`; empty: only logged.
  shutdown_hook on_shutdown;
  /// See `leaving_hook`; empty: nothing.
  leaving_hook on_leaving;
  /// How long after its removal a node is quarantined in the transport
  /// (no more traffic with its uid): the removed node must still receive
  /// the gossip that removed it, or it would never learn it and stop
  /// (Akka's quarantine-removed-node-after, 5 s). As in Akka, the remote
  /// watches on the node fire at removal, not at quarantine: the daemon
  /// calls `remoting_handle::node_removed` at once with this delay, and
  /// remoting quarantines the node when it has passed (remoting.hpp).
  runtime::timespan quarantine_removed_after = std::chrono::seconds{5};
  /// The monotonic clock for the engine; nullptr: the actor system's clock
  /// (simulated under CAF's test coordinator). Must outlive the daemon.
  const runtime::clock_source* clock = nullptr;
  /// Where the daemon counts (nullptr: it does not).
  std::shared_ptr<membership_counters> counters;
};

/// Spawns the daemon for the node of `remoting`, publishes it as
/// `daemon_name` and starts the engine (which joins the seed nodes, if
/// any). The daemon tells the transport this node's cluster incarnation
/// whenever it changes (transport::set_incarnation), and remoting tells
/// the daemon of handshakes that named another one
/// (remoting_handle::on_foreign_incarnation). Errors: remoting's publish
/// errors (name_taken, not_running).
runtime::expected<cluster_daemon>
spawn_cluster_daemon(caf::actor_system& sys, remoting_handle remoting,
                     cluster_daemon_settings settings);

} // namespace troupe::cluster
