#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/error.hpp"

/// @file
/// The chaos test's nemesis schedule (issue 10, docs/design/chaos.md): from a
/// seed, a duration, the node names, the cluster's timing and the enabled
/// fault kinds, a deterministic list of steps (kill -9 and restart, SIGSTOP
/// and SIGCONT, partitions and heals, etcd stopped and slow, the singleton's
/// lease record deleted) that the driver carries out. Pure: no clock, no I/O;
/// the same inputs give the same schedule on every run.

namespace troupe::chaos {

/// A kind of fault the nemesis can inject.
enum class fault_kind : uint8_t {
  /// kill -9 of one node, then a restart (a new process, a new uid).
  kill,
  /// SIGSTOP of one node, then SIGCONT.
  pause,
  /// A minority (1 or 2 of 5) cut from the rest in both directions, healed.
  partition_symmetric,
  /// Packets from one side to the other dropped, the reverse delivered:
  /// the minority to the rest or the rest to the minority; healed.
  partition_asymmetric,
  /// etcd stopped, then started again.
  etcd_stop,
  /// etcd's answers delayed (a delay proxy in front of it), then fast.
  etcd_slow,
  /// The singleton's lease key deleted behind its holder's back.
  lease_delete,
};

/// "kill", "pause", "partition_symmetric", "partition_asymmetric",
/// "etcd_stop", "etcd_slow", "lease_delete".
const char* to_string(fault_kind x) noexcept;

/// Every fault kind, in declaration order.
std::vector<fault_kind> all_fault_kinds();

/// Parses a comma-separated list of fault kind names (see `to_string`;
/// "all" stands for every kind; duplicates count once). An empty list or an
/// unknown name is runtime errc::bad_config_value naming it, e.g.
/// `nemesis faults: unknown fault kind "partition" (known: kill, ...)`.
runtime::expected<std::vector<fault_kind>>
parse_fault_kinds(std::string_view csv);

/// One operation of the schedule. Each is an op of the driver's log
/// (docs/design/chaos.md, `nemesis.jsonl`); `restart` is logged as
/// `node_start`.
enum class nemesis_op : uint8_t {
  kill,
  restart,
  pause,
  resume,
  partition,
  heal,
  etcd_stop,
  etcd_start,
  etcd_slow,
  etcd_fast,
  lease_delete,
};

/// The op's name as in the log: "kill", "restart", "pause", ...
const char* to_string(nemesis_op x) noexcept;

/// The shape of a partition.
enum class partition_kind : uint8_t {
  /// Neither side reaches the other.
  symmetric,
  /// Packets from `nodes` to `to` are dropped; `to` to `nodes` delivered.
  asymmetric,
};

/// "symmetric" or "asymmetric".
const char* to_string(partition_kind x) noexcept;

/// One step: at `at` after the nemesis starts, do `op`.
///
/// - kill, restart, pause, resume: `nodes` holds the one node.
/// - partition: `nodes` is the `from` side, `to` the other, `partition` the
///   shape, `id` the partition's number (from 1, unique in the schedule).
/// - heal: `id` names the partition to heal.
/// - etcd_slow: `delay` is the delay added to each chunk of etcd's traffic
///   in each direction.
/// - etcd_stop, etcd_start, etcd_fast, lease_delete: no parameters (the
///   lease key is the driver's to know).
///
/// `fault` numbers the fault (from 1) the step belongs to: a fault's start
/// and end steps (kill and restart, ...) share it; lease_delete is a fault
/// of one step.
struct nemesis_step {
  std::chrono::milliseconds at{0};
  nemesis_op op = nemesis_op::kill;
  std::vector<std::string> nodes;
  std::vector<std::string> to;
  partition_kind partition = partition_kind::symmetric;
  uint32_t id = 0;
  std::chrono::milliseconds delay{0};
  uint32_t fault = 0;

