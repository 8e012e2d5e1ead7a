#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "troupe/management/router.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/secret.hpp"

/// @file
/// The `management.*` settings (docs/design/management.md, "Configuration
/// keys"): where the management API listens and who may change the
/// cluster through it.

namespace troupe::management {

/// The management API's settings; defaults as the keys'.
struct management_settings {
  /// Serve the API (`management.enabled`).
  bool enabled = true;
  /// The address to bind, an IP literal (`management.bind`); loopback by
  /// default, `0.0.0.0` in the Kubernetes manifests.
  std::string bind = "127.0.0.1";
  /// Akka Management's default port; 0 picks a free one
  /// (`management.port`).
  uint16_t port = 8558;
  /// The bearer token for PUT when not bound to loopback
  /// (`management.token`, a secret: never logged, never rendered).
  runtime::secret token;
  /// The bound on one snapshot from a module (`management.query_timeout`).
  std::chrono::milliseconds query_timeout{2000};
  /// Open connections at most (`management.max_connections`).
  size_t max_connections = 64;
  /// Serve `/faults`, which blackholes, delays or drops this node's
  /// traffic with chosen peers (`management.fault_injection`): for chaos
  /// tests and the demo's partition, never in production. Loopback only.
  bool fault_injection = false;

  /// True if `bind` is a loopback address (127.0.0.0/8 or ::1).
  bool loopback() const;
};

/// The shortest token accepted, in bytes.
inline constexpr size_t min_token_size = 16;

/// Declares the `management.*` keys with their defaults and bounds.
void declare_management_config(runtime::config_schema& schema);

/// Reads and validates the settings. Errors (errc::invalid_settings) name
/// the key and the value, never a token's value.
runtime::expected<management_settings>
management_settings_from_config(const runtime::config& cfg);

/// Checks the rules the keys' bounds cannot: `bind` is an IPv4 or IPv6
/// literal; a non-loopback `bind` needs a token; a token has at least
/// `min_token_size` bytes; fault injection only on a loopback `bind`.
runtime::error validate(const management_settings& s);

/// The router's settings for `s` (the token required off loopback) and the
/// dashboard page.
router_settings router_settings_of(const management_settings& s,
                                   std::string dashboard_html);

} // namespace troupe::management
