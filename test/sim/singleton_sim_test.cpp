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

TEST_CASE("singleton sim: each checker catches its planted manager bug within "
          "the bug budget") {
  struct planted {
    manager_bug bug;
    bool use_lease;
    const char* checker;
  };
  // skip_hand_over: a new oldest that does not wait for the older ones;
  // trust_any_done: hand_over_done trusted from any sender (S1);
  // ignore_lease_lost: the instance outlives its lease; reuse_token: a
  // restart with the previous fencing token.
  auto p
    = GENERATE(planted{manager_bug::skip_hand_over, false, "one_instance"},
               planted{manager_bug::trust_any_done, false, "one_instance"},
               planted{manager_bug::ignore_lease_lost, true, "lease_alive"},
               planted{manager_bug::reuse_token, true, "tokens_increase"});
  singleton_scenario o;
  o.bug = p.bug;
  o.use_lease = p.use_lease;
  auto r = first_violation(p.checker, o);
  INFO(p.checker << " for bug " << static_cast<int>(p.bug));
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
  CHECK(r->failure->checker == p.checker);
}