  friend bool operator==(const nemesis_step&, const nemesis_step&) = default;
};

/// The cluster's timing that decides how long a fault must last to matter
/// and how long the cluster needs to recover. Defaults are the demo's
/// shortened timing (apps/demo/demo_timing.hpp).
struct nemesis_timing {
  /// cluster.failure_detector.*: the failure detection time follows from
  /// them (phi accrual, a steady history of heartbeat_interval).
  std::chrono::milliseconds heartbeat_interval{200};
  std::chrono::milliseconds acceptable_heartbeat_pause{1000};
  std::chrono::milliseconds min_std_deviation{100};
  double threshold = 8.0;
  /// downing.stable_after and down_all_when_unstable.
  std::chrono::milliseconds stable_after{2000};
  std::chrono::milliseconds down_all_when_unstable{1500};
  /// lease.ttl.
  std::chrono::milliseconds lease_ttl{3000};
  /// Added to every least hold and to the recovery gap: the time a process
  /// needs beyond the protocol's floor (scheduling, a retry, a join).
  std::chrono::milliseconds slack{1000};
  /// etcd_slow's delay is drawn from [etcd_delay_min, etcd_delay_max].
  std::chrono::milliseconds etcd_delay_min{100};
  std::chrono::milliseconds etcd_delay_max{1500};
};

/// The least and the most time from a fault's start to its end.
struct hold_range {
  std::chrono::milliseconds min{0};
  std::chrono::milliseconds max{0};
};

/// What follows from a `nemesis_timing` (all rounded up to whole ms).
struct nemesis_rules {
  /// Failure detection: the time after the last heartbeat at which phi
  /// reaches the threshold (cluster::detection_time).
  std::chrono::milliseconds detection{0};
  /// detection + stable_after: the earliest the resolver downs a node.
  std::chrono::milliseconds downed{0};
  /// stable_after + down_all_when_unstable: sharding's removal margin.
  std::chrono::milliseconds removal_margin{0};
  /// downed + removal_margin + lease_ttl + slack: the least quiet gap after
  /// the faults end (a downed node restarted and joined, shards and the
  /// singleton started elsewhere under a fresh lease); also the first
  /// fault's least offset. Gaps are drawn from [recovery, 1.5 recovery].
  std::chrono::milliseconds recovery{0};
  /// The holds, per kind:
  /// - kill: [detection, 2 downed + slack] (restarted before or after the
  ///   resolver downs the old incarnation);
  /// - pause: [p, 2p], p = max(downed, lease_ttl) + slack (the frozen node
  ///   is downed and its lease expired when it resumes);
  /// - partitions: [p, 2p], p = downed + slack (the minority is downed);
  /// - etcd_stop, etcd_slow: [e, 2e], e = lease_ttl + slack (renewals fail
  ///   or lag for a whole ttl);
  /// - lease_delete: [0, 0] (one step).
  hold_range kill, pause, partition, etcd;

  /// The hold range of `kind`.
  hold_range hold(fault_kind kind) const noexcept;
};

/// The rules of `t`; a non-positive duration (slack and etcd_delay_min may
/// be 0), threshold <= 0 or etcd_delay_min > etcd_delay_max is runtime
/// errc::bad_config_value naming the field and its value.
runtime::expected<nemesis_rules> rules_of(const nemesis_timing& t);

/// "node-1" ... "node-n".
std::vector<std::string> default_nodes(size_t n = 5);

/// The most nodes that may be faulty at once: a minority, (n - 1) / 2
/// (2 of 5, 1 of 3, 0 of 2).
size_t minority_of(size_t nodes) noexcept;

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
///   `recovery` after its fault ended;
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

/// The least duration that fits one fault of the enabled kinds: the longest
/// quiet start (1.5 recovery) + the longest least hold among `kinds`.
std::chrono::milliseconds least_duration(const nemesis_rules& rules,
                                         const std::vector<fault_kind>& kinds);

/// One line, e.g. `+12.345s partition #2 asymmetric {node-1} -> {node-2,
/// node-3,node-4,node-5} (fault 3)`.
std::string render(const nemesis_step& step);

/// A header (seed, nodes, duration, the rules) and one line per step.
std::string render(const nemesis_schedule& schedule);

} // namespace troupe::chaos
