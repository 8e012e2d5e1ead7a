#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "troupe/sim/rolling_update.hpp"

// A rolling update of three nodes from app_version 1 to 2 in the
// simulator (rolling_update.hpp): with the app_version preference the
// singleton (here the shard coordinator) moves once, to the first new
// node, and every allocation after that node is up goes to a new node;
// the control run, where the new nodes cannot be told apart from the old,
// shows the instance moving once per replaced node and shards allocated to
// old nodes.

using namespace troupe::sim;

namespace {

rolling_update_result run(uint64_t seed, rolling_update_options o) {
  o.trace = false;
  auto r = run_rolling_update(seed, o);
  if (r.failure) {
    o.trace = true;
    r = run_rolling_update(seed, o);
  }
  return r;
}

std::string hosts(const rolling_update_result& r) {
  std::string out;
  for (auto h : r.instance_hosts)
    out += std::to_string(h) + " ";
  return out;
}

} // namespace

TEST_CASE("rolling update sim: 3 nodes v1 to v2 one at a time, the singleton "
          "moves once to the first v2 node and new shards land on v2 nodes "
          "only") {
  for (bool lease : {false, true})
    for (uint64_t seed = 0; seed < 10; ++seed) {
      rolling_update_options o;
      o.use_lease = lease;
      auto r = run(seed, o);
      INFO("seed " << seed << (lease ? " with a lease" : "") << ", instance "
                   << "hosts " << hosts(r));
      if (r.failure)
        FAIL_CHECK(r.failure->checker << ": " << r.failure->detail << "\n"
                                      << r.trace);
      CHECK(r.singleton_moves == 1);
      REQUIRE(r.instance_hosts.size() >= 2);
      REQUIRE_FALSE(r.replaced.empty());
      CHECK(r.instance_hosts.front() == r.replaced.front()); // the oldest
      CHECK(r.instance_hosts.back() == 3); // the first v2 node
      CHECK(r.allocations_after_new_up > 0);
      CHECK(r.old_allocations_after_new_up == 0);
      CHECK(r.shards_on_old_nodes == 0);
      CHECK(r.shards_with_home > 0);
      CHECK(r.acks > 1000);
      if (seed == 0)
        WARN("seed 0" << (lease ? " with a lease" : "") << ": "
                      << r.allocations_after_new_up
                      << " allocations after the first v2 node was up, "
                      << r.shards_with_home
                      << " shards with a home at the end, " << r.acks
                      << " messages handled");
    }
}

TEST_CASE("rolling update sim: without the app_version the same update moves "
          "the singleton once per replaced node and allocates shards to old "
          "nodes") {
  rolling_update_options o;
  o.new_version = false;
  for (uint64_t seed = 0; seed < 3; ++seed) {
    auto r = run(seed, o);
    INFO("seed " << seed << ", instance hosts " << hosts(r));
    if (r.failure)
      FAIL_CHECK(r.failure->checker << ": " << r.failure->detail << "\n"
                                    << r.trace);
    // from the oldest old node to the next, to the last, to the first new
    auto expected = r.replaced;
    expected.push_back(3);
    CHECK(r.singleton_moves == 3);
    CHECK(r.instance_hosts == expected);
    CHECK(r.old_allocations_after_new_up > 0);
    if (seed == 0)
      WARN("seed 0 without versions: " << r.old_allocations_after_new_up
                                       << " of " << r.allocations_after_new_up
                                       << " allocations after the first new "
                                       << "node was up went to old nodes");
  }
}
