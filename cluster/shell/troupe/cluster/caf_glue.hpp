#pragma once

#include <caf/fwd.hpp>

#include "troupe/runtime/config.hpp"
#include "troupe/runtime/module.hpp"

/// @file
/// The cluster module's CAF registrations and configuration keys.

namespace troupe::cluster {

/// Registers the cluster message types (remote_ref, remote_down and the
/// remoting actor's internal messages; membership values, every membership
/// message, every cluster event and current_cluster_state) and the
/// "cluster", "remoting" and "membership" error categories.
void add_cluster_types(caf::actor_system_config& cfg);

/// Declares the cluster module's configuration keys: the transport's
/// (`cluster.*`, `cluster.tls.*`, `cluster.transport.*`, see
/// transport_config.hpp), membership's (`cluster.*`,
/// `cluster.failure_detector.*`, see membership_settings.hpp) and
/// remoting's (`cluster.remoting.*`).
void declare_cluster_config(runtime::config_schema& schema);

/// The cluster module descriptor for `runtime::node::start`.
runtime::module cluster_module();

} // namespace troupe::cluster
