#pragma once

#include <cstdint>

#include "troupe/cluster/tcp_transport.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The transport's configuration keys (`cluster.*`, `cluster.tls.*`,
/// `cluster.transport.*`) and the settings they make.

namespace troupe::cluster {

/// Declares the transport's keys with their defaults (docs/design/
/// transport.md §8 lists them and the reasons for each default).
void declare_transport_config(runtime::config_schema& schema);

/// The TCP transport's settings from a configuration built on a schema
/// that `declare_transport_config` filled, for the incarnation `uid` (0:
/// drawn by the transport).
///
/// The secret comes from `cluster.secret` or from the file named by
/// `cluster.secret_file` (trailing whitespace removed; a warning is logged
/// when the file is readable by group or others). Errors
/// (errc::invalid_settings) name the key or the file and never the secret:
/// no secret at all (a node without one would accept anybody; there is no
/// insecure mode), both keys set, an unreadable file, and everything that
/// `validate(tcp_transport_settings)` rejects.
runtime::expected<tcp_transport_settings>
transport_settings_from_config(const runtime::config& cfg, uint64_t uid = 0);

} // namespace troupe::cluster
