#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/fwd.hpp>
#include <caf/message.hpp>
#include <caf/type_erased_value.hpp>

#include "troupe/cluster/remote_ref.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The body of a remoting message envelope: a caf::message written with
/// CAF's binary serializer (remoting_wire.hpp has the envelope around it).
///
/// ```
/// u16 n                      element count (big-endian)
/// n x type:  u16 nr          CAF's built-in type number, or 0 followed by
///            [u8 len, name]  the registered type name (at most 255 bytes)
/// n x value                  each value as its `inspect` writes it with
///                            caf::binary_serializer
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

/// Appends the body of the message `(head..., body...)` to `out` as
/// `encode_message` would for `caf::message::concat(head, body)`, without
/// building that message. The same errors; element indexes count through
/// both parts.
runtime::error encode_message(caf::actor_system& sys, const caf::message& head,
                              const caf::message& body, std::vector<char>& out);

/// Checks that every element of `msg` could be encoded (the same errors as
/// `encode_message`) without serializing anything: for messages delivered
/// on this node, so a send behaves the same wherever its target lives.
runtime::error check_message(caf::actor_system& sys, const caf::message& msg);

/// Remembers a prototype value per registered type name, so decoding a
/// name costs a string compare and a copy instead of CAF's locked lookup.
/// Not thread-safe: one per decoding thread (the listener's io thread).
class decode_cache {
public:
  /// A new empty value of the type registered as `name`, or null.
  caf::type_erased_value_ptr make(caf::actor_system& sys,
                                  std::string_view name);

private:
  static constexpr size_t max_entries = 64;
  caf::actor_system* sys_ = nullptr;
  std::vector<std::pair<std::string, caf::type_erased_value_ptr>> protos_;
};

/// Decodes a body into the message delivered to the target actor:
/// `(from, elements...)`. Errors: remoting_errc::undecodable naming the
/// element and why (unknown type number or name, refused type, CAF's
/// deserializer error, trailing bytes). Never throws. Thread-safe (with a
/// `cache` per thread, or none).
runtime::expected<caf::message> decode_message(caf::actor_system& sys,
                                               std::span<const std::byte> body,
                                               const remote_ref& from,
                                               decode_cache* cache = nullptr);

/// `decode_message` without the sender: `(elements...)`, for a tagged
/// message's receiver (which is told the sender's node apart).
runtime::expected<caf::message>
decode_message_elements(caf::actor_system& sys, std::span<const std::byte> body,
                        decode_cache* cache = nullptr);

} // namespace troupe::cluster
