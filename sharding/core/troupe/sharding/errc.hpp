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
  /// A message names an entity type that no region on this node serves
  /// (the type name named).
  unknown_type,
  /// The type's message extractor could not map a message to an entity id
  /// and a shard id (the type and the message's type named).
  unmappable_message,
  /// The coordinator refused a region's registration (e.g. a different
  /// number_of_shards; the reason names both values).
  registration_refused,
  /// A region or coordinator could not start (no cluster, no remoting, a
  /// region of that type already runs on this node, a bad type name).
  start_failed,
  /// An entity type name breaks the naming rule (the name and the rule
  /// named).
  invalid_name,
  /// The region has stopped (or was never started).
  not_running,
  /// No coordinator answered a query in time (none known yet, or it is
  /// unreachable).
  no_coordinator,
  /// A graceful stop did not finish in time (the region was killed), or
  /// its timeout was not positive (nothing done).
  stop_failed,
};

/// The enumerator's name, e.g. "invalid_settings".
const char* to_string(errc x) noexcept;

/// The CAF error category of this enum: "sharding".
inline const char* category_name(errc) noexcept {
  return "sharding";
}

} // namespace troupe::sharding
