#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "troupe/cluster/membership_engine.hpp"
#include "troupe/sim/kernel.hpp"
#include "troupe/sim/network.hpp"

/// @file
/// The membership simulation: N nodes' membership engines on the simulated
/// network, each with its own drifting clock; crashes, restarts with a new
/// uid, joins, leaves, downs, partitions, clogged links and loss; and the
/// invariant checkers that run after every step.
///
/// The checkers are oracles written here, independent of the engine and of
/// membership_state (leader and convergence are recomputed from the gossip
/// by their own short definitions, after Akka's documentation):
/// - status_monotonic: no node ever sees a member's status move backwards
///   (joining < weakly_up < up < leaving < exiting < down < removed);
/// - removed_never_returns: a node that saw a uid removed never sees it as
///   a member again (other nodes may still hold views from before the
///   removal: that is staleness, not a return);
/// - single_leader: a node that makes leader moves is the leader of its
///   view, and (but for moves to weakly_up) its view has convergence;
///   nodes with equal converged views agree on the leader;
/// - merge_laws: every gossip delivered satisfies the merge laws with the
///   receiver's gossip and a third gossip of the run.

namespace troupe::sim {

using cluster::membership_engine;
using cluster::membership_message;

/// Which checker failed and why.
struct violation {
  std::string checker;
  std::string detail;
};

/// The merge the merge-law checker tests (the real one unless a test
/// plants a broken one).
using merge_fn = std::function<cluster::gossip(const cluster::gossip&,
                                               const cluster::gossip&)>;

/// Checks the merge laws of `merge` on (a, b, c): commutative and
/// associative on members, reachability, version and tombstones,
/// idempotent on the same. Returns the violated law, if any.
std::optional<std::string> check_merge_laws_with(const merge_fn& merge,
                                                 const cluster::gossip& a,
                                                 const cluster::gossip& b,
                                                 const cluster::gossip& c);

struct world_settings {
  cluster::membership_settings membership;
  /// Network delay per message.
  timespan min_delay{std::chrono::milliseconds{1}};
  timespan max_delay{std::chrono::milliseconds{20}};
  /// Clock drift per node: rate drawn from [1 - drift, 1 + drift].
  double drift = 0.001;
  cluster::planted_bug bug = cluster::planted_bug::none;
  /// Nodes with the planted bug (by index; empty: all).
  std::set<size_t> buggy_nodes;
  merge_fn merge;
  /// Trace lines kept (the newest); golden tests keep them all.
  size_t trace_lines = 400;
  /// Runs the invariant checkers after every step. They cost O(members)
  /// per step (the merge-law check about 7 ms per gossip at 1,000
  /// members); benchmarks that only measure convergence turn them off.
  bool checkers = true;
  /// Records the trace (one formatted line per message and decision).
  bool trace = true;
  /// Called after every call into node i's engine, once its effects were
  /// handled (the downing layer feeds the node's resolver from here). The
  /// hook may schedule actions; it must not call into the world's nodes.
  std::function<void(size_t)> after_step;
  /// A planted shell bug (downing checker downed_node_stops): a node whose
  /// engine asks for shutdown keeps running (cluster.shutdown_when_downed
  /// ignored).
  bool keep_running_when_downed = false;
  /// Called when node i's engine stopped (with its reason), after its
  /// effects were handled: a supervisor's view (the merge scenario
  /// restarts the node from here). Like `after_step`, it may schedule
  /// actions but must not call into the world's nodes.
  std::function<void(size_t, const cluster::self_stop&)> on_stop;
};

/// One simulated run.
class membership_world {
public:
  membership_world(uint64_t seed, world_settings settings);

  // -- nodes ------------------------------------------------------------------

  /// Adds the host `10.0.0.<i+1>:2552`, not started; returns its index.
  size_t add_node(std::vector<std::string> roles = {});

  /// Starts node `i` (a new incarnation, new uid) and makes it join `seeds`
  /// (indexes; empty: the configured seed_nodes of the settings).
  void start(size_t i, std::vector<size_t> seeds);

  /// The `cluster.app_version` node `i` runs from its next start on
  /// (default: the settings').
  void set_app_version(size_t i, cluster::app_version version);

  /// Node `i` joins through `seeds` (membership_engine::join: Akka's
  /// joinSeedNodes; `{its own endpoint}` founds a cluster). Ignored when
  /// the node is not alive.
  void join(size_t i, std::vector<cluster::endpoint> seeds);

  /// Kills node `i` (no goodbye).
  void crash(size_t i);

  void leave(size_t by, size_t node);
  /// `by` downs node `node`'s current (or last) incarnation.
  void down(size_t by, size_t node);
  /// `by` downs the member `node` (any incarnation).
  void down_address(size_t by, const cluster::unique_address& node);

  /// Sets node `i`'s contact endpoints (membership_engine::
  /// set_contact_endpoints) to those of `contacts` (indexes); ignored when
  /// the node is not alive.
  void set_contacts(size_t i, const std::vector<size_t>& contacts);

  /// Holds or lets go node `i`'s exit for `holder`
  /// (membership_engine::hold_exit); ignored when the node is not alive.
  void hold_exit(size_t i, const std::string& holder, bool hold);

  /// The node at `a`'s host:port, if any.
  std::optional<size_t> index_of(const cluster::unique_address& a) const;

