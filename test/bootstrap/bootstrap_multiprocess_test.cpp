// Multi-process tests of Cluster Bootstrap: five cluster_node processes on
// 127.0.0.1 with their management APIs, forming through the config
// discovery method. Verdicts come from each node's management API
// (`GET /cluster/members`, read by the test: every running node reports
// the same up members, exactly the running nodes) and from the log lines
// of every incarnation (how many times a cluster was founded). Real time
// with DESIGN.md §10's shortened settings; every wait polls with a
// deadline.

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <thread>

#include "bootstrap_processes.hpp"

using namespace troupe::test;

namespace {

// A seed for the random start order, printed so a failure can be replayed.
uint64_t test_seed() {
  if (auto* s = std::getenv("BOOTSTRAP_TEST_SEED"))
    return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

void require_one_cluster(bootstrap_processes& ps,
                         std::chrono::milliseconds bound) {
  auto ok = eventually([&] { return ps.one_cluster(); }, bound);
  INFO(ps.outputs());
  REQUIRE(ok);
}

} // namespace

TEST_CASE("bootstrap, 5 processes through the config method, started in "
          "random order with random delays: one cluster every time, founded "
          "once") {
  auto seed = test_seed();
  INFO("BOOTSTRAP_TEST_SEED=" << seed);
  std::mt19937_64 rng{seed};
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round + 1);
    temp_dir dir;
    bootstrap_processes* self = nullptr;
    bootstrap_processes ps{dir, 5,
                           [&](size_t i) { return config_method(self, 5)(i); }};
    self = &ps;
    std::vector<size_t> order{0, 1, 2, 3, 4};
    std::shuffle(order.begin(), order.end(), rng);
    for (auto i : order) {
      ps.start(i);
      std::this_thread::sleep_for(std::chrono::milliseconds{rng() % 1500});
    }
    for (size_t i = 0; i < 5; ++i)
      ps[i].wait_ready();
    require_one_cluster(ps, 30s);
    CHECK(ps.foundings() == 1);
  }
}

TEST_CASE("bootstrap, 5 processes: the two lowest (the static seeds' shape) "
          "partitioned, downed by the majority and restarted behind the "
          "partition do not found a second cluster, and rejoin once it "
          "heals") {
  temp_dir dir;
  bootstrap_processes* self = nullptr;
  bootstrap_processes ps{
    dir,
    5,
    [&](size_t i) { return config_method(self, 5)(i); },
    {"--downing.active_strategy=keep_majority", "--downing.stable_after=2s"}};
  self = &ps;
  for (size_t i = 0; i < 5; ++i)
    ps.start(i);
  for (size_t i = 0; i < 5; ++i)
    ps[i].wait_ready();
  require_one_cluster(ps, 30s);
  // Partition {1,2} | {3,4,5} on the majority's side (its faults stay when
  // the peers restart with new uids); the majority downs 1 and 2, which
  // down themselves (alone on their side) and stop.
  for (size_t on = 2; on < 5; ++on)
    for (size_t peer = 0; peer < 2; ++peer)
      ps.fault(on, peer, true);
  for (size_t i = 0; i < 2; ++i) {
    auto stopped = ps[i].proc().reap(40s);
    INFO(ps.outputs());
    REQUIRE(stopped);
  }
  // Restarted (as Kubernetes restarts the pods) while still cut off from
  // the majority's transport: their probes reach the majority's management
  // API, which reports the cluster; they try to join it and cannot, and
  // found nothing.
  ps.start(0);
  ps.start(1);
  ps[0].wait_ready();
  ps[1].wait_ready();
  std::this_thread::sleep_for(8s);
  {
    INFO(ps.outputs());
    CHECK(ps.foundings() == 1);
    CHECK(ps.up_members(0).empty());
    CHECK(ps.up_members(1).empty());
  }
  for (size_t on = 2; on < 5; ++on)
    for (size_t peer = 0; peer < 2; ++peer)
      ps.fault(on, peer, false);
  require_one_cluster(ps, 40s);
  CHECK(ps.foundings() == 1);
}

TEST_CASE("bootstrap, 5 processes: a rolling restart of every node with the "
          "links to the restarting node delayed 2 s keeps one cluster after "
          "each step") {
  temp_dir dir;
  bootstrap_processes* self = nullptr;
  // The resolver's default stable_after (20 s): a join 2 s slow must not
  // be mistaken for a failure worth downing; the handshake (two round
  // trips, one leg of each 2 s late) gets 10 s instead of the tests' 2 s.
  bootstrap_processes ps{dir,
                         5,
                         [&](size_t i) { return config_method(self, 5)(i); },
                         {"--cluster.transport.handshake_timeout=10s"}};
  self = &ps;
  for (size_t i = 0; i < 5; ++i)
    ps.start(i);
  for (size_t i = 0; i < 5; ++i)
    ps[i].wait_ready();
  require_one_cluster(ps, 30s);
  for (size_t i = 0; i < 5; ++i) {
    INFO("restarting node " << i + 1);
    ps[i].proc().signal(SIGTERM);
    {
      auto stopped = ps[i].proc().reap(30s);
      INFO(ps.outputs());
      REQUIRE(stopped);
    }
    // Everything the others send to the restarting node arrives 2 s late.
    for (size_t on = 0; on < 5; ++on)
      if (on != i)
        ps.fault(on, i, false, 2000, "outbound");
    ps.start(i);
    ps[i].wait_ready();
    require_one_cluster(ps, 60s);
    for (size_t on = 0; on < 5; ++on)
      if (on != i)
        ps.fault(on, i, false, 0);
  }
  CHECK(ps.foundings() == 1);
}
