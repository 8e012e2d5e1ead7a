#include "troupe/management/cluster_views.hpp"

#include <map>
#include <set>

namespace troupe::management {

members_view members_of(const cluster::membership_state& state,
                        std::optional<std::string_view> oldest_role) {
  using runtime::to_string;
  members_view out;
  out.self = to_string(state.self());
  if (auto leader = state.leader())
    out.leader = to_string(*leader);
  if (auto oldest = state.oldest(oldest_role))
    out.oldest = to_string(oldest->address);
  const auto& g = state.latest_gossip();
  const auto& table = g.overview().reachability;
  std::map<std::string, std::set<std::string>> observers;
  for (const auto& r : table.records())
    if (r.status != cluster::reachability_status::reachable)
      observers[to_string(r.subject)].insert(to_string(r.observer));
  for (const auto& m : g.members()) {
    member_view v;
    v.address = to_string(m.address);
    v.status = cluster::to_string(m.status);
    v.roles = m.roles;
    v.up_number
      = m.up_number == cluster::member::no_up_number ? 0 : m.up_number;
    v.reachable = table.is_reachable(m.address);
    out.members.push_back(std::move(v));
  }
  for (auto& [subject, by] : observers)
    out.unreachable.push_back(unreachable_view{
      subject, std::vector<std::string>(by.begin(), by.end())});
  return out;
}

} // namespace troupe::management
