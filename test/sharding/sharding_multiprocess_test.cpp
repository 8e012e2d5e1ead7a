// Multi-process tests of cluster sharding on the real transport: cluster_node
// processes on 127.0.0.1 run a shard region of type "acct" each
// (--sharding); node 1 also runs the client (--sharding_client), which
// sends to e0..e<N-1> round robin and logs every acknowledgement. The
// verdicts come from the shared journal the entities and the coordinator
// watch append to and from the client's log (sharding_journal.hpp), never
// from the nodes' own reports (DESIGN.md §10): at most one live incarnation
// per entity and one coordinator at any time (I2), every acknowledged
// message handled exactly once by the incarnation its ack names, no message
// handled twice. Real time with DESIGN.md §10's shortened settings
// (heartbeat 100 ms, acceptable pause 1 s, stable_after 2 s, removal margin
// auto = 2 s, retry 300 ms, rebalance every 1 s, lease ttl 3 s); every wait
// polls with a deadline.

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cluster_process.hpp"
#include "sharded_cluster.hpp"
#include "sharding_journal.hpp"
#include "troupe/lease/file_lease_format.hpp"
#include "troupe/sharding/shard_id.hpp"

using namespace troupe;
using namespace troupe::test;

TEST_CASE("the sharding oracle flags two live incarnations, a message "
          "handled twice or outside its incarnation, an ack naming another "
          "incarnation, and two coordinators") {
  temp_dir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream{dir.path / name} << text;
    return dir.path / name;
  };
  // a: e1 incarnation 1 until 300; b: e1 from 200 (overlap), e2 from 100
  // while a's e2 lives until a died at 500 (overlap through the exit);
  // message 7 handled twice, 8 after its incarnation stopped; the ack of 9
  // names incarnation 2; coordinators of a and b overlap.
  auto journal = write("journal", "100 started e1 a 1\n"
                                  "110 handled e1 a 1 7\n"
                                  "120 started e2 a 1\n"
                                  "150 coordinator_started a 1\n"
                                  "200 started e1 b 1\n"
                                  "210 handled e1 b 1 7\n"
                                  "220 handled e1 b 1 9\n"
                                  "300 stopped e1 a 1\n"
                                  "310 handled e1 a 1 8\n"
                                  "400 coordinator_started b 1\n"
                                  "450 coordinator_stopped a 1\n"
                                  "600 started e2 b 1\n"
                                  "450 started e3 b 1\n");
  auto acks = write("acks", "acked 9 e1 b 2\n");
  auto v = judge_sharding(journal, acks, {{"a", 500}});
  INFO(to_string(v));
  CHECK(v.entities == 3);
  CHECK(v.incarnations == 5);
  CHECK(v.coordinators == 2);
  CHECK(v.two_live_incarnations.size() == 1); // e1 (e2's b starts after 500)
  CHECK(v.handled_twice.size() == 1);
  CHECK(v.handled_outside_window.size() == 1);
  CHECK(v.ack_not_matching.size() == 1);
  CHECK(v.two_coordinators.size() == 1);
  // Without the exit time, a's e2 lives on: a second overlap.
  CHECK(judge_sharding(journal, acks, {}).two_live_incarnations.size() == 2);
  // A clean journal passes.
  auto clean = write("clean", "100 started e1 a 1\n110 handled e1 a 1 1\n"
                              "120 stopped e1 a 1\n130 started e1 b 1\n"
                              "140 handled e1 b 1 2\n");
  auto clean_acks = write("clean_acks", "acked 1 e1 a 1\nacked 2 e1 b 1\n");
  CHECK(judge_sharding(clean, clean_acks, {}).ok());
}

