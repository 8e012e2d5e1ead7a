#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/unique_address.hpp"
#include "troupe/singleton/hand_over.hpp"
#include "troupe/singleton/singleton_settings.hpp"

/// @file
/// One node's cluster singleton manager as a pure state machine: Akka's
/// ClusterSingletonManager FSM (akka.cluster.singleton,
/// ClusterSingletonManager.scala) without the actor, with the lease gating
/// of Akka 2.6 and the fixes of the failures in scenarios S1, S3, S5, S6.
/// Inputs carry `now` (the owner's monotonic clock); outputs are
/// `manager_effects` the owner carries out (the manager actor, or the
/// simulator). No clock reads, no I/O, no logging here.
namespace troupe::singleton {

using runtime::unique_address;

/// Akka's manager states (ClusterSingletonManager.State), snake_case. In
/// the names, "oldest" is Akka's word for the position that runs the
/// instance; troupe calls that position the singleton target (the oldest
/// member of the highest app_version, `cluster::membership_state::
/// singleton_target`), which is the oldest member whenever the cluster
/// runs one app_version.
enum class manager_state : uint8_t {
  /// No view yet.
  start = 0,
  /// Another member is (or may be) the singleton target; no instance here.
  younger,
  /// This node is the singleton target, but a member ahead of it (one that
  /// precedes it in the singleton order, or an older one) may still run an
  /// instance: asking it (`hand_over_to_me`) and waiting until every such
  /// member is cleared.
  becoming_oldest,
  /// As becoming_oldest, after the previous oldest said it is handing over
  /// (`take_over_from_me` or `hand_over_in_progress`).
  taking_over,
  /// Cleared to run; waiting for the lease (with use_lease).
  acquiring_lease,
  /// Running the instance (or, between restarts, about to).
  oldest,
  /// This node left the target position (it is exiting, or a member of a
  /// higher app_version is up) and runs the instance until the new target
  /// asks for it (`take_over_from_me` repeated).
  was_oldest,
  /// Stopping the instance for the new target; confirms when it
  /// terminated and the lease was released.
  handing_over,
  /// Stopping the instance because the lease was lost, the node was downed
  /// or removed, or the manager stops.
  stopping,
  /// Done for good: this node never runs the instance again.
  end,
};

/// The state's name: "start", "younger", ...
const char* to_string(manager_state x) noexcept;

/// The severity of a log line the owner writes.
enum class log_level : uint8_t { debug = 0, info, warning, error };

/// One line for the owner's logger (component "singleton").
struct log_line {
  log_level level = log_level::info;
  std::string text;
  friend bool operator==(const log_line&, const log_line&) = default;
};

/// A message to the manager of the same singleton on `to`.
struct outgoing {
  unique_address to;
  hand_over_message message;
  friend bool operator==(const outgoing&, const outgoing&) = default;
};

/// Start an instance: `incarnation` counts this manager's instances
/// (1, 2, ...), `fencing_token` is the lease's token of the acquisition
/// that guards it (0 without a lease).
struct start_instance {
  uint64_t incarnation = 0;
  uint64_t fencing_token = 0;
  friend bool operator==(const start_instance&, const start_instance&)
    = default;
};

/// What the owner must do after one call, in this order:
/// 1. `stop_instance`: send the instance its stop message (the owner's
///    configured termination message) and report `on_instance_terminated`
///    when it is gone (a watch).
///    `kill_instance`: the instance did not terminate within
///    `instance_stop_timeout` of its stop message: kill it
///    (`caf::exit_reason::kill`); its termination is reported as above.
/// 2. `release_lease`: release the singleton's lease and report
///    `on_lease_released` when the backend answered (or the attempt
///    failed: the ttl ends the record anyway).
/// 3. `start`: spawn the instance and watch it.
/// 4. `acquire_lease`: acquire the lease and report `on_lease_acquired`.
/// 5. `send`: the hand-over messages, in order.
/// 6. `hold_exit`: when set, hold (true) or let go (false) this node's exit
///    from the cluster (the membership's exit gate): an exiting node must
///    not be removed while it may still run the instance.
/// 7. `stopped`: the manager finished `stop()`; the owner may stop.
/// 8. `log`: write every line at its level.
struct manager_effects {
  bool stop_instance = false;
  bool kill_instance = false;
  bool release_lease = false;
  std::optional<start_instance> start;
  bool acquire_lease = false;
  std::vector<outgoing> send;
  std::optional<bool> hold_exit;
  bool stopped = false;
  std::vector<log_line> log;
  bool empty() const noexcept {
    return !stop_instance && !kill_instance && !release_lease && !start
           && !acquire_lease && send.empty() && !hold_exit && !stopped
           && log.empty();
  }
};

/// Bugs the simulator's tests plant to show that its singleton checkers
/// catch them (test/sim). `none` everywhere else; no configuration key
/// reaches this.
enum class manager_bug : uint8_t {
  none = 0,
  /// A new oldest starts at once, without waiting for older members
  /// (Akka before the hand-over protocol).
  skip_hand_over,
  /// `hand_over_done` from any sender clears every older member (scenario
  /// S1's root cause: a leaving younger's confirmation accepted).
  trust_any_done,
  /// On lease loss the instance keeps running.
  ignore_lease_lost,
  /// The instance is started again with the previous fencing token (no new
  /// acquisition after a restart).
  reuse_token,
};

/// Counters for metrics and tests.
struct manager_counters {
  /// Instances started and terminated (any reason).
  uint64_t started = 0;
  uint64_t terminated = 0;
  /// Hand-overs completed as the old oldest.
  uint64_t handed_over = 0;
  /// Times a hand-over was declared stuck (the manager restarted its
  /// protocol; the instance, if any, was not touched).
  uint64_t stuck = 0;
  /// Leases lost while held.
  uint64_t leases_lost = 0;
  /// Hand-over messages ignored (stale sender, wrong state).
  uint64_t ignored_messages = 0;
};

/// One node's singleton manager for one singleton type.
///
/// Inputs (time never goes backwards between calls):
/// - `on_membership(state, now)`: the node's membership view changed.
/// - `on_message(from, message, now)`: a hand-over message from the
///   manager on `from` (authenticated by the transport).
/// - `on_instance_terminated(incarnation, now)`: the instance stopped
///   (requested or not); stale incarnations are ignored.
/// - `on_lease_acquired(acquired, token, now)`: the answer to
///   `acquire_lease` (an error of the backend is `false`).
/// - `on_lease_lost(token, now)`: the lease's on_lost fired for the
///   acquisition with fencing token `token` (0: unknown) (deadline passed,
///   another holder, record gone).
/// - `on_lease_released(now)`: the answer to `release_lease`.
/// - `tick(now)`: whenever `next_tick()` is due.
/// - `stop(now)`: graceful stop (the node shuts down): stop the instance,
///   release the lease after it terminated, then `stopped`.
///
/// Rules (docs/design/singleton.md has the state diagram):
/// - The candidates are the members with the role whose status is up or
///   leaving, in the singleton order (`cluster::singleton_candidates`: the
///   highest app_version first, then by age, then by address; Akka orders
///   by age only, its OldestChangedBuffer). The first candidate is the
///   singleton target. The order is computed from the current view alone,
///   every time: no state of the manager changes who is first, so two
///   managers with the same view never both see themselves as the target
///   (scenario S4).
///   This node may run the instance only when it is up (never weakly_up,
///   leaving, exiting or down), is the first candidate, and every member
///   ever seen ahead of it is cleared. Ahead: it precedes this node in the
///   singleton order, or it is older (it may hold the instance from before
///   this node was up: with the age order the two are the same; a member
///   of a new app_version precedes the older members that ran the
///   instance). Cleared: it sent `hand_over_done`, or
///   it was removed (a member removed from down or any status other than
///   exiting only `down_removal_margin` after its removal; a member seen
///   leaving or exiting that was unreachable when it was removed (from
///   exiting or down) only max(down_removal_margin, (max_take_over_retries
///   + 1) * hand_over_retry_interval) after it: it was removed without its
///   exit confirmation, it may be exiting in its own view, where the split
///   brain resolver ignores it, and it may run its instance on the other
///   side of a partition until its take-over retries run out).
/// - A new target asks every member ahead of it that is not cleared and not
///   removed (`hand_over_to_me`, every hand_over_retry_interval); after
///   max_hand_over_retries unanswered rounds the hand-over is stuck: an
///   ERROR line, the protocol restarts (the count restarts), and the
///   manager goes on waiting. The application is never touched.
/// - A target that is exiting, or no longer the first candidate (a member
///   of a higher app_version is up: a rolling update), tells the first
///   *up* candidate (`take_over_from_me`, bounded while it is leaving) and
///   hands over only to that member, only when it asks: stop the instance,
///   wait for its termination, release the lease and wait for the answer,
///   then `hand_over_done`. A request from any other member is ignored
///   (counted): from a leaving or exiting member, from a member that is
///   not the expected one, or while this node still is the rightful
///   target in its own view. When no one asks after max_take_over_retries,
///   a leaving node stops the instance anyway (Akka: hand over to nobody).
/// - A node that is leaving, exiting or down answers `hand_over_to_me`
///   with `hand_over_done` once it runs no instance (it never starts one
///   again). An up member that runs no instance (state younger, no lease
///   business) answers it when the sender has a higher app_version than
///   itself: the sender then precedes it in the singleton order, so it
///   can never start an instance before it has cleared the sender, and the
///   sender's own answers to it are only ever the permanent kind (this one
///   needs a strictly higher app_version, which no two members have of
///   each other). Any other up younger ignores it (its answer would not
///   be permanent).
/// - With use_lease: acquire before every start (a new token for every
///   instance), retry every lease_retry_interval while still entitled; on
///   loss stop the instance at once and acquire again after it
///   terminated; release only after the instance terminated.
/// - An instance asked to stop that has not terminated after
///   instance_stop_timeout is killed (ERROR line): every stop ends in
///   bounded time, so the exit hold is let go in bounded time.
/// - An instance that stops by itself is restarted after the backoff
///   (restart_on_stop), through a new acquisition with use_lease.
/// - Down or removed self: stop the instance, release, end.
/// - `hold_exit` is true while an instance runs or may run, the lease is
///   held or being acquired or released, or a hand-over is under way.
///
/// Not thread-safe; owned by one actor (or one simulated node).
class manager_engine {
public:
  manager_engine(unique_address self, manager_settings settings,
                 manager_bug bug = manager_bug::none);

