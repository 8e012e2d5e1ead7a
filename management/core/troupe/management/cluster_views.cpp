#include "troupe/management/cluster_views.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "troupe/management/errc.hpp"

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
  if (auto target = state.singleton_target(oldest_role))
    out.singleton_target = to_string(target->address);
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
    v.app_version = cluster::to_string(m.app_version);
    out.members.push_back(std::move(v));
  }
  for (auto& [subject, by] : observers)
    out.unreachable.push_back(unreachable_view{
      subject, std::vector<std::string>(by.begin(), by.end())});
  if (g.incarnation().is_set())
    out.incarnation = cluster::to_string(g.incarnation());
  if (g.merging_into().is_set())
    out.merging_into = cluster::to_string(g.merging_into());
  return out;
}

void add_foreign_clusters(members_view& v,
                          const cluster::incarnation_report& report) {
  for (const auto& f : report.foreign) {
    foreign_cluster_view x;
    x.incarnation = cluster::to_string(f.incarnation);
    if (f.size)
      x.size = *f.size;
    x.seen_via = runtime::to_string(f.seen_via);
    x.last_seen = cluster::format_wall_time(f.last_seen);
    if (f.merging_into.is_set())
      x.merging_into = cluster::to_string(f.merging_into);
    v.foreign_clusters.push_back(std::move(x));
  }
}

runtime::expected<runtime::unique_address>
find_member(const cluster::membership_state& state, std::string_view address) {
  auto bad = [&] {
    return runtime::make_error(
      errc::invalid_address,
      fmt::format("\"{}\" is not a member address (host:port or "
                  "host:port#uid)",
                  address));
  };
  // The uid is optional here; parse_unique_address wants one.
  bool has_uid = address.find('#') != std::string_view::npos;
  auto parsed = runtime::parse_unique_address(
    has_uid ? std::string{address} : fmt::format("{}#1", address));
  if (!parsed || parsed->port == 0)
    return bad();
  const cluster::member* found = nullptr;
  for (const auto& m : state.latest_gossip().members()) {
    if (m.address.host != parsed->host || m.address.port != parsed->port)
      continue;
    if (has_uid ? m.address.uid == parsed->uid
                : (!found || m.address.uid > found->address.uid))
      found = &m;
  }
  if (!found)
    return runtime::make_error(
      errc::unknown_member,
      fmt::format("no member {} in this node's view", address));
  return found->address;
}

member_counts count_members(const cluster::membership_state& state) {
  using cluster::member_status;
  static constexpr member_status all[]
    = {member_status::joining, member_status::weakly_up, member_status::up,
       member_status::leaving, member_status::exiting,   member_status::down,
       member_status::removed};
  member_counts out;
  const auto& g = state.latest_gossip();
  for (auto st : all) {
    uint64_t n = 0;
    for (const auto& m : g.members())
      n += m.status == st ? 1 : 0;
    out.by_status.emplace_back(cluster::to_string(st), n);
  }
  for (const auto& m : g.members())
    if (!g.overview().reachability.is_reachable(m.address))
      ++out.unreachable;
  return out;
}

} // namespace troupe::management
