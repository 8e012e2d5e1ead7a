#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "troupe/downing/downing_engine.hpp"
#include "troupe/sim/membership_world.hpp"

/// @file
/// The split brain resolver in the membership simulation: a
/// `downing::downing_engine` per node, fed with that node's membership
/// state after every step of its membership engine, its effects carried
/// out (down -> the node's membership engine `down`; acquire/release -> a
/// simulated lease backend shared by the world), and three checkers of
/// its own, written here without the downing core (docs/design/downing.md,
/// "Simulator"):
///
/// - one_side: once the faults stopped, the network healed and the run
///   went on long enough, the live nodes that are up in their own view
///   agree on one set of up members, and no two of them each consider the
///   other down or gone (a split brain).
/// - majority_survives: a *protected majority* G is never downed: no
///   member of G ever sees a member of G down in its own view, and no
///   member of G stops. (A node outside G may down G in its own view: a
///   node that saw G and another node unreachable from each other downs
///   both as indirectly connected, by Akka's rules; such a down must never
///   reach G.) G is defined by the scenario
///   (clean seeds only): more than half of the members up when the faults
///   start, none of which crashes, and whose mutual links are never
///   faulty; every fault is a clean partition of the nodes into groups
///   (links inside a group work, links across are blocked both ways), with
///   all of G in one group. With lease_majority G is protected only when
///   the lease had no harmful fault (unavailable, lost answer, answer
///   slower than the resolver's lease_answer_timeout) and no node outside
///   G ever acquired the lease. down_all_when_unstable is off in clean
///   seeds (it downs everyone by design).
/// - downed_node_stops: a live node whose own view shows itself down (or
///   whose membership engine terminated) is stopped within 1 s.
///
/// Not thread-safe; one run on one thread.

namespace troupe::sim {

/// The lease backend's faults (chances per acquire; windows in global
/// time). Only during the fault period.
struct lease_faults {
  /// The backend answers "unavailable" (an error: not acquired).
  std::vector<std::pair<timespan, timespan>> unavailable;
  /// The answer takes 1-8 s (beyond the resolver's timeout: as refused).
  double slow = 0;
  /// The answer never comes.
  double lost = 0;
  /// A granted acquire is answered "already exists" (the benign 409 of an
  /// idempotent create the owner itself made); the lease client maps it to
  /// acquired when the holder is this owner (scenario D3).
  double benign_conflict = 0;
};

/// What a downing run plants and checks.
struct downing_world_settings {
  downing::downing_engine_settings engine;
  downing::downing_bug bug = downing::downing_bug::none;
  /// A planted lease-client bug: "already exists" reaches the resolver as
  /// refused (the bug scenario D3 describes).
  bool benign_conflict_as_refused = false;
  lease_faults faults;
  /// The lease's time to live once its holder stops renewing (it renews
  /// on every step while it lives).
  timespan lease_ttl = std::chrono::seconds{10};
  /// The protected majority (node indexes), empty: no majority checker.
  std::set<size_t> protected_majority;
};

/// The downing layer of one membership_world.
class downing_layer {
public:
  downing_layer(membership_world& world, downing_world_settings settings);

  /// The world's after_step hook.
  void after_step(size_t i);

  /// Stops the lease faults (the liveness phase).
  void stop_faults() {
    faults_on_ = false;
  }

  /// The one_side checker (call once the dust settled): the violation, if
  /// any.
  std::optional<violation> check_one_side() const;

  /// Whether the live nodes agree on one set of up members that are
  /// exactly the live up nodes (the liveness phase waits for it).
  bool settled() const;

  /// Whether the lease had a fault that may make a majority down itself.
  bool harmful_lease_fault() const noexcept {
    return harmful_fault_;
  }

  /// How many acquires the backend answered, granted, refused.
  size_t acquires() const noexcept {
    return acquires_;
  }

private:
  struct node_state {
    std::unique_ptr<downing::downing_engine> engine;
    unique_address self;
    std::optional<timespan> tick_due;
    std::optional<timespan> down_since;
  };

  void feed(size_t i);
  void apply(size_t i, const unique_address& self, downing::downing_effects fx);
  void schedule_tick(size_t i);
  void acquire(size_t i, const unique_address& self);
  bool lease_free_for(const unique_address& self) const;
  bool current(size_t i, const unique_address& self) const;
  bool protected_node(const unique_address& a) const;
  void check_stopped();
  void check_majority(size_t i);

  membership_world& w_;
  downing_world_settings settings_;
  std::vector<node_state> nodes_;
  bool faults_on_ = true;
  bool harmful_fault_ = false;
  bool outsider_held_lease_ = false;
  size_t acquires_ = 0;
  // the lease backend: holder and its expiry (global time)
  std::optional<unique_address> holder_;
  timespan expiry_{0};
};

/// The world settings of a scenario with a split brain resolver at a short
/// stable_after (3-5 s): stable_after must exceed failure detection plus
/// dissemination, and the default detector (heartbeat 1 s, pause 3 s)
/// takes about 4.7 s to mark a node unreachable, so a node could decide
/// before its own detector fired and down the majority on a stale view
/// (downing seed 1 with the defaults). A faster detector keeps Akka's ratio
/// (stable_after 7 s for 5 nodes against about 4.7 s of detection). Each
/// step is handed to `layer` once the scenario created it.
template <class Layer>
world_settings resolver_world_settings(Layer*& layer) {
  using namespace std::chrono_literals;
  world_settings ws;
  ws.membership.failure_detector.heartbeat_interval = 250ms;
  ws.membership.failure_detector.acceptable_heartbeat_pause = 750ms;
  ws.membership.failure_detector.expected_response_after = 250ms;
  ws.after_step = [&layer](size_t i) {
    if (layer != nullptr)
      layer->after_step(i);
  };
  return ws;
}

/// The random downing scenario of one seed: 5-9 nodes join, then 40 s of
/// faults (clean seeds: partitions into groups around a protected majority
/// and crashes outside it; other seeds: random symmetric and asymmetric
/// partitions, clogged links, crashes), with `strategy` (keep_majority or
/// lease_majority over the faulty lease) and stable_after 3-5 s; then the
/// faults stop, the network heals, and after at most 120 s the one_side
/// checker runs.
struct downing_scenario {
  std::string strategy = "keep_majority";
  downing::downing_bug bug = downing::downing_bug::none;
  bool keep_running_when_downed = false;
  bool benign_conflict_as_refused = false;
};

scenario_result run_downing_scenario(uint64_t seed,
                                     const downing_scenario& options);

} // namespace troupe::sim
