#include "chaos_probe.hpp"

#include <algorithm>
#include <iostream>

#include "chaos_checker.hpp"
#include "chaos_run_dir.hpp"
#include "chaos_timeline.hpp"

namespace troupe::chaos {

namespace {

constexpr const char* recovery_check = "I4 recovery";

} // namespace

bool probe_complete(const std::filesystem::path& dir, int64_t probe_start_ns,
                    uint32_t accounts) {
  auto files = read_run_dir(dir);
  if (!files.errors.empty())
    return false;
  auto report = check_run(files.input);
  auto& checks = report.verdict.checks;
  auto i = std::find_if(checks.begin(), checks.end(),
                        [](auto& c) { return c.name == recovery_check; });
  // The checker takes the probe's start from nemesis.jsonl; the arguments
  // guard against reading a file the driver has not flushed yet.
  return i != checks.end() && i->ok && probe_start_ns > 0
         && report.summary.probed_accounts >= accounts;
}

int judge_run_dir(const std::filesystem::path& dir, uint64_t seed,
                  std::ostream& out, std::ostream& err) {
  auto files = read_run_dir(dir);
  if (!files.errors.empty()) {
    for (auto& e : files.errors)
      err << "troupe-chaos: " << e << '\n';
    return 2;
  }
  auto report = check_run(files.input);
  out << render(report);
  if (report.passed())
    return 0;
  out << "\nthe first violation, in context (>> marks it):\n"
      << render_first_violation(report) << '\n'
      << render_replay(report.history, seed);
  return 1;
}

int judge_run_dir(const std::filesystem::path& dir, uint64_t seed,
                  std::ostream& out) {
  return judge_run_dir(dir, seed, out, std::cerr);
}

} // namespace troupe::chaos
