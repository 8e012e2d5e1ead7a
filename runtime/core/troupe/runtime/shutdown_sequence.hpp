#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// Coordinated shutdown, the pure core: the phases, why a node stops, and
/// the sequence that runs the phases' tasks in order, each phase bounded by
/// its timeout (docs/design/coordinated-shutdown.md).
///
/// Semantics: Akka's CoordinatedShutdown with its default phases (same
/// names in snake case, same order, same default timeouts) plus one phase
/// of troupe's own, `release_leases`, between `cluster_shutdown` and
/// `before_actor_system_terminate`: leases are released, and the releases
/// awaited, only after every singleton and shard that used them stopped
/// (scenario S6; Akka releases a lease in the user's actor's postStop and
/// does not await it). As in Akka (`recover = on`), a phase whose tasks do
/// not all finish within its timeout is logged and the sequence goes on:
/// a shutdown always reaches its end. A phase with no tasks passes at once.
///
/// The core reads no clock: time comes in as arguments. Not thread-safe:
/// its owner (coordinated_shutdown in runtime/edge) serializes the calls.

namespace troupe::runtime {

/// The phases, in the order they run.
enum class shutdown_phase : uint8_t {
  /// Application hook before the node stops taking work.
  before_service_unbind,
  /// Stop accepting work: the management API's readiness answers 503, the
  /// application's endpoints refuse new requests.
  service_unbind,
  /// Requests already accepted are answered.
  service_requests_done,
  /// The application's services stop.
  service_stop,
  /// Application hook before the cluster parts stop.
  before_cluster_shutdown,
  /// Every shard region stops gracefully: its shards are handed off to
  /// other regions through the coordinator (Akka's GracefulShutdown).
  cluster_sharding_shutdown_region,
  /// The node asks to leave the cluster (a no-op when it is not a member
  /// any more, or was downed) and waits until it is leaving.
  cluster_leave,
  /// Waits until the node is exiting: the leader moved it there once its
  /// singletons were handed over to the next oldest.
  cluster_exiting,
  /// Waits until the node is removed (or exiting, when no member stays to
  /// remove it).
  cluster_exiting_done,
  /// The cluster parts stop: singleton managers (an instance still running
  /// stops here), the split brain resolver, the cluster daemon.
  cluster_shutdown,
  /// Every lease this node still holds is released, and the release
  /// awaited, so that the next holder acquires at once instead of after
  /// the ttl (troupe's phase; scenario S6).
  release_leases,
  /// Application hook before the actor system stops.
  before_actor_system_terminate,
  /// The remaining actors and the transport stop.
  actor_system_terminate,
};

inline constexpr size_t shutdown_phase_count = 13;

/// Every phase, in order.
const std::array<shutdown_phase, shutdown_phase_count>&
all_shutdown_phases() noexcept;

/// The phase's name, e.g. "cluster_leave" (Akka's "cluster-leave").
std::string_view to_string(shutdown_phase phase) noexcept;

/// The phase named `name`; nullopt for an unknown name.
std::optional<shutdown_phase> parse_shutdown_phase(std::string_view name);

/// The default timeout of `phase`: 10 s for cluster_sharding_shutdown_region,
/// cluster_exiting and actor_system_terminate, 5 s for the others (Akka's
/// defaults; release_leases as Akka's default-phase-timeout).
timespan default_phase_timeout(shutdown_phase phase) noexcept;

/// Why a node shuts down (Akka's CoordinatedShutdown.Reason). The first
/// reason given wins; later ones are ignored.
enum class shutdown_reason : uint8_t {
  /// SIGTERM or SIGINT.
  signal,
  /// The application asked (an API call, or its node was destroyed).
  application,
  /// This node was asked to leave the cluster (its own leave, or another
  /// member's `leave` of it, e.g. through the management API).
  cluster_leaving,
  /// This node learned that it was downed (Akka's ClusterDowningReason).
  cluster_downing,
  /// This node learned that it was removed without having left.
  cluster_removed,
  /// This node gave up joining (no seed answered in time, or its
  /// configuration was refused: Akka's ClusterJoinUnsuccessfulReason).
  cluster_join_unsuccessful,
  /// This node's cluster met another cluster of the same name and lost
  /// the merge rule (the smaller, or the younger at equal sizes): every
  /// member stops and must be restarted, and then joins the other
  /// cluster (docs/design/cluster.md; troupe's own).
  cluster_merge,
};

/// The reason's name, e.g. "cluster_downing".
std::string_view to_string(shutdown_reason reason) noexcept;

/// True when the cluster stopped the node against its will (downed,
/// removed, refused, or its cluster left for a merge): it then has
/// nothing to leave, and its process exits non-zero so that a supervisor
/// restarts it. False for a signal, the application or a leave (exit 0).
bool stopped_by_cluster(shutdown_reason reason) noexcept;

/// The exit code of a node that stopped for `cluster_merge`: 75, sysexits'
/// EX_TEMPFAIL ("a temporary failure; the user is invited to retry").
/// Non-zero, so that every supervisor restarts the process (Kubernetes
/// always, systemd's `Restart=on-failure` too), and distinct from 1, so
/// that an operator, a unit's `RestartForceExitStatus=` or a test harness
/// can tell "restart me, I will join the other cluster" from a failure.
inline constexpr int merge_exit_code = 75;

/// The process exit code for `reason`: `merge_exit_code` for
/// cluster_merge, 1 for the other `stopped_by_cluster` reasons, else 0.
int exit_code(shutdown_reason reason) noexcept;

/// The timeout of every phase.
struct shutdown_timeouts {
  std::array<timespan, shutdown_phase_count> per_phase{};

