#include "troupe/sim/merge_scenario.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace troupe::sim {

using namespace std::chrono_literals;
using cluster::member_status;
using cluster::unique_address;

namespace {

// One node's view as the checker reads it: the cluster incarnation and the
// members, rendered.
struct view_key {
  std::string incarnation;
  std::string members;
  friend auto operator<=>(const view_key&, const view_key&) = default;
};

} // namespace

std::optional<violation> one_cluster_at_end(const membership_world& w,
                                            std::optional<size_t> expected) {
  std::set<unique_address> live;
  std::string problems;
  for (size_t i = 0; i < w.size(); ++i)
    if (w.alive(i))
      live.insert(w.address(i));
  if (live.empty())
    return violation{"one_cluster_at_end", "no node is alive"};
  if (expected && live.size() != *expected)
    problems
      += fmt::format("{} of {} nodes are running; ", live.size(), *expected);
  std::map<view_key, std::vector<size_t>> views;
  for (size_t i = 0; i < w.size(); ++i) {
    if (!w.alive(i))
      continue;
    const auto& g = w.engine(i).state().latest_gossip();
    std::set<unique_address> members;
    std::string rendered;
    bool all_up = true;
    for (const auto& m : g.members()) {
      members.insert(m.address);
      rendered
        += fmt::format("{}={} ", to_string(m.address), to_string(m.status));
      all_up = all_up && m.status == member_status::up;
    }
    views[{to_string(g.incarnation()), rendered}].push_back(i);
    if (!g.incarnation().is_set())
      problems += fmt::format("node {} is in no cluster; ", i);
    else if (members != live)
      problems += fmt::format("node {}'s view does not hold exactly the live "
                              "nodes; ",
                              i);
    else if (!all_up)
      problems += fmt::format("node {}'s view has members not up; ", i);
  }
  if (views.size() == 1 && problems.empty())
    return std::nullopt;
  std::string detail = fmt::format("{} distinct views among {} live nodes: {}",
                                   views.size(), live.size(), problems);
  for (const auto& [key, holders] : views)
    detail
      += fmt::format("\n  nodes {} see incarnation {}: {}",
                     fmt::join(holders, ","), key.incarnation, key.members);
  return violation{"one_cluster_at_end", std::move(detail)};
}

scenario_result run_merge_scenario(uint64_t seed, cluster::planted_bug bug) {
  world_settings ws;
  ws.bug = bug;
  std::vector<size_t> all;
  membership_world* wp = nullptr;
  // The supervisor: a stopped node restarts after 0.5-2 s as a new
  // incarnation with every node as a seed (node 0 first).
  ws.on_stop = [&](size_t i, const cluster::self_stop&) {
    auto& w = *wp;
    w.sched().at(w.sched().now() + w.random().between(500ms, 2s),
                 [&w, &all, i] {
                   if (!w.alive(i))
                     w.start(i, all);
                 });
  };
  membership_world w{seed, ws};
  wp = &w;
  auto& r = w.random();
  auto& s = w.sched();
  size_t n = 2 + r.below(7);
  size_t split = 1 + r.below(n - 1);
  std::vector<size_t> a, b;
  for (size_t i = 0; i < n; ++i) {
    w.add_node();
    all.push_back(i);
    (i < split ? a : b).push_back(i);
  }
  auto seeds_of = [](const std::vector<size_t>& group) {
    return group.size() == 1 ? group : std::vector<size_t>{group[0], group[1]};
  };
  // Formed apart: a partition from the start, each group its own seeds.
  w.partition(a, b);
  for (auto i : a)
    s.at(r.between(0s, 2s), [&w, i, sa = seeds_of(a)] { w.start(i, sa); });
  for (auto i : b)
    s.at(r.between(0s, 2s), [&w, i, sb = seeds_of(b)] { w.start(i, sb); });
  // Connected: the partition heals and a shared contact list is handed
  // out (to everyone, or to one group only: the other is then met only
  // through the first group's probes).
  auto heal_at = 12s + r.between(0s, 5s);
  auto who = r.below(3);
  bool lossy = r.chance(0.5);
  bool clogged = r.chance(0.3);
  s.at(heal_at, [&, who, lossy, clogged] {
    w.heal();
    for (size_t i = 0; i < n; ++i)
      if (who == 0 || (who == 1) == (i < split))
        w.set_contacts(i, all);
    if (lossy)
      w.net().set_loss(0.02 + 0.02 * static_cast<double>(r.below(5)));
    if (clogged)
      w.net().link(w.address(a[0]), w.address(b[0])).extra_delay
        = r.between(500ms, 2s);
  });
  s.at(heal_at + 10s, [&] {
    w.net().set_loss(0.0);
    w.heal();
  });
  scenario_result result;
  result.seed = seed;
  result.nodes = n;
  w.run_until(heal_at);
  // Every node running (none stopped and not yet restarted), one cluster.
  auto one = [&] { return !one_cluster_at_end(w, n).has_value(); };
  auto deadline = heal_at + 120s;
  bool done = false;
  while (!done && !w.failure() && w.sched().now() < deadline) {
    if (!w.run_until(deadline, one))
      break;
    result.liveness_rounds
      = static_cast<double>((w.sched().now() - heal_at).count())
        / static_cast<double>(ws.membership.gossip_interval.count());
    // It must stay one cluster: a quiet period of 5 s.
    auto quiet_end = w.sched().now() + 5s;
    w.run_until(quiet_end);
    done = one();
  }
  if (!w.failure())
    if (auto v = one_cluster_at_end(w, n))
      result.failure = std::move(v);
  conclude(result, w);
  return result;
}

} // namespace troupe::sim
