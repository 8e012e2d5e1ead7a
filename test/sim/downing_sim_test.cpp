#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "troupe/sim/downing_world.hpp"

// The split brain resolver in the membership simulation: the seed sweep
// per strategy, and one planted bug per downing checker (each must be
// caught within the CI seed budget).

using namespace troupe;
using namespace troupe::sim;
using downing::downing_bug;

namespace {

// The CI seed budget per strategy (SIM_DOWNING_SEEDS overrides it).
uint64_t seed_budget() {
  if (auto* s = std::getenv("SIM_DOWNING_SEEDS"))
    return std::strtoull(s, nullptr, 10);
  return 40;
}

// The first seed in the budget whose run violates `checker`, if any.
std::optional<scenario_result> first_violation(const std::string& checker,
                                               const downing_scenario& o) {
  return troupe::sim::first_violation(
    checker, seed_budget(),
    [&](uint64_t seed) { return run_downing_scenario(seed, o); });
}

void sweep(const std::string& strategy) {
  downing_scenario o;
  o.strategy = strategy;
  for (uint64_t seed = 0; seed < seed_budget(); ++seed) {
    auto r = run_downing_scenario(seed, o);
    if (r.failure)
      FAIL_CHECK("seed " << seed << " (" << r.nodes << " nodes): "
                         << r.failure->checker << ": " << r.failure->detail
                         << "\nreplay: membership_sim --downing " << strategy
                         << " --seed " << seed << "\n"
                         << r.trace);
  }
}

} // namespace

TEST_CASE("downing sim: keep_majority, the seed sweep holds every downing "
          "checker") {
  sweep("keep_majority");
}

TEST_CASE("downing sim: lease_majority over a faulty lease, the seed sweep "
          "holds every downing checker") {
  sweep("lease_majority");
}

TEST_CASE("downing sim: the one_side checker catches a planted minority that "
          "downs the majority too") {
  downing_scenario o;
  o.bug = downing_bug::always_down_unreachable;
  auto r = first_violation("one_side", o);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
  CHECK(r->failure->detail.find("split brain") != std::string::npos);
}

TEST_CASE("downing sim: the majority_survives checker catches a planted "
          "reversed decision") {
  downing_scenario o;
  o.bug = downing_bug::reversed_decision;
  auto r = first_violation("majority_survives", o);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
}

TEST_CASE("downing sim: the majority_survives checker catches a planted lease "
          "client that reports a benign already-exists as refused (D3)") {
  downing_scenario o;
  o.strategy = "lease_majority";
  o.benign_conflict_as_refused = true;
  auto r = first_violation("majority_survives", o);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
}

TEST_CASE("downing sim: the downed_node_stops checker catches a planted node "
          "that keeps running when downed") {
  downing_scenario o;
  o.keep_running_when_downed = true;
  auto r = first_violation("downed_node_stops", o);
  REQUIRE(r);
  INFO("caught at seed " << r->seed);
}
