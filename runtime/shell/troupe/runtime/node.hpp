#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <caf/fwd.hpp>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/config.hpp"
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

/// One troupe process: it owns the configuration and the
/// `caf::actor_system`, registered with every module's message types and
/// error categories, with logging configured from `log.*`.
///
/// Shutdown: `shutdown()` runs the registered shutdown tasks (latest first:
/// e.g. releasing leases, each awaited by the task itself), releases what
/// they captured, then stops every registered actor. It is idempotent and
/// also runs from the destructor. The actor system itself is destroyed by
/// the destructor, after everything that owns the node released its actor
/// handles: releasing a handle after its system is gone crashes CAF 0.17
/// (every demo node crashed so on exit). Thread-safety: `on_shutdown` and
/// `shutdown` are thread-safe; `system()` and `cfg()` may be used from any
/// thread.
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

  /// Registers a task for graceful shutdown.
  void on_shutdown(std::string name, std::function<void()> task);

  /// Sends `actor` an exit (user_shutdown) after the shutdown tasks ran.
  void stop_on_shutdown(caf::strong_actor_ptr actor);

  /// Runs the shutdown tasks once (latest first), stops the actors
  /// registered with `stop_on_shutdown`, and tells the actor system not to
  /// wait for actors nobody registered when the destructor stops it (they
  /// would keep it alive).
  void shutdown();

private:
  struct impl;
  explicit node(std::unique_ptr<impl> ptr);
  std::unique_ptr<impl> impl_;
};

} // namespace troupe::runtime
