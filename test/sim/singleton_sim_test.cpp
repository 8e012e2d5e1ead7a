#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "troupe/sim/singleton_world.hpp"

// The cluster singleton in the membership simulation: the seed sweeps
// without and with a lease, and one planted manager bug per singleton
// checker (each must be caught within the CI seed budget).

using namespace troupe;
using namespace troupe::sim;
using singleton::manager_bug;

namespace {

// The CI seed budget per sweep (SIM_SINGLETON_SEEDS overrides it).
uint64_t seed_budget() {
  if (auto* s = std::getenv("SIM_SINGLETON_SEEDS"))
    return std::strtoull(s, nullptr, 10);
  return 500;
}

// The seeds a planted bug may take to be caught.
constexpr uint64_t bug_budget = 100;

// Runs without the trace; a failing seed is replayed with it.
scenario_result run(uint64_t seed, singleton_scenario o) {
  o.trace = false;
  auto r = run_singleton_scenario(seed, o);
  if (r.failure) {
    o.trace = true;
    r = run_singleton_scenario(seed, o);
  }
  return r;
}

std::optional<scenario_result> first_violation(const std::string& checker,
                                               const singleton_scenario& o) {
  return troupe::sim::first_violation(
    checker, bug_budget, [&](uint64_t seed) { return run(seed, o); });
}

void sweep(bool use_lease) {
  singleton_scenario o;
  o.use_lease = use_lease;
  double worst = 0;
  for (uint64_t seed = 0; seed < seed_budget(); ++seed) {
    auto r = run(seed, o);
    worst = std::max(worst, r.liveness_rounds);
    if (r.failure)
      FAIL_CHECK("seed " << seed << " (" << r.nodes << " nodes): "
                         << r.failure->checker << ": " << r.failure->detail
                         << "\nreplay: membership_sim --singleton"
                         << (use_lease ? " --lease" : "") << " --seed " << seed
                         << "\n"
                         << r.trace);
  }
  WARN("the slowest liveness phase took " << worst << " gossip rounds");
}

} // namespace

TEST_CASE("singleton sim: without a lease, the seed sweep holds every "
          "singleton checker") {
  sweep(false);
}

TEST_CASE("singleton sim: with a faulty lease, the seed sweep holds every "
          "singleton checker") {
  sweep(true);
}

TEST_CASE("singleton sim: the one_instance checker catches a planted new "
          "oldest that skips the hand-over") {
  singleton_scenario o;
  o.bug = manager_bug::skip_hand_over;
  auto r = first_violation("one_instance", o);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
}

TEST_CASE("singleton sim: the one_instance checker catches a planted "
          "hand_over_done trusted from any sender (S1)") {
  singleton_scenario o;
  o.bug = manager_bug::trust_any_done;
  auto r = first_violation("one_instance", o);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
}

TEST_CASE("singleton sim: the lease_alive checker catches a planted manager "
          "that ignores the lease's loss") {
  singleton_scenario o;
  o.use_lease = true;
  o.bug = manager_bug::ignore_lease_lost;
  auto r = first_violation("lease_alive", o);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
}

TEST_CASE("singleton sim: the tokens_increase checker catches a planted "
          "restart with the previous fencing token") {
  singleton_scenario o;
  o.use_lease = true;
  o.bug = manager_bug::reuse_token;
  auto r = first_violation("tokens_increase", o);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
}
