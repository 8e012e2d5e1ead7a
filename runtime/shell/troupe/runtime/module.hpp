#pragma once

#include <functional>
#include <string>

#include <caf/fwd.hpp>

#include "troupe/runtime/config.hpp"

/// @file
/// How a module plugs into the node bootstrap.

namespace troupe::runtime {

/// One module's contribution to a node: its configuration keys and its CAF
/// registrations (message types, error category). Each module exposes a
/// function returning its descriptor (`runtime::runtime_module()`,
/// `lease::lease_module()`, ...); an application passes the ones it uses to
/// `node::start`, so nothing depends on static-initialisation order.
struct module {
  /// The module's name, e.g. "lease".
  std::string name;
  /// Declares the module's configuration keys (may be empty).
  std::function<void(config_schema&)> declare_config;
  /// Registers message types and the error category (may be empty).
  std::function<void(caf::actor_system_config&)> init_caf;
};

} // namespace troupe::runtime