  bool alive(size_t i) const;
  const membership_engine& engine(size_t i) const;
  cluster::unique_address address(size_t i) const;
  cluster::endpoint endpoint_of(size_t i) const;
  size_t size() const {
    return nodes_.size();
  }

  // -- network and time -------------------------------------------------------

  network<membership_message>& net() {
    return net_;
  }

  void partition(const std::vector<size_t>& a, const std::vector<size_t>& b);
  void heal() {
    net_.heal_all();
  }

  scheduler& sched() {
    return sched_;
  }

  rng& random() {
    return rng_;
  }

  /// Runs until global time `t`; stops early at the first violation.
  void run_until(timespan t);

  /// Runs until `pred` holds (checked after every step) or `t` passes.
  bool run_until(timespan t, const std::function<bool()>& pred);

  // -- verdicts ---------------------------------------------------------------

  const std::optional<violation>& failure() const {
    return failure_;
  }

  /// True when every live member sees the same members, all up, none
  /// unreachable, with convergence and one leader; `expected` live nodes.
  bool converged(size_t expected) const;

  /// How many gossip rounds (gossip_interval) have passed.
  double rounds() const;

  /// Every live node's view, one per line (for failure reports).
  std::string views() const;

  const sim::trace& log() const {
    return trace_;
  }

  uint64_t steps() const {
    return steps_;
  }

  /// Node i's local monotonic clock now.
  timestamp local_now(size_t i) const;

  /// The global time at which node i's local clock reads `local` (rounded
  /// up, at least 1 ms from now, so a timer that stays due cannot spin).
  timespan global_time_of(size_t i, timestamp local) const;

  /// Runs `fire` when node `i`'s clock reads `due` (a core's next_tick),
  /// with one pending tick per caller in `pending` (its global time): an
  /// earlier pending tick stays, a later one is replaced. `fire` runs only
  /// while no violation was found and `pending` still names its time
  /// (reset before `fire` runs). `pending` must outlive the run.
  void schedule_tick_at(size_t i, timestamp due,
                        std::optional<timespan>& pending,
                        std::function<void()> fire);

  /// Adds a line to the trace.
  void note(std::string line) {
    trace_.add(sched_.now(), std::move(line));
  }

  /// Fails the run (the first violation wins).
  void fail(std::string checker, std::string detail);

private:
  struct node {
    cluster::endpoint ep;
    std::vector<std::string> roles;
    std::optional<cluster::app_version> app_version;
    std::unique_ptr<membership_engine> engine;
    drifting_clock clock;
    bool alive = false;
    uint64_t incarnations = 0;
    std::optional<timespan> tick_due;
    /// Last status rank of each member this node saw (status checker).
    std::map<cluster::unique_address, int> ranks;
  };

  cluster::clock_reading reading(const node& n) const;
  void deliver(const cluster::unique_address& from,
               const cluster::unique_address& to, membership_message&& m);
  /// Calls `call(engine, clock reading)` on node `i` and handles the
  /// effects (checked when the checkers are on).
  template <class Call>
  void act(size_t i, Call&& call);
  /// `before`: the node's state before the call (null: do not check).
  void handle(size_t i, cluster::membership_effects fx,
              const cluster::membership_state* before);
  void schedule_tick(size_t i);
  void check(size_t i, const cluster::membership_effects& fx,
             const cluster::membership_state& before);

  world_settings settings_;
  scheduler sched_;
  rng rng_;
  network<membership_message> net_;
  std::vector<node> nodes_;
  /// host:port -> index into nodes_ (index_of runs on every delivery).
  std::map<std::pair<std::string, uint16_t>, size_t> index_;
  std::optional<cluster::gossip> third_; // for the merge-law checker
  std::optional<violation> failure_;
  sim::trace trace_;
  uint64_t steps_ = 0;
};

/// The random scenario of one seed: 3-7 nodes join through two seeds, then
/// 40 s of faults (partitions, crashes, restarts with new uids, leaves,
/// downs, clogged links, loss), then the faults stop, crashed members are
/// downed (as an operator or the split brain resolver would), the network
/// heals, and the cluster must converge within `liveness_rounds` gossip
/// rounds.
struct scenario_result {
  uint64_t seed = 0;
  std::optional<violation> failure;
  /// Gossip rounds the liveness phase took (when it converged).
  double liveness_rounds = 0;
  std::string trace;
  size_t nodes = 0;
};

/// Ends a scenario's result: the world's violation, if it found one, wins;
/// a failed result gets the trace and every node's view at the end (the
/// random membership and downing scenarios share this).
void conclude(scenario_result& result, const membership_world& w);

/// The first seed in [0, budget) whose `run(seed)` (a scenario_result)
/// violates `checker`, if any: how a test shows that a checker catches a
/// planted bug within the seed budget.
template <class Run>
std::optional<scenario_result> first_violation(const std::string& checker,
                                               uint64_t budget, Run run) {
  for (uint64_t seed = 0; seed < budget; ++seed) {
    auto r = run(seed);
    if (r.failure && r.failure->checker == checker)
      return r;
  }
  return std::nullopt;
}

scenario_result
run_random_scenario(uint64_t seed,
                    cluster::planted_bug bug = cluster::planted_bug::none,
                    merge_fn merge = {}, double liveness_rounds = 60);

} // namespace troupe::sim
