#pragma once

#include <functional>
#include <memory>
#include <string>

#include "troupe/lease/kubernetes_lease_backend.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The `lease.kubernetes.*` keys and the in-cluster configuration of the
/// Kubernetes lease backend (client-go `rest.InClusterConfig`).

namespace troupe::lease {

/// Declares `lease.kubernetes.*` (docs/reference/configuration.md).
void declare_kubernetes_lease_config(runtime::config_schema& schema);

/// Reads an environment variable; nullptr when unset. Tests inject one.
using runtime::env_reader;

/// The backend options from `cfg`, completed in-cluster style:
/// - `lease.kubernetes.api_server` empty: `https://` +
///   `KUBERNETES_SERVICE_HOST`:`KUBERNETES_SERVICE_PORT` (IPv6 bracketed);
///   an error names both variables when they are unset (not in a pod).
/// - `lease.kubernetes.namespace` empty: the first line of
///   `lease.kubernetes.namespace_file`, else `default`.
/// Errors (errc::invalid_settings) name the key.
runtime::expected<kubernetes_lease_backend_options>
kubernetes_options_from_config(const runtime::config& cfg,
                               const env_reader& getenv);

/// `kubernetes_options_from_config` with the process environment, then
/// `kubernetes_lease_backend::make`.
runtime::expected<std::shared_ptr<lease_backend>>
kubernetes_backend_from_config(const runtime::config& cfg);

} // namespace troupe::lease
