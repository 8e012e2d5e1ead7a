#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "troupe/bootstrap/bootstrap_process.hpp"
#include "troupe/sim/membership_world.hpp"

/// @file
/// Cluster bootstrap in the membership simulation: a bootstrap process per
/// node incarnation over the real membership engines, a simulated
/// discovery (a registry every started node enters after a lag and never
/// leaves, as the pods of a StatefulSet or the records of a headless
/// service with publishNotReadyAddresses), and simulated probes of
/// `GET /bootstrap/seed-nodes` that travel the simulated network (its
/// partitions and delays) and are answered from the probed node's live
/// membership view by `seed_nodes_of`, as the management endpoint answers.
///
/// The checkers are oracles written here, independent of the bootstrap
/// process:
/// - never_two_clusters: after every step, the live nodes that are members
///   of their own view (not down or removed) form components (two nodes
///   are connected when either's view holds the other's current
///   incarnation); at most one component may be a cluster, i.e. hold a
///   node that sees itself weakly_up, up, leaving or exiting.
/// - one_cluster_at_end: once faults stop, the network heals and every
///   crashed node is restarted (as Kubernetes restarts pods), all nodes
///   converge into one view, all up.
///
/// The fault model and the assumption the safety argument needs
/// (docs/design/bootstrap.md): discovery shows a started node to everyone
/// within `max_discovery_lag`, which is less than stable_margin; crashes
/// never hit while a member is joining (that window, a welcomer dying
/// before its joiner is up, leaves an orphan the cluster's second-cluster
/// detection heals, not bootstrap).

namespace troupe::sim {

struct bootstrap_world_settings {
  bootstrap::bootstrap_settings bootstrap;
  bootstrap::planted_bug bug = bootstrap::planted_bug::none;
  /// A started node enters discovery after a lag in [0, max_discovery_lag].
  timespan max_discovery_lag = std::chrono::seconds{3};
  /// Chance that one discovery call fails.
  double discovery_failure = 0.05;
  /// One way delay of a probe (plus the link's extra delay).
  timespan min_probe_delay = std::chrono::milliseconds{1};
  timespan max_probe_delay = std::chrono::milliseconds{30};
};

/// The bootstrap processes of a membership_world's nodes and the
/// never_two_clusters checker. Install `after_step` as the world's hook.
class bootstrap_layer {
public:
  bootstrap_layer(membership_world& w, bootstrap_world_settings s);

  /// Starts node `i` (a new incarnation) without seeds and its bootstrap.
  void start(size_t i);

  /// The world's after_step hook: reports membership to the process and
  /// runs the checker.
  void after_step(size_t i);

  /// Founding decisions taken so far (join_self effects).
  size_t foundings() const noexcept {
    return foundings_;
  }

  /// Probes answered and failed so far.
  uint64_t probes_answered() const noexcept {
    return answered_;
  }
  uint64_t probes_failed() const noexcept {
    return failed_;
  }

  /// The clusters (components with a node at weakly_up or later) now, one
  /// line each, for reports.
  std::vector<std::string> clusters() const;

private:
  struct node_state {
    std::unique_ptr<bootstrap::bootstrap_process> process;
    uint64_t incarnation = 0;
    std::optional<timespan> tick_due;
    std::optional<timespan> visible_from;
  };

  void handle(size_t i, std::vector<bootstrap::bootstrap_effect> fx);
  void on_discover(size_t i, uint64_t inc);
  void on_probe(size_t i, uint64_t inc, const bootstrap::probe& p);
  void schedule(size_t i);
  template <class Call>
  void act(size_t i, uint64_t inc, Call&& call);
  void check_clusters();

  membership_world& w_;
  bootstrap_world_settings settings_;
  std::vector<node_state> nodes_;
  std::map<std::string, size_t> by_host_;
  size_t foundings_ = 0;
  uint64_t answered_ = 0;
  uint64_t failed_ = 0;
};

/// The random bootstrap scenario of one seed: 3-7 nodes started in random
/// order over 20 s, required_contact_point_nr drawn from 1..n, then faults
/// until 60 s (partitions, slow links to a node, crashes and restarts of
/// one node or of a majority together, failing discovery), then the
/// liveness phase.
scenario_result run_bootstrap_scenario(uint64_t seed,
                                       bootstrap::planted_bug bug
                                       = bootstrap::planted_bug::none);

} // namespace troupe::sim
