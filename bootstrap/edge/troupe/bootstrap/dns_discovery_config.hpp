#pragma once

#include <cstdint>
#include <memory>

#include "troupe/bootstrap/contact_point_discovery.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The `cluster.bootstrap.dns.*` configuration keys and the dns_discovery
/// built from them (docs/design/bootstrap.md, section DNS).

namespace troupe::bootstrap {

/// Declares `cluster.bootstrap.dns.service_name` (""), `record_type` ("a";
/// a or srv), `port_name` ("management"), `protocol` ("tcp") and `server`
/// ("": the system resolver; or ip:port).
void declare_dns_discovery_config(runtime::config_schema& schema);

/// The dns_discovery the `cluster.bootstrap.dns.*` keys of `cfg` describe,
/// for `cluster.bootstrap.discovery_method = dns`; `fallback_port` is the
/// management port of contact points found by A/AAAA records (the resolved
/// `cluster.bootstrap.contact_point_port`). Errors (errc::invalid_settings)
/// name the key, where its value came from and what is wrong, e.g.
/// `cluster.bootstrap.dns.server (from env
/// TROUPE_CLUSTER__BOOTSTRAP__DNS__SERVER): "dns:53": "dns" is not an IP
/// address (...)`; a `fallback_port` of 0 names
/// `cluster.bootstrap.contact_point_port`. An unknown record type is
/// refused when the value is set (the key's allowed values).
runtime::expected<std::unique_ptr<contact_point_discovery>>
dns_discovery_from_config(const runtime::config& cfg, uint16_t fallback_port);

} // namespace troupe::bootstrap
