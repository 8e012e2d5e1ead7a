#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "troupe/runtime/clock.hpp"

/// @file
/// What the lease demo's processes say to each other: the ledger record
/// format, the demo node's output lines and the fence (the verdict is in
/// demo_verdict.hpp). Pure (no I/O, no clock reads).

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
  stopped,   ///< stopped: the node's last line (`text`: details)
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

/// Renders a duration for people: "1.84s", "250ms".
std::string format_seconds(runtime::timespan d);

} // namespace troupe::demo
