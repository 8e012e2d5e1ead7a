#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

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

// The seeds a planted bug may take to be caught (ignore_lease: see the
// planted test).
constexpr uint64_t bug_budget = 100;
constexpr uint64_t lease_bug_budget = 400;

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

// The checker ADR 0007's bound rests on (see sharding_world.hpp); a seed
// it fails is a failure like any other.
constexpr const char* late_doomed = "removal_margin_exceeded";

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
                         << (o.rolling ? " --rolling" : "")
                         << (o.upgrade ? " --upgrade" : "") << " --seed "
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

TEST_CASE("scenario S4: randomized rolling upgrades, each restart a newer "
          "app_version that takes the coordinator over, never run two "
          "coordinators or two incarnations") {
  sharding_scenario o;
  o.rolling = true;
  o.upgrade = true;
  sweep(o, seed_budget() / 5);
  o.use_lease = true;
  sweep(o, seed_budget() / 5);
}

TEST_CASE("sharding sim: each checker catches its planted bug within the bug "
          "budget") {
  struct planted {
    const char* bug;
    bool use_lease;
    // the checkers that may report it first (I2a and I2b see the same
    // fault from two sides)
    std::vector<std::string> checkers;
  };
  // skip_recovery: a new coordinator allocates before the regions
  // reported; no_removal_margin: a downed member's shards move before its
  // side stopped them; ignore_lease: allocation without the lease;
  // early_shard_stopped: a region answers hand_off before its entities
  // terminated; duplicate_forwards: a transport that duplicates.
  // trust_any_shard_stopped (scenario H1 (a)) is not here: a
  // shard_stopped from a region that is not the home needs a repeated
  // hand_off crossing a late shard_stopped, which 100 seeds of this
  // scenario (even with slow stops at 50%) never produced; the unit table
  // "scenario H1" covers it.
  auto p = GENERATE(
    planted{"skip_recovery", false, {"one_home", "one_incarnation"}},
    planted{
      "no_removal_margin", false, {late_doomed, "one_home", "one_incarnation"}},
    planted{"ignore_lease", true, {"lease_gates_allocation"}},
    planted{"early_shard_stopped", false, {"one_incarnation", "one_home"}},
    planted{"duplicate_forwards", false, {"one_handler"}});
  sharding_scenario o;
  REQUIRE(sharding_bug_named(p.bug, o));
  o.use_lease = p.use_lease;
  std::optional<sharding_result> caught;
  // ignore_lease shows only when an allocation falls into the few ms
  // between the lease's loss and the instance's stop; with the margin of
  // ADR 0007 a new coordinator allocates later and more rarely there:
  // first caught at seed 302 (at 178 before the membership engine's
  // incarnation probes, issue 24, shifted the simulated network's draws;
  // about one seed in 150 shows it).
  auto budget
    = std::string{p.bug} == "ignore_lease" ? lease_bug_budget : bug_budget;
  for (uint64_t seed = 0; seed < budget && !caught; ++seed) {
    auto r = run(seed, o);
    if (r.failure
        && std::find(p.checkers.begin(), p.checkers.end(), r.failure->checker)
             != p.checkers.end())
      caught = r;
  }
  INFO("bug " << p.bug);
  REQUIRE(caught);
  WARN(p.bug << ": " << caught->failure->checker << " caught it at seed "
             << caught->seed);
}
