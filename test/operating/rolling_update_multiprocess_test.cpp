// A rolling update with real processes (docs/guides/operations.md §4):
// three workers of app_version 1.0.0 under load, replaced one by one, the
// oldest first, by workers of 2.0.0 (SIGTERM, then the new process in the
// same slot); slot 0 is the seed and the client throughout
// (worker_cluster.hpp).
//
// Verdicts from the journals and the client's log: no acknowledged message
// lost, at most one live incarnation per entity, never two coordinators
// (scenario S4's hazard), at most one singleton instance at a time. With the
// oldest replaced first, the singleton would move three times without the
// app_version preference (to the next oldest old node twice, then to the
// first new one); with it, it moves at most twice: to the next oldest old
// node when the first old one stops (no new node is up yet), then to the
// first new node.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "worker_cluster.hpp"

using namespace troupe;
using namespace troupe::test;

TEST_CASE("rolling update, 4 processes: three workers of version 1 "
          "replaced one by one by version 2 under load lose no "
          "acknowledged message, never run two coordinators, move the "
          "singleton at most twice and end with the shards on version 2") {
  worker_cluster x{[](size_t slot) {
    return std::vector<std::string>{slot == 0 ? "--cluster.app_version=2.0.0"
                                              : "--cluster.app_version=1.0.0"};
  }};
  auto& c = x.c;
  x.start_in_order(4);
  c.wait_all_handled(entities, monotonic_ns(), 40s);
  auto first = x.live_instance(20s);
  CHECK(first.node == c.ps[1]->addr());
  auto begin = monotonic_ns();
  std::set<std::string> new_nodes;
  for (size_t slot = 1; slot <= 3; ++slot) {
    c.terminate({slot});
    CHECK(x.exit_code(slot) == 0);
    for (auto& f : c.flags[slot])
      if (f == "--cluster.app_version=1.0.0")
        f = "--cluster.app_version=2.0.0";
    c.start(slot);
    c.wait_up(slot);
    new_nodes.insert(c.ps[slot]->addr());
    // Every entity gets traffic again before the next step.
    c.wait_all_handled(entities, monotonic_ns(), 40s);
    auto v = judge_sharding(c.journal, c.client_log, c.exits);
    INFO("after replacing worker " << slot << ": " << to_string(v));
    REQUIRE(v.ok());
  }
  // The singleton ends on a new node and moved at most twice.
  auto last = x.live_instance(20s);
  CHECK(new_nodes.count(last.node) == 1);
  auto windows = instance_windows(read_journal(x.singleton_journal));
  INFO("singleton journal\n" << journal_text(x.singleton_journal));
  CHECK(windows.size() >= 2);
  CHECK(windows.size() - 1 <= 2);
  // The shards end on version-2 nodes only: after the update every entity
  // handles messages again, each of them on a new node.
  auto done_ns = monotonic_ns();
  c.wait_all_handled(entities, done_ns, 40s);
  auto j = c.read();
  size_t after = 0;
  for (auto& [id, by] : j.handled)
    for (auto& [w, ns] : by)
      if (ns > done_ns) {
        ++after;
        INFO(w.entity << " handled message " << id << " on " << w.node);
        CHECK(new_nodes.count(w.node) == 1);
      }
  CHECK(after >= entities);
  auto homes = live_homes(j, c.exits);
  for (auto& [entity, node] : homes) {
    INFO(entity << " lives on " << node);
    CHECK(new_nodes.count(node) == 1);
  }
  auto v = c.judge();
  CHECK(v.two_coordinators.empty());
  check_oracle(x.singleton_journal, true);
  std::cout << "rolling update of 3 workers in "
            << seconds_between(begin, monotonic_ns()) << " s: the singleton "
            << "moved " << windows.size() - 1 << " time(s); " << to_string(v)
            << "\n";
}
