#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "troupe/cluster/member.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// Where shards live: the shard coordinator's allocation strategy (Akka's
/// `ShardAllocationStrategy`, akka.cluster.sharding). Pure: the coordinator
/// (a cluster singleton) calls it with its current allocation; nothing here
/// sends, waits or reads a clock.
///
/// Shapes: a region is identified by the address of the node that hosts it
/// (one region per node and entity type); a shard by its id (a string, the
/// message extractor's shard id). Users may implement the interface; the
/// default is `least_shard_allocation` (least_shard_allocation.hpp).
namespace troupe::sharding {

using runtime::unique_address;
using shard_id = std::string;

/// One region as the coordinator sees it: its node's membership record
/// (status and up number decide whether the region may take shards) and
/// the shards allocated to it, in allocation order (oldest first).
struct region_allocation {
  cluster::member member;
  std::vector<shard_id> shards;

  const unique_address& region() const noexcept {
    return member.address;
  }
};

/// The coordinator's allocation strategy. Implementations must be
/// deterministic given their inputs (the coordinator's state survives
/// failover by replaying the same decisions) and must never return a shard
/// that is not allocated, nor a region that is not in `allocations`.
///
/// Thread-safety: called from the coordinator's actor only.
class allocation_strategy {
public:
  virtual ~allocation_strategy() = default;

  /// The region that should host `shard` (not allocated anywhere yet),
  /// requested by the region `requester` (its node); none when no region
  /// may take shards now (the coordinator asks again later).
  virtual std::optional<unique_address>
  allocate(const shard_id& shard, const unique_address& requester,
           const std::vector<region_allocation>& allocations) const = 0;

  /// The shards to hand off now (the coordinator stops them where they are
  /// and allocates them again), given the shards whose rebalance is still
  /// in progress. Empty: nothing to do this round.
  virtual std::set<shard_id>
  rebalance(const std::vector<region_allocation>& allocations,
            const std::set<shard_id>& in_progress) const = 0;
};

} // namespace troupe::sharding
