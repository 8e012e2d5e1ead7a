#pragma once

#include <cstdint>

/// @file
/// The sharding module's operating errors.
namespace troupe::sharding {

/// Operating errors of sharding. Zero is reserved for "no error". Every
/// message names what was wrong.
enum class errc : uint8_t {
  none = 0,
  /// A `sharding.*` setting failed validation (key and value named).
  invalid_settings,
};

/// The enumerator's name, e.g. "invalid_settings".
const char* to_string(errc x) noexcept;

/// The CAF error category of this enum: "sharding".
inline const char* category_name(errc) noexcept {
  return "sharding";
}

} // namespace troupe::sharding
