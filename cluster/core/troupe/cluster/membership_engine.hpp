#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "troupe/cluster/cluster_events.hpp"
#include "troupe/cluster/cluster_merge.hpp"
#include "troupe/cluster/gossip.hpp"
#include "troupe/cluster/heartbeat_sender_state.hpp"
#include "troupe/cluster/join_protocol.hpp"
#include "troupe/cluster/membership_settings.hpp"
#include "troupe/cluster/membership_state.hpp"

/// @file
/// The membership engine: one node's whole membership protocol as a pure
/// state machine (Akka's ClusterCoreDaemon, ClusterHeartbeatSender and
/// reaper, and the seed join processes, in one place). The cluster daemon
/// actor (shell) and the seeded simulator (test/sim) drive the same engine:
/// they hand it commands, received messages and clock ticks, and carry out
/// the effects it returns (send, publish, quarantine, shut down, log).
///
/// Semantics follow Akka Cluster 2.6 (docs/design/cluster.md has the state
/// diagram and every rule); where troupe differs it says so below.
///
/// Not thread-safe: one owner (an actor or the simulator) calls it.

namespace troupe::cluster {

// -- gossip messages
// ------------------------------------------------------------

/// A full gossip for `to` (Akka's GossipEnvelope). `to` carries the uid:
/// a new incarnation ignores gossip meant for its predecessor.
struct gossip_envelope {
  unique_address from;
  unique_address to;
  cluster::gossip gossip;
  friend bool operator==(const gossip_envelope&, const gossip_envelope&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, gossip_envelope& x) {
  return f(x.from, x.to, x.gossip);
}

/// "This is the version I have, and who has seen it" (Akka's GossipStatus
/// with the seen set instead of its digest): the receiver answers with its
/// gossip when its own is newer or concurrent, with its status when the
/// sender's is newer, and with nothing when both are the same.
///
/// `incarnation` is the sender's cluster incarnation: a status of another
/// incarnation is never compared with this node's version (it is a
/// detection of another cluster, cluster_merge.hpp).
struct gossip_status {
  unique_address from;
  vector_clock version;
  std::set<unique_address> seen;
  cluster_incarnation incarnation;
  friend bool operator==(const gossip_status&, const gossip_status&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, gossip_status& x) {
  return f(x.from, x.version, x.seen, x.incarnation);
}

/// The member that handled a `join` welcomes the new node with its gossip,
/// which already holds the new node as joining (Akka's Welcome).
struct welcome_gossip {
  unique_address from;
  cluster::gossip gossip;
  friend bool operator==(const welcome_gossip&, const welcome_gossip&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, welcome_gossip& x) {
  return f(x.from, x.gossip);
}

/// An exiting node tells the leader (and the next leader candidate) that
/// it is done with its exit (Akka's ExitingConfirmed): the leader may then
/// remove it without waiting for it to see the newest version.
struct exiting_confirmed {
  unique_address node;
  friend bool operator==(const exiting_confirmed&, const exiting_confirmed&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, exiting_confirmed& x) {
  return f(x.node);
}

/// Every message the engines of two nodes exchange. All go on the
/// transport's control lane: heartbeats and gossip must never wait behind
/// application traffic.
using membership_message
  = std::variant<init_join, init_join_ack, init_join_nack, cluster::join,
                 welcome_gossip, gossip_envelope, gossip_status, heartbeat,
                 heartbeat_response, exiting_confirmed, incarnation_probe,
                 incarnation_probe_answer>;

/// Short name of the alternative, for traces and logs (`gossip_envelope`).
const char* message_name(const membership_message& m) noexcept;

/// The sender a message names (its `from`, `address` or `node` field). The
/// engine ignores a message whose named sender is not the transport's
/// authenticated sender.
const unique_address& claimed_sender(const membership_message& m) noexcept;

// -- effects
// ----------------------------------------------------------------------

/// Time as the engine needs it: the monotonic clock for timers and failure
/// detection, wall time for tombstones (they travel between hosts, whose
/// monotonic clocks share no epoch).
struct clock_reading {
  timestamp now;
  wall_time wall;
};

/// A message for another node. `to.uid == 0`: whoever lives at that
/// host:port (the InitJoin to a seed, whose uid is not known yet).
struct outbound_message {
  unique_address to;
  membership_message message;
};

/// Why this node must stop, as the engine decided it.
enum class self_stop_reason : uint8_t {
  /// Removed (or exiting as the last member) after its own leave.
  left,
  /// Downed (with `shutdown_when_downed`).
  downed,
  /// Removed without having left (it learned so from a tombstone or a
  /// newer view).
  removed,
  /// Gave up joining (shutdown_after_unsuccessful_join_seed_nodes, or its
  /// configuration was refused).
  join_unsuccessful,
  /// Its cluster leaves to join another cluster of the same name
  /// (cluster_merge.hpp): it must be restarted, and then joins the other.
  merging,
};

/// The reason's name, e.g. "downed".
std::string_view to_string(self_stop_reason reason) noexcept;

/// A stop decision: its kind and the text the log shows.
struct self_stop {
  self_stop_reason reason = self_stop_reason::removed;
  std::string text;
};

/// What the owner must do after one call, in this order: send, publish
/// events, tell remoting about removed nodes (`node_removed`: remote
/// watches on them fire at once, the transport quarantines them after
/// quarantine_removed_after), log, and finally shut the node down if
/// `shutdown` is set.
struct membership_effects {
  std::vector<outbound_message> send;
  std::vector<cluster_event> events;
  /// Nodes removed from membership (with their uid).
  std::vector<unique_address> removed;
  /// The moves this node made as leader (empty unless it is the leader).
  std::vector<leader_action> leader_moves;
  /// INFO lines: every membership decision this node took (leader
  /// actions, marking unreachable, joining, leaving, downing).
  std::vector<std::string> info;
  /// ERROR lines: another cluster of this cluster's name was met (once per
  /// foreign incarnation until it is forgotten), and the merge decisions.
  std::vector<std::string> errors;
  /// The foreign incarnations first met in this call (a detection each).
  std::vector<cluster_incarnation> met_foreign;
  /// Set when this node must stop: it was downed or removed, or it gave up
  /// joining.
  std::optional<self_stop> shutdown;

