#pragma once

#include <cstdint>

/// @file
/// The singleton module's operating errors.
namespace troupe::singleton {

/// Operating errors of the singleton manager and proxy. Registered with CAF
/// as the error category "singleton" (by the shell). Zero is reserved for
/// "no error". Every message names what was wrong.
enum class errc : uint8_t {
  none = 0,
  /// The `singleton.*` settings failed validation (the message names the
  /// key and the value).
  invalid_settings,
  /// The singleton's name is empty or contains characters a published
  /// remoting name cannot hold.
  invalid_name,
  /// The manager or proxy could not start (no cluster, no remoting, a
  /// manager of that name already runs on this node).
  start_failed,
};

/// The enumerator's name, e.g. "invalid_settings".
const char* to_string(errc x) noexcept;

/// The CAF error category of this enum: "singleton".
inline const char* category_name(errc) noexcept {
  return "singleton";
}

} // namespace troupe::singleton