  /// Every phase with its default timeout.
  static shutdown_timeouts defaults() noexcept;

  timespan of(shutdown_phase phase) const noexcept {
    return per_phase[static_cast<size_t>(phase)];
  }
  void set(shutdown_phase phase, timespan t) noexcept {
    per_phase[static_cast<size_t>(phase)] = t;
  }

  /// The longest a whole shutdown can take: the sum of the timeouts
  /// (every phase timing out). Kubernetes' terminationGracePeriodSeconds
  /// must exceed it (docs/guides/operations.md).
  timespan total() const noexcept;
};

class config;
class config_schema;

/// The configuration key of `phase`'s timeout:
/// `coordinated_shutdown.<phase>.timeout`, e.g.
/// `coordinated_shutdown.cluster_exiting.timeout` (Akka's
/// `akka.coordinated-shutdown.phases.cluster-exiting.timeout`).
std::string shutdown_timeout_key(shutdown_phase phase);

/// Declares the 13 timeout keys (durations of at least 1 ms, defaults from
/// `default_phase_timeout`); the runtime module does.
void declare_shutdown_config(config_schema& schema);

/// The timeouts a validated configuration holds.
shutdown_timeouts shutdown_timeouts_from_config(const config& cfg);

/// How one phase ended.
enum class phase_outcome : uint8_t {
  /// It had no tasks.
  empty,
  /// Every task finished within the timeout.
  completed,
  /// The timeout passed with tasks still running.
  timed_out,
};

std::string_view to_string(phase_outcome outcome) noexcept;

/// One phase in the report.
struct phase_result {
  shutdown_phase phase = shutdown_phase::before_service_unbind;
  phase_outcome outcome = phase_outcome::empty;
  timestamp started{};
  timestamp ended{};
  /// The names of the tasks that had not finished at the timeout.
  std::vector<std::string> unfinished;
  /// The names of the tasks that failed, each with its error.
  std::vector<std::string> failed;
};

/// What a whole shutdown did.
struct shutdown_report {
  shutdown_reason reason = shutdown_reason::application;
  timestamp started{};
  timestamp ended{};
  /// Every phase, in order (empty phases included).
  std::vector<phase_result> phases;

