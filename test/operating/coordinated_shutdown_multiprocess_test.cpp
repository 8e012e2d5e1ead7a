// The coordinated shutdown with real processes (docs/design/
// coordinated-shutdown.md): cluster_node processes on 127.0.0.1, slot 0 the
// seed and the client (no "worker" role: it hosts neither the singleton nor
// shards), slots 1-3 workers that host the singleton "jobs", the shards of
// "acct" and the shard coordinator, both singletons under file leases with
// a ttl of 20 s. SIGTERM starts each node's coordinated shutdown.
//
// Verdicts come from the shared journals and the client's acknowledgement
// log (DESIGN.md §10), never from the nodes' reports: the singleton journal
// (at most one instance at a time, tokens increasing), the sharding journal
// (at most one live incarnation per entity and one coordinator, every
// acknowledged message handled exactly once by the incarnation its ack
// names). Real time with the shortened settings of DESIGN.md §10 and
// generous bounds; every wait polls with a deadline.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "worker_cluster.hpp"

using namespace troupe;
using namespace troupe::test;

TEST_CASE("coordinated shutdown, 4 processes: SIGTERM to the singleton's "
          "host hands it to the next oldest without failure detection or "
          "downing, hands off its shards, releases its leases, exits 0") {
  worker_cluster x;
  auto& c = x.c;
  x.start_in_order(4);
  c.wait_all_handled(entities, monotonic_ns(), 40s);
  auto old = x.live_instance(20s);
  auto host = x.slot_of(old.node);
  REQUIRE(host == 1);
  auto coordinator = live_coordinator(c);
  auto before = c.read();
  auto hosted_before = live_homes(before, c.exits);
  auto on_host = std::count_if(hosted_before.begin(), hosted_before.end(),
                               [&](auto& kv) { return kv.second == old.node; });
  auto term_ns = monotonic_ns();
  c.terminate({host}); // fails the test unless it exits within 20 s
  auto exit_ns = c.exits[old.node];
  CHECK(x.exit_code(host) == 0);
  auto next = x.successor_of(old, 10s);
  CHECK(next.node == c.ps[2]->addr()); // the next oldest
  auto j = read_journal(x.singleton_journal);
  auto old_after = instances_on(j, old.node);
  REQUIRE_FALSE(old_after.empty());
  REQUIRE(old_after.back().stop_ns);
  auto stop_ns = *old_after.back().stop_ns;
  // The next oldest took over after the old instance stopped, at its next
  // lease attempt: the lease was released, not left to expire.
  CHECK(stop_ns < next.first_ns);
  CHECK(seconds_between(stop_ns, next.first_ns) < release_bound_s);
  CHECK(next.token > old_after.back().token);
  // Nobody needed the failure detector or the resolver.
  x.check_nobody_printed("unreachable_member", old.node);
  x.check_nobody_printed("member_downed", old.node);
  // The coordinator, if it ran there, moved the same way.
  std::optional<double> coordinator_gap;
  if (coordinator && coordinator->node == old.node) {
    std::optional<incarnation_window> after;
    auto ok = eventually(
      [&] {
        after = live_coordinator(c);
        return after.has_value() && after->node != old.node;
      },
      10s, 50ms);
    INFO(c.outputs());
    REQUIRE(ok);
    auto w
      = c.read().coordinators.at({coordinator->node, coordinator->incarnation});
    REQUIRE(w.stop_ns);
    coordinator_gap = seconds_between(*w.stop_ns, after->start_ns);
    CHECK(*coordinator_gap < release_bound_s);
  }
  // Every entity gets traffic again, on the nodes that stay.
  c.wait_all_handled(entities, exit_ns, 40s);
  auto homes = live_homes(c.read(), c.exits);
  CHECK(std::none_of(homes.begin(), homes.end(),
                     [&](auto& kv) { return kv.second == old.node; }));
  x.judge();
  std::cout << "SIGTERM to the singleton's host: it exited 0 after "
            << seconds_between(term_ns, exit_ns) << " s; the singleton ran "
            << "on the next oldest " << seconds_between(term_ns, next.first_ns)
            << " s after SIGTERM (" << seconds_between(stop_ns, next.first_ns)
            << " s after the old instance stopped); " << on_host
            << " entities were on it";
  if (coordinator_gap)
    std::cout << "; the coordinator moved in " << *coordinator_gap << " s";
  std::cout << "\n";
}

