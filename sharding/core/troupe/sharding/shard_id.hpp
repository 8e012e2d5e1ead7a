#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// The default mapping of an entity id to its shard: a stable hash of the
/// id's bytes modulo `number_of_shards` (Akka's default extractor uses
/// Java's `String.hashCode`; troupe uses 64-bit FNV-1a over the UTF-8
/// bytes, which is the same on every platform, compiler and process, so
/// every node computes the same shard; the nodes' `number_of_shards` must
/// be equal, which the join check enforces).
///
/// The shard id is the decimal number, e.g. "17".
namespace troupe::sharding {

/// 64-bit FNV-1a of `bytes` (offset basis 14695981039346656037, prime
/// 1099511628211). Stable: part of the wire contract between nodes.
uint64_t stable_hash(std::string_view bytes) noexcept;

/// The shard of `entity_id` among `number_of_shards` (at least 1):
/// `stable_hash(entity_id) % number_of_shards`, as a decimal string.
/// Errors: errc::invalid_settings when number_of_shards is 0.
runtime::expected<std::string> default_shard_id(std::string_view entity_id,
                                                uint32_t number_of_shards);

} // namespace troupe::sharding