  manager_effects on_membership(const cluster::membership_state& state,
                                timestamp now);
  manager_effects on_message(const unique_address& from,
                             const hand_over_message& message, timestamp now);
  manager_effects on_instance_terminated(uint64_t incarnation, timestamp now);
  manager_effects on_lease_acquired(bool acquired, uint64_t token,
                                    timestamp now);
  manager_effects on_lease_lost(uint64_t token, timestamp now);
  manager_effects on_lease_released(timestamp now);
  manager_effects tick(timestamp now);
  manager_effects stop(timestamp now);

  /// When `tick` must be called next, or none when only an input can
  /// change anything.
  std::optional<timestamp> next_tick() const;

  manager_state state() const noexcept {
    return state_;
  }
  /// The incarnation of the running instance, if one runs (started and
  /// not yet reported terminated).
  std::optional<uint64_t> running_instance() const noexcept {
    return instance_;
  }
  /// The fencing token of the current lease acquisition (0: none).
  uint64_t fencing_token() const noexcept {
    return token_;
  }
  /// Whether the lease is held or being acquired or released.
  bool lease_busy() const noexcept {
    return lease_ != lease_phase::none;
  }
  const manager_counters& counters() const noexcept {
    return counters_;
  }
  const unique_address& self() const noexcept {
    return self_;
  }

private:
  enum class lease_phase : uint8_t { none, acquiring, held, releasing };

