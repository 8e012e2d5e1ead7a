#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

#include "troupe/sim/membership_world.hpp"

// The membership simulation: scripted runs, the seed sweep with faults and
// a liveness phase, and one planted bug per invariant checker (each must
// be caught within the CI seed budget).

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::sim;
using cluster::member_status;

namespace {

// The CI seed budget of the sweep (SIM_SEEDS overrides it).
uint64_t seed_budget() {
  if (auto* s = std::getenv("SIM_SEEDS"))
    return std::strtoull(s, nullptr, 10);
  return 500;
}

// The first seed in the budget whose run violates `checker`, if any.
std::optional<scenario_result> first_violation(const std::string& checker,
                                               cluster::planted_bug bug,
                                               merge_fn merge = {}) {
  return troupe::sim::first_violation(
    checker, seed_budget(),
    [&](uint64_t seed) { return run_random_scenario(seed, bug, merge); });
}

// Runs `w` until `pred` holds or `within` passes; fails with the trace.
void require_within(membership_world& w, std::chrono::seconds within,
                    const std::function<bool()>& pred) {
  bool ok = w.run_until(w.sched().now() + within, pred);
  if (w.failure())
    FAIL(w.failure()->checker << ": " << w.failure()->detail << "\n"
                              << w.log().render());
  if (!ok)
    FAIL("not reached within " << within.count() << " s\n"
                               << w.log().render() << w.views());
}

} // namespace

TEST_CASE("membership sim: five nodes join through two seeds and all are "
          "up") {
  membership_world w{1, world_settings{}};
  for (int i = 0; i < 5; ++i)
    w.add_node();
  for (size_t i = 0; i < 5; ++i)
    w.start(i, {0, 1});
  require_within(w, 60s, [&] { return w.converged(5); });
  CHECK(!w.failure());
  for (size_t i = 0; i < 5; ++i) {
    auto self = w.engine(i).self_member();
    REQUIRE(self);
    CHECK(self->status == member_status::up);
  }
  // The first seed started the cluster: it is the oldest.
  CHECK(w.engine(2).state().oldest()->address == w.address(0));
}

TEST_CASE("membership sim: a leaving node goes exiting, removed, and shuts "
          "down") {
  membership_world w{2, world_settings{}};
  for (int i = 0; i < 4; ++i)
    w.add_node();
  for (size_t i = 0; i < 4; ++i)
    w.start(i, {0, 1});
  require_within(w, 60s, [&] { return w.converged(4); });
  auto leaver = w.address(3);
  w.leave(0, 3);
  require_within(w, 30s, [&] { return !w.alive(3) && w.converged(3); });
  CHECK(!w.failure());
  for (size_t i = 0; i < 3; ++i)
    CHECK(w.engine(i).state().latest_gossip().tombstones().count(leaver) == 1);
}

TEST_CASE("membership sim: a crashed node becomes unreachable, and once "
          "downed it is removed") {
  membership_world w{3, world_settings{}};
  for (int i = 0; i < 4; ++i)
    w.add_node();
  for (size_t i = 0; i < 4; ++i)
    w.start(i, {0, 1});
  require_within(w, 60s, [&] { return w.converged(4); });
  auto crashed = w.address(2);
  w.crash(2);
  auto crash_time = w.sched().now();
  REQUIRE(w.run_until(crash_time + 30s, [&] {
    return !w.engine(0).state().latest_gossip().reachability().is_reachable(
      crashed);
  }));
  auto detection = w.sched().now() - crash_time;
  // heartbeat 1 s, acceptable pause 3 s, threshold 8: detected after the
  // pause and before ~3 heartbeats more (docs/design/cluster.md's table).
  CHECK(detection > 3s);
  CHECK(detection < 10s);
  w.down(0, 2);
  require_within(w, 30s, [&] { return w.converged(3); });
  CHECK(!w.failure());
}

TEST_CASE("membership sim: a restart with a new uid replaces the old "
          "member") {
  membership_world w{4, world_settings{}};
  for (int i = 0; i < 3; ++i)
    w.add_node();
  for (size_t i = 0; i < 3; ++i)
    w.start(i, {0, 1});
  require_within(w, 60s, [&] { return w.converged(3); });
  auto old = w.address(2);
  w.crash(2);
  w.start(2, {0, 1});
  REQUIRE(w.address(2).uid != old.uid);
  require_within(w, 60s, [&] { return w.converged(3); });
  CHECK(!w.failure());
  CHECK(w.engine(0).state().latest_gossip().tombstones().count(old) == 1);
}

