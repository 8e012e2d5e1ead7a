#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <caf/fwd.hpp>
#include <caf/message.hpp>

#include "troupe/cluster/remote_ref.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The body of a remoting message envelope: a caf::message written with
/// CAF's binary serializer (remoting_wire.hpp has the envelope around it).
///
/// ```
/// u16 n (element count), then per element:
///   u16 type number (CAF's built-in types) | 0 followed by the
///   registered type name (a string), then the value (its `inspect`)
/// ```
/// Only types the actor system knows travel: CAF's built-in value types
/// and every type registered with `add_message_type` (under the same name
/// on both nodes). Actor handles and CAF's system messages (`caf::actor`,
/// `actor_addr`, `strong_actor_ptr`, `down_msg`, `exit_msg`, nested
/// `caf::message`, streams, groups) are refused at both ends: an actor
/// handle means nothing on another node over this transport; send a
/// `remote_ref` instead.

namespace troupe::cluster {

/// Appends the body of `msg` to `out`. Errors, with nothing appended:
/// remoting_errc::unregistered_type (names the C++ type and the element
/// index), serialization_failed (a refused CAF type, or CAF's serializer
/// failed). Thread-safe (reads the actor system's type registry).
runtime::error encode_message(caf::actor_system& sys, const caf::message& msg,
                              std::vector<char>& out);

/// Checks that every element of `msg` could be encoded (the same errors as
/// `encode_message`) without serializing anything: for messages delivered
/// on this node, so a send behaves the same wherever its target lives.
runtime::error check_message(caf::actor_system& sys, const caf::message& msg);

/// Decodes a body into the message delivered to the target actor:
/// `(from, elements...)`. Errors: remoting_errc::undecodable naming the
/// element and why (unknown type number or name, refused type, CAF's
/// deserializer error, trailing bytes). Never throws. Thread-safe.
runtime::expected<caf::message> decode_message(caf::actor_system& sys,
                                               std::span<const std::byte> body,
                                               const remote_ref& from);

} // namespace troupe::cluster
