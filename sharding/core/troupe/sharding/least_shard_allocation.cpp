#include "troupe/sharding/least_shard_allocation.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace troupe::sharding {

namespace {

using cluster::member_status;

bool takes_shards(const region_allocation& r) {
  return r.member.status == member_status::up;
}

// The highest app_version among the regions that take shards.
std::optional<cluster::app_version>
highest_version(const std::vector<region_allocation>& allocations) {
  std::optional<cluster::app_version> out;
  for (auto& r : allocations)
    if (takes_shards(r) && (!out || r.member.app_version > *out))
      out = r.member.app_version;
  return out;
}

// Fewest shards first, then the oldest member, then the lowest address.
bool fewer(const region_allocation* x, const region_allocation* y) {
  if (x->shards.size() != y->shards.size())
    return x->shards.size() < y->shards.size();
  if (x->member.up_number != y->member.up_number)
    return x->member.up_number < y->member.up_number;
  return x->member.address < y->member.address;
}

} // namespace

std::optional<unique_address> least_shard_allocation::allocate(
  const shard_id& shard, const unique_address& requester,
  const std::vector<region_allocation>& allocations) const {
  static_cast<void>(shard);
  static_cast<void>(requester);
  auto newest = highest_version(allocations);
  const region_allocation* best = nullptr;
  for (auto& r : allocations)
    if (takes_shards(r) && r.member.app_version == *newest
        && (best == nullptr || fewer(&r, best)))
      best = &r;
  if (best == nullptr)
    return std::nullopt;
  return best->region();
}

std::set<shard_id> least_shard_allocation::rebalance(
  const std::vector<region_allocation>& allocations,
  const std::set<shard_id>& in_progress) const {
  std::set<shard_id> out;
  if (!in_progress.empty() || allocations.size() < 2)
    return out;
  size_t shards = 0;
  for (auto& r : allocations) {
    if (!takes_shards(r))
      return out; // not a good time: a member is joining, leaving, ...
    if (r.member.app_version != allocations.front().member.app_version)
      return out; // not a good time: a rolling update is in progress
    shards += r.shards.size();
  }
  if (shards == 0)
    return out;
  size_t regions = allocations.size();
  size_t optimal = shards / regions + (shards % regions == 0 ? 0 : 1);
  auto relative = static_cast<size_t>(
    std::floor(settings_.relative_limit * static_cast<double>(shards)));
  size_t limit
    = std::max<size_t>(1, std::min(settings_.absolute_limit, relative));
  std::vector<const region_allocation*> sorted;
  for (auto& r : allocations)
    sorted.push_back(&r);
  // Most shards first: the fullest regions give up shards first.
  std::sort(sorted.begin(), sorted.end(),
            [](auto* x, auto* y) { return fewer(y, x); });
  // Phase 1: every region above optimal gives up its newest shards.
  for (auto* r : sorted) {
    if (r->shards.size() <= optimal)
      break;
    for (size_t k = optimal; k < r->shards.size() && out.size() < limit; ++k)
      out.insert(r->shards[k]);
  }
  if (!out.empty())
    return out;
  // Phase 2: regions at optimal give one each to the regions below
  // optimal - 1 (a difference of one is balanced).
  size_t below = 0;
  for (auto* r : sorted)
    if (r->shards.size() + 1 < optimal)
      below += optimal - 1 - r->shards.size();
  if (below == 0)
    return out;
  size_t wanted = std::min(below, limit);
  for (auto* r : sorted) {
    if (out.size() >= wanted || r->shards.size() < optimal)
      break;
    out.insert(r->shards.back());
  }
  return out;
}

} // namespace troupe::sharding
