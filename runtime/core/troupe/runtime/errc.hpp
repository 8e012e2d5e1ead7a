#pragma once

#include <cstdint>

/// @file
/// The runtime module's operating errors.

namespace troupe::runtime {

/// Operating errors raised by runtime code (configuration, addresses, the
/// HTTP client). Registered with CAF as the error category "runtime". Zero
/// is reserved for "no error".
enum class errc : uint8_t {
  none = 0,
  /// A configuration key that no module declares.
  unknown_config_key,
  /// A configuration value that does not parse or violates a constraint.
  bad_config_value,
  /// A configuration file that cannot be read or parsed.
  bad_config_file,
  /// A command-line argument that is not `--key=value` or a known flag.
  bad_command_line,
  /// A malformed `host:port#uid` string.
  bad_address,
  /// HTTP: connecting failed (refused, unreachable, DNS).
  http_connect_failed,
  /// HTTP: the exchange did not complete before its deadline.
  http_timeout,
  /// HTTP: TLS handshake or certificate verification failed.
  http_tls_failed,
  /// HTTP: the response exceeded the configured size bound.
  http_response_too_large,
  /// HTTP: the response was not valid HTTP/1.1.
  http_malformed_response,
  /// HTTP: the request could not be formed (bad URL, bad header).
  http_bad_request,
  /// HTTP: the client is shutting down.
  http_shutdown,
  /// Coordinated shutdown: a task was added for a phase that already
  /// started (it would never run).
  shutdown_phase_passed,
  /// A credential file (the Kubernetes service-account token) cannot be
  /// read, is empty or does not hold one credential.
  credentials_unreadable,
};

/// The enumerator's name, e.g. "http_timeout".
const char* to_string(errc x) noexcept;

/// The CAF error category of this enum: "runtime".
inline const char* category_name(errc) noexcept {
  return "runtime";
}

} // namespace troupe::runtime