  bool empty() const noexcept {
    return send.empty() && events.empty() && removed.empty() && info.empty()
           && errors.empty() && met_foreign.empty() && !shutdown;
  }
};

// -- the engine
// -------------------------------------------------------------------

/// Bugs the simulator's tests plant to show that its invariant checkers
/// catch them (test/sim). `none` everywhere else; no configuration key
/// reaches this.
enum class planted_bug : uint8_t {
  none = 0,
  /// The node moves some other up member back to joining in its view.
  status_regression,
  /// The node forgets tombstones at once (as if
  /// prune_gossip_tombstones_after were zero).
  forget_tombstones,
  /// The node acts as leader whenever its view has convergence, leader or
  /// not.
  lead_without_being_leader,
  /// The node's cluster never leaves for a merge: it decides and logs as
  /// usual but neither marks its gossip nor obeys a verdict (the
  /// one_cluster_at_end checker must catch it).
  loser_never_leaves,
};

/// One node's membership.
///
/// Inputs: `start` once, then commands (`join`, `leave`, `down`), messages
/// (`receive`) and `tick` whenever `next_tick()` is due (calling it more
/// often is harmless). Time never goes backwards between calls.
///
/// Timers (all from `membership_settings`): gossip every gossip_interval
/// (three times as often while fewer than half of the members have seen
/// the current version, Akka's gossip speed-up), leader actions every
/// leader_actions_interval, the unreachable reaper every
/// unreachable_nodes_reaper_interval, heartbeats every
/// failure_detector.heartbeat_interval, join retries per the join process.
///
/// Differences from Akka: no data centers, no app-version rolling update
/// protocol, and no gossip time-to-live on the receiving side (the
/// transport's queues already drop the oldest frames). An exiting node
/// confirms its exit as soon as it sees itself exiting (Akka waits for the
/// cluster-exiting phase of coordinated shutdown); the leader removes it
/// and sends it the gossip that removed it, so it shuts down at once.
class membership_engine {
public:
  /// `config` is this node's join configuration (checked against a joining
  /// node's by `checker`); `seed` drives the choice of gossip targets.
  membership_engine(unique_address self, std::set<std::string> roles,
                    membership_settings settings, join_config config,
                    join_config_checker checker, uint64_t seed,
                    planted_bug bug = planted_bug::none);

  /// Starts the node: joins the configured seed nodes, if any.
  membership_effects start(clock_reading t);

  /// Joins a cluster through `seeds` (a node may list itself first: it
  /// then self-joins when no other seed answers within seed_node_timeout).
  /// Ignored once this node is a member.
  membership_effects join(std::vector<endpoint> seeds, clock_reading t);

