#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/client_log.hpp"

/// @file
/// The demo's verdict, computed only from what the client was told
/// (DIR/client.log, client_log.hpp) and what the store recorded
/// (DIR/ledger.jsonl and DIR/journal.jsonl, demo_store_core.hpp's
/// format_ledger_line and format_journal_line): the nodes never judge
/// themselves, and the store's own flags are rechecked, not trusted.
///
/// The checks (each PASS or FAIL, with the first offending lines named):
/// - `records`: every line of the three files parses (a line cut short by a
///   crash is named);
/// - `fencing`: replaying the ledger, no accepted record has a token lower
///   than one accepted before it (Kleppmann's fencing);
/// - `rejections`: every rejected ledger record was stale when it came (a
///   store that rejects fresh records would hide the fencing check);
/// - `ledger activity`: the ledger accepted at least one record;
/// - `journal sequence`: per account, the applied deposits carry seq 1, 2,
///   3, ... in file order (no gap, no seq twice) and no deposit id is
///   applied twice;
/// - `balances`: per account, each applied entry's balance is the sum of
///   the amounts applied so far;
/// - `acked deposits`: every deposit the client saw acknowledged is applied
///   in the journal, for the same account with the same amount;
/// - `no phantom deposits`: every applied deposit was sent by the client,
///   for that account and amount;
/// - `sums`: the acknowledged amounts sum to at most the balances; the
///   difference is the deposits "in doubt" (applied, never acknowledged:
///   allowed, e.g. a reply lost in a failover);
/// - one check per failover measure given: it happened, within its limit
///   when it has one.
/// Pure: text in, a report out.

namespace troupe::demo::verdict {

/// One ledger.jsonl line.
struct ledger_entry {
  /// 1-based line number in the file.
  size_t line = 0;
  int64_t mono_ns = 0;
  uint64_t token = 0;
  uint64_t seq = 0;
  std::string owner;
  /// The store's decision (rechecked, not trusted).
  bool accepted = false;
};

/// One journal.jsonl line.
struct journal_entry {
  size_t line = 0;
  int64_t mono_ns = 0;
  std::string account;
  std::string deposit;
  int64_t amount = 0;
  uint64_t expected_seq = 0;
  /// "applied", "conflict" or "duplicate".
  std::string outcome;
  /// The account after the decision.
  uint64_t seq = 0;
  int64_t balance = 0;
};

/// A measured failover time next to its floor (DESIGN.md: a measure is
/// reported as a ratio to what it cannot beat), e.g. "singleton moved":
/// from the kill to the first ledger record of the new instance.
/// How far below its floor a measure may come (the floor's own rounding:
/// the last heartbeat before the failure, the clocks' reads).
inline constexpr std::chrono::milliseconds floor_tolerance{250};

struct failover_measure {
  std::string name;
  /// Nullopt: it never happened (FAIL).
  std::optional<std::chrono::milliseconds> measured;
  /// The floor (e.g. detection time + stable_after + lease ttl); 0: none.
  /// Measured more than `floor_tolerance` below it is a FAIL: the settings
  /// make that impossible, so the measurement counted the wrong event.
  std::chrono::milliseconds floor{0};
  /// Measured above this is a FAIL; nullopt: no limit (reported only).
  std::optional<std::chrono::milliseconds> limit;
};

/// The verdict's inputs: the files' contents (as read; a missing file is
/// an empty text) and the launcher's measures.
struct verdict_input {
  std::string client_log;
  std::string ledger_jsonl;
  std::string journal_jsonl;
  std::vector<failover_measure> failovers;
};

/// One check's outcome.
struct check {
  std::string name;
  bool ok = true;
  /// One line: what was checked, with the numbers.
  std::string summary;
  /// What broke it (at most `max_problems` named, then a count).
  std::vector<std::string> problems;
};

/// Problems named per check; more are counted.
inline constexpr size_t max_problems = 5;

/// The numbers behind the checks.
struct verdict_totals {
  uint64_t ledger_accepted = 0;
  uint64_t ledger_rejected = 0;
  /// The highest accepted token (0 when none).
  uint64_t highest_token = 0;
  uint64_t deposits_sent = 0;
  uint64_t deposits_acked = 0;
  /// Every attempt failed: the cluster refused or did not answer.
  uint64_t deposits_failed = 0;
  /// The client stopped while they waited for a retry: never acknowledged,
  /// so allowed (not counted against the run).
  uint64_t deposits_unfinished = 0;
  /// Sent without an outcome line (the client ended before logging one).
  uint64_t deposits_unanswered = 0;
  uint64_t journal_applied = 0;
  uint64_t journal_conflicts = 0;
  uint64_t journal_duplicates = 0;
  /// Applied but never acknowledged (allowed).
  uint64_t in_doubt = 0;
  int64_t in_doubt_sum = 0;
  int64_t acked_sum = 0;
  /// The sum of the accounts' last balances.
  int64_t balance_sum = 0;
};

/// The verdict: every check in the order of the file comment.
struct report {
  std::vector<check> checks;
  verdict_totals totals;

  /// True when every check passed.
  bool passed() const noexcept;
};

/// One non-empty line of a text, numbered from 1 as an editor counts.
struct text_line {
  size_t number = 0;
  std::string_view text;
  /// The text's last line, without a newline after it (a file cut short
  /// by a crash may end so).
  bool unterminated_last = false;
};

/// The non-empty lines of `text` (views into it).
std::vector<text_line> lines_of(std::string_view text);

/// Parses ledger.jsonl; malformed lines go to `problems` as `ledger.jsonl
/// line N: ...`.
std::vector<ledger_entry> parse_ledger(std::string_view text,
                                       std::vector<std::string>& problems);

/// Parses journal.jsonl, as `parse_ledger`.
std::vector<journal_entry> parse_journal(std::string_view text,
                                         std::vector<std::string>& problems);

/// Parses client.log, as `parse_ledger`.
std::vector<client::client_event>
parse_client_log(std::string_view text, std::vector<std::string>& problems);

/// Runs every check.
report judge(const verdict_input& in);

/// `n` and the noun: "1 record", "0 records", "2 records".
std::string counted(uint64_t n, std::string_view one, std::string_view many);

/// The `rejections` check's summary when it passed: "no record was
/// rejected", "the one rejected record was stale", "every one of the 5
/// rejected records was stale".
std::string rejections_summary(uint64_t rejected);

/// What became of the client's deposits and what the store refused, e.g.
/// `deposits: 2224 sent, 2217 acked, 0 failed (every attempt refused or
/// unanswered by the cluster), 7 unfinished at stop (never acknowledged,
/// not counted against the run); store: 0 conflicts, 22 duplicates
/// refused`; deposits without an outcome line are named only when there
/// are some.
std::string deposits_line(const verdict_totals& t);

/// The report for people: one `PASS name: summary` or `FAIL name: summary`
/// line per check, each problem indented below its check, the
/// deposits_line, then `verdict: PASS` or `verdict: FAIL (n of m checks
/// failed)`; every line ends in a newline.
std::string render(const report& r);

} // namespace troupe::demo::verdict
