#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "troupe/chaos/nemesis_ops.hpp"
#include "troupe/chaos/nemesis_rules.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The chaos test's nemesis schedule (issue 10, docs/design/chaos.md): from a
/// seed, a duration, the node names, the cluster's timing and the enabled
/// fault kinds, a deterministic list of steps (kill -9 and restart, SIGSTOP
/// and SIGCONT, partitions and heals, etcd stopped and slow, the singleton's
/// lease record deleted) that the driver carries out. Pure: no clock, no I/O;
/// the same inputs give the same schedule on every run.

namespace troupe::chaos {

/// "node-1" ... "node-n".
std::vector<std::string> default_nodes(size_t n = 5);

/// The inputs of a schedule.
struct nemesis_inputs {
  uint64_t seed = 1;
  /// Every fault starts and ends within [0, duration].
  std::chrono::milliseconds duration{std::chrono::minutes{2}};
  std::vector<std::string> nodes = default_nodes();
  nemesis_timing timing;
  std::vector<fault_kind> kinds = all_fault_kinds();
  /// The chance (in percent, 0..100) that the next fault starts while the
  /// previous one is still held instead of after a quiet gap.
  uint32_t overlap_percent = 25;
};

/// A schedule: the inputs that made it and the steps, ordered by `at`
/// (at equal offsets, a fault's end before another's start).
struct nemesis_schedule {
  uint64_t seed = 0;
  std::chrono::milliseconds duration{0};
  std::vector<std::string> nodes;
  nemesis_rules rules;
  std::vector<nemesis_step> steps;
};

/// Makes the schedule of `in`. Faults are drawn from a shuffled bag of the
/// enabled kinds (every kind once per round, as long as it still fits in
/// the duration), each with its hold from `rules_of(in.timing)`, targets
/// drawn among the nodes that are neither faulty nor recovering. Rules:
/// - at most `minority_of(nodes)` nodes are faulty (killed, paused, or on a
///   partition's minority side) at once, counting a node as faulty until
///   `recovery` after its fault ended; the exception is a
///   majority_restart, which kills `majority_of(nodes)` to nodes - 1 of
///   them together, starts only when every node is free and keeps every
///   node busy until `recovery` after its restart;
/// - a slow_restart's slow links never overlap a partition;
/// - one etcd fault (etcd_stop, etcd_slow, lease_delete) at a time, the
///   next at least `recovery` after the previous one ended;
/// - after each fault, with probability overlap_percent the next starts
///   during it (so etcd faults sometimes overlap node faults), otherwise
///   after every running fault has ended plus a quiet gap; a fault that
///   starts when none runs (it waited for capacity) starts at least
///   `recovery` after the last one ended.
/// Randomness: std::mt19937_64 seeded with `seed` and an unbiased integer
/// mapping of its own (the standard distributions are implementation-
/// defined), so a seed replays the same schedule everywhere.
/// Errors (runtime errc::bad_config_value, naming the input): no nodes, an
/// empty or duplicate node name, no fault kinds, node faults with fewer
/// than 3 nodes (no minority to fault), bad timing (`rules_of`),
/// overlap_percent > 100, or a duration shorter than `least_duration`.
runtime::expected<nemesis_schedule> make_schedule(const nemesis_inputs& in);

/// A header (seed, nodes, duration, the rules) and one line per step.
std::string render(const nemesis_schedule& schedule);

} // namespace troupe::chaos
