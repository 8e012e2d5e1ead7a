#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/error.hpp"

/// @file
/// The vocabulary of the chaos test's nemesis (issue 10): the fault kinds it
/// injects, the operations of its schedule and of the driver's log
/// (docs/design/chaos.md, `nemesis.jsonl`), one step of a schedule. Pure.

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
  /// kill -9 of a majority of the seed nodes at once (the driver lists
  /// every node as a seed: a majority of the nodes, n / 2 + 1 to n - 1),
  /// then their restart together while the others run (issue 24).
  majority_restart,
  /// kill -9 of one node and its restart behind slow links: every link
  /// between it and the other nodes delayed (both directions) from the
  /// kill until a while after the restart (issue 24: a restarting seed
  /// whose links are slow).
  slow_restart,
};

/// "kill", "pause", "partition_symmetric", "partition_asymmetric",
/// "etcd_stop", "etcd_slow", "lease_delete", "majority_restart",
/// "slow_restart".
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
enum class step_op : uint8_t {
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
  links_slow,
  links_fast,
};

/// The op's name as in the log: "kill", "restart", "pause", ...
const char* to_string(step_op x) noexcept;

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
/// - kill, restart, pause, resume: `nodes` holds the one node; a
///   majority_restart's kill and restart hold every node it restarts
///   (killed together, restarted together).
/// - links_slow: `nodes` holds the one node whose links to every other
///   node get `delay` added, in each direction; links_fast: that node,
///   whose links are fast again.
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
/// of one step; a slow_restart has four (kill, links_slow at once, then
/// restart, then links_fast).
struct nemesis_step {
  std::chrono::milliseconds at{0};
  step_op op = step_op::kill;
  std::vector<std::string> nodes;
  std::vector<std::string> to;
  partition_kind partition = partition_kind::symmetric;
  uint32_t id = 0;
  std::chrono::milliseconds delay{0};
  uint32_t fault = 0;
  /// The kind of that fault.
  fault_kind kind = fault_kind::kill;

  friend bool operator==(const nemesis_step&, const nemesis_step&) = default;
};

/// True for the kinds that fault nodes (kill, pause, partitions,
/// majority_restart, slow_restart), as opposed to etcd's (etcd_stop,
/// etcd_slow, lease_delete).
bool is_node_fault(fault_kind k) noexcept;

/// True for the ops that end a fault or a part of one (restart, resume,
/// heal, etcd_start, etcd_fast, links_fast).
bool ends_fault(step_op op) noexcept;

/// An offset as seconds with milliseconds, e.g. "12.345s", "-0.500s".
std::string render_offset(std::chrono::milliseconds d);

/// One line, e.g. `+12.345s partition #2 asymmetric {node-1} -> {node-2,
/// node-3,node-4,node-5} (fault 3)`, `+40.000s links_slow node-2 1200ms
/// (fault 5)`.
std::string render(const nemesis_step& step);

namespace detail {

/// A bad input of the nemesis: runtime errc::bad_config_value, the message
/// prefixed "nemesis: ".
runtime::error nemesis_input_error(std::string what);

} // namespace detail

} // namespace troupe::chaos
