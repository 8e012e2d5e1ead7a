#pragma once

#include <caf/fwd.hpp>

#include "troupe/runtime/module.hpp"

/// @file
/// The singleton module's CAF registrations and configuration keys
/// (`singleton.*`, `singleton.proxy.*`: singleton_settings.hpp;
/// docs/design/singleton.md lists them).

namespace troupe::singleton {

/// Registers every singleton type that travels over remoting (the four
/// hand-over messages, `identify_singleton`, `singleton_identity`; remoting
/// needs them registered on both nodes, message_codec.hpp) under
/// "troupe.singleton.*" names, and the "singleton" error category.
void add_singleton_types(caf::actor_system_config& cfg);

/// The singleton module descriptor for `runtime::node::start`: declares the
/// `singleton.*` keys and calls `add_singleton_types`. A node that starts a
/// singleton manager or proxy needs it (with the cluster and lease
/// modules).
runtime::module singleton_module();

} // namespace troupe::singleton
