#include "troupe/sim/rolling_update.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace troupe::sim {

using namespace std::chrono_literals;
using cluster::member_status;

namespace {

constexpr size_t old_nodes = 3;

// Whether every live member's view has node i's current incarnation up.
bool up_everywhere(const membership_world& w, size_t i) {
  if (!w.alive(i))
    return false;
  auto self = w.engine(i).self();
  for (size_t j = 0; j < w.size(); ++j) {
    if (!w.alive(j) || !w.engine(j).is_member())
      continue;
    auto* m = w.engine(j).state().latest_gossip().find(self);
    if (m == nullptr || m->status != member_status::up)
      return false;
  }
  return true;
}

} // namespace

rolling_update_result run_rolling_update(uint64_t seed,
                                         const rolling_update_options& o) {
  sharding_layer* layer = nullptr;
  auto ws = resolver_world_settings(layer);
  ws.trace = o.trace;
  ws.checkers = false;
  membership_world w{seed, ws};
  auto& r = w.random();
  auto& s = w.sched();
  cluster::app_version v1{1, 0, 0, ""};
  auto v2 = o.new_version ? cluster::app_version{2, 0, 0, ""} : v1;
  for (size_t i = 0; i < 2 * old_nodes; ++i) {
    w.add_node();
    w.set_app_version(i, i < old_nodes ? v1 : v2);
  }
  auto ds = keep_majority_downing(3s);
  const timespan margin = decision_bound(ds);
  auto ss = coordinator_singleton(o.use_lease, margin);
  ss.lease_ttl = 6s;
  ss.self_stop = 0.0;
  sharding_world_settings hs;
  hs.use_lease = o.use_lease;
  hs.trace = o.trace;
  hs.slow_stop = 0.0;
  hs.entities = 300;
  hs.clients = {0, 1, 2, 3, 4, 5};
  hs.sharding.number_of_shards = 32;
  hs.sharding.passivation_idle_timeout = 5s;
  scenario_timings(hs.sharding, o.use_lease, margin);
  downing_layer dl{w, ds};
  singleton_layer sl{w, dl, ss};
  sharding_layer hl{w, sl, hs};
  layer = &hl;
  w.note(fmt::format("rolling update: 3 nodes of version {} replaced by "
                     "version {}, {}",
                     to_string(v1), to_string(v2),
                     o.use_lease ? "with a lease" : "without a lease"));
  for (size_t i = 0; i < old_nodes; ++i)
    s.at(r.between(0s, 2s), [&w, i] { w.start(i, {0, 1}); });
  w.run_until(10s, [&] { return w.converged(old_nodes); });
  hl.start_traffic(10min);
  w.run_until(s.now() + 10s); // shards allocated, traffic flowing
  // The old nodes, oldest first (the join order decided the age).
  std::vector<size_t> order;
  for (size_t i = 0; i < old_nodes; ++i)
    order.push_back(i);
  auto up_number = [&](size_t i) {
    auto* m = w.engine(0).state().latest_gossip().find(w.address(i));
    return m ? m->up_number : cluster::member::no_up_number;
  };
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return std::pair{up_number(x), x} < std::pair{up_number(y), y};
  });
  std::optional<timespan> new_up;
  for (size_t k = 0; k < old_nodes && !w.failure(); ++k) {
    size_t fresh = old_nodes + k;
    size_t old = order[k];
    std::vector<size_t> live;
    for (size_t i = 0; i < w.size(); ++i)
      if (w.alive(i) && w.engine(i).is_member())
        live.push_back(i);
    w.note(fmt::format("rolling update: node {} starts", fresh));
    w.start(fresh, live);
    w.run_until(s.now() + 30s, [&] {
      return up_everywhere(w, fresh) && w.converged(old_nodes + 1);
    });
    if (!new_up && up_everywhere(w, fresh))
      new_up = s.now();
    // The singleton's hand-over, registrations and allocations settle.
    w.run_until(s.now() + 10s);
    w.note(fmt::format("rolling update: node {} leaves", old));
    w.leave(old, old);
    w.run_until(s.now() + 60s, [&] {
      return !w.alive(old) && hl.stopped(old) && w.converged(old_nodes);
    });
  }
  rolling_update_result result;
  result.replaced = order;
  result.seed = seed;
  result.nodes = w.size();
  if (!w.failure()) {
    w.run_until(s.now() + 10s);
    hl.start_probes();
    bool ok = w.run_until(s.now() + 60s, [&] { return hl.all_reached(); });
    if (!ok && !w.failure())
      result.failure = violation{
        "sharding_liveness",
        fmt::format("60 s after the update, not every entity handled a "
                    "probe:\n{}{}",
                    hl.describe(), sl.describe())};
  }
  for (auto& [at, host] : sl.start_log()) {
    if (!result.instance_hosts.empty() && result.instance_hosts.back() != host)
      ++result.singleton_moves;
    result.instance_hosts.push_back(host);
  }
  for (auto& a : hl.allocations()) {
    if (!new_up || a.at < *new_up)
      continue;
    ++result.allocations_after_new_up;
    auto at = w.index_of(a.region);
    if (at && *at < old_nodes)
      ++result.old_allocations_after_new_up;
  }
  for (auto& [shard, homes] : hl.homes()) {
    if (homes.empty())
      continue;
    ++result.shards_with_home;
    for (auto& h : homes)
      if (auto at = w.index_of(h); at && *at < old_nodes) {
        ++result.shards_on_old_nodes;
        break;
      }
  }
  result.acks = hl.acks();
  if (w.failure() && !result.failure)
    result.failure = w.failure();
  conclude(result, w);
  return result;
}

} // namespace troupe::sim
