#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "chaos_history.hpp"
#include "verdict/verdict_core.hpp"

/// @file
/// The chaos run's verdict (/work/chaos-spec.md, "Checks"; the invariants
/// I1-I4 of scenarios/README.md): the run directory's files in, one report
/// out, each check PASS or FAIL with its first offending lines named
/// (`<file> line N: ...`). The demo verdict (verdict_core.hpp) is run on
/// client.log, ledger.jsonl and journal.jsonl and its checks are folded in,
/// relabelled where they serve an invariant; none of its logic is redone.
///
/// The checks, in report order:
/// - `history records`: every line of the history files and nemesis.jsonl
///   parses (a cut last line of a history file is ignored and counted),
///   every history file has its node_start in nemesis.jsonl and every
///   node_start its history file, no node and start number has two
///   node_starts, every journal `writer` is a string; `store records`: the
///   demo verdict's `records`, and no line of client.log, ledger.jsonl or
///   journal.jsonl has a stamp of 0 or less.
/// - `I1(a) one owner per token`: the accepted ledger records of one token
///   all name one owner.
/// - `I1(b) fencing`: the demo verdict's (accepted tokens never decrease in
///   store order: no stale token accepted; this is also I3's "no ledger
///   record accepted with a stale token").
/// - `I1(c) singleton acting intervals`, `I1(d) singleton lifetimes`: the
///   interval rules below over singleton instances, grouped by type.
/// - `I2 entity acting intervals`, `I2 entity lifetimes`: the same over
///   entity incarnations, grouped by account; `I2 shard acting intervals`,
///   `I2 shard lifetimes`: grouped by shard, between processes only.
/// - `I2 store writers`: per account, the `writer`s of the applied journal
///   entries form runs and never return to an earlier writer (entries
///   without a writer are skipped and counted); `I2 no conflicts`: no
///   journal entry has outcome `conflict` (two incarnations wrote).
/// - `I3 guarded writes`: no ledger_write is stamped after a lease_lost or
///   lease_released of its process with its token (tokens are etcd
///   revisions, unique across leases); no write is stamped after its own
///   instance's stop, and none by a process with no started instance of
///   that incarnation.
/// - `I3 stamped store writes`: the other direction, from the store to the
///   nodes. Every accepted ledger record (owner, token, seq) has a
///   ledger_write with that token and seq in the history of the process
///   whose address is the owner, stamped no later than the store's line;
///   every applied journal entry with a `writer` (`<address>/<incarnation>`)
///   has a deposit_write of that incarnation and deposit id in that
///   address' history, stamped no later than the store's line. A record
///   without its stamp is a write that went around the guard (or a history
///   that lost lines), which `I3 guarded writes` cannot see: it only judges
///   the writes the nodes stamped. A separate check, not folded into
///   `I3 guarded writes`, because it reads the store's files and fails for
///   another reason. A history file's cut last line is a lost write: a
///   record whose stamp could be that line (the file of its address is cut
///   and its last whole line is stamped no later than the record) is not a
///   violation and is counted as unmatched because the history was cut
///   (each cut line excuses one record); with no cut file it is.
/// - `I3 acked deposits`, `I3 no phantom deposits`, `I3 balances`: the demo
///   verdict's.
/// - `I4 recovery`: nemesis.jsonl has a probe_start; after it every account
///   the client ever sent to got an acknowledged deposit that was sent at
///   or after probe_start, and the ledger accepted a record stamped at or
///   after probe_start (the singleton is back). The time from nemesis_end
///   (probe_start if none) to the last of those firsts is reported.
/// - `I4 one membership view`: in views.jsonl's last final round (taken
///   after the probe), every process nemesis.jsonl shows live answered,
///   all with one view: the same members (unique addresses) with the same
///   status, reachability and incarnation, every member up and reachable,
///   every live process a member and every member a live process. Two
///   disjoint views (two clusters) and a live node outside fail, naming
///   the nodes and their views (chaos_membership.hpp).
/// - `I4 no two clusters when quiet`: in the quiet periods (no node fault
///   active and no node event for run_start's quiet_after_ms), no round of
///   views.jsonl has live members of two clusters at once (views that
///   share no member, or whose incarnations differ).
/// - the demo verdict's other checks unchanged: `rejections`, `ledger
///   activity`, `journal sequence`, `sums`.
///
/// Interval rules (I1(c)/(d), I2). DESIGN.md §10: "at most one live
/// instance" is measured by guarded side effects stamped on the shared host
/// clock, and a frozen (SIGSTOPped) process must re-check check_alive()
/// before any side effect after it resumes. An instance is a singleton
/// start (type, address, incarnation) or an entity start (account,
/// address, incarnation) of one history file, with the stop and writes of
/// the same incarnation (and account) that follow it in that file.
/// - Acting interval: [started, last write] (ledger_write, deposit_write;
///   the start alone when it wrote nothing), closed. Two instances of one
///   group and different owners never have overlapping acting intervals,
///   whatever the nemesis did. This is the hard measure: a write is stamped
///   after its guard passed, so a write stamped after another instance
///   started means two instances acted at once; no pause excuses it.
/// - Uninterrupted lifetime: [started, E], E the first of: the instance's
///   stop; the first pause, kill or node_exit of its process at or after
///   its start; else the end of the run. The process of history file
///   `<node>.<k>.jsonl` is the pid that nemesis.jsonl's node_start with
///   that node and `start` k logged; its pause, kill and node_exit lines
///   name that node and pid. No instance of another owner of the group
///   starts within an uninterrupted lifetime.
///   Why a pause ends the lifetime: a frozen process cannot notice that its
///   lease ran out and cannot log a stop, so a successor may start
///   rightly while it is frozen or just after it resumes, before the
///   resumed instance has re-checked and stopped; from the pause on only
///   its guarded writes (the acting interval) judge it, also after a
///   resume. Why a kill or node_exit ends it: the process is gone (the
///   driver may log node_exit later, when it reaps the process).
///   Why not "excused when paused anywhere between start and stop": a
///   start of another instance before the pause met this one running,
///   unfrozen and unstopped: two live instances. A history file without a
///   node_start counts as never interrupted (the strict reading) and is a
///   `history records` problem.
/// - Owners: two instances of the same owner may overlap. For singletons
///   and entities the owner is the writer id `<address>/<incarnation>`
///   (so every other instance counts); for the shard checks it is the
///   process' address: many entities of one shard live on one process at
///   once, but a shard lives on one process at a time.
///
/// Not modelled: a lease_delete (the nemesis deleting the lease record)
/// excuses nothing; a second instance started after it is an I1 violation
/// like any other, though the store's fencing still refuses the older one.

