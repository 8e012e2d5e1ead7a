#pragma once

#include <cstdint>
#include <memory>

#include "troupe/bootstrap/bootstrap_settings.hpp"
#include "troupe/bootstrap/contact_point_discovery.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// Builds the discovery method `cluster.bootstrap.discovery_method` names
/// from the configuration.

namespace troupe::bootstrap {

/// Declares the keys of every discovery method (`cluster.bootstrap.dns.*`,
/// `cluster.bootstrap.kubernetes_api.*`; the config method's list is a
/// bootstrap setting).
void declare_discovery_config(runtime::config_schema& schema);

/// The method of `s.method` (not off), configured from `cfg`;
/// `fallback_port` is the management port of records without one.
/// Errors (errc::invalid_settings) name the key.
runtime::expected<std::shared_ptr<contact_point_discovery>>
discovery_from_config(const runtime::config& cfg, const bootstrap_settings& s,
                      uint16_t fallback_port);

} // namespace troupe::bootstrap
