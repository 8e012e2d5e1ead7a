#include "chaos_probe.hpp"

#include <algorithm>
#include <iostream>
#include <optional>
#include <string_view>

#include "chaos_checker.hpp"
#include "chaos_run_dir.hpp"
#include "chaos_timeline.hpp"

namespace troupe::chaos {

namespace {

constexpr const char* recovery_check = "I4 recovery";
constexpr const char* view_check = "I4 one membership view";

// The report on the files in `dir` as they are now; none while one is
// missing or unreadable.
std::optional<chaos_report> check_now(const std::filesystem::path& dir) {
  auto files = read_run_dir(dir);
  if (!files.errors.empty())
    return std::nullopt;
  return check_run(files.input);
}

bool passes(const chaos_report& r, std::string_view name) {
  auto& checks = r.verdict.checks;
  auto i = std::find_if(checks.begin(), checks.end(),
                        [&](auto& c) { return c.name == name; });
  return i != checks.end() && i->ok;
}

} // namespace

bool probe_complete(const std::filesystem::path& dir, int64_t probe_start_ns,
                    uint32_t accounts) {
  auto report = check_now(dir);
  // The checker takes the probe's start from nemesis.jsonl; the arguments
  // guard against reading a file the driver has not flushed yet.
  return report && passes(*report, recovery_check) && probe_start_ns > 0
         && report->summary.probed_accounts >= accounts;
}

bool views_complete(const std::filesystem::path& dir) {
  auto report = check_now(dir);
  return report && passes(*report, view_check);
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
