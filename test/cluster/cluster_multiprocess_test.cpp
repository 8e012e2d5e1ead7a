// Multi-process test of cluster membership: three cluster_node processes on
// 127.0.0.1 form a cluster; one is frozen (SIGSTOP) and the others must see
// it unreachable, then reachable again once it resumes (SIGCONT). The
// verdict comes from the processes' own event lines. Real time with
// DESIGN.md §10's shortened settings: every wait polls with a deadline.

#include <catch2/catch.hpp>

#include <csignal>

#include "cluster_process.hpp"
#include "troupe/test/free_ports.hpp"

using namespace troupe::test;

TEST_CASE("cluster, 3 processes on loopback: all up, a frozen node becomes "
          "unreachable on the others and reachable again when it resumes") {
  temp_dir dir;
  auto ports = free_ports(3);
  auto seed = "127.0.0.1:" + std::to_string(ports[0]);
  cluster_processes ps;
  for (size_t i = 0; i < 3; ++i) {
    ps.push_back(std::make_unique<cluster_process>(
      dir, "node" + std::to_string(i + 1),
      cluster_node_flags("127.0.0.1", ports[i], seed)));
  }
  require_all_up(ps);
  auto& frozen = *ps[2];
  // The verdict: nodes 1 and 2 print the event about the frozen node 3;
  // at the end nothing downed or removed it, it is still up everywhere.
  check_fault_and_heal(
    ps, [&] { frozen.proc().signal(SIGSTOP); },
    [&] { frozen.proc().signal(SIGCONT); },
    [&](const std::string& kind) {
      return ps[0]->printed(kind, frozen.addr())
             && ps[1]->printed(kind, frozen.addr());
    });
}