TEST_CASE("sharding, 3 processes, 1,000 entities: kill -9 of a node re-homes "
          "its shards after downing and the removal margin, and traffic goes "
          "on") {
  sharded_cluster c{3, 1000, no_extra};
  c.start_all_up(3);
  c.wait_all_handled(1000, monotonic_ns(), 30s);
  // No hand-off runs when node 3 dies (one that completed just before the
  // kill would move a shard at once, legitimately).
  wait_balanced(c, 3);
  auto victim = c.ps[2]->addr();
  std::set<std::string> lost;
  for (auto& [entity, node] : live_homes(c.read(), c.exits))
    if (node == victim)
      lost.insert(entity);
  REQUIRE(!lost.empty());
  auto killed_at = c.kill(2);
  // Each of them handled a message on another node: detection (about 1 s),
  // stable_after (2 s), the removal margin (2 s), retries; bound 25 s.
  std::map<std::string, uint64_t> back; // entity -> first handled elsewhere
  auto ok = eventually(
    [&] {
      auto j = c.read();
      for (auto& [id, hs] : j.handled)
        for (auto& [w, ns] : hs)
          if (ns > killed_at && w.node != victim && lost.count(w.entity)) {
            auto [i, added] = back.try_emplace(w.entity, ns);
            i->second = std::min(i->second, ns);
          }
      return back.size() == lost.size();
    },
    25s, 100ms);
  INFO(c.outputs());
  REQUIRE(ok);
  auto first = std::min_element(back.begin(), back.end(), [](auto& x, auto& y) {
                 return x.second < y.second;
               })->second;
  auto last = std::max_element(back.begin(), back.end(), [](auto& x, auto& y) {
                return x.second < y.second;
              })->second;
  // Traffic goes on for all of them.
  c.wait_all_handled(1000, monotonic_ns(), 15s);
  auto v = c.judge();
  std::cout << "kill -9: " << lost.size() << " entities of node 3 re-homed "
            << seconds_between(killed_at, first) << " to "
            << seconds_between(killed_at, last) << " s after the kill; "
            << to_string(v) << "\n";
  // Not before stable_after + the removal margin; bound: 20 s.
  CHECK(seconds_between(killed_at, first) > 4.0);
  CHECK(seconds_between(killed_at, last) < 20.0);
}

TEST_CASE("sharding, 3 processes, 1,000 entities: a 4th node gets about a "
          "quarter of the shards by rebalance, never two live incarnations") {
  sharded_cluster c{4, 1000, no_extra};
  c.start_all_up(3);
  c.wait_all_handled(1000, monotonic_ns(), 30s);
  auto before = wait_balanced(c, 3);
  auto added_at = monotonic_ns();
  c.start(3);
  c.wait_up(3);
  // The new node gets at least 15% of the shards, then nothing moves for 3
  // rebalance intervals.
  auto fourth = c.ps[3]->addr();
  std::map<std::string, std::string> after;
  auto got = eventually(
    [&] {
      after = shard_homes(c.read(), c.exits);
      return share_of(after, fourth) >= 0.15;
    },
    40s, 200ms);
  INFO(c.outputs());
  REQUIRE(got);
  auto settled_at = monotonic_ns();
  auto stable = eventually(
    [&] {
      auto now = shard_homes(c.read(), c.exits);
      if (now != after) {
        after = now;
        settled_at = monotonic_ns();
      }
      return seconds_between(settled_at, monotonic_ns()) >= 3.0
             && after.size() == number_of_shards;
    },
    40s, 200ms);
  REQUIRE(stable);
  size_t moved = 0;
  for (auto& [shard, node] : after)
    moved += before[shard] != node ? 1 : 0;
  auto share = share_of(after, fourth);
  c.wait_all_handled(1000, monotonic_ns(), 15s);
  auto v = c.judge();
  std::cout << "4th node: " << share * 100 << "% of " << after.size()
            << " shards, " << moved << " moved, settled "
            << seconds_between(added_at, settled_at) << " s after its start; "
            << to_string(v) << "\n";
  CHECK(share >= 0.15);
  CHECK(share <= 0.35);
}

