#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/behavior.hpp>
#include <caf/fwd.hpp>

#include "troupe/cluster/cluster_handle.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/sharding/allocation_strategy.hpp"
#include "troupe/sharding/coordinator_engine.hpp"
#include "troupe/sharding/sharding_protocol.hpp"
#include "troupe/sharding/sharding_settings.hpp"
#include "troupe/singleton/singleton.hpp"

/// @file
/// The shard coordinator's actor (internal to the sharding shell): the
/// behavior of the singleton instance of type
/// `coordinator_singleton_type(type)`, a thin shell over
/// `coordinator_engine`. It subscribes to the cluster view, takes the
/// regions' messages over remoting (`(remote_ref from, message)`), watches
/// the regions the engine names, answers `get_shard_map`, and checks the
/// coordinator lease through `instance_context::lease_alive` (the engine
/// asks before every allocation and rebalance).

namespace troupe::sharding {

/// What every coordinator incarnation of one type is made from.
struct coordinator_init {
  std::string type_name;
  sharding_settings settings;
  std::shared_ptr<const allocation_strategy> strategy;
  cluster::cluster_handle cluster;
  cluster::remoting_handle remoting;
  /// nullptr: the actor system's clock.
  const runtime::clock_source* clock = nullptr;
  coordinator_bug bug = coordinator_bug::none;
  /// Feeds the coordinator's first view to its node's removal record (the
  /// region's) and returns the removals whose margin may not have passed;
  /// empty function: none known.
  std::function<std::vector<recent_removal>(const cluster::gossip&, timestamp)>
    recent_removals;
};

/// The instance behavior (the singleton's instance_factory calls it).
caf::behavior coordinator_behavior(caf::event_based_actor* self,
                                   coordinator_init init,
                                   const singleton::instance_context& ctx);

} // namespace troupe::sharding
