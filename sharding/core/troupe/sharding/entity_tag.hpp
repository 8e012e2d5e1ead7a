#pragma once

#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// The routing data of an entity message between shard regions.

namespace troupe::sharding {

/// The entity and shard of a message one region forwards to the region on
/// the shard's home (views into the tag's bytes).
struct entity_tag {
  std::string_view entity;
  std::string_view shard;
};

/// The longest tag remoting carries (cluster::max_tag_size); an entity id
/// and a shard id longer together than this less 2 cannot be forwarded.
inline constexpr size_t max_entity_tag_size = 65535;

/// Sets `out` to the tag of (`entity`, `shard`):
/// `u16 n (big-endian) | entity (n bytes) | shard (to the end)`. It
/// travels in the header of a tagged remoting frame
/// (remoting_handle::send_tagged), so the entity's payload is the whole
/// CAF message and the envelope costs no CAF values. Errors:
/// errc::unmappable_message when the tag would exceed
/// `max_entity_tag_size` (names both lengths). Akka sends a
/// `ShardingEnvelope`-like wrapper as a serialized message instead.
runtime::error make_entity_tag(std::string& out, std::string_view entity,
                               std::string_view shard);

/// Parses a tag made by `make_entity_tag`. Errors (errc::
/// unmappable_message, naming the fault): shorter than its length field,
/// an entity length beyond the tag, an empty entity or shard id.
runtime::expected<entity_tag> parse_entity_tag(std::string_view tag);

} // namespace troupe::sharding
