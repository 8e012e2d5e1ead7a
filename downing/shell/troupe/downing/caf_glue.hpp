#pragma once

#include <caf/fwd.hpp>

#include "troupe/runtime/module.hpp"

/// @file
/// The downing module's CAF registrations and configuration keys
/// (`downing.*`, downing_settings.hpp; docs/design/downing.md lists them).

namespace troupe::downing {

/// Registers the "downing" error category.
void add_downing_types(caf::actor_system_config& cfg);

/// The downing module descriptor for `runtime::node::start`: declares the
/// `downing.*` keys (keep_majority by default; `downing.active_strategy=off`
/// switches the resolver off) and registers the error category.
runtime::module downing_module();

} // namespace troupe::downing
