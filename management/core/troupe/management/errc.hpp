#pragma once

#include <cstdint>

/// @file
/// The management module's operating errors.
namespace troupe::management {

/// Operating errors of the management API. Zero is reserved for "no
/// error". Every message names what was wrong.
enum class errc : uint8_t {
  none = 0,
  /// A member address that no member of the current view has.
  unknown_member,
  /// An address that does not parse (`host:port` or `host:port#uid`).
  invalid_address,
  /// A module did not answer within `management.query_timeout`.
  unavailable,
  /// A `management.*` setting failed validation (key and value named).
  invalid_settings,
  /// A request body that does not say what to do (the fault named).
  invalid_request,
};

/// The enumerator's name, e.g. "unknown_member".
const char* to_string(errc x) noexcept;

/// The CAF error category of this enum: "management".
inline const char* category_name(errc) noexcept {
  return "management";
}

} // namespace troupe::management
