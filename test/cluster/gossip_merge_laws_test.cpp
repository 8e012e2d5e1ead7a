#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "gossip_generator.hpp"
#include "membership_fixtures.hpp"
#include "troupe/cluster/gossip.hpp"

// Property tests of the gossip merge laws on seeded random gossips (see
// gossip_generator.hpp). Each case is one seed: a failure prints it, and
// GOSSIP_LAWS_SEED=<n> runs only that seed.
//
// What holds (gossip.hpp, `merge`): commutativity and associativity on the
// whole gossip; idempotence on the convergent state (members,
// reachability, version, tombstones), because Akka's merge empties the
// seen set.

using namespace troupe::cluster;
using membership_test::gossip_history;

namespace {

constexpr int cases = 1000;
constexpr int steps = 60;

/// The seeds to run: 1..cases, or only GOSSIP_LAWS_SEED.
std::vector<uint64_t> seeds() {
  if (auto env = std::getenv("GOSSIP_LAWS_SEED"))
    return {std::stoull(env)};
  std::vector<uint64_t> result;
  for (uint64_t seed = 1; seed <= cases; ++seed)
    result.push_back(seed);
  return result;
}

gossip_history history(uint64_t seed) {
  gossip_history h{seed};
  h.run(steps);
  return h;
}

/// Runs `check` on the history of every seed; the first failure, prefixed
/// with its seed, or none.
template <class Check>
std::optional<std::string> first_failure(Check check) {
  for (auto seed : seeds()) {
    auto h = history(seed);
    if (auto failure = check(h))
      return "seed " + std::to_string(seed) + ": " + *failure;
  }
  return std::nullopt;
}

/// "<what>:\n<x>\n<what else>:\n<y>".
std::string show(const std::string& x_name, const gossip& x,
                 const std::string& y_name, const gossip& y) {
  return x_name + ":\n" + to_string(x) + "\n" + y_name + ":\n" + to_string(y);
}

} // namespace

TEST_CASE("gossip merge laws: every generated gossip satisfies the "
          "invariants (1000 seeded histories)") {
  for (auto seed : seeds()) {
    gossip_history h{seed};
    for (int i = 0; i < steps; ++i) {
      h.step();
      for (const auto& r : h.replicas()) {
        auto violation = check_invariants(r.state);
        if (violation) {
          FAIL_CHECK("seed " << seed << ", step " << i << ", replica "
                             << to_string(r.self) << ": " << *violation << "\n"
                             << to_string(r.state));
          return;
        }
      }
    }
  }
}

TEST_CASE("gossip merge laws: merge is commutative on the whole gossip "
          "(1000 seeded cases)") {
  auto failure = first_failure([](gossip_history& h) {
    const auto& x = h.pick();
    const auto& y = h.pick();
    auto xy = merge(x, y);
    auto yx = merge(y, x);
    return xy == yx ? std::nullopt
                    : std::optional{show("merge(x, y)", xy, "merge(y, x)", yx)};
  });
  if (failure)
    FAIL(*failure);
}

TEST_CASE("gossip merge laws: merge is associative on the whole gossip "
          "(1000 seeded cases)") {
  auto failure = first_failure([](gossip_history& h) {
    const auto& x = h.pick();
    const auto& y = h.pick();
    const auto& z = h.pick();
    auto left = merge(merge(x, y), z);
    auto right = merge(x, merge(y, z));
    return left == right
             ? std::nullopt
             : std::optional{show("(x + y) + z", left, "x + (y + z)", right)};
  });
  if (failure)
    FAIL(*failure);
}

TEST_CASE("gossip merge laws: merge is idempotent on the convergent state "
          "and empties the seen set (1000 seeded cases)") {
  bool some_seen = false;
  auto failure = first_failure([&](gossip_history& h) {
    const auto& x = h.pick();
    auto xx = merge(x, x);
    some_seen = some_seen || !x.seen_by().empty();
    bool ok = same_convergent_state(xx, x) && xx.seen_by().empty();
    return ok ? std::nullopt : std::optional{show("x", x, "merge(x, x)", xx)};
  });
  if (failure)
    FAIL(*failure);
  // The exception is real: generated gossips do have seen sets.
  CHECK(some_seen);
}

TEST_CASE("gossip merge laws: check_merge_laws finds no violation on "
          "generated triples (1000 seeded cases)") {
  auto failure = first_failure([](gossip_history& h) {
    const auto& a = h.pick();
    const auto& b = h.pick();
    const auto& c = h.pick();
    return check_merge_laws(a, b, c);
  });
  if (failure)
    FAIL(*failure);
}

TEST_CASE("gossip merge laws: the generator covers the interesting "
          "states") {
  // Counts over all seeds, so that a generator change that stops producing
  // removals, concurrent versions or unreachability is noticed.
  int tombstones = 0;
  int unreachable = 0;
  int concurrent = 0;
  int statuses[7] = {};
  for (auto seed : seeds()) {
    auto h = history(seed);
    const auto& x = h.pick();
    const auto& y = h.pick();
    tombstones += x.tombstones().empty() ? 0 : 1;
    unreachable += x.reachability().all_unreachable().empty() ? 0 : 1;
    concurrent += compare(x.version(), y.version()) == clock_order::concurrent;
    for (const auto& m : x.members())
      ++statuses[static_cast<int>(m.status)];
  }
  if (std::getenv("GOSSIP_LAWS_SEED"))
    return;
  INFO("tombstones " << tombstones << ", unreachable " << unreachable
                     << ", concurrent " << concurrent);
  CHECK(tombstones > 50);
  CHECK(unreachable > 50);
  CHECK(concurrent > 50);
  for (int s = 0; s < 6; ++s) {
    INFO("status " << to_string(static_cast<member_status>(s)));
    CHECK(statuses[s] > 20);
  }
}

TEST_CASE("gossip merge laws: check_merge_laws reports a violation in "
          "words") {
  // A gossip that breaks an invariant (reachability about a non-member)
  // is not a fixed point of merge: reported as an idempotence violation.
  auto good = membership_test::make_gossip("a:up:1 b:up:2");
  auto bad = membership_test::make_gossip("a:up:1", "", "a>x");
  auto violation = check_merge_laws(good, bad, good);
  REQUIRE(violation);
  CHECK(violation->rfind("idempotence merge(b, b) == b violated in the "
                         "reachability",
                         0)
        == 0);
}
