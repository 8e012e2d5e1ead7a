#pragma once

#include <cstdint>

/// @file
/// The operating errors of remote references (cluster::remoting).

namespace troupe::cluster {

/// Operating errors of remote messaging, publishing and watching.
/// Registered with CAF as the error category "remoting". Zero is reserved
/// for "no error". Errors of the transport itself (frame too large,
/// quarantined destination, shutting down, ...) keep their own category,
/// "cluster" (errc.hpp). Every message names the type, name or reference
/// concerned.
enum class remoting_errc : uint8_t {
  none = 0,
  /// A message element's type was not registered with
  /// `add_message_type`, so it cannot travel; nothing was sent. The
  /// message names the C++ type.
  unregistered_type,
  /// CAF's serializer failed on a value; nothing was sent.
  serialization_failed,
  /// A payload that could not be decoded (recorded as a drop at the
  /// receiver, never returned to a sender).
  undecodable,
  /// A name that cannot be published: empty, longer than 255 bytes, or
  /// starting with '$' (reserved for reply references).
  invalid_name,
  /// The name is already published by another actor on this node.
  name_taken,
  /// A reference nothing can be sent to or watched (no host, port or
  /// name; or a watch of a reference whose uid is 0).
  invalid_ref,
  /// A null actor handle.
  invalid_actor,
  /// Remoting is stopped (the node is shutting down).
  not_running,
};

/// The enumerator's name, e.g. "unregistered_type".
const char* to_string(remoting_errc x) noexcept;

/// The CAF error category of this enum: "remoting".
inline const char* category_name(remoting_errc) noexcept {
  return "remoting";
}

} // namespace troupe::cluster
