#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <caf/atom.hpp>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/unique_address.hpp"
#include "troupe/sharding/coordinator_protocol.hpp"

/// @file
/// The names sharding's actors are published under and the shard-map
/// query. Everything that travels is registered by `add_sharding_types` as
/// "troupe.sharding.<name>" on every node. An entity's message between
/// regions is a tagged remoting message to the region's name: the tag
/// holds entity and shard (entity_tag.hpp), the payload is the message.
///
/// Published names, for entity type `T`:
/// - `troupe.sharding.T.region`: the region (or proxy) on every node that
///   started one; the coordinator and other regions send there.
/// - the coordinator is the singleton instance of type `sharding.T`
///   (singleton_protocol.hpp: `troupe.singleton.sharding.T`, on the
///   singleton target with `sharding.role`: the oldest member of the
///   highest app_version); regions send there.

namespace troupe::sharding {

using status_atom = caf::atom_constant<caf::atom("shstatus")>;
using entities_atom = caf::atom_constant<caf::atom("shentity")>;
using shard_map_atom = caf::atom_constant<caf::atom("shmap")>;
using passivate_atom = caf::atom_constant<caf::atom("shpassiv")>;
using stop_atom = caf::atom_constant<caf::atom("shstop")>;

/// Every region (node) with the shards the coordinator allocated to it.
using region_shards = std::map<runtime::unique_address, std::vector<shard_id>>;

/// `troupe.sharding.<type_name>.region`.
std::string region_name(std::string_view type_name);

/// `sharding.<type_name>`: the singleton type the coordinator runs as.
std::string coordinator_singleton_type(std::string_view type_name);

/// Checks an entity type name: not empty, at most 200 bytes, letters,
/// digits and `-`, `_`, `.` only (it becomes part of published names and
/// of the lease name). Errors: errc::invalid_name naming the name and the
/// rule.
runtime::error validate_type_name(std::string_view type_name);

/// A region asks the coordinator for the cluster-wide shard map (sent with
/// a reply reference); answered with `shard_map_reply`.
struct get_shard_map {
  friend bool operator==(get_shard_map, get_shard_map) = default;
};

template <class Inspector>
auto inspect(Inspector& f, get_shard_map& x) {
  static_cast<void>(x);
  return f();
}

/// The coordinator's answer: `active` false while it recovers (the map is
/// then incomplete).
struct shard_map_reply {
  bool active = false;
  region_shards regions;
  friend bool operator==(const shard_map_reply&, const shard_map_reply&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, shard_map_reply& x) {
  return f(x.active, x.regions);
}

} // namespace troupe::sharding
