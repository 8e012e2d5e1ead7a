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

namespace {

// The two groups: a = [0, split), b = [split, n).
struct groups {
  std::vector<size_t> all;
  std::vector<size_t> a;
  std::vector<size_t> b;
};

// Formed apart: a partition from the start, each group through its own
// first two nodes as seeds, every node started within 2 s.
void form_apart(membership_world& w, const groups& g) {
  auto seeds_of = [](const std::vector<size_t>& group) {
    return group.size() == 1 ? group : std::vector<size_t>{group[0], group[1]};
  };
  w.partition(g.a, g.b);
  for (const auto* group : {&g.a, &g.b})
    for (auto i : *group)
      w.sched().at(w.random().between(0s, 2s),
                   [&w, i, seeds = seeds_of(*group)] { w.start(i, seeds); });
}

// Connected: at 12-17 s the partition heals and a shared contact list is
// handed out (to everyone, or to one group only: the other is then met
// only through the first group's probes); loss and a clogged link between
// the groups for 10 s, by the seed. Returns the time of the heal.
timespan connect_later(membership_world& w, const groups& g) {
  auto& r = w.random();
  auto heal_at = 12s + r.between(0s, 5s);
  auto who = r.below(3);
  bool lossy = r.chance(0.5);
  bool clogged = r.chance(0.3);
  w.sched().at(heal_at, [&w, &g, who, lossy, clogged] {
    w.heal();
    for (auto i : g.all)
      if (who == 0 || (who == 1) == (i < g.b.front()))
        w.set_contacts(i, g.all);
    auto& rr = w.random();
    if (lossy)
      w.net().set_loss(0.02 + 0.02 * static_cast<double>(rr.below(5)));
    if (clogged)
      w.net().link(w.address(g.a[0]), w.address(g.b[0])).extra_delay
        = rr.between(500ms, 2s);
  });
  w.sched().at(heal_at + 10s, [&w] {
    w.net().set_loss(0.0);
    w.heal();
  });
  return heal_at;
}

// Runs until one cluster of all `n` nodes has held for a quiet period of
// 5 s, or until the heal + 120 s; the rounds it took go into `result`.
void run_to_one_cluster(membership_world& w, size_t n, timespan heal_at,
                        scenario_result& result) {
  w.run_until(heal_at);
  // Every node running (none stopped and not yet restarted), one cluster.
  auto one = [&] { return !one_cluster_at_end(w, n).has_value(); };
  auto deadline = heal_at + 120s;
  auto gossip_interval = cluster::membership_settings{}.gossip_interval;
  bool done = false;
  while (!done && !w.failure() && w.sched().now() < deadline) {
    if (!w.run_until(deadline, one))
      break;
    result.liveness_rounds
      = static_cast<double>((w.sched().now() - heal_at).count())
        / static_cast<double>(gossip_interval.count());
    w.run_until(w.sched().now() + 5s);
    done = one();
  }
  if (!w.failure())
    if (auto v = one_cluster_at_end(w, n))
      result.failure = std::move(v);
}

} // namespace

scenario_result run_merge_scenario(uint64_t seed, cluster::planted_bug bug) {
  world_settings ws;
  ws.bug = bug;
  groups g;
  membership_world* wp = nullptr;
  // The supervisor: a stopped node restarts after 0.5-2 s as a new
  // incarnation with every node as a seed (node 0 first).
  ws.on_stop = [&](size_t i, const cluster::self_stop&) {
    auto& w = *wp;
    w.sched().at(w.sched().now() + w.random().between(500ms, 2s), [&w, &g, i] {
      if (!w.alive(i))
        w.start(i, g.all);
    });
  };
  membership_world w{seed, ws};
  wp = &w;
  size_t n = 2 + w.random().below(7);
  size_t split = 1 + w.random().below(n - 1);
  for (size_t i = 0; i < n; ++i) {
    w.add_node();
    g.all.push_back(i);
    (i < split ? g.a : g.b).push_back(i);
  }
  form_apart(w, g);
  auto heal_at = connect_later(w, g);
  scenario_result result;
  result.seed = seed;
  result.nodes = n;
  run_to_one_cluster(w, n, heal_at, result);
  conclude(result, w);
  return result;
}

} // namespace troupe::sim
