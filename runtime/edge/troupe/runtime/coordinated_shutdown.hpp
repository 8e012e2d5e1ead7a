#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/shutdown_sequence.hpp"

/// @file
/// Coordinated shutdown: one shutdown sequence per node, in named phases,
/// each bounded by its timeout (Akka's CoordinatedShutdown; the phases,
/// reasons and rules are in shutdown_sequence.hpp and
/// docs/design/coordinated-shutdown.md).
///
/// Who starts it: the node's main loop on SIGTERM/SIGINT
/// (`shutdown_reason::signal`), the cluster daemon when this node learns
/// it was downed, removed, asked to leave or refused (`cluster_*`), and the
/// application (`runtime::node::shutdown`, `cluster_system::shutdown`, or
/// `run` here). Running it twice is harmless: the first reason wins, later
/// calls only wait for the same sequence.

namespace troupe::runtime {

/// What a task is told when it starts.
struct shutdown_context {
  /// Why the node shuts down (a task may skip work that makes no sense for
  /// it, e.g. a hand-off when the node was downed).
  shutdown_reason reason = shutdown_reason::application;
  /// The phase the task belongs to.
  shutdown_phase phase = shutdown_phase::before_service_unbind;
  /// When the phase times out (std::chrono::steady_clock): a task should
  /// return by then; its own waits use `remaining()`.
  timestamp deadline{};

  /// The time left until `deadline` (zero when it passed).
  timespan remaining() const noexcept;
};

/// A task: runs on a thread of its own, may block, returns when its work
/// is done (or throws: the failure is logged and named in the report, and
/// the phase goes on, as Akka's recover = on). A task that runs past its
/// phase's deadline is logged and not waited for (it keeps running: it
/// must not use what the later phases stop, and should honor
/// `shutdown_context::deadline`).
using shutdown_task = std::function<void(const shutdown_context&)>;

/// The runner of one node's shutdown sequence.
///
/// Tasks of one phase run concurrently (a thread each); phases run one
/// after the other on the runner's own thread, started by the first `run`.
/// Logging (logger "shutdown"): INFO when it starts (with the reason) and
/// when each non-empty phase ends (with its duration), WARNING for a phase
/// that timed out (naming the unfinished tasks) or a failed task, INFO at
/// the end with the total.
///
/// Thread-safety: every member function may be called from any thread,
/// including from a task (but `wait` from a task deadlocks: a task must
/// never wait for the shutdown it is part of). The destructor runs the
/// sequence (reason application) if it never ran, and waits for it.
class coordinated_shutdown {
public:
  explicit coordinated_shutdown(shutdown_timeouts timeouts
                                = shutdown_timeouts::defaults());
  ~coordinated_shutdown();

  coordinated_shutdown(const coordinated_shutdown&) = delete;
  coordinated_shutdown& operator=(const coordinated_shutdown&) = delete;

  /// Adds `task` to `phase` under `name` (which names it in logs and the
  /// report). Error (errc::shutdown_phase_passed, naming the task and the
  /// phase; also logged as a WARNING) when the phase already started.
  error add_task(shutdown_phase phase, std::string name, shutdown_task task);

  /// Starts the sequence for `reason` and returns at once; true when this
  /// call started it, false when it had started already (the first reason
  /// stays). Also sets the process's stop flag (`request_stop`), so that
  /// main loops polling `stop_requested()` wake up and wait.
  bool run(shutdown_reason reason);

  /// Blocks until the sequence is complete (it must have been started by
  /// `run`; otherwise returns at once with an empty report) and returns
  /// the report.
  shutdown_report wait();

  /// `run(reason)`, then `wait()`.
  shutdown_report run_and_wait(shutdown_reason reason);

  /// Destroys the tasks' functions (and what they captured) once the
  /// sequence is complete; a no-op before. The node calls it so that
  /// actor handles captured by tasks go while the actor system exists.
  void release_tasks();

  /// True once `run` was called.
  bool started() const;
  /// True once every phase ran.
  bool complete() const;
  /// The reason of the running or finished sequence.
  std::optional<shutdown_reason> reason() const;
  /// The phase running now (none before the start and after the end).
  std::optional<shutdown_phase> current_phase() const;
  const shutdown_timeouts& timeouts() const noexcept;

private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

} // namespace troupe::runtime
