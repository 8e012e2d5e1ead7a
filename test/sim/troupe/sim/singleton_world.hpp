#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "troupe/sim/downing_world.hpp"
#include "troupe/singleton/manager_engine.hpp"

/// @file
/// The cluster singleton in the membership simulation: one
/// `singleton::manager_engine` per node for one singleton type (no role),
/// fed with that node's membership state after every step of its
/// membership engine, over the downing layer. The layer plays the shell
/// (DESIGN.md §6): hand-over messages cross the simulated network with the
/// membership's link rules (partitions, clogs, loss); `hold_exit` drives
/// the node's membership exit gate; the instance is a record (node,
/// incarnation, fencing token, start time) that terminates 0-50 ms after
/// its stop was requested, dies with a crashed node, and sometimes stops
/// by itself. A node whose membership terminated (downed, removed) stops
/// its manager (`stop`), lets the instance terminate, then stops.
///
/// With use_lease, a simulated lease backend (one record: holder, the
/// backend time of its last renewal, a token counter) and one lease
/// client per node after DESIGN.md §5: acquire, renew and release are
/// requests over a simulated link to the backend (delay, lost answers,
/// slow answers, an answer lost after the write applied, unavailable
/// windows, nodes cut off by partitions); the client renews every ttl/3
/// while it holds the lease; its local deadline is the start of the last
/// successful request + ttl - safety_margin (max(ttl/10, 200 ms)) on the
/// node's drifting clock; `check_alive()` is `now < deadline`; the
/// deadline passing, or a renewal answered "not the holder", is
/// `on_lease_lost`. The backend grants to a contender only when the record
/// was not renewed for a whole ttl of backend time.
///
/// Checkers, written here without the manager core (the oracles of §6 and
/// §10 "Demo and chaos oracles"), run after every step:
/// - one_instance (I1): at most one instance is live (started and not yet
///   terminated) across all nodes.
/// - lease_alive (I3, with a lease): every live instance whose stop was
///   not yet requested belongs to a node whose lease client check_alive()
///   is true.
/// - tokens_increase (with a lease): every start carries a fencing token
///   strictly greater than every earlier start's.
/// - singleton_liveness (the scenario): after the faults stop and the
///   network heals, exactly one instance runs, on the singleton target of
///   the live nodes (the oldest up member of the highest app_version; the
///   oldest, as the scenario runs one version), within the scenario's
///   bound.
///
/// Not thread-safe; one run on one thread.

namespace troupe::sim {

/// The singleton lease's faults (chances per request; windows in global
/// time). Only while the faults are on.
struct singleton_lease_faults {
  /// The backend answers nothing (requests time out).
  std::vector<std::pair<timespan, timespan>> unavailable;
  /// The answer is lost.
  double lost = 0;
  /// The answer takes 1-4 s (beyond the client's operation timeout).
  double slow = 0;
  /// An acquire is applied but its answer is lost.
  double applied_lost = 0;
};

/// What a singleton run plants and checks.
struct singleton_world_settings {
  singleton::manager_settings manager;
  singleton::manager_bug bug = singleton::manager_bug::none;
  /// The lease's time to live (backend time) and the client's timeout.
  timespan lease_ttl = std::chrono::seconds{6};
  timespan lease_operation_timeout = std::chrono::seconds{1};
  singleton_lease_faults lease_faults;
  /// Chance that an instance started while the faults are on stops by
  /// itself, 1-20 s after its start (restart_on_stop).
  double self_stop = 0.2;
};

/// The singleton layer over one membership_world and its downing layer.
class singleton_layer {
public:
  singleton_layer(membership_world& world, downing_layer& downing,
                  singleton_world_settings settings);

  /// The world's after_step hook (it calls the downing layer's first).
  void after_step(size_t i);

  /// Crashes node `i`: its instance dies with it (and its lease client).
  void crash(size_t i);

  /// Cuts node `i` off from the lease backend (or reconnects it).
  void cut_from_lease(size_t i, bool cut);

  /// Stops the faults (the liveness phase): the backend answers, every
  /// node reaches it, instances stop only when asked.
  void stop_faults();

  /// Whether node `i` is fully stopped (no manager, no instance), so that
  /// it may start again.
  bool stopped(size_t i) const;

  /// Exactly one instance runs, unasked to stop, on the singleton target
  /// (the oldest up member of the highest app_version) of the live nodes,
  /// whose membership views agree (the liveness goal).
  bool settled() const;

  /// Called when node `i`'s instance `incarnation` starts (`live` true) or
  /// terminates (stopped, killed, or with its crashed node): the sharding
  /// layer runs its coordinator as this instance.
  using instance_fn
    = std::function<void(size_t i, uint64_t incarnation, bool live)>;
  void on_instance(instance_fn f) {
    on_instance_ = std::move(f);
  }