TEST_CASE("coordinated shutdown, 4 processes: SIGTERM to a node during a "
          "rebalance completes, and no acknowledged message is lost") {
  worker_cluster x;
  auto& c = x.c;
  // Slots 0-2 first; slot 3 joins later and the coordinator rebalances
  // shards to it (rebalance every 1 s).
  c.start_all_up(3);
  c.wait_all_handled(entities, monotonic_ns(), 40s);
  auto join_ns = monotonic_ns();
  c.start(3);
  c.wait_up(3);
  // The rebalance is under way once an entity started on slot 3.
  auto newcomer = c.ps[3]->addr();
  auto ok = eventually(
    [&] {
      for (auto& [key, w] : c.read().incarnations)
        if (w.node == newcomer)
          return true;
      return false;
    },
    20s, 20ms);
  INFO(c.outputs());
  REQUIRE(ok);
  // Node 2 gives shards away: stop it in the middle of that.
  auto leaving = c.ps[1]->addr();
  auto term_ns = monotonic_ns();
  c.terminate({1});
  CHECK(x.exit_code(1) == 0);
  x.check_nobody_printed("member_downed", leaving);
  c.wait_all_handled(entities, c.exits[leaving], 40s);
  auto homes = live_homes(c.read(), c.exits);
  CHECK(std::none_of(homes.begin(), homes.end(),
                     [&](auto& kv) { return kv.second == leaving; }));
  x.judge();
  std::cout << "SIGTERM during a rebalance: node 2 exited 0 after "
            << seconds_between(term_ns, c.exits[leaving]) << " s ("
            << seconds_between(join_ns, term_ns)
            << " s after node 4 started)\n";
}

TEST_CASE("coordinated shutdown, 4 processes: SIGTERM to the next oldest "
          "during the singleton's hand-over completes both, and the "
          "singleton ends on the last worker") {
  worker_cluster x;
  auto& c = x.c;
  x.start_in_order(4);
  c.wait_all_handled(entities, monotonic_ns(), 40s);
  auto old = x.live_instance(20s);
  size_t host = 1;
  size_t target = 2; // the next oldest
  size_t last = 3;
  REQUIRE(x.slot_of(old.node) == host);
  // The hand-over starts with the host's SIGTERM; the next oldest gets its
  // SIGTERM as soon as the old instance stopped: the hand-over is then
  // between its steps (stopped, lease released, not yet started there).
  c.ps[host]->proc().signal(SIGTERM);
  auto ok = eventually(
    [&] {
      auto mine = instances_on(read_journal(x.singleton_journal), old.node);
      return !mine.empty() && mine.back().stop_ns.has_value();
    },
    20s, 5ms);
  INFO(c.outputs());
  REQUIRE(ok);
  c.terminate({host, target});
  CHECK(x.exit_code(host) == 0);
  CHECK(x.exit_code(target) == 0);
  auto ended = x.live_instance(20s);
  CHECK(ended.node == c.ps[last]->addr());
  x.check_nobody_printed("member_downed", old.node);
  x.check_nobody_printed("member_downed", c.ps[target]->addr());
  c.wait_all_handled(
    entities, std::max(c.exits[old.node], c.exits[c.ps[target]->addr()]), 40s);
  x.judge();
  std::cout << "SIGTERM during a hand-over: both exited 0; the singleton "
               "ended on "
            << c.ps[last]->name() << "\n";
}