  /// Marks `node` leaving (graceful: the leader moves it to exiting and
  /// removed). Ignored if it is not a member or already leaving or beyond.
  membership_effects leave(const unique_address& node, clock_reading t);

  /// Marks `node` down (forced: the leader removes it at the next
  /// convergence, unreachable or not). A node that learns it is down shuts
  /// down if `shutdown_when_downed`.
  membership_effects down(const unique_address& node, clock_reading t);

  /// Holds (`hold` true) or lets go this node's exit for `holder`. While
  /// any holder holds it, an exiting node does not send its exit
  /// confirmation (`exiting_confirmed`), so the leader does not remove it
  /// while it is reachable: this is where the singleton manager hands its
  /// instance over before the node goes (Akka: CoordinatedShutdown's
  /// cluster-exiting phase, which the manager completes only after the
  /// hand-over, before ExitingConfirmed is sent). Letting go of the last
  /// hold of an exiting node confirms at once. Idempotent per holder. An
  /// exiting node that others see as unreachable is removed anyway (a
  /// crash), and an exiting last member terminates regardless. A holder
  /// must let go in bounded time (the manager does: it stops its instance
  /// after max_take_over_retries).
  membership_effects hold_exit(const std::string& holder, bool hold,
                               clock_reading t);

  /// Sets the endpoints (besides `seed_nodes`) that this node probes for
  /// another cluster of its name every incarnation_probe_interval, e.g.
  /// the contact points the bootstrap discovered. Replaces the previous
  /// list; duplicates and this node's own endpoint are dropped.
  membership_effects set_contact_endpoints(std::vector<endpoint> endpoints,
                                           clock_reading t);

  /// The transport's handshake with `peer` named the foreign cluster
  /// incarnation `other`: recorded as a detection, and `peer` is probed at
  /// once (the handshake carries no size). Ignored unless this node is a
  /// member and `other` is set and not its own.
  membership_effects foreign_incarnation_met(const unique_address& peer,
                                             const cluster_incarnation& other,
                                             clock_reading t);

  /// The contact list: `seed_nodes`, then the endpoints set by
  /// `set_contact_endpoints`, without duplicates.
  std::vector<endpoint> contact_endpoints() const;

  /// This node's cluster incarnation (not set before it joined).
  const cluster_incarnation& incarnation() const noexcept {
    return state_.latest_gossip().incarnation();
  }

  /// Set while this node's cluster leaves to join that incarnation.
  const cluster_incarnation& merging_into() const noexcept {
    return state_.latest_gossip().merging_into();
  }

  /// The other clusters of this name that this node met and has not
  /// forgotten (a record is forgotten when not seen for three
  /// incarnation_probe_intervals, 30 s with the probe off).
  const std::map<cluster_incarnation, foreign_cluster>&
  foreign_clusters() const noexcept {
    return foreign_;
  }

  /// The holders that currently hold this node's exit.
  const std::set<std::string>& exit_holders() const noexcept {
    return exit_holds_;
  }

  /// A message from `from` (the transport's authenticated sender; with
  /// uid 0 the named sender is not checked). A message that names another
  /// sender is ignored with an INFO line.
  membership_effects receive(const unique_address& from,
                             const membership_message& m, clock_reading t);

  /// Runs every timer that is due.
  membership_effects tick(clock_reading t);

  /// When `tick` has something to do next (none after shutdown).
  std::optional<timestamp> next_tick() const;

  const membership_state& state() const noexcept {
    return state_;
  }

  const unique_address& self() const noexcept {
    return state_.self();
  }

  /// This node's member record, if it is a member.
  std::optional<member> self_member() const;

  /// What a new subscriber gets first.
  current_cluster_state snapshot() const {
    return cluster::snapshot(state_);
  }

  /// True once this node is in the membership (it self-joined or was
  /// welcomed).
  bool is_member() const noexcept {
    return joined_;
  }

  /// True once an effect asked for shutdown: the engine ignores all input.
  bool is_terminated() const noexcept {
    return terminated_;
  }

  const heartbeat_sender_state& heartbeats() const noexcept {
    return heartbeat_;
  }

  const join_process& joining() const noexcept {
    return join_;
  }

  const membership_settings& settings() const noexcept {
    return settings_;
  }

private:
  using effects = membership_effects;

