#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "troupe/sim/membership_world.hpp"

// Golden interaction files: the whole exchange (messages but heartbeats,
// decisions, events) of the join, leave, down, unreachable and reachable
// paths of a fixed seed, compared line by line with test/sim/golden/*.txt.
// A change of the protocol shows up as a diff to review; regenerate with
// UPDATE_GOLDEN=1 after reviewing it.

using namespace std::chrono_literals;
using namespace troupe::sim;

namespace {

std::string golden_path(const std::string& name) {
  return std::string{TROUPE_GOLDEN_DIR} + "/" + name + ".txt";
}

void check_golden(const std::string& name, const membership_world& w) {
  REQUIRE(!w.failure());
  auto actual = w.log().render();
  auto path = golden_path(name);
  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    std::ofstream{path} << actual;
    WARN("rewrote " << path);
    return;
  }
  std::ifstream in{path};
  REQUIRE(in.good());
  std::stringstream expected;
  expected << in.rdbuf();
  // Report the first differing line rather than two whole files.
  std::istringstream a{actual};
  std::istringstream e{expected.str()};
  std::string la;
  std::string le;
  for (int line = 1;; ++line) {
    bool more_a = static_cast<bool>(std::getline(a, la));
    bool more_e = static_cast<bool>(std::getline(e, le));
    if (!more_a && !more_e)
      break;
    INFO(path << " line " << line);
    REQUIRE(la == le);
    if (!more_a || !more_e)
      FAIL("different lengths");
  }
}

world_settings golden_settings() {
  world_settings s;
  s.trace_lines = 100000;
  s.drift = 0.0;
  return s;
}

// Three nodes joined and converged.
void join_three(membership_world& w) {
  for (int i = 0; i < 3; ++i)
    w.add_node();
  for (size_t i = 0; i < 3; ++i)
    w.start(i, {0, 1});
  REQUIRE(w.run_until(60s, [&] { return w.converged(3); }));
}

} // namespace

TEST_CASE("membership golden: three nodes join through two seeds") {
  membership_world w{101, golden_settings()};
  join_three(w);
  check_golden("join", w);
}

TEST_CASE("membership golden: a member leaves, exits and is removed") {
  membership_world w{102, golden_settings()};
  join_three(w);
  w.leave(0, 2);
  REQUIRE(w.run_until(w.sched().now() + 30s,
                      [&] { return !w.alive(2) && w.converged(2); }));
  check_golden("leave", w);
}

TEST_CASE("membership golden: a crashed member is downed and removed") {
  membership_world w{103, golden_settings()};
  join_three(w);
  w.crash(2);
  REQUIRE(w.run_until(w.sched().now() + 30s, [&] {
    return !w.engine(0).state().latest_gossip().reachability().is_reachable(
      w.address(2));
  }));
  w.down(0, 2);
  REQUIRE(w.run_until(w.sched().now() + 30s, [&] { return w.converged(2); }));
  check_golden("down", w);
}

TEST_CASE("membership golden: a partitioned member becomes unreachable, "
          "then reachable") {
  membership_world w{104, golden_settings()};
  join_three(w);
  w.partition({0, 1}, {2});
  REQUIRE(w.run_until(w.sched().now() + 30s, [&] {
    return !w.engine(0).state().latest_gossip().reachability().is_reachable(
      w.address(2));
  }));
  w.heal();
  REQUIRE(w.run_until(w.sched().now() + 30s, [&] { return w.converged(3); }));
  check_golden("unreachable_reachable", w);
}
