#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "chaos_views.hpp"
#include "client/client_log.hpp"
#include "verdict/verdict_core.hpp"

/// @file
/// The chaos run's files as typed events (/work/chaos-spec.md, "Inputs of
/// the checker"): the nodes' history files (one per node process start),
/// the nemesis' log, and the demo's client.log, ledger.jsonl and
/// journal.jsonl with the journal's optional `writer`.
///
/// Every `mono_ns` is CLOCK_MONOTONIC in nanoseconds on the one host, so
/// stamps from different files compare directly; a stamp of 0 or less makes
/// its line malformed in every file. Line numbers are 1-based. Problems are
/// texts `<file> line N: <fault>` (`<file>` as in `file_names`, a history
/// file as `history/<node>.<start>.jsonl`); what they quote from a file
/// (values, file names) is `printable`. Pure: text in, values out; no I/O
/// (see chaos_run_dir.hpp).

namespace troupe::chaos {

/// The files' names as problems and the timeline name them.
namespace file_names {
inline constexpr std::string_view history_dir = "history/";
inline constexpr std::string_view nemesis = "nemesis.jsonl";
inline constexpr std::string_view views = "views.jsonl";
inline constexpr std::string_view client = "client.log";
inline constexpr std::string_view ledger = "ledger.jsonl";
inline constexpr std::string_view journal = "journal.jsonl";
} // namespace file_names

/// `text` fit to quote in a problem or a timeline line: a backslash as
/// `\\`, CR, LF and tab as `\r`, `\n` and `\t`, other control characters
/// (C0, DEL and UTF-8 encoded C1) and bytes that are not part of a valid
/// UTF-8 sequence as `\xNN`; other UTF-8 is kept. So a CR or an escape
/// sequence from a file shows as text and never reaches a terminal raw.
std::string printable(std::string_view text);

/// Where an event stands: a file as problems name it, its line and its
/// stamp.
struct event_ref {
  std::string file;
  size_t line = 0;
  int64_t mono_ns = 0;

  friend bool operator==(const event_ref&, const event_ref&) = default;
};

// -- node histories ----------------------------------------------------------

/// The `event` of a history line.
enum class node_event_kind : uint8_t {
  node_started,
  lease_acquired,
  lease_lost,
  lease_released,
  singleton_started,
  singleton_stopped,
  /// A guarded side effect: stamped after the singleton instance's
  /// check_alive() passed, immediately before its POST to the ledger.
  ledger_write,
  entity_started,
  entity_stopped,
  /// A guarded side effect: stamped immediately before the entity's POST
  /// of a deposit to the journal.
  deposit_write,
};

/// The event's name as in the file, e.g. "singleton_started".
const char* to_string(node_event_kind x) noexcept;

/// One line of a history file. The fields a kind does not carry stay
/// empty or 0 (which fields each kind carries: chaos-spec.md).
struct node_event {
  size_t line = 0;
  int64_t mono_ns = 0;
  node_event_kind kind = node_event_kind::node_started;
  /// The node's name ("node-3") and unique address (`host:port#uid`, a new
  /// uid per process start).
  std::string node;
  std::string address;
  /// Lease events: the lease's name; lease_lost: why.
  std::string lease;
  std::string reason;
  /// Singleton events: the singleton's type name ("scheduler").
  std::string type;
  /// The fencing token (lease, singleton and ledger_write events).
  uint64_t token = 0;
  /// Singleton and entity events: a node-local counter, unique per start
  /// of an instance within its process.
  uint64_t incarnation = 0;
  /// ledger_write: the instance's record number.
  uint64_t seq = 0;
  /// Entity events and deposit_write.
  std::string account;
  std::string shard;
  /// deposit_write: the deposit id and the seq the entity expects.
  std::string deposit;
  uint64_t expected_seq = 0;
};

/// The event's kind and fields as `name=value` words, in the file's order,
/// e.g. `singleton_started type=scheduler incarnation=2 token=7`.
std::string describe(const node_event& x);

/// One history file: the events of one node process start.
struct history_file {
  /// As in the run directory: `<node>.<start>.jsonl`.
  std::string name;
  /// From the name: "node-3" and 2 for `node-3.2.jsonl`.
  std::string node;
  uint64_t start = 0;
  /// The process' unique address (its lines' `address`).
  std::string address;
  /// The lines that parsed, in file order.
  std::vector<node_event> events;
  /// True when the last line did not parse and had no newline: the process
  /// died while writing it (ignored, counted).
  bool cut_last_line = false;

  /// `history/<name>`, as problems name the file.
  std::string path() const;