  void apply_join_effects(std::vector<join_effect> xs, clock_reading t,
                          effects& out);
  void self_join(clock_reading t, effects& out);
  void on_join(const cluster::join& m, clock_reading t, effects& out);
  /// False (and an INFO line naming the problem) when a received gossip
  /// breaks the gossip invariants (`check_invariants`): a buggy or foreign
  /// peer's gossip is never merged.
  bool valid(const gossip& g, const char* kind, const unique_address& from,
             effects& out) const;
  void on_welcome(const welcome_gossip& m, clock_reading t, effects& out);
  void on_gossip(const gossip_envelope& m, clock_reading t, effects& out);
  void on_status(const gossip_status& m, clock_reading t, effects& out);
  void gossip_tick(effects& out);
  void leader_actions_tick(clock_reading t, effects& out);
  void reaper_tick(clock_reading t, effects& out);
  void heartbeat_tick(clock_reading t, effects& out);
  void first_heartbeat_timers(clock_reading t);

  /// Makes `next` (a changed gossip) the latest: versioned by this node and
  /// seen only by it (Akka's updateLatestGossip), then publishes.
  void update_latest(gossip next, clock_reading t, effects& out);
  /// Replaces the latest gossip as it is (versions settled by the caller)
  /// and derives events, removals, heartbeat targets and self-shutdown.
  void publish(gossip next, clock_reading t, effects& out);

  // -- other clusters (membership_engine_merge.cpp)
  cluster_info own_info() const;
  /// False (and a detection) when `incarnation`, named by a message from
  /// `from`, is not this node's: the message must not be merged.
  bool same_cluster(const unique_address& from,
                    const cluster_incarnation& incarnation,
                    std::optional<uint32_t> size, clock_reading t,
                    effects& out);
  void record_foreign(const unique_address& via, const cluster_info& info,
                      std::optional<uint32_t> size, clock_reading t,
                      effects& out);
  void on_probe(const incarnation_probe& m, clock_reading t, effects& out);
  void on_probe_answer(const incarnation_probe_answer& m, clock_reading t,
                       effects& out);
  /// The judge's decision on a meeting with `other` (reported by `from`);
  /// returns the verdict to send when the other side leaves.
  cluster_incarnation judge(const unique_address& from,
                            const cluster_info& other, clock_reading t,
                            effects& out);
  void obey(const unique_address& from, const cluster_info& other,
            const cluster_incarnation& verdict, clock_reading t, effects& out);
  void leave_for_merge(const cluster_incarnation& winner, std::string why,
                       clock_reading t, effects& out);
  void probe_tick(clock_reading t, effects& out);
  void merge_tick(clock_reading t, effects& out);
  bool is_merging() const noexcept {
    return merging_into().is_set();
  }

  void gossip_to(const unique_address& node, effects& out);
  void send_envelope(const unique_address& node, effects& out);
  void tell_if_removed(const unique_address& node, effects& out);
  double different_view_probability() const;
  void confirm_exit(effects& out);
  void terminate(self_stop_reason why, std::string text, effects& out);
  // True if this node was leaving or exiting (in `local`, or it confirmed
  // its exit): its removal is the end of its own leave.
  bool left_gracefully(const gossip& local) const;

  membership_settings settings_;
  std::set<std::string> roles_;
  join_config config_;
  join_config_checker checker_;
  membership_state state_;
  join_process join_;
  heartbeat_sender_state heartbeat_;
  std::mt19937_64 rng_;
  bool started_ = false;
  bool joined_ = false;
  bool terminated_ = false;
  timestamp next_gossip_{};
  timestamp next_leader_actions_{};
  timestamp next_reaper_{};
  timestamp next_heartbeat_{};
  /// Receivers not monitored yet: when their expected-first-heartbeat
  /// timer is due (expected_response_after after the first heartbeat).
  std::map<unique_address, timestamp> first_heartbeat_due_;
  /// Since when the leader has seen no convergence (weakly up timer).
  std::optional<timestamp> unconverged_since_;
  std::set<unique_address> exiting_confirmed_;
  bool confirmed_exit_ = false;
  std::set<std::string> exit_holds_;
  planted_bug bug_;
  /// Draws the id of an incarnation this node founds (seeded from the
  /// engine's seed; a generator of its own, so that founding draws nothing
  /// from the gossip-target choices).
  std::mt19937_64 incarnation_rng_;
  /// Endpoints set by set_contact_endpoints.
  std::vector<endpoint> contacts_;
  std::map<cluster_incarnation, foreign_cluster> foreign_;
  timestamp next_probe_{};
  /// When this node learned that its cluster is merging (its linger ends
  /// merge_linger later).
  std::optional<timestamp> merging_since_;
};

} // namespace troupe::cluster