  /// True when no phase timed out and no task failed.
  bool clean() const noexcept;
};

/// The state machine of one shutdown: which phase runs, which of its tasks
/// are still running, when the phase times out.
///
/// Inputs: `add_task` (before or during the run), `start`, `task_done`,
/// `task_failed`, `tick`. Each returns the step the owner must take: start
/// the listed tasks (each with the phase's deadline), then call `tick` at
/// `wake_at` unless another input comes first.
///
/// Invariants: phases run strictly in order and one at a time; every task
/// of a phase is started when the phase starts, once; a phase ends when
/// its last task finished or at started + timeout, whichever is first; a
/// task reported after its phase ended changes nothing; after the last
/// phase `complete` holds and the report is final. A task added for a
/// phase that already started is refused (Akka logs and never runs it).
class shutdown_sequence {
public:
  /// What the owner does next.
  struct step {
    /// The tasks to start now (ids from add_task), all of `phase`.
    std::vector<size_t> start;
    /// The phase they belong to (when `start` is not empty).
    shutdown_phase phase = shutdown_phase::before_service_unbind;
    /// Their deadline: the phase's start plus its timeout.
    timestamp deadline{};
    /// The phases that ended during this call, in order.
    std::vector<phase_result> ended;
    /// When to call `tick` (the running phase's deadline); none when
    /// complete.
    std::optional<timestamp> wake_at;
    /// True once every phase ran.
    bool complete = false;
  };

  explicit shutdown_sequence(shutdown_timeouts timeouts);

  /// Registers a task of `phase`; returns its id. Error
  /// (errc::shutdown_phase_passed) when `phase` already started or the sequence
  /// is complete; the error names the task and the phase.
  expected<size_t> add_task(shutdown_phase phase, std::string name);

  /// Starts the sequence at `now` for `reason`. A second call changes
  /// nothing and returns an empty step (its reason is ignored).
  step start(shutdown_reason reason, timestamp now);

  /// Task `id` finished at `now`.
  step task_done(size_t id, timestamp now);

  /// Task `id` failed at `now` with `what`: it counts as finished (Akka's
  /// recover = on) and is named in the report.
  step task_failed(size_t id, std::string what, timestamp now);

  /// Time passed: a phase whose deadline is at or before `now` ends.
  step tick(timestamp now);

  bool started() const noexcept {
    return started_;
  }
  bool complete() const noexcept {
    return complete_;
  }
  /// The running phase (none before start and after completion).
  std::optional<shutdown_phase> current_phase() const noexcept;
  /// The reason given to `start` (none before).
  std::optional<shutdown_reason> reason() const noexcept;
  const shutdown_report& report() const noexcept {
    return report_;
  }
  /// The name of task `id` ("" for an unknown id).
  const std::string& task_name(size_t id) const noexcept;
  const shutdown_timeouts& timeouts() const noexcept {
    return timeouts_;
  }

private:
  struct task {
    shutdown_phase phase;
    std::string name;
    bool running = false;
    bool finished = false;
    std::optional<std::string> error;
  };

  // Ends the running phase (outcome by its tasks) and starts the next ones
  // until one has tasks or none is left.
  void advance(timestamp now, bool timed_out, step& out);
  // Starts phase index `next_` at `now` (its tasks go into `out`).
  void begin_phase(timestamp now, step& out);
  void finish_task(size_t id, std::optional<std::string> error, timestamp now,
                   step& out);

  shutdown_timeouts timeouts_;
  std::vector<task> tasks_;
  bool started_ = false;
  bool complete_ = false;
  // Index of the running phase in all_shutdown_phases() (valid when
  // started_ && !complete_).
  size_t current_ = 0;
  timestamp phase_started_{};
  timestamp deadline_{};
  shutdown_report report_;
};

} // namespace troupe::runtime