namespace troupe::chaos {

/// A located violation: the check and its offending event.
struct offense {
  std::string check;
  event_ref at;
};

/// The numbers of the run behind the checks.
struct chaos_summary {
  /// Faults injected, by kind -> count: kill (every process killed, those
  /// of a majority_restart too), pause, `partition symmetric`, `partition
  /// asymmetric`, etcd_stop, etcd_slow, lease_delete, majority_restart,
  /// links_slow (the ops that start a fault; their ends, heal, resume,
  /// restarts, links_fast, are not counted).
  std::map<std::string, uint64_t> faults;
  /// Node processes started (the first N included) and ended (killed,
  /// downed, stopped at the end), from nemesis.jsonl.
  uint64_t node_starts = 0;
  uint64_t node_exits = 0;
  /// Guarded side effects the nodes stamped.
  uint64_t ledger_writes = 0;
  uint64_t deposit_writes = 0;
  uint64_t history_files = 0;
  /// History files whose cut last line was ignored.
  uint64_t cut_lines = 0;
  /// Distinct tokens among the accepted ledger records (I1(a)).
  uint64_t tokens = 0;
  uint64_t singleton_instances = 0;
  uint64_t entity_instances = 0;
  uint64_t accounts = 0;
  uint64_t shards = 0;
  /// Writer runs over all accounts and applied entries without a writer
  /// (I2 store writers).
  uint64_t writer_runs = 0;
  uint64_t unattributed = 0;
  /// Store records matched to the nodes' stamps (I3 stamped store writes:
  /// accepted ledger records and applied deposits with a writer), and those
  /// of them left unmatched because their writer's history was cut.
  uint64_t store_records = 0;
  uint64_t unmatched_cut = 0;
  /// Accounts the probe covered (I4).
  uint64_t probed_accounts = 0;
  /// From nemesis_end to the last first success after probe_start; nullopt
  /// when the run did not recover.
  std::optional<std::chrono::nanoseconds> recovery;
  /// views.jsonl's samples and rounds, the processes live at the final
  /// round (I4 one membership view), the rounds judged in quiet periods,
  /// the quiet periods and their time until the last sample (I4 no two
  /// clusters when quiet).
  uint64_t view_samples = 0;
  uint64_t view_rounds = 0;
  uint64_t final_live = 0;
  uint64_t quiet_rounds = 0;
  uint64_t quiet_periods = 0;
  std::chrono::nanoseconds quiet_time{0};
  /// Every violation over all checks (the checks list the first few).
  size_t violations = 0;
};

/// The chaos verdict.
struct chaos_report {
  /// Every check in the order of the file comment, with the demo
  /// verdict's totals (deposits, ledger records).
  demo::verdict::report verdict;
  chaos_summary summary;
  /// Every violation whose offending event is known, in check order.
  std::vector<offense> offenses;
  /// The parsed files (for the timeline).
  chaos_history history;

  /// True when every check passed.
  bool passed() const noexcept;

  /// The located violation with the earliest stamp (ties: check order);
  /// nullopt when none is located.
  std::optional<offense> first_offense() const;
};

/// Parses `in` and runs every check.
chaos_report check_run(const chaos_input& in);

/// The report for people: the checks as demo::verdict::render words them
/// (`PASS name: summary`, problems indented, the deposits line), then the
/// summary lines (`operations: ...`, `faults injected: ...`, `invariants
/// checked: ...`, `history: ...`, `recovery: ...`, `violations: N`), then
/// `verdict: PASS` or `verdict: FAIL (n of m checks failed)`; each line
/// ends in a newline.
std::string render(const chaos_report& r);

/// How to run the same schedule again, from nemesis.jsonl's run_start:
/// `replay the same schedule: troupe-chaos --seed 7 --nodes 2 --duration
/// 60s --dir <a new directory>` (`seed` 0: run_start's). Without a
/// run_start: `no replay: nemesis.jsonl has no run_start (the run's seed,
/// nodes and duration)`. One line, ending in a newline.
std::string render_replay(const chaos_history& h, uint64_t seed = 0);

} // namespace troupe::chaos
