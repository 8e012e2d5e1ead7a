#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "chaos_check_result.hpp"
#include "chaos_history.hpp"

/// @file
/// The instances the history files show (singleton instances, entity
/// incarnations), what the nemesis did to their processes, and the two
/// interval checks of I1 and I2: acting intervals and lifetimes. The rules
/// and their reasons are in chaos_checker.hpp's file comment. Pure; the
/// values point into the `chaos_history` they were made from, which must
/// outlive them.

namespace troupe::chaos {

/// A history file's process and what the nemesis did to it.
struct process_record {
  const history_file* file = nullptr;
  /// The nemesis' node_start with the file's node and start number (its
  /// `pid` names the process); nullptr if the log has none.
  const nemesis_event* node_start = nullptr;
  /// The pause, kill and node_exit lines for that node and pid, in time
  /// order: the events that end a stretch of the process' running (see
  /// chaos_checker.hpp).
  std::vector<const nemesis_event*> interruptions;
};

/// One process record per history file (same order). A file without a
/// node_start in the nemesis' log is a problem (`history/<file>: no
/// node_start ...`); its process then counts as never interrupted. So are a
/// node_start without its history file (`nemesis.jsonl line N: node_start
/// of node-1 start 2, but history/node-1.2.jsonl is missing`) and a second
/// node_start of the same node and start number (`... again (line M had
/// it)`); the file's process is then the first one's.
std::vector<process_record> match_processes(const chaos_history& h,
                                            std::vector<std::string>& problems);

/// "The end of the run" for a lifetime no event ends.
inline constexpr int64_t end_of_run = std::numeric_limits<int64_t>::max();

/// One singleton instance or entity incarnation of one process.
struct instance {
  const process_record* process = nullptr;
  /// What two instances must not share: the singleton type, the account or
  /// the shard ("shard 7").
  std::string group;
  /// Instances of the same owner may overlap: the writer id
  /// `<address>/<incarnation>`, or for the shard view the address (one
  /// process hosts many entities of a shard at once).
  std::string owner;
  const node_event* started = nullptr;
  /// Its singleton_stopped or entity_stopped; nullptr if none.
  const node_event* stopped = nullptr;
  /// Its guarded side effects (ledger_write, deposit_write), in order.
  std::vector<const node_event*> writes;

  const history_file& file() const noexcept {
    return *process->file;
  }

  /// The acting interval's end: the last write's stamp, else the start's.
  int64_t acting_end() const noexcept;
};

/// A write stamped by a process that names no started instance, or after
/// its instance stopped.
struct stray_write {
  const process_record* process = nullptr;
  const node_event* write = nullptr;
  /// The instance's stop it came after; nullptr: no instance started.
  const node_event* after_stop = nullptr;
};

/// Every instance of a run.
struct run_instances {
  /// Group: the singleton type.
  std::vector<instance> singletons;
  /// Group: the account.
  std::vector<instance> entities;
  std::vector<stray_write> strays;
};

/// The instances of `processes`' files. A stop or write belongs to the
/// latest instance its file started before it with the same incarnation
/// and type (singleton_stopped), incarnation and token (ledger_write, which
/// names no type), or account and incarnation (entity events); a write that
/// finds none is a stray.
run_instances collect_instances(const std::vector<process_record>& processes);

/// The shard view of entity incarnations: group `shard <id>`, owner the
/// address.
std::vector<instance> by_shard(const std::vector<instance>& entities);

/// How a check words its instances, e.g. {"I1(c) singleton acting
/// intervals", "singleton instance", "singleton instances", "type",
/// "types", "two instances of {} acting"} (`overlap`: a format string for
/// the group).
struct interval_words {
  std::string check;
  std::string one;
  std::string many;
  std::string group_one;
  std::string group_many;
  std::string overlap;
};

/// Acting intervals (I1(c), I2): within a group, no two instances of
/// different owners have overlapping [started, last write]. Each violation
/// names the earlier instance's first write stamped at or after the later
/// one's start.
check_result check_acting(const std::vector<instance>& xs,
                          const interval_words& words);

/// Lifetimes (I1(d), I2): within a group, no instance of another owner
/// starts inside an instance's uninterrupted lifetime (see
/// `uninterrupted_end`). Each violation names the later start.
check_result check_lifetimes(const std::vector<instance>& xs,
                             const interval_words& words);

/// Where an instance's uninterrupted lifetime ends and why.
struct lifetime_end {
  /// `end_of_run` when nothing ends it.
  int64_t mono_ns = end_of_run;
  /// E.g. "its singleton_stopped (line 9)", "a pause (nemesis.jsonl line
  /// 5)", "the end of the run".
  std::string why;
  /// True when a pause, kill or node_exit ends it (not its stop or the end
  /// of the run).
  bool interrupted = false;
};

/// The first of: its stop, and the first pause, kill or node_exit of its
/// process at or after its start.
lifetime_end uninterrupted_end(const instance& x);

} // namespace troupe::chaos
