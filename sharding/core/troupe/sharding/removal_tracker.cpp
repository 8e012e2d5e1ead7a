#include "troupe/sharding/removal_tracker.hpp"

#include <algorithm>

namespace troupe::sharding {

void removal_tracker::on_view(const cluster::gossip& g, timestamp now) {
  if (!first_view_)
    first_view_ = now;
  std::map<unique_address, seen> next;
  for (auto& m : g.members())
    next.emplace(m.address, seen{m.status != cluster::member_status::exiting
                                 || !g.reachability().is_reachable(m.address)});
  for (auto& [node, s] : members_)
    if (next.count(node) == 0 && s.needs_margin)
      removed_.emplace(node, now);
  for (auto& [node, at] : g.tombstones())
    if (members_.count(node) == 0 && next.count(node) == 0)
      removed_.emplace(node, *first_view_);
  members_ = std::move(next);
}

std::vector<recent_removal> removal_tracker::recent(timestamp now,
                                                    timespan margin) {
  std::vector<recent_removal> out;
  for (auto i = removed_.begin(); i != removed_.end();) {
    if (i->second + margin <= now) {
      i = removed_.erase(i);
      continue;
    }
    out.push_back(recent_removal{i->first, i->second});
    ++i;
  }
  std::sort(out.begin(), out.end(),
            [](auto& x, auto& y) { return x.removed_at < y.removed_at; });
  return out;
}

} // namespace troupe::sharding
