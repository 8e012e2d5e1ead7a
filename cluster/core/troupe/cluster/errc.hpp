#pragma once

#include <cstdint>

/// @file
/// The cluster module's operating errors.

namespace troupe::cluster {

/// Operating errors of the cluster module (transport for now). Registered
/// with CAF as the error category "cluster". Zero is reserved for "no
/// error". Every message names the peer, key or file concerned.
///
/// Note what is *not* an error here: a frame dropped by the network or by a
/// full queue is a counted drop (`drop_reason`), and a failed handshake is a
/// closed connection plus a log line; neither reaches a sender as an error.
enum class errc : uint8_t {
  none = 0,
  /// A payload larger than `cluster.transport.max_frame_size`.
  frame_too_large,
  /// A destination that cannot be addressed: empty host, port 0, or this
  /// node itself.
  invalid_destination,
  /// The destination's uid is quarantined (an old incarnation, or removed
  /// from membership).
  quarantined,
  /// The destination's host:port is connected to another incarnation.
  incarnation_mismatch,
  /// The transport is shut down.
  shutting_down,
  /// Transport or membership settings failed validation (secret missing or
  /// too short, incomplete TLS files, bad sizes, a bad seed node, an
  /// acceptable heartbeat pause shorter than the heartbeat interval); the
  /// message names the key and the value (never a secret).
  invalid_settings,
  /// TLS could not be set up (unreadable or mismatching CA, certificate
  /// or key file); the message names the file.
  tls_setup_failed,
  /// The listening socket could not be opened on the bind address.
  bind_failed,
};

/// The enumerator's name, e.g. "frame_too_large".
const char* to_string(errc x) noexcept;

/// The CAF error category of this enum: "cluster".
inline const char* category_name(errc) noexcept {
  return "cluster";
}

} // namespace troupe::cluster
