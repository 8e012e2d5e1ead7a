#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/clock.hpp"

/// @file
/// What the lease demo's processes say to each other, and the verdict: the
/// ledger record format, the demo node's output lines, the fence and the
/// judge. Pure (no I/O, no clock reads): the launcher feeds it the ledger
/// file's text and the lines the nodes printed.

namespace troupe::demo {

/// One ledger line, written by a node while it holds the lease:
/// `<token> <owner> <entry> <mono_ns>` (`mono_ns`: CLOCK_MONOTONIC in ns,
/// read just before the check_alive() call that allowed the write).
struct ledger_record {
  uint64_t token = 0;
  std::string owner;
  uint64_t entry = 0;
  int64_t mono_ns = 0;

  friend bool operator==(const ledger_record&, const ledger_record&) = default;
};

/// The ledger line of `x`, with its newline.
std::string format_ledger_record(const ledger_record& x);

/// Parses one ledger line (without its newline); nullopt if malformed.
std::optional<ledger_record> parse_ledger_record(std::string_view line);

/// The kinds of lines a demo node prints on stdout.
enum class event_kind : uint8_t {
  competing, ///< started, competing for the lease (`text`: details)
  acquired,  ///< acquired with fencing token `token`
  ledger,    ///< wrote ledger entry `entry` with `token`
  lost,      ///< lost the lease it held with `token` (`text`: why)
  released,  ///< released the lease (token `token`) on shutdown
  stopped,   ///< stopped (`text`: details)
};

/// One line of a demo node's output, e.g. `node-2: ACQUIRED the lease,
/// fencing token 3`.
struct node_event {
  event_kind kind = event_kind::competing;
  std::string owner;
  uint64_t token = 0;
  uint64_t entry = 0;
  std::string text;

  friend bool operator==(const node_event&, const node_event&) = default;
};

/// The line (without newline) a node prints for `x`: a sentence for humans
/// that `parse_node_event` reads back.
std::string format_node_event(const node_event& x);

/// Parses a line printed by a node; nullopt for other lines.
std::optional<node_event> parse_node_event(std::string_view line);

/// The fenced store's rule (the ledger's owner, e.g. a database, checks it):
/// a record whose token is lower than one already accepted is stale and
/// rejected; equal or higher tokens are accepted. Not thread-safe.
class ledger_fence {
public:
  /// Applies the rule to `x`; true if accepted.
  bool offer(const ledger_record& x) noexcept;

  /// The highest token accepted so far (0 before the first record).
  uint64_t highest_token() const noexcept {
    return highest_;
  }

  /// Records accepted so far.
  size_t accepted() const noexcept {
    return accepted_;
  }

  /// Stale records rejected so far.
  size_t rejected() const noexcept {
    return rejected_;
  }

private:
  uint64_t highest_ = 0;
  size_t accepted_ = 0;
  size_t rejected_ = 0;
};

/// One SIGKILL (or SIGSTOP) of a holder and what followed.
struct takeover {
  std::string victim;
  uint64_t victim_token = 0;
  /// Who acquired next (empty: nobody within the launcher's bound).
  std::string successor;
  uint64_t successor_token = 0;
  /// From the signal to the successor's "acquired" line.
  runtime::timespan elapsed{0};
};

/// What the verdict is computed from: only the ledger file and the nodes'
/// output, plus what the launcher did (kills) and the ttl for the report.
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
};

/// The verdict: report lines for humans and the violated invariants.
struct verdict {
  std::vector<std::string> report;
  std::vector<std::string> violations;

  /// True if no invariant was violated.
  bool ok() const noexcept {
    return violations.empty();
  }
};

/// Judges one demo run. Invariants (each violation names what broke):
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
/// - fencing tokens of acquisitions strictly increase in order of arrival;
/// - every requested kill was followed by a takeover, so there are at least
///   kills + 1 distinct holders; a frozen holder was replaced and, once
///   resumed, reported the loss.
/// Takeover times are reported next to their floor, the ttl (counted from
/// the dead holder's last renewal, at most ttl/3 before the kill).
verdict judge(const verdict_input& in);

/// Renders a duration for people: "1.84s", "250ms".
std::string format_seconds(runtime::timespan d);

} // namespace troupe::demo