TEST_CASE("sharding, 3 processes with the coordinator lease held by a stale "
          "holder: no entity starts until the record expires, then traffic "
          "flows") {
  sharded_cluster c{3, 1000, no_extra};
  for (auto& f : c.flags)
    for (auto& x : lease_flags(c.leases))
      f.push_back(x);
  // The record of a holder that is gone, valid for 8 s more (this boot's
  // id, so the backend does not treat it as expired).
  std::filesystem::create_directories(c.leases);
  std::string boot_id;
  std::ifstream{"/proc/sys/kernel/random/boot_id"} >> boot_id;
  REQUIRE(!boot_id.empty());
  auto expires_ns = monotonic_ns() + 8'000'000'000u;
  lease::lease_file_record stale{
    boot_id, lease::lease_record{
               "gone-holder", 1, 7,
               runtime::timestamp{std::chrono::nanoseconds{expires_ns}}, 7}};
  std::ofstream{c.leases / lease::lease_file_name("mp-shard-coordinator-acct")}
    << lease::encode_lease_file(stale);
  c.start_all_up(3);
  auto up_ns = monotonic_ns();
  // Not vacuous: the cluster is up (and the client sending) while the record
  // is still valid for seconds.
  REQUIRE(seconds_between(up_ns, expires_ns) > 2.0);
  // The first entity starts only after the record expired (the manager
  // retries the lease every 5 s: bound expiry + 20 s).
  auto started = eventually(
    [&] { return !c.read().incarnations.empty(); },
    std::chrono::milliseconds{
      (expires_ns - std::min(expires_ns, monotonic_ns())) / 1'000'000 + 20'000},
    100ms);
  INFO(c.outputs());
  REQUIRE(started);
  auto first = c.read().first_start_ns;
  CHECK(first >= expires_ns);
  c.wait_all_handled(1000, first, 30s);
  auto v = c.judge();
  std::cout << "stale holder: cluster up " << seconds_between(up_ns, expires_ns)
            << " s before the record expired, first entity started "
            << seconds_between(expires_ns, first) << " s after it expired; "
            << to_string(v) << "\n";
}

TEST_CASE("scenario S4: randomized rolling restarts never run two "
          "coordinators or two incarnations") {
  // Slot 0: the seed and the client, proxy-only (no "shard" role), never
  // restarted; slots 1-4 host shards and the coordinator and are restarted
  // one or two at a time, gracefully (SIGTERM) or with kill -9, in a seeded
  // random order (SHARDING_S4_SEED repeats a run).
  constexpr uint64_t entities = 500;
  sharded_cluster c{5, entities, [](size_t slot) {
                      std::vector<std::string> f{"--sharding.role=shard"};
                      if (slot > 0)
                        f.emplace_back("--cluster.roles=shard");
                      return f;
                    }};
  auto seed = std::random_device{}();
  if (auto s = std::getenv("SHARDING_S4_SEED"))
    seed = static_cast<unsigned>(std::strtoul(s, nullptr, 10));
  std::cout << "S4 seed " << seed << "\n";
  INFO("seed " << seed);
  std::mt19937 rng{seed};
  c.start_all_up(5);
  c.wait_all_handled(entities, monotonic_ns(), 40s);
  // The slot whose node runs the coordinator now (from the journal).
  auto coordinator_slot = [&] {
    size_t slot = 1;
    auto ok = eventually(
      [&] {
        for (auto& [key, w] : c.read().coordinators)
          if (end_of(w, c.exits) == std::numeric_limits<uint64_t>::max())
            for (size_t i = 1; i < c.ps.size(); ++i)
              if (c.ps[i]->addr() == w.node) {
                slot = i;
                return true;
              }
        return false;
      },
      10s, 100ms);
    REQUIRE(ok);
    return slot;
  };
  auto begin = monotonic_ns();
  size_t steps = 0;
  size_t kills = 0;
  size_t terms = 0;
  while (seconds_between(begin, monotonic_ns()) < 60.0) {
    std::vector<size_t> slots{1, 2, 3, 4};
    std::shuffle(slots.begin(), slots.end(), rng);
    if (steps == 0) // the first step always hits the coordinator's node
      std::iter_swap(slots.begin(),
                     std::find(slots.begin(), slots.end(), coordinator_slot()));
    slots.resize(std::uniform_int_distribution<size_t>{1, 2}(rng));
    std::vector<size_t> graceful;
    std::ostringstream what;
    for (auto s : slots) {
      if (std::bernoulli_distribution{0.5}(rng)) {
        graceful.push_back(s);
        what << " SIGTERM node" << s + 1;
        ++terms;
      } else {
        c.kill(s);
        what << " kill -9 node" << s + 1;
        ++kills;
      }
    }
    c.terminate(graceful);
    std::cout << "S4 step " << ++steps << ":" << what.str() << " at "
              << seconds_between(begin, monotonic_ns()) << " s\n";
    for (auto s : slots)
      c.start(s);
    for (auto s : slots)
      c.wait_up(s);
    // All entities get traffic again before the next step (detection,
    // stable_after and the margin for the old incarnations of the killed).
    c.wait_all_handled(entities, monotonic_ns(), 40s);
    auto v = judge_sharding(c.journal, c.client_log, c.exits);
    INFO(to_string(v));
    REQUIRE(v.ok());
  }
  auto v = c.judge();
  std::cout << "S4: " << steps << " steps (" << kills << " kill -9, " << terms
            << " SIGTERM) in " << seconds_between(begin, monotonic_ns())
            << " s; " << to_string(v) << "\n";
  CHECK(steps >= 3);
  CHECK(v.coordinators >= 2);
}
