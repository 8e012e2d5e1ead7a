#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>

/// @file
/// The driver's uses of the history checker (checker/chaos_checker.hpp) on
/// a run directory: whether the convergence probe is complete yet, whether
/// the live nodes share one membership view yet, and the verdict at the
/// end.

namespace troupe::chaos {

/// True when the files in `dir` show, since `probe_start_ns`
/// (CLOCK_MONOTONIC), an acknowledged deposit for every one of `accounts`
/// accounts and an accepted ledger record (the checker's I4 on the files
/// as they are now). False while any of the run's files is missing or
/// unreadable (early in a run some may not exist yet).
bool probe_complete(const std::filesystem::path& dir, int64_t probe_start_ns,
                    uint32_t accounts);

/// True when the files in `dir` show, in views.jsonl's last final round,
/// one membership view on every live node (the checker's `I4 one
/// membership view` on the files as they are now). False while any file
/// is missing or unreadable.
bool views_complete(const std::filesystem::path& dir);

/// Reads every file of the run in `dir`, runs the checker and writes its
/// report to `out`; on a violation also the timeline around it and how to
/// replay the run (`seed`; 0: taken from nemesis.jsonl). When `dir` is not
/// a directory or any of the run's files is missing, not a regular file or
/// unreadable, writes one line per such file to `err` (`troupe-chaos:
/// DIR/client.log is missing (a run writes it; is DIR a run directory?)`)
/// and judges nothing. The exit code: 0 no violation, 1 violations, 2 the
/// files cannot be read.
int judge_run_dir(const std::filesystem::path& dir, uint64_t seed,
                  std::ostream& out, std::ostream& err);

/// As above, with the errors to std::cerr.
int judge_run_dir(const std::filesystem::path& dir, uint64_t seed,
                  std::ostream& out);

} // namespace troupe::chaos
