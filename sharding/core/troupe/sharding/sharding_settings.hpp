#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The settings of cluster sharding: Akka's `akka.cluster.sharding` keys in
/// snake_case as `sharding.*` (docs/design/sharding.md lists every key with
/// its default). One set per node; every entity type on the node uses it
/// (the options of `shard_region::start` may override it per type).
namespace troupe::sharding {

using runtime::timespan;
using runtime::timestamp;

/// The region's and coordinator's settings (field: default; meaning).
///
/// - number_of_shards: 1000; shards per entity type (Akka 2.6's default
///   for new clusters is 1000 too). Must be equal on every node: checked
///   at join (`sharding.number_of_shards`) and at region registration.
/// - role: "" (every node); regions on members without the role are
///   proxy-only, and the coordinator runs on the oldest member with it.
/// - buffer_size: 100000; messages a region keeps (all shards together)
///   while a shard's home is unknown or it is being handed off; when full,
///   a new message is dropped, counted, and logged at WARNING the first
///   time and every 1000th (Akka's `buffer-size`, which drops the new
///   message too).
/// - retry_interval: 2s; how often a region repeats `get_shard_home` and
///   its registration, and the coordinator its `coordinator_hello` (Akka's
///   `retry-interval`).
/// - hand_off_timeout: 60s; how long one rebalance of one shard may take
///   from `begin_hand_off` to the owner's `shard_stopped` before the
///   coordinator gives it up (Akka's `handoff-timeout`); a late
///   `shard_stopped` from the owner still completes it (scenario H2).
/// - entity_stop_timeout: 10s; how long a region waits for an entity to
///   terminate after its stop message (hand-off, passivation, shutdown)
///   before it kills it (`caf::exit_reason::kill`) with an ERROR line;
///   every hand-off ends in bounded time.
/// - rebalance_interval: 10s; how often the coordinator asks the
///   allocation strategy for shards to move (Akka's `rebalance-interval`).
/// - least_shard_allocation_absolute_limit: 20 and
///   least_shard_allocation_relative_limit: 0.5; the default strategy's
///   limits per round (least_shard_allocation.hpp says why they differ
///   from Akka's 100 and 0.1).
/// - passivation_idle_timeout: 120s; an entity that got no message for
///   this long is passivated (Akka's `passivation.default-idle-strategy.
///   idle-entity.timeout`); 0 turns idle passivation off (the key takes
///   `off` for it, as Akka's does).
/// - passivation_active_entity_limit: 0 (no limit); the most active
///   entities of one type on one region; above it the least recently used
///   one is passivated (Akka's `active-entity-limit`, which is per region
///   too).
/// - down_removal_margin: 0; how long after a member was removed from
///   down (or while unreachable) the coordinator still counts its region's
///   shards as living there: the downed side needs that time to learn it
///   is down and stop its entities (DESIGN.md §7). The shell resolves the
///   key's default `auto` to the resolver's decision bound,
///   `downing.stable_after + downing.down_all_when_unstable` (ADR 0007).
/// - use_lease: false; the coordinator runs as a singleton guarded by a
///   lease (the coordinator lease, `sharding.lease_name`): it makes no
///   allocation and starts no rebalance unless the lease is held.
struct sharding_settings {
  uint32_t number_of_shards = 1000;
  std::string role;
  size_t buffer_size = 100000;
  timespan retry_interval = std::chrono::seconds{2};
  timespan hand_off_timeout = std::chrono::seconds{60};
  timespan entity_stop_timeout = std::chrono::seconds{10};
  timespan rebalance_interval = std::chrono::seconds{10};
  int least_shard_allocation_absolute_limit = 20;
  double least_shard_allocation_relative_limit = 0.5;
  timespan passivation_idle_timeout = std::chrono::seconds{120};
  size_t passivation_active_entity_limit = 0;
  timespan down_removal_margin = timespan::zero();
  bool use_lease = false;
};

/// Checks `s`: the first violated rule as an errc::invalid_settings error
/// naming the key (`sharding.<field>`) and the value. Rules:
/// number_of_shards in [1, 1,000,000]; buffer_size in [1, 10,000,000];
/// retry_interval, hand_off_timeout, entity_stop_timeout and
/// rebalance_interval in [1ms, 24h]; the absolute limit in [1, 1,000,000]
/// and the relative limit in (0, 1]; passivation_idle_timeout in [0, 24h]
/// (0: off); passivation_active_entity_limit at most 100,000,000;
/// down_removal_margin in [0, 24h].
runtime::error validate(const sharding_settings& s);

/// Declares the `sharding.*` keys with their defaults, and marks
/// `sharding.number_of_shards` as checked at join.
void declare_sharding_config(runtime::config_schema& schema);

/// The settings from a configuration whose schema `declare_sharding_config`
/// filled, validated. `sharding.down_removal_margin = auto` (the default)
/// resolves to `decision_bound` (the resolver's stable_after +
/// down_all_when_unstable, ADR 0007). Errors (errc::invalid_settings) name
/// the key and the value.
runtime::expected<sharding_settings>
sharding_settings_from_config(const runtime::config& cfg,
                              timespan decision_bound);

/// The lease name of the coordinator of `type_name`: `configured`
/// (`sharding.lease_name`), or
/// `<cluster_name>-shard-coordinator-<type_name>` when it is empty.
std::string coordinator_lease_name(const std::string& configured,
                                   const std::string& cluster_name,
                                   const std::string& type_name);

} // namespace troupe::sharding
