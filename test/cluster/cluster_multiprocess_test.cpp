// Multi-process test of cluster membership: three cluster_node processes on
// 127.0.0.1 form a cluster; one is frozen (SIGSTOP) and the others must see
// it unreachable, then reachable again once it resumes (SIGCONT). The
// verdict comes from the processes' own event lines. Real time with
// DESIGN.md §10's shortened settings: every wait polls with a deadline.

#include <catch2/catch.hpp>

#include <csignal>

#include "cluster_process.hpp"

using namespace troupe::test;

TEST_CASE("cluster, 3 processes on loopback: all up, a frozen node becomes "
          "unreachable on the others and reachable again when it resumes") {
  temp_dir dir;
  auto ps = loopback_processes(dir, 3);
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

TEST_CASE("downing, 3 processes on loopback: a node frozen beyond "
          "stable_after is downed by the majority, stops when it resumes, "
          "and its uid never comes back") {
  temp_dir dir;
  auto ps = loopback_processes(
    dir, 3,
    {"--downing.active_strategy=keep_majority", "--downing.stable_after=2s"});
  require_all_up(ps);
  auto& frozen = *ps[2];
  frozen.proc().signal(SIGSTOP);
  // The verdict: the two others print the down and the removal of node 3.
  auto downed = eventually(
    [&] {
      return ps[0]->printed("member_removed", frozen.addr())
             && ps[1]->printed("member_removed", frozen.addr());
    },
    30s);
  frozen.proc().signal(SIGCONT);
  {
    INFO(outputs(ps));
    REQUIRE(downed);
    CHECK(ps[0]->printed("member_downed", frozen.addr()));
  }
  // Resumed, node 3 learns it is out (told, or by its own resolver: it is
  // alone) and stops by itself.
  auto stopped = frozen.proc().reap(30s);
  {
    INFO(outputs(ps));
    CHECK(stopped);
    CHECK(frozen.has_line("stopped"));
  }
  // The majority goes on: both still up, nobody else downed, and node 3's
  // uid was up once and never again.
  for (size_t i = 0; i < 2; ++i) {
    INFO(ps[i]->name() << " output:\n" << ps[i]->output());
    CHECK(ps[i]->proc().running());
    CHECK(ps[i]->count("member_up", frozen.addr()) == 1);
    for (size_t j = 0; j < 2; ++j)
      CHECK(!ps[i]->printed("member_downed", ps[j]->addr()));
  }
  for (size_t i = 0; i < 2; ++i) {
    ps[i]->proc().signal(SIGTERM);
    CHECK(ps[i]->proc().stop(10s));
  }
}
