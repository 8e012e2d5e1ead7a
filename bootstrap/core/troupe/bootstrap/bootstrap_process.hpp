#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "troupe/bootstrap/bootstrap_settings.hpp"
#include "troupe/bootstrap/contact_point.hpp"
#include "troupe/bootstrap/seed_nodes_answer.hpp"
#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The bootstrap process of one node: from discovered contact points and
/// their probe answers to the join decision, as Akka Management's Cluster
/// Bootstrap (`BootstrapCoordinator` with the `LowestAddressJoinDecider`)
/// in one pure state machine. The coordinator actor (shell) runs discovery
/// and the probes it asks for and hands the decision to the cluster
/// daemon; the seeded simulator drives the same process
/// (docs/design/bootstrap.md draws the states).
///
/// The decision, taken after every input (`decide`):
/// 1. A contact point whose fresh answer reports a cluster (seed nodes):
///    join that cluster through its seed nodes (Akka's JoinOtherSeedNodes).
///    When fresh answers report different clusters at the moment of the
///    decision, the one with the most seed nodes, ties by the lowest oldest
///    seed, is joined; once sent to a cluster, the node stays with it while
///    any fresh answer still reports it.
/// 2. Otherwise this node founds a new cluster (joins itself, Akka's
///    JoinSelf) only when all of these hold, and else keeps probing:
///    - `new_cluster_enabled`;
///    - at least `required_contact_point_nr` contact points are discovered
///      and the last discovery succeeded;
///    - the discovered set has not changed for `stable_margin`;
///    - every discovered contact point has a fresh answer, and none is in a
///      cluster (Akka's contact-with-all-contact-points, always on here);
///    - this node is among them and has the lowest cluster address of them
///      (host bytewise, then port: DESIGN.md §10's order, of the
///      `self_node` each answer names).
///    An answer is fresh while the probe it answers was sent at most
///    `probing_failure_timeout` ago; a newer probe's answer replaces an
///    older one, a failed probe leaves the last answer to age out.
///
/// After deciding, the process keeps probing until the shell reports that
/// this node is a member (`on_member`): if the cluster it was sent to is
/// reported nowhere any more (no fresh answer offers one of its seeds) and
/// another is, it is sent to that one; if no
/// cluster is reported at all and rule 2 holds, it founds. The
/// membership's join process ignores a new seed list once joined, so a
/// late decision is harmless.
///
/// Safety (no two clusters): rule 2 lets at most one node found among
/// nodes that discover the same set, because they order the same answers
/// the same way; it needs discovery to agree within `stable_margin`
/// (docs/design/bootstrap.md argues it and names what breaks it: a
/// discovery that shows different nodes different sets for longer).
///
/// Not thread-safe: one owner (an actor or the simulator) calls it.

namespace troupe::bootstrap {

/// A mistake the simulator plants to show its checkers catch it. Never set
/// outside tests.
enum class planted_bug : uint8_t {
  none = 0,
  /// Founds without a fresh answer from every discovered contact point.
  found_without_all_probed,
  /// Never founds a cluster (a liveness bug).
  never_found,
};

/// Run discovery now (the shell calls the method with discovery_timeout
/// and reports through on_discovered / on_discovery_failed).
struct discover {};

/// Probe `point` (`GET /bootstrap/seed-nodes` with probing_failure_timeout
/// as the deadline) and report with `id`.
struct probe {
  contact_point point;
  uint64_t id = 0;
};

/// Join the cluster of these seed nodes (cluster_handle::join with them:
/// the join process sends init_join to each and joins the first that
/// acks). Never contains this node.
struct join_seed_nodes {
  std::vector<cluster::endpoint> seeds;
};

/// Found a new cluster: join this node itself.
struct join_self {};

/// Why the process is waiting; the shell logs each change once.
enum class wait_reason : uint8_t {
  /// Nothing discovered yet, or discovery has not answered.
  discovering = 0,
  /// The last discovery failed.
  discovery_failing,
  /// Fewer than required_contact_point_nr contact points.
  too_few_contact_points,
  /// The discovered set changed less than stable_margin ago.
  not_stable,
  /// Some discovered contact points have no fresh answer.
  not_all_probed,
  /// This node is not among the discovered contact points' answers.
  self_not_discovered,
  /// Another contact point has the lowest address; it founds.
  not_lowest,
  /// new_cluster_enabled is false and no contact point is in a cluster.
  new_cluster_disabled,
  /// Joining (or founding) was decided; waiting to be a member.
  joining,
};

/// "discovering", "discovery_failing", ...
const char* to_string(wait_reason x) noexcept;

/// The process's verdict after its latest input, for the log and
/// `GET /bootstrap` status. `detail` is one sentence with the inputs
/// (which contact points, how many, the lowest).
struct bootstrap_status {
  wait_reason reason = wait_reason::discovering;
  std::string detail;

