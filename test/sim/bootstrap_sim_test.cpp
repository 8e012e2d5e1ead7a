#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

#include "troupe/sim/bootstrap_world.hpp"

// Cluster bootstrap in the simulation: scripted runs, the seed sweep with
// faults (contact points appearing in any order, partitions, slow links,
// restarts of one node and of a majority, failing discovery) and a
// liveness phase, and one planted bug per checker, each caught within the
// CI seed budget.

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::sim;
using cluster::member_status;

namespace {

uint64_t seed_budget() {
  if (auto* s = std::getenv("SIM_SEEDS"))
    return std::strtoull(s, nullptr, 10);
  return 1000;
}

struct scripted {
  world_settings ws;
  bootstrap_layer* layer = nullptr;
  std::unique_ptr<membership_world> w;
  std::unique_ptr<bootstrap_layer> b;

  scripted(uint64_t seed, size_t n, size_t required) {
    ws.after_step = [this](size_t i) {
      if (layer)
        layer->after_step(i);
    };
    w = std::make_unique<membership_world>(seed, ws);
    for (size_t i = 0; i < n; ++i)
      w->add_node();
    bootstrap_world_settings bs;
    bs.bootstrap.method = bootstrap::discovery_method::config;
    bs.bootstrap.config_contact_points = {{"sim", 8558}};
    bs.bootstrap.required_contact_point_nr = required;
    bs.discovery_failure = 0;
    b = std::make_unique<bootstrap_layer>(*w, bs);
    layer = b.get();
  }

  void require_within(std::chrono::seconds within,
                      const std::function<bool()>& pred) {
    bool ok = w->run_until(w->sched().now() + within, pred);
    if (w->failure())
      FAIL(w->failure()->checker << ": " << w->failure()->detail << "\n"
                                 << w->log().render());
    if (!ok)
      FAIL("not reached within " << within.count() << " s\n"
                                 << w->log().render() << w->views());
  }
};

} // namespace

TEST_CASE("bootstrap sim: five nodes started together form one cluster, "
          "founded once by the lowest") {
  scripted s{1, 5, 5};
  for (size_t i = 0; i < 5; ++i)
    s.b->start(i);
  s.require_within(60s, [&] { return s.w->converged(5); });
  CHECK(s.b->foundings() == 1);
  // The lowest address (10.0.0.1) founded: it is the oldest.
  CHECK(s.w->engine(3).state().oldest()->address == s.w->address(0));
  // Formation takes stable_margin (5 s) plus the discovery lag, probes and
  // the join: well under 20 s.
  CHECK(s.w->sched().now() < 20s);
}

TEST_CASE("bootstrap sim: a partition before formation delays it, nobody "
          "founds until every contact point answered") {
  scripted s{2, 5, 5};
  s.w->partition({0, 1}, {2, 3, 4});
  for (size_t i = 0; i < 5; ++i)
    s.b->start(i);
  s.w->run_until(30s);
  REQUIRE_FALSE(s.w->failure());
  CHECK(s.b->foundings() == 0);
  s.w->heal();
  s.require_within(60s, [&] { return s.w->converged(5); });
  CHECK(s.b->foundings() == 1);
}

TEST_CASE("bootstrap sim: both seeds of the static shape (the two lowest) "
          "restarted behind a partition rejoin the majority") {
  // The case: the two lowest nodes are cut off, crash and restart
  // as new incarnations; they must not found a second cluster beside
  // {2,3,4}, and rejoin once the partition heals.
  scripted s{3, 5, 2};
  for (size_t i = 0; i < 5; ++i)
    s.b->start(i);
  s.require_within(60s, [&] { return s.w->converged(5); });
  s.w->partition({0, 1}, {2, 3, 4});
  s.w->crash(0);
  s.w->crash(1);
  s.b->start(0);
  s.b->start(1);
  auto at = s.w->sched().now();
  s.w->run_until(at + 60s);
  REQUIRE_FALSE(s.w->failure());
  CHECK(s.b->foundings() == 1);
  s.w->heal();
  s.require_within(90s, [&] { return s.w->converged(5); });
  CHECK(s.b->foundings() == 1);
}

TEST_CASE("bootstrap sim: the seed sweep never forms two clusters and "
          "always ends as one") {
  auto budget = seed_budget();
  size_t probes = 0;
  for (uint64_t seed = 0; seed < budget; ++seed) {
    auto r = run_bootstrap_scenario(seed);
    if (r.failure) {
      FAIL_CHECK("seed " << seed << " (" << r.nodes
                         << " nodes): " << r.failure->checker << ": "
                         << r.failure->detail << "\n"
                         << r.trace);
      return;
    }
    ++probes;
  }
  CHECK(probes == budget);
}

TEST_CASE("bootstrap sim: never_two_clusters catches a planted founding "
          "without every answer") {
  auto r = first_violation("never_two_clusters", seed_budget(), [](auto seed) {
    return run_bootstrap_scenario(
      seed, bootstrap::planted_bug::found_without_all_probed);
  });
  REQUIRE(r);
  CHECK(r->failure->detail.find("clusters at once") != std::string::npos);
}

TEST_CASE("bootstrap sim: one_cluster_at_end catches a planted process that "
          "never founds") {
  auto r = first_violation("one_cluster_at_end", seed_budget(), [](auto seed) {
    return run_bootstrap_scenario(seed, bootstrap::planted_bug::never_found);
  });
  REQUIRE(r);
  CHECK(r->failure->detail.find("no single view") != std::string::npos);
}
