#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "troupe/sim/merge_scenario.hpp"

// "Two clusters made apart, then connected" in the membership simulation:
// the seed sweep (one cluster at the end of every seed), a scripted run,
// the checker on views it must reject, and the planted bug it catches.

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::sim;

namespace {

uint64_t seed_budget() {
  if (auto* s = std::getenv("SIM_SEEDS"))
    return std::strtoull(s, nullptr, 10);
  return 500;
}

} // namespace

TEST_CASE("merge sim: the seed sweep ends as one cluster every time") {
  auto budget = seed_budget();
  double worst = 0;
  for (uint64_t seed = 0; seed < budget; ++seed) {
    auto r = run_merge_scenario(seed);
    if (r.failure) {
      FAIL_CHECK("seed " << seed << " (" << r.nodes << " nodes): "
                         << r.failure->checker << ": " << r.failure->detail
                         << "\nreplay: membership_sim --merge --seed " << seed
                         << "\n"
                         << r.trace);
      return;
    }
    worst = std::max(worst, r.liveness_rounds);
  }
  INFO("slowest merge: " << worst << " gossip rounds after the heal");
  // Detection within a probe interval (10 rounds), the loser's linger (3),
  // the restart (up to 2) and the join: far below the 120 s deadline.
  CHECK(worst < 60);
}

TEST_CASE("merge sim: {0,1,2} and {3,4} formed apart become one cluster, "
          "the smaller left and rejoined") {
  world_settings ws;
  std::vector<size_t> all{0, 1, 2, 3, 4};
  membership_world* wp = nullptr;
  size_t merge_stops = 0;
  ws.on_stop = [&](size_t i, const cluster::self_stop& stop) {
    if (stop.reason == cluster::self_stop_reason::merging)
      ++merge_stops;
    wp->sched().at(wp->sched().now() + 1s, [&, i] { wp->start(i, all); });
  };
  membership_world w{11, ws};
  wp = &w;
  for (size_t i = 0; i < 5; ++i)
    w.add_node();
  w.partition({0, 1, 2}, {3, 4});
  for (size_t i = 0; i < 3; ++i)
    w.start(i, {0, 1});
  for (size_t i = 3; i < 5; ++i)
    w.start(i, {3, 4});
  REQUIRE(w.run_until(20s, [&] {
    return w.engine(0).state().latest_gossip().members().size() == 3
           && w.engine(3).state().latest_gossip().members().size() == 2;
  }));
  auto big = w.engine(0).incarnation();
  auto small = w.engine(3).incarnation();
  REQUIRE(big != small);
  CHECK(one_cluster_at_end(w)); // two clusters: the checker says so
  w.heal();
  for (size_t i = 0; i < 5; ++i)
    w.set_contacts(i, all);
  REQUIRE(w.run_until(w.sched().now() + 60s,
                      [&] { return !one_cluster_at_end(w).has_value(); }));
  CHECK(merge_stops == 2);
  for (size_t i = 0; i < 5; ++i)
    CHECK(w.engine(i).incarnation() == big);
  CHECK(!w.failure());
}

TEST_CASE("merge sim: the one-cluster checker rejects a node outside the "
          "cluster and a view that misses a live node") {
  membership_world w{12, world_settings{}};
  for (size_t i = 0; i < 3; ++i)
    w.add_node();
  for (size_t i = 0; i < 3; ++i)
    w.start(i, {0, 1});
  REQUIRE(w.run_until(30s, [&] { return w.converged(3); }));
  CHECK_FALSE(one_cluster_at_end(w));
  // A fourth node that never joins (its only seed is dead).
  w.add_node();
  w.start(3, {3, 2});
  w.crash(2);
  w.run_until(w.sched().now() + 2s);
  auto v = one_cluster_at_end(w);
  REQUIRE(v);
  CHECK(v->checker == "one_cluster_at_end");
  CHECK_THAT(v->detail, Catch::Contains("node 3 is in no cluster"));
  // Nodes 0 and 1 still list the crashed node 2 as a member.
  CHECK_THAT(v->detail, Catch::Contains("node 0's view does not hold exactly "
                                        "the live nodes"));
  // Told to expect four running nodes, it also names the missing one.
  auto counted = one_cluster_at_end(w, 4);
  REQUIRE(counted);
  CHECK_THAT(counted->detail, Catch::Contains("3 of 4 nodes are running"));
}

TEST_CASE("merge sim: the one-cluster checker catches a planted loser that "
          "never leaves") {
  auto r = first_violation("one_cluster_at_end", seed_budget(), [](auto seed) {
    return run_merge_scenario(seed, cluster::planted_bug::loser_never_leaves);
  });
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
  CHECK_THAT(r->failure->detail, Catch::Contains("distinct views"));
}
