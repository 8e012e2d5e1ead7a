#pragma once

#include <map>
#include <optional>
#include <vector>

#include "troupe/cluster/gossip.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// What a node saw of removals, for a shard coordinator that starts later on
/// it (docs/design/sharding.md, "Failover", rule 4): a coordinator that
/// starts after a member was removed from down never saw that member, so it
/// cannot know which shards it hosted; it must not allocate any shard until
/// the removal margin after that removal has passed. The node's region keeps
/// this record from its first view on; the coordinator's `start` gets the
/// removals whose margin has not passed.
///
/// Which removals count: a member that disappeared from the view while it
/// was down, or unreachable, or in any status but exiting (a graceful exit
/// stopped its region first); and every tombstoned member this record never
/// saw as a member, counted as removed at the record's first view (the
/// earliest time it can vouch for; safe, because the removal happened
/// before).
///
/// Not thread-safe; owned by the region (under its lock). Pure: time comes
/// in as arguments.
namespace troupe::sharding {

using runtime::timespan;
using runtime::timestamp;
using runtime::unique_address;

/// A removal the coordinator must wait out: `node` was removed at
/// `removed_at` (this node's monotonic clock).
struct recent_removal {
  unique_address node;
  timestamp removed_at{};
  friend bool operator==(const recent_removal&, const recent_removal&)
    = default;
};

class removal_tracker {
public:
  /// Records the removals between the previous view and `g`.
  void on_view(const cluster::gossip& g, timestamp now);

  /// The removals whose `margin` has not passed at `now`, oldest first;
  /// forgets the others.
  std::vector<recent_removal> recent(timestamp now, timespan margin);

private:
  struct seen {
    bool needs_margin = false;
  };
  std::optional<timestamp> first_view_;
  std::map<unique_address, seen> members_;
  std::map<unique_address, timestamp> removed_;
};

} // namespace troupe::sharding
