#pragma once

// Seeded random gossips for property tests: the states that the replicas
// of a small random cluster pass through.
//
// A history starts with one node that joined itself and applies random
// steps: joins (a new node gets a copy of the gossip of the node it joined
// through), leader actions, forced status moves and removals (as
// concurrent leaders would make them), reachability observations by a
// node about another, and gossip exchanges that follow Akka's receive
// rules (same version: union of seen sets; older or newer: keep the newer;
// concurrent: merge). Every local change is versioned at the changing node
// and seen only by it. Each step also drops one replica state into a pool,
// so that tests can pick gossips of different ages.

#include <cstdint>
#include <random>
#include <vector>

#include "troupe/cluster/gossip.hpp"

namespace membership_test {

class gossip_history {
public:
  struct replica {
    troupe::cluster::unique_address self;
    troupe::cluster::gossip state;
  };

  explicit gossip_history(uint64_t seed);

  /// Applies `steps` random steps.
  void run(int steps);

  /// Applies one random step.
  void step();

  const std::vector<replica>& replicas() const noexcept {
    return replicas_;
  }

  /// Replica states collected so far (one per step).
  const std::vector<troupe::cluster::gossip>& pool() const noexcept {
    return pool_;
  }

  /// A random gossip from the pool.
  const troupe::cluster::gossip& pick();

private:
  size_t random_index(size_t n);
  replica* random_acting_replica();
  void stamp(replica& r);
  void join();
  void leader_step();
  void forced_move();
  void observe();
  void exchange();

  std::mt19937_64 rng_;
  std::vector<replica> replicas_;
  std::vector<troupe::cluster::gossip> pool_;
  troupe::cluster::wall_time now_;
  uint64_t next_uid_ = 1;
};

} // namespace membership_test
