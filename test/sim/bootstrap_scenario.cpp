#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "troupe/sim/bootstrap_world.hpp"

namespace troupe::sim {

namespace {

using namespace std::chrono_literals;
using cluster::member_status;

// Nodes that are joining: a crash of their welcomer now would leave an
// orphan (see the file comment of bootstrap_world.hpp), so the scenario
// does not crash while there is one.
bool someone_joining(const membership_world& w) {
  for (size_t i = 0; i < w.size(); ++i)
    if (w.alive(i) && w.engine(i).is_member())
      for (const auto& m : w.engine(i).state().latest_gossip().members())
        if (m.status == member_status::joining)
          return true;
  return false;
}

void schedule_faults(membership_world& w, bootstrap_layer& b, size_t n,
                     timespan faults_end) {
  auto& r = w.random();
  auto& s = w.sched();
  for (auto t = r.between(2s, 6s); t < faults_end; t += r.between(1s, 4s)) {
    s.at(t, [&w, &b, &r, &s, n] {
      switch (r.below(8)) {
        case 0:
        case 1: { // symmetric partition, healed later
          std::vector<size_t> x;
          std::vector<size_t> y;
          for (size_t i = 0; i < n; ++i)
            (r.chance(0.5) ? x : y).push_back(i);
          if (!x.empty() && !y.empty()) {
            w.partition(x, y);
            s.after(r.between(2s, 12s), [&w] { w.heal(); });
          }
          break;
        }
        case 2: { // slow links to and from one node (0.5-2 s)
          auto x = r.below(n);
          auto d = r.between(500ms, 2s);
          for (size_t y = 0; y < n; ++y)
            if (y != x) {
              w.net().link(w.address(x), w.address(y)).extra_delay = d;
              w.net().link(w.address(y), w.address(x)).extra_delay = d;
            }
          s.after(r.between(3s, 10s), [&w] { w.heal(); });
          break;
        }
        case 3:
        case 4: { // crash one node, restart it later (new uid)
          if (someone_joining(w))
            break;
          auto x = r.below(n);
          if (!w.alive(x))
            break;
          w.crash(x);
          s.after(r.between(500ms, 8s), [&b, x] { b.start(x); });
          break;
        }
        case 5: { // a majority crashes together and restarts
          if (someone_joining(w))
            break;
          std::vector<size_t> all(n);
          for (size_t i = 0; i < n; ++i)
            all[i] = i;
          for (size_t i = n - 1; i > 0; --i)
            std::swap(all[i], all[r.below(i + 1)]);
          for (size_t k = 0; k < n / 2 + 1; ++k) {
            auto x = all[k];
            w.crash(x);
            s.after(r.between(500ms, 5s), [&b, x] { b.start(x); });
          }
          break;
        }
        default: // quiet
          break;
      }
    });
  }
}

} // namespace

scenario_result run_bootstrap_scenario(uint64_t seed,
                                       bootstrap::planted_bug bug) {
  world_settings ws;
  ws.trace_lines = 600;
  bootstrap_layer* layer = nullptr;
  ws.after_step = [&layer](size_t i) {
    if (layer)
      layer->after_step(i);
  };
  membership_world w{seed, ws};
  auto& r = w.random();
  size_t n = 3 + r.below(5);
  for (size_t i = 0; i < n; ++i)
    w.add_node();
  bootstrap_world_settings bs;
  bs.bug = bug;
  bs.bootstrap.method = bootstrap::discovery_method::config;
  bs.bootstrap.config_contact_points = {{"sim", 8558}};
  bs.bootstrap.required_contact_point_nr = 1 + r.below(n);
  bootstrap_layer b{w, bs};
  layer = &b;
  w.note(fmt::format("bootstrap scenario: {} nodes, "
                     "required_contact_point_nr {}",
                     n, bs.bootstrap.required_contact_point_nr));
  // Started in random order over 20 s.
  for (size_t i = 0; i < n; ++i)
    w.sched().at(r.between(0s, 20s), [&b, i] { b.start(i); });
  const timespan faults_end = 60s;
  schedule_faults(w, b, n, faults_end);
  scenario_result result;
  result.seed = seed;
  result.nodes = n;
  w.run_until(faults_end);
  if (!w.failure()) {
    // Liveness: the network heals, every crashed node is restarted (as
    // Kubernetes restarts a pod), and the cluster becomes one view.
    auto t0 = w.sched().now();
    w.heal();
    w.net().set_loss(0.0);
    for (size_t i = 0; i < n; ++i)
      if (!w.alive(i))
        b.start(i);
    bool one = w.run_until(t0 + 120s, [&] { return w.converged(n); });
    if (!one && !w.failure())
      w.fail("one_cluster_at_end",
             fmt::format("no single view of all {} nodes 120 s after the "
                         "faults stopped; clusters: {}",
                         n, fmt::join(b.clusters(), " ")));
    result.liveness_rounds = w.rounds();
  }
  conclude(result, w);
  return result;
}

} // namespace troupe::sim
