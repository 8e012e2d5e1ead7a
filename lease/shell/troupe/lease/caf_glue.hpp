#pragma once

#include <caf/fwd.hpp>

#include "troupe/runtime/module.hpp"

/// @file
/// The lease module's CAF registrations and configuration keys.

namespace troupe::lease {

/// Registers the lease message types and the "lease" error category.
void add_lease_types(caf::actor_system_config& cfg);

/// The lease module descriptor for `runtime::node::start`.
runtime::module lease_module();

} // namespace troupe::lease