  // What this node knows of one other member that was ever ahead of it
  // (see the rules): it may have run, or may run, the instance first.
  struct ahead_member {
    cluster::member_status status = cluster::member_status::up;
    bool removed = false;
    bool needs_margin = false;
    // Unreachable (to any observer) in the last view that had it.
    bool unreachable = false;
    // Seen leaving or exiting: it may be exiting in its own view, where
    // the split brain resolver ignores it.
    bool seen_leaving = false;
    timestamp removed_at{};
    bool done = false;
  };

  bool cleared(const ahead_member& m, timestamp now) const;
  timespan removal_margin(const ahead_member& m) const;
  bool yields_to(const unique_address& from) const;
  void track_ahead(const cluster::gossip& g);
  bool entitled() const;
  bool self_gone() const;
  bool will_never_run() const;
  std::optional<unique_address> expected_successor() const;
  std::vector<unique_address> uncleared(timestamp now, bool only_present) const;
  void evaluate(timestamp now, manager_effects& out);
  void ask_ahead(timestamp now, manager_effects& out);
  void become_oldest(timestamp now, manager_effects& out);
  void start_or_acquire(timestamp now, manager_effects& out);
  void begin_stop(manager_state during, manager_state next_after,
                  std::string why, timestamp now, manager_effects& out);
  void request_stop(timestamp now, manager_effects& out);
  void finish_stop(timestamp now, manager_effects& out);
  void update_exit_hold(manager_effects& out);
  void go(manager_state next, manager_effects& out);
  void log(manager_effects& out, log_level level, std::string text) const;

  unique_address self_;
  manager_settings settings_;
  manager_bug bug_;
  manager_state state_ = manager_state::start;
  manager_counters counters_;

  // the view
  bool have_view_ = false;
  std::optional<cluster::member> self_member_;
  bool self_removed_ = false;
  // In the singleton order (cluster::singleton_candidates).
  std::vector<cluster::member> candidates_;
  std::map<unique_address, ahead_member> ahead_;

  // hand-over
  int retries_ = 0;
  std::optional<timestamp> retry_at_;
  std::optional<unique_address> hand_over_to_;

  // the instance
  uint64_t incarnations_ = 0;
  std::optional<uint64_t> instance_;
  bool stop_requested_ = false;
  // When the instance asked to stop is killed (instance_stop_timeout).
  std::optional<timestamp> kill_at_;
  timestamp started_at_{};
  timespan backoff_ = timespan::zero();
  std::optional<timestamp> restart_at_;
  manager_state after_stop_ = manager_state::end;

  // the lease
  lease_phase lease_ = lease_phase::none;
  uint64_t token_ = 0;
  std::optional<timestamp> lease_retry_at_;
  bool release_when_acquired_ = false;

  // stop()
  bool stopping_for_good_ = false;
  bool stopped_ = false;

  bool exit_held_ = false;
};

} // namespace troupe::singleton
