#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "chaos_check_result.hpp"
#include "chaos_checker.hpp"
#include "chaos_history.hpp"
#include "chaos_intervals.hpp"

/// @file
/// The chaos checks that are not interval checks (chaos_intervals.hpp) or
/// the demo verdict's; what each one checks is in chaos_checker.hpp's file
/// comment, under the check's name. Each fills the summary numbers it
/// counts. Pure.

namespace troupe::chaos {

/// `1.234 s`.
std::string format_seconds(std::chrono::nanoseconds d);

/// Where a record of the demo's files stands.
event_ref ref(const demo::verdict::ledger_entry& e);
event_ref ref(const demo::verdict::journal_entry& e);
event_ref ref(const client_record& e);
event_ref ref(const nemesis_event& e);

/// `history records`: the history's parse problems and `process_problems`
/// (match_processes'). Counts the files and cut lines.
check_result
check_history_records(const chaos_history& h,
                      const std::vector<std::string>& process_problems,
                      chaos_summary& s);

/// `I1(a) one owner per token`. Counts the tokens.
check_result check_token_owners(const chaos_history& h, chaos_summary& s);

/// `I2 store writers`. Counts the runs and the entries without a writer.
check_result check_store_writers(const chaos_history& h, chaos_summary& s);

/// `I2 no conflicts`.
check_result check_conflicts(const chaos_history& h);

/// `I3 guarded writes`. Counts the writes.
check_result check_guarded_writes(const std::vector<process_record>& ps,
                                  const run_instances& xs, chaos_summary& s);

/// `I3 stamped store writes`. Counts the store records it matched and those
/// a cut last line excused.
check_result check_stamped_writes(const chaos_history& h, chaos_summary& s);

/// `I4 recovery`. Counts the probed accounts and sets the recovery time.
check_result check_recovery(const chaos_history& h, chaos_summary& s);

} // namespace troupe::chaos
