#pragma once

#include <cstdint>
#include <memory>

#include "troupe/bootstrap/kubernetes_api_discovery.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/kubernetes_api.hpp"

/// @file
/// The `cluster.bootstrap.kubernetes_api.*` keys and the in-cluster
/// configuration of the kubernetes_api discovery, as `lease.kubernetes.*`
/// configures the Kubernetes lease (client-go `rest.InClusterConfig`).

namespace troupe::bootstrap {

/// Declares `cluster.bootstrap.kubernetes_api.*`
/// (docs/reference/configuration.md): pod_label_selector ("app=troupe"),
/// pod_namespace (""), pod_port_name ("management"), api_server (""),
/// token_file, ca_file, namespace_file (the service account's files),
/// allow_insecure_http (false), request_timeout ("2s").
void declare_kubernetes_api_discovery_config(runtime::config_schema& schema);

/// The discovery options from `cfg`, completed in-cluster style:
/// - `api_server` empty: `https://` + `KUBERNETES_SERVICE_HOST`:
///   `KUBERNETES_SERVICE_PORT` (IPv6 bracketed); an error names both
///   variables and the key when they are unset (not in a pod);
/// - `pod_namespace` empty: the first line of `namespace_file`, else
///   `default`.
/// `fallback_port` is the contact point port of a Running pod without the
/// named port (`cluster.bootstrap.contact_point_port`, resolved by the
/// caller; 0: such pods are left out). Errors (errc::invalid_settings)
/// name the key. Nothing is checked beyond that here; `make` checks.
runtime::expected<kubernetes_api_discovery_options>
kubernetes_api_discovery_options_from_config(const runtime::config& cfg,
                                             const runtime::env_reader& getenv,
                                             uint16_t fallback_port);

/// `kubernetes_api_discovery_options_from_config`, then
/// `kubernetes_api_discovery::make`; every error names the key
/// (`cluster.bootstrap.kubernetes_api.token_file /x: cannot read: ...`).
runtime::expected<std::shared_ptr<kubernetes_api_discovery>>
kubernetes_api_discovery_from_config(const runtime::config& cfg,
                                     const runtime::env_reader& getenv,
                                     uint16_t fallback_port);

} // namespace troupe::bootstrap
