#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "demo_ledger.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// The lease demo's verdict: PASS, FAIL (an invariant was violated) or a
/// setup error (the demo could not run). Pure (no I/O, no clock reads): the
/// launcher feeds it the ledger file's text, the lines the nodes printed,
/// what it did (kills, the freeze) and how each node process ended.

namespace troupe::demo {

/// One SIGKILL (or SIGSTOP) of a holder and what followed.
struct takeover {
  std::string victim;
  uint64_t victim_token = 0;
  /// Who acquired next (empty: nobody within the launcher's bound).
  std::string successor;
  uint64_t successor_token = 0;
  /// From the signal to the successor's "acquired" line.
  runtime::timespan elapsed{0};
  /// Nodes other than the victim still running when the launcher stopped
  /// waiting for a successor: 0 means nobody could have taken over.
  int live_others = 0;
};

/// How one node process ended, as the launcher saw it.
struct node_report {
  std::string name;
  /// How it ended, for people, e.g. `exited with code 2`, `was killed by
  /// signal 9 (Killed)`; empty if it never ended.
  std::string exit;
  /// True if it ended before the launcher signalled it: it failed, crashed
  /// or was killed by somebody else. Not part of the demo's plan.
  bool ended_by_itself = false;
  /// The last lines of its stderr log (node-N.log), for a setup error.
  std::string stderr_tail;
};

/// Why the launcher stopped before it carried out every kill and the
/// freeze, other than an interruption or a takeover that did not come.
struct early_end {
  /// E.g. `no node held the lease within 14.00s before kill 2`.
  std::string why;
  /// Nodes that could have carried the plan on (running ones; 0 if only
  /// the holder was left to kill): 0 means the demo could not go on, which
  /// is reported, not a violation.
  int live_nodes = 0;
};

/// What the verdict is computed from: only the ledger file and the nodes'
/// output, plus what the launcher did and saw of the node processes.
struct verdict_input {
  std::string ledger_text;
  /// Every parsed output line of every node, in order of arrival.
  std::vector<node_event> events;
  /// The SIGKILLs, in order.
  std::vector<takeover> takeovers;
  /// SIGKILLs asked for by the user (`--kills`).
  int kills_requested = 0;
  /// The SIGSTOP of a holder (`--freeze`), if asked for: the holder is
  /// frozen until another takes over, then resumed.
  std::optional<takeover> freeze;
  bool freeze_requested = false;
  runtime::timespan ttl{0};
  /// Every node process, whether or not it ended.
  std::vector<node_report> nodes;
  /// Set if the launcher stopped early (see early_end).
  std::optional<early_end> ended_early;
  /// How long the launcher waited for a holder (2 * ttl + 10s).
  runtime::timespan holder_bound{0};
  /// The user interrupted the run: no setup error (the launcher counts
  /// only the kills it carried out and drops the freeze).
  bool interrupted = false;
};

/// The verdict: report lines for humans, the violated invariants and, if
/// the demo could not run, why.
struct verdict {
  std::vector<std::string> report;
  std::vector<std::string> violations;
  /// Why the demo could not run, e.g. `node-1 exited with code 2: ...`.
  std::optional<std::string> setup_error;

  /// True if no invariant was violated.
  bool ok() const noexcept {
    return violations.empty();
  }

  /// The launcher's exit code: 1 if an invariant was violated, else 2 for
  /// a setup error, else 0.
  int exit_code() const noexcept {
    return !ok() ? 1 : setup_error ? 2 : 0;
  }
};

/// Judges one demo run.
///
/// Safety invariants (each violation names what broke), always checked:
/// - every ledger line parses;
/// - one holder at a time: each ledger record claims its `mono_ns` (read
///   just before check_alive() said "held"); the spans [first, last claim]
///   of different tokens must not overlap, and tokens increase with time;
/// - no stale-token record is accepted: the fence rejects a record whose
///   token is below one already accepted (a holder that passed its check
///   just before it was frozen may legitimately write one; that is what
///   fencing is for, and it is reported, not a violation);
/// - each token belongs to one owner, in the outputs and in the ledger, and
///   every ledger record's token was announced by its writer as acquired;
/// - fencing tokens of acquisitions strictly increase in order of arrival.
///
/// Setup error (`find_setup_error`): the demo could not run, so the plan
/// (kills, freeze) is not judged: only reported.
///
/// Otherwise the plan, as far as a live node could carry it out: every
/// kill is followed by a takeover, so there are at least kills + 1
/// distinct holders; a frozen holder is replaced and, once resumed,
/// reports the loss. A takeover that did not come, or an early end, is a
/// violation only if another node was running that could have taken over;
/// with none left it is reported and the rest of the plan is waived. Nodes
/// that ended by themselves and losses no signal caused (a holder that
/// could not renew under load) are reported, not violations: the launcher
/// waits for the next holder instead. Takeover times are reported next to
/// their floor, the ttl (counted from the dead holder's last renewal, at
/// most ttl/3 before the kill).
verdict judge(const verdict_input& in);

/// Why the demo could not run, or nullopt (always nullopt when
/// `in.interrupted`):
/// - every node ended by itself or by a kill of the demo, none was left to
///   stop: `every node process exited: node-1 exited with code 2: <tail>`;
/// - no node acquired the lease: `no node acquired the lease: node-1 exited
///   with code 2: <tail>` if one ended by itself, else `no node announced
///   "competing" within 14.00s` or `no node acquired the lease within
///   14.00s`, each followed by what the first node wrote to stderr.
std::optional<std::string> find_setup_error(const verdict_input& in);

/// The last `max_lines` non-empty lines of `text` (a node's stderr log),
/// joined with " | ", each cut to 200 bytes; `nothing on stderr` if none.
std::string stderr_tail(std::string_view text, size_t max_lines = 3);

} // namespace troupe::demo