TEST_CASE("membership sim: a partition makes the other side unreachable, "
          "healing makes it reachable") {
  membership_world w{5, world_settings{}};
  for (int i = 0; i < 5; ++i)
    w.add_node();
  for (size_t i = 0; i < 5; ++i)
    w.start(i, {0, 1});
  require_within(w, 60s, [&] { return w.converged(5); });
  w.partition({0, 1, 2}, {3, 4});
  require_within(w, 30s, [&] {
    auto& g = w.engine(0).state().latest_gossip();
    return !g.reachability().is_reachable(w.address(3))
           && !g.reachability().is_reachable(w.address(4));
  });
  CHECK(!w.converged(5));
  w.heal();
  require_within(w, 30s, [&] { return w.converged(5); });
  CHECK(!w.failure());
}

TEST_CASE("membership sim: the seed sweep holds every invariant and "
          "converges after the faults") {
  auto budget = seed_budget();
  double worst = 0;
  for (uint64_t seed = 0; seed < budget; ++seed) {
    auto r = run_random_scenario(seed);
    if (r.failure) {
      FAIL_CHECK("seed " << seed << " (" << r.nodes << " nodes): "
                         << r.failure->checker << ": " << r.failure->detail
                         << "\nreplay: membership_sim --seed " << seed << "\n"
                         << r.trace);
      return;
    }
    worst = std::max(worst, r.liveness_rounds);
  }
  INFO("slowest liveness phase: " << worst << " gossip rounds");
  CHECK(worst < 60);
}

TEST_CASE("membership sim: the status checker catches a planted status "
          "regression") {
  auto r = first_violation("status_monotonic",
                           cluster::planted_bug::status_regression);
  REQUIRE(r);
  CHECK(r->failure->detail.find("go back to joining") != std::string::npos);
}

TEST_CASE("membership sim: the removal checker catches planted forgotten "
          "tombstones") {
  auto r = first_violation("removed_never_returns",
                           cluster::planted_bug::forget_tombstones);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
  CHECK(r->failure->detail.find("sees the removed") != std::string::npos);
}

TEST_CASE("membership sim: the leader checker catches a planted second "
          "leader") {
  auto r = first_violation("single_leader",
                           cluster::planted_bug::lead_without_being_leader);
  REQUIRE(r);
  CHECK(r->failure->detail.find("leader moves") != std::string::npos);
}

TEST_CASE("membership sim: the merge-law checker catches a planted "
          "one-sided merge") {
  // Planted: the left argument's members win (not commutative).
  merge_fn lopsided = [](const cluster::gossip& x, const cluster::gossip& y) {
    auto m = cluster::merge(x, y);
    m.update(x.members());
    return m;
  };
  auto r = first_violation("merge_laws", cluster::planted_bug::none, lopsided);
  REQUIRE(r);
  CHECK(r->failure->detail.find("commutative") != std::string::npos);
}

TEST_CASE("membership sim: a node that dies before it ever answers a "
          "heartbeat still becomes unreachable, and once downed is "
          "removed") {
  // Akka's ExpectedFirstHeartbeat: a receiver that never responds starts
  // its failure detector after expected_response_after anyway.
  membership_world w{6, world_settings{}};
  for (int i = 0; i < 4; ++i)
    w.add_node();
  for (size_t i = 0; i < 3; ++i)
    w.start(i, {0, 1});
  require_within(w, 60s, [&] { return w.converged(3); });
  w.start(3, {0});
  // Node 0 let it in (its welcome is on the way): it dies now.
  require_within(w, 30s, [&] {
    return w.engine(0).state().latest_gossip().has_member(w.address(3));
  });
  auto dead = w.address(3);
  w.crash(3);
  require_within(w, 30s, [&] {
    return !w.engine(0).state().latest_gossip().reachability().is_reachable(
      dead);
  });
  w.down_address(0, dead);
  require_within(w, 30s, [&] { return w.converged(3); });
  CHECK(w.engine(1).state().latest_gossip().tombstones().count(dead) == 1);
}
