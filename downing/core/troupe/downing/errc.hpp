#pragma once

#include <cstdint>

/// @file
/// The downing module's operating errors.

namespace troupe::downing {

/// Operating errors of the split brain resolver. Registered with CAF as the
/// error category "downing" (by the shell). Zero is reserved for "no
/// error". Every message names the configuration key and the value.
enum class errc : uint8_t {
  none = 0,
  /// The `downing.*` settings failed validation: an unknown strategy, a
  /// strategy without its required setting (static_quorum without
  /// quorum_size, keep_referee without referee_address), a bad duration.
  invalid_settings,
};

/// The enumerator's name, e.g. "invalid_settings".
const char* to_string(errc x) noexcept;

/// The CAF error category of this enum: "downing".
inline const char* category_name(errc) noexcept {
  return "downing";
}

} // namespace troupe::downing
