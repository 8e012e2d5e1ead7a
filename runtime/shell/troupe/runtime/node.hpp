#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/coordinated_shutdown.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/module.hpp"

/// @file
/// The node bootstrap: configuration, logging and the CAF actor system.

namespace troupe::runtime {

/// What `node::start` needs.
struct node_options {
  /// The modules the application uses besides the runtime (e.g.
  /// `lease::lease_module()`); the runtime module is always added first.
  std::vector<module> modules;
  /// Keys of the application itself (may be empty).
  std::function<void(config_schema&)> declare_app_config;
  /// Where configuration comes from (see config_loader.hpp).
  config_sources sources;
  /// Use CAF's deterministic test coordinator (tests only).
  bool deterministic = false;
};

/// One troupe process: it owns the configuration, the
/// `caf::actor_system`, registered with every module's message types and
/// error categories, with logging configured from `log.*`, and the node's
/// coordinated shutdown (coordinated_shutdown.hpp) with its phase timeouts
/// from `coordinated_shutdown.*`.
///
/// Shutdown: modules and applications add tasks to the phases
/// (`add_shutdown_task`); `shutdown()` runs the sequence (reason
/// application, unless it runs already for another reason) and waits for
/// it. The node's own task, in `actor_system_terminate`, stops the actors
/// registered with `stop_on_shutdown` and tells the actor system not to
/// wait for actors nobody registered. After the sequence, what the tasks
/// captured is released while the actor system still exists. The actor
/// system itself is destroyed by the destructor (which shuts down first),
/// after everything that owns the node released its actor handles:
/// releasing a handle after its system is gone crashes CAF 0.17 (every
/// demo node crashed so on exit). Thread-safety: every member function may
/// be used from any thread; `shutdown()` must not be called from a
/// shutdown task (it would wait for itself).
class node {
public:
  /// Loads and validates the configuration (errors name every bad key and
  /// value, see load_config), applies `log.*` and starts the actor system.
  static expected<std::unique_ptr<node>> start(node_options opts);

  ~node();

  node(const node&) = delete;
  node& operator=(const node&) = delete;

  caf::actor_system& system() noexcept;

  const config& cfg() const noexcept;

  /// The clock shells use: the actor system's clock (simulated under the
  /// deterministic coordinator).
  const clock_source& clock() const noexcept;

  /// The node's coordinated shutdown: start it (`run`) with a reason, ask
  /// whether it started, add tasks.
  runtime::coordinated_shutdown& coordinated_shutdown() noexcept;

  /// Adds a task to `phase` of the coordinated shutdown (see
  /// coordinated_shutdown::add_task; the error is also logged).
  error add_shutdown_task(shutdown_phase phase, std::string name,
                          shutdown_task task);

  /// Sends `actor` an exit (user_shutdown) in the phase
  /// actor_system_terminate.
  void stop_on_shutdown(caf::strong_actor_ptr actor);

  /// Runs the coordinated shutdown (reason application, unless it started
  /// already) and waits until it is complete; then releases what the tasks
  /// captured. Idempotent. Returns the report (the same on every call).
  shutdown_report shutdown();

private:
  struct impl;
  explicit node(std::unique_ptr<impl> ptr);
  std::unique_ptr<impl> impl_;
};

} // namespace troupe::runtime
