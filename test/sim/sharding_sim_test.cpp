#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "troupe/sim/sharding_world.hpp"

// Cluster sharding in the membership simulation: the seed sweeps without
// and with the coordinator lease, scenario S4 (rolling restarts), and one
// planted bug per sharding checker (each caught within the bug budget).

using namespace troupe;
using namespace troupe::sim;
using sharding::coordinator_bug;
using sharding::region_bug;

namespace {

// The CI seed budget per sweep (SIM_SHARDING_SEEDS overrides it).
uint64_t seed_budget() {
  if (auto* s = std::getenv("SIM_SHARDING_SEEDS"))
    return std::strtoull(s, nullptr, 10);
  return 500;
}

// The seeds a planted bug may take to be caught.
constexpr uint64_t bug_budget = 100;

// Runs without the trace; a failing seed is replayed with it.
sharding_result run(uint64_t seed, sharding_scenario o) {
  o.trace = false;
  auto r = run_sharding_scenario(seed, o);
  if (r.failure) {
    o.trace = true;
    r = run_sharding_scenario(seed, o);
  }
  return r;
}

void sweep(const sharding_scenario& o, uint64_t seeds) {
  uint64_t acks = 0;
  uint64_t spawns = 0;
  for (uint64_t seed = 0; seed < seeds; ++seed) {
    auto r = run(seed, o);
    acks += r.acks;
    spawns += r.spawns;
    if (r.failure)
      FAIL_CHECK("seed " << seed << " (" << r.nodes << " nodes): "
                         << r.failure->checker << ": " << r.failure->detail
                         << "\nreplay: membership_sim --sharding"
                         << (o.use_lease ? " --lease" : "")
                         << (o.rolling ? " --rolling" : "") << " --seed "
                         << seed << "\n"
                         << r.trace);
  }
  // The runs did real work: messages handled, entities spawned.
  CHECK(acks > seeds * 1000);
  CHECK(spawns > seeds * 100);
}

} // namespace

TEST_CASE("sharding sim: the seed sweep holds I2 without a lease") {
  sweep(sharding_scenario{}, seed_budget());
}

TEST_CASE("sharding sim: the seed sweep holds I2 with the coordinator lease") {
  sharding_scenario o;
  o.use_lease = true;
  sweep(o, seed_budget());
}

TEST_CASE("scenario S4: randomized rolling restarts never run two "
          "coordinators or two incarnations") {
  sharding_scenario o;
  o.rolling = true;
  sweep(o, seed_budget() / 5);
  o.use_lease = true;
  sweep(o, seed_budget() / 5);
}

TEST_CASE("sharding sim: each checker catches its planted bug within the bug "
          "budget") {
  struct planted {
    const char* bug;
    bool use_lease;
    const char* checker;
  };
  // skip_recovery: a new coordinator allocates before the regions
  // reported; no_removal_margin: a downed member's shards move before its
  // side stopped them; trust_any_shard_stopped: scenario H1 (a);
  // ignore_lease: allocation without the lease; early_shard_stopped: a
  // region answers hand_off before its entities terminated;
  // duplicate_forwards: a transport that duplicates.
  auto p = GENERATE(
    planted{"skip_recovery", false, "one_home"},
    planted{"no_removal_margin", false, "one_incarnation"},
    planted{"trust_any_shard_stopped", false, "one_home"},
    planted{"ignore_lease", true, "lease_gates_allocation"},
    planted{"early_shard_stopped", false, "one_home"},
    planted{"duplicate_forwards", false, "one_handler"});
  sharding_scenario o;
  REQUIRE(sharding_bug_named(p.bug, o));
  o.use_lease = p.use_lease;
  auto r = first_violation(p.checker, bug_budget,
                           [&](uint64_t seed) { return run(seed, o); });
  INFO(p.checker << " for bug " << p.bug);
  REQUIRE(r);
  WARN(p.bug << ": " << p.checker << " caught at seed " << r->seed);
  CHECK(r->failure->checker == p.checker);
}