  friend bool operator==(const bootstrap_status&, const bootstrap_status&)
    = default;
};

/// The waiting reason changed (log it: one INFO line per change).
struct status_changed {
  bootstrap_status status;
};

using bootstrap_effect
  = std::variant<discover, probe, join_seed_nodes, join_self, status_changed>;

/// What the process knows of one contact point.
struct contact_point_view {
  contact_point point;
  /// The latest answer and when the probe it answers was sent.
  std::optional<seed_nodes_answer> answer;
  std::optional<timestamp> answered_probe_sent;
  /// The latest probe failure's message ("" if the latest probe answered).
  std::string last_error;
};

/// One node's bootstrap; see the file comment. Inputs are events with
/// `now`; outputs are effects the shell carries out in order. The shell
/// calls `tick` at `next_tick()`.
class bootstrap_process {
public:
  /// `self` is this node's cluster address (its answer's self_node).
  /// `settings` must be valid (asserts validate()).
  bootstrap_process(runtime::unique_address self, bootstrap_settings settings,
                    planted_bug bug = planted_bug::none);

  /// Starts: the first discovery.
  std::vector<bootstrap_effect> start(timestamp now);

  /// Discovery answered with `points` (any order, duplicates allowed).
  std::vector<bootstrap_effect> on_discovered(std::vector<contact_point> points,
                                              timestamp now);

  /// Discovery failed; `err` names why (logged by the shell).
  std::vector<bootstrap_effect> on_discovery_failed(const runtime::error& err,
                                                    timestamp now);

  /// The probe `id` answered. Unknown or superseded ids are ignored.
  std::vector<bootstrap_effect>
  on_probe_answer(uint64_t id, seed_nodes_answer answer, timestamp now);

  /// The probe `id` failed (timeout, refused, bad answer).
  std::vector<bootstrap_effect>
  on_probe_failed(uint64_t id, const runtime::error& err, timestamp now);

  /// This node became a member: bootstrap is done, nothing more is asked.
  void on_member();

  /// Time passed: due discovery and probes.
  std::vector<bootstrap_effect> tick(timestamp now);

  /// When `tick` has something to do next (nullopt once done).
  std::optional<timestamp> next_tick() const;

  const bootstrap_status& status() const noexcept {
    return status_;
  }

  /// True once on_member was called.
  bool done() const noexcept {
    return done_;
  }

  /// The discovered contact points with what is known of each.
  std::vector<contact_point_view> contact_points() const;

  /// The cluster addresses of the discovered contact points that answered
  /// (for the cluster's second-cluster probe), sorted.
  std::vector<cluster::endpoint> answered_cluster_endpoints() const;

private:
  struct point_state {
    std::optional<seed_nodes_answer> answer;
    std::optional<timestamp> answered_sent;
    std::string last_error;
    timestamp next_probe{};
  };

  /// A probe that came back: its contact point's state (null when the id
  /// is unknown or the point no longer discovered), when it was sent, and
  /// whether it is newer than the answer the point has.
  struct taken_probe {
    point_state* state = nullptr;
    timestamp sent{};
    bool newest = false;
  };

  taken_probe take_probe(uint64_t id);
  void decide(timestamp now, std::vector<bootstrap_effect>& out);
  std::optional<std::vector<cluster::endpoint>>
  reported_cluster(timestamp now) const;
  bool is_reported(const std::vector<cluster::endpoint>& seeds,
                   timestamp now) const;
  std::optional<bootstrap_status> founding_blocker(timestamp now) const;
  bool is_fresh(const point_state& p, timestamp now) const;
  void send_due_probes(timestamp now, std::vector<bootstrap_effect>& out);
  void set_status(bootstrap_status st, std::vector<bootstrap_effect>& out);

  runtime::unique_address self_;
  bootstrap_settings settings_;
  planted_bug bug_;
  bool started_ = false;
  bool done_ = false;
  bool discovery_in_flight_ = false;
  bool discovery_ok_ = false;
  bool discovered_once_ = false;
  std::string last_discovery_error_;
  timestamp next_discovery_{};
  timestamp set_changed_at_{};
  timestamp last_decided_at_{};
  std::map<contact_point, point_state> points_;
  /// Probes in flight: id -> (contact point, sent at).
  std::map<uint64_t, std::pair<contact_point, timestamp>> in_flight_;
  uint64_t next_id_ = 1;
  /// The decision given (seeds, or {} for join_self), if any.
  std::optional<std::vector<cluster::endpoint>> decided_;
  bootstrap_status status_;
};

} // namespace troupe::bootstrap
