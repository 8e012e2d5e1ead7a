#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "chaos_checker.hpp"
#include "chaos_history.hpp"

/// @file
/// A run's events merged from all its files into one time line, and the
/// window of it around a violation, for people reading a failed run:
///
///     timeline: 3.000 s before to 1.000 s after history/node-2.1.jsonl
///     line 4 (+6.010s), times from run_start
///        +5.000s nemesis pause node=node-1 pid=101
///     >> +6.010s node-2 singleton_started type=scheduler incarnation=1 ...
///
/// Times are seconds from nemesis.jsonl's run_start (from the earliest
/// event when there is none); the offending event is marked `>>`. Pure.

namespace troupe::chaos {

/// One event of any file.
struct timeline_entry {
  event_ref at;
  /// The node ("node-3"), "nemesis", "client" or "store".
  std::string who;
  /// The event in words, e.g. `singleton_started type=scheduler
  /// incarnation=2 token=7` (history and nemesis lines as `describe` words
  /// them, client lines as client.log has them, store lines as `ledger
  /// token=7 seq=3 owner=... accepted` and `journal acct-1 d3 +5
  /// expected_seq=2 applied seq=3 balance=9 writer=...`, views.jsonl's
  /// lines as `view round=7 {node-1.1 up, node-2.1 joining}`, stamped when
  /// the answer came, by the node asked).
  std::string what;
};

/// Every event of `h`, by stamp (ties: by file name, then line).
std::vector<timeline_entry> merge_events(const chaos_history& h);

/// The stamp times are counted from: run_start's, else the earliest
/// event's, else 0.
int64_t run_origin(const chaos_history& h);

/// How much of the time line to show around an event.
struct timeline_window {
  std::chrono::milliseconds before{3000};
  std::chrono::milliseconds after{1000};
};

/// The header line, then one line per event stamped within `w` around
/// `at`: `   +12.345s node-3 singleton_started ...` (`>> ` instead of the
/// indent for `at` itself). Each line ends in a newline.
std::string render_timeline(const chaos_history& h, const event_ref& at,
                            timeline_window w = {});

/// The time line around the report's first offense (see
/// chaos_report::first_offense), after a line naming its check. When no
/// violation is located, the first failed check's name and a line saying
/// why there is no time line (`(the violation is at an unparseable line:
/// no stamped events around it)` for the records checks); empty when every
/// check passed.
std::string render_first_violation(const chaos_report& r,
                                   timeline_window w = {});

} // namespace troupe::chaos
