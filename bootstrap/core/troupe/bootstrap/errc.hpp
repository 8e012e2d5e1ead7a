#pragma once

#include <cstdint>

/// @file
/// The bootstrap module's operating errors (STYLE.md §6).

namespace troupe::bootstrap {

/// Why a discovery, a probe or a setting failed. Each error's message says
/// what was wrong and where (the method, the host, the key).
enum class errc : uint8_t {
  /// Not an error.
  none = 0,
  /// A `cluster.bootstrap.*` setting is missing or out of range.
  invalid_settings,
  /// Discovery could not be completed (DNS server failure, API server
  /// unreachable, timeout): try again later.
  discovery_unavailable,
  /// Discovery was refused (HTTP 401/403, a DNS refusal): retrying
  /// unchanged will not help; the message names the missing permission.
  discovery_refused,
  /// A discovery answer could not be decoded (malformed JSON, a record
  /// without a port).
  bad_discovery_answer,
  /// A contact point did not answer its probe (connection refused,
  /// timeout, a 5xx).
  probe_failed,
  /// A contact point's probe answer could not be decoded.
  bad_probe_answer,
};

/// "none", "invalid_settings", ...
const char* to_string(errc x) noexcept;

/// "bootstrap" (the error category, runtime::make_error).
constexpr const char* category_name(errc) noexcept {
  return "bootstrap";
}

} // namespace troupe::bootstrap