  /// Where `e` (one of `events`) stands.
  event_ref ref(const node_event& e) const;
};

/// Parses one history file named `name` (`<node>.<start>.jsonl`).
/// Malformed lines go to `problems` (a cut last line does not, see
/// `history_file::cut_last_line`), as do a line whose `node` is not the
/// file's node, an `address` that changes within the file and a first line
/// that is not node_started. A name of another shape is one problem and
/// yields a file without events.
history_file parse_history_file(std::string_view name, std::string_view text,
                                std::vector<std::string>& problems);

// -- the nemesis' log --------------------------------------------------------

/// The `op` of a nemesis.jsonl line.
enum class nemesis_op : uint8_t {
  run_start,
  node_start,
  /// kill -9.
  kill,
  node_exit,
  /// SIGSTOP.
  pause,
  /// SIGCONT.
  resume,
  partition,
  heal,
  etcd_stop,
  etcd_start,
  etcd_slow,
  etcd_fast,
  lease_delete,
  /// The client load runs; faults start.
  nemesis_start,
  /// No more faults; settle starts.
  nemesis_end,
  /// The convergence probe starts.
  probe_start,
  run_end,
  /// The store process ended (`status`).
  store_exit,
  /// The kills that follow at once restart a majority together (`nodes`).
  majority_restart,
  /// Every link between `node` and the other nodes delayed by `delay_ms`
  /// both ways (`mechanism` says how).
  links_slow,
  /// `node`'s links fast again.
  links_fast,
};

/// The op's name as in the file, e.g. "node_start".
const char* to_string(nemesis_op x) noexcept;

/// One nemesis.jsonl line; the fields an op does not carry stay empty or 0.
struct nemesis_event {
  size_t line = 0;
  int64_t mono_ns = 0;
  nemesis_op op = nemesis_op::run_start;
  /// node_start, kill, node_exit, pause, resume, links_slow, links_fast.
  std::string node;
  int64_t pid = 0;
  /// node_start: the node's start number k (its history file is
  /// `<node>.<k>.jsonl`).
  uint64_t start = 0;
  /// node_exit, store_exit: how the process ended, as the driver words it.
  std::string status;
  /// partition and heal (heal id 0: heal all).
  uint64_t id = 0;
  /// partition: "symmetric" or "asymmetric" (packets from `from` to `to`
  /// dropped only), the node names and (also links_slow) "netns" or
  /// "transport".
  std::string direction;
  std::vector<std::string> from;
  std::vector<std::string> to;
  std::string mechanism;
  /// etcd_slow, links_slow.
  uint64_t delay_ms = 0;
  /// majority_restart: the nodes it kills.
  std::vector<std::string> nodes_list;
  /// lease_delete.
  std::string key;
  /// run_start (its `settings` object is not read).
  uint64_t seed = 0;
  uint64_t nodes = 0;
  /// run_start: how long the nemesis runs, seconds (for a replay).
  uint64_t duration_s = 0;
  /// run_start: how long membership takes to settle after a node fault
  /// ends or a node starts or ends (the schedule's `quiet_after`); I4's
  /// quiet periods start this long after such an event.
  uint64_t quiet_after_ms = 0;
};

/// The op and its fields as `name=value` words, e.g. `kill node=node-3
/// pid=4242` (lists as `[a,b]`).
std::string describe(const nemesis_event& x);

/// Parses nemesis.jsonl; malformed lines (an unknown op, a field missing or
/// of the wrong type) go to `problems`.
std::vector<nemesis_event> parse_nemesis(std::string_view text,
                                         std::vector<std::string>& problems);

// -- the demo's files --------------------------------------------------------

/// One client.log line with its line number (client_log.hpp's format).
struct client_record {
  size_t line = 0;
  demo::client::client_event event;
};

/// Parses journal.jsonl's optional `writer` (`<address>/<incarnation>`, the
/// writer id of the entity incarnation that sent the deposit): line number
/// -> writer, for the lines that have one. A `writer` that is not a string
/// goes to `problems`; lines that do not parse are skipped (the demo
/// verdict's `records` check names them).
std::map<size_t, std::string>
parse_journal_writers(std::string_view text,
                      std::vector<std::string>& problems);

// -- one run -----------------------------------------------------------------

/// The contents of a run directory's files (a missing file is an empty
/// text).
struct chaos_input {
  /// DIR/history/*.jsonl by file name (`node-3.2.jsonl`).
  std::map<std::string, std::string> history;
  std::string nemesis_jsonl;
  std::string client_log;
  std::string ledger_jsonl;
  std::string journal_jsonl;
  std::string views_jsonl;
};

/// A run's files, parsed.
struct chaos_history {
  /// In file-name order.
  std::vector<history_file> files;
  std::vector<nemesis_event> nemesis;
  std::vector<client_record> client;
  std::vector<demo::verdict::ledger_entry> ledger;
  std::vector<demo::verdict::journal_entry> journal;
  /// journal.jsonl line -> its `writer`.
  std::map<size_t, std::string> journal_writers;
  /// views.jsonl's lines that parsed.
  std::vector<view_record> views;
  /// The history files', nemesis.jsonl's, views.jsonl's and the journal
  /// writers' problems.
  /// Those of client.log, ledger.jsonl and journal.jsonl are the demo
  /// verdict's to report (its `records` check) and are not repeated here.
  std::vector<std::string> problems;
  /// The lines of client.log, ledger.jsonl and journal.jsonl the demo
  /// verdict reads but that are malformed here: a stamp of 0 or less. Such
  /// a line is left out of `client`, `ledger` and `journal`.
  std::vector<std::string> store_problems;

  /// History files whose cut last line was ignored.
  size_t cut_lines() const noexcept;
};

/// Parses every file of `in`.
chaos_history parse_run(const chaos_input& in);

} // namespace troupe::chaos