  /// Node `i`'s lease client's check_alive() (false without a lease
  /// client holding the lease).
  bool lease_alive(size_t i) const {
    return i < nodes_.size() && check_alive(i);
  }

  /// Instances started (all nodes).
  uint64_t starts() const noexcept {
    return starts_;
  }

  /// Every instance start: the global time and the node's index, in order.
  const std::vector<std::pair<timespan, size_t>>& start_log() const noexcept {
    return start_log_;
  }

  /// Describes every node's manager and instance (failure reports).
  std::string describe() const;

private:
  enum class lease_phase : uint8_t { idle, acquiring, held, releasing };

  struct lease_client {
    lease_phase phase = lease_phase::idle;
    /// Local deadline (the node's clock) while held.
    timestamp deadline{};
    uint64_t token = 0;
    /// The id of the request whose answer counts (others are stale).
    uint64_t request = 0;
    bool renewing = false;
  };

  struct instance {
    uint64_t incarnation = 0;
    uint64_t token = 0;
    timespan started{0};
    bool stop_requested = false;
  };

  struct node_state {
    std::unique_ptr<singleton::manager_engine> manager;
    unique_address self;
    std::optional<timespan> tick_due;
    bool stopping = false; // stop() was called (membership terminated)
    std::optional<instance> inst;
    lease_client lease;
  };

  using effects = singleton::manager_effects;

  void feed(size_t i);
  void apply(size_t i, effects fx);
  void schedule_tick(size_t i);
  bool current(size_t i, const unique_address& self) const;
  void deliver(const unique_address& from, const unique_address& to,
               singleton::hand_over_message&& m);
  void start_instance(size_t i, const singleton::start_instance& s);
  void terminate_instance(size_t i, const std::string& why);
  void schedule_self_stop(size_t i);
  // the lease
  void lease_acquire(size_t i);
  void lease_release(size_t i);
  void lease_renew(size_t i, uint64_t request);
  void lease_lost(size_t i, const std::string& why);
  void expire_leases();
  bool check_alive(size_t i) const;
  timespan safety_margin() const;
  /// Sends a request to the backend at global time now; `op` runs at the
  /// backend (it returns the answer), `answer` at the node when the answer
  /// arrives (not when it is lost), `timeout` when it did not arrive within
  /// the operation timeout.
  template <class Op, class Answer, class Timeout>
  void lease_request(size_t i, const std::string& what, Op op, Answer answer,
                     Timeout timeout);
  bool backend_free_for(const unique_address& a) const;
  // the checkers
  void check();

  membership_world& w_;
  downing_layer& downing_;
  singleton_world_settings settings_;
  instance_fn on_instance_;
  network<singleton::hand_over_message> net_;
  std::vector<node_state> nodes_;
  std::set<size_t> cut_;
  bool faults_on_ = true;
  uint64_t starts_ = 0;
  std::vector<std::pair<timespan, size_t>> start_log_;
  uint64_t max_token_ = 0;
  bool any_token_ = false;
  uint64_t requests_ = 0;
  // the lease backend (global time is its clock)
  std::optional<unique_address> holder_;
  timespan renewed_{0};
  uint64_t token_counter_ = 0;
};

/// The random singleton scenario of one seed: 4-7 nodes join, then 40 s of
/// faults (graceful leaves, two nodes leaving within 100 ms with the oldest
/// among them (S1), the oldest leaving, crashes with the oldest among
/// them, clean partitions, with a lease also messy ones (one direction
/// blocked, clogged links: keep_majority may then leave both sides up for
/// a while, a split brain that only the lease keeps from running two
/// instances), lease faults, nodes cut off from the lease backend,
/// instances stopping by themselves, restarts of stopped nodes), with
/// keep_majority (with a lease sometimes lease_majority), stable_after 3-5 s
/// and down_removal_margin stable_after without a lease and 0 with one; then
/// the faults stop, the network heals, every stopped node starts again, and
/// within `liveness_bound` exactly one instance runs, on the oldest up member
/// of the live nodes.
struct singleton_scenario {
  bool use_lease = false;
  singleton::manager_bug bug = singleton::manager_bug::none;
  timespan liveness_bound = std::chrono::seconds{120};
  /// Records the trace (a sweep runs without it and replays a failing
  /// seed with it: a seed replays exactly).
  bool trace = true;
};

scenario_result run_singleton_scenario(uint64_t seed,
                                       const singleton_scenario& options);

/// The planted bug named `name` ("none", "skip_hand_over",
/// "trust_any_done", "ignore_lease_lost", "reuse_token"), if it is one.
std::optional<singleton::manager_bug>
singleton_bug_named(const std::string& name);

} // namespace troupe::sim
