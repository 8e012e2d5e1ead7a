#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "troupe/cluster/remote_down.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The payload format of remoting frames (inside a transport frame).
///
/// ```
/// message   01 | u8 n | target name (n bytes) | u8 m | reply-to name (m)
///              | body: the CAF-serialized message (to the end)
/// tagged    05 | u8 n | target name | u16 t (big-endian) | tag (t bytes)
///              | body (to the end)
/// watch     02 | u8 n | name
/// unwatch   03 | u8 n | name
/// down      04 | u8 n | name | u8 cause | u64 seq (big-endian)
///              | u16 r (big-endian) | reason (r bytes)
/// ```
/// Names are at most 255 bytes; an empty reply-to name means an anonymous
/// sender. A tagged message has no reply-to; its tag is opaque bytes for
/// the target's tagged receiver (remoting_handle::send_tagged), e.g. a
/// shard region's entity and shard ids. The sender's node is never on the wire:
/// the receiver takes it from the transport, which authenticated the peer, so a
/// peer cannot claim to speak for another node. The body's format belongs to
/// the CAF shell (an element count, then each element's registered type name
/// and value, written by caf::binary_serializer).
///
/// `seq` numbers the down events of one node incarnation (strictly
/// increasing); a down is sent on both lanes with the same `seq`, so the
/// receiver recognises the second copy (watch_table.hpp).
///
/// Pure functions over bytes; no input makes the decoder crash (every
/// length is checked against the payload).

namespace troupe::cluster {

/// The kind of a remoting payload (its first byte).
enum class envelope_kind : uint8_t {
  message = 1,
  watch = 2,
  unwatch = 3,
  down = 4,
  tagged = 5,
};

/// "message", "watch", "unwatch", "down" or "tagged".
const char* to_string(envelope_kind x) noexcept;

/// The longest name that can be published or addressed, in bytes.
inline constexpr size_t max_name_size = 255;

/// The longest tag a tagged message carries, in bytes.
inline constexpr size_t max_tag_size = 65535;

/// The longest reason text a down carries; longer ones are cut.
inline constexpr size_t max_reason_size = 1024;

/// A decoded payload: views into the decoded bytes (valid as long as they
/// are).
struct envelope_view {
  envelope_kind kind = envelope_kind::message;
  /// The target (message) or the watched name (watch, unwatch, down).
  std::string_view name;
  /// message: the sender's reply-to name (empty: anonymous).
  std::string_view reply_to;
  /// tagged: the tag.
  std::string_view tag;
  /// down: why and which event.
  down_cause cause = down_cause::actor_stopped;
  uint64_t seq = 0;
  std::string_view reason;
  /// message, tagged: the serialized message.
  std::span<const std::byte> body;
};

/// Appends the header of a message envelope to `out` (the body follows).
/// Names must be at most `max_name_size` bytes (asserts).
void append_message_header(std::vector<char>& out, std::string_view target,
                           std::string_view reply_to);

/// Appends the header of a tagged message envelope to `out` (the body
/// follows). The name must be at most `max_name_size` bytes and the tag at
/// most `max_tag_size` (asserts).
void append_tagged_header(std::vector<char>& out, std::string_view target,
                          std::string_view tag);

/// Appends a whole watch or unwatch envelope to `out`.
void append_watch(std::vector<char>& out, envelope_kind kind,
                  std::string_view name);

/// Appends a whole down envelope to `out`; `reason` is cut to
/// `max_reason_size` bytes.
void append_down(std::vector<char>& out, std::string_view name,
                 down_cause cause, uint64_t seq, std::string_view reason);

/// Decodes a payload. Errors (remoting_errc::undecodable) say what was
/// wrong, e.g. `remoting payload: name length 40 exceeds the 12 bytes
/// left`.
runtime::expected<envelope_view>
decode_envelope(std::span<const std::byte> payload);

/// Empty if `name` can be published, else remoting_errc::invalid_name
/// naming the name and the rule: not empty, at most `max_name_size`
/// bytes, not starting with '$' (reserved for reply references).
runtime::error validate_published_name(std::string_view name);

} // namespace troupe::cluster
