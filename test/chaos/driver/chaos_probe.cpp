#include "chaos_probe.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "chaos_checker.hpp"
#include "chaos_run_dir.hpp"
#include "chaos_timeline.hpp"

namespace troupe::chaos {

namespace {

constexpr const char* recovery_check = "I4 recovery";

} // namespace

bool probe_complete(const std::filesystem::path& dir, int64_t probe_start_ns,
                    uint32_t accounts) {
  auto report = check_run(read_run_dir(dir));
  auto& checks = report.verdict.checks;
  auto i = std::find_if(checks.begin(), checks.end(),
                        [](auto& c) { return c.name == recovery_check; });
  // The checker takes the probe's start from nemesis.jsonl; the arguments
  // guard against reading a file the driver has not flushed yet.
  return i != checks.end() && i->ok && probe_start_ns > 0
         && report.summary.probed_accounts >= accounts;
}

int judge_run_dir(const std::filesystem::path& dir, uint64_t seed,
                  std::ostream& out) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    out << "troupe-chaos: " << dir.string() << " is not a directory\n";
    return 2;
  }
  auto report = check_run(read_run_dir(dir));
  out << render(report);
  if (report.passed())
    return 0;
  if (seed == 0)
    for (auto& e : report.history.nemesis)
      if (e.op == nemesis_op::run_start)
        seed = e.seed;
  out << "\nthe first violation, in context (>> marks it):\n"
      << render_first_violation(report);
  uint64_t nodes = 0;
  uint64_t duration = 0;
  for (auto& e : report.history.nemesis)
    if (e.op == nemesis_op::run_start) {
      nodes = e.nodes;
      duration = e.duration_s;
    }
  out << fmt::format("\nreplay the same schedule: troupe-chaos --seed {} "
                     "--nodes {} --duration {}s --dir <a new directory>\n",
                     seed, nodes, duration);
  return 1;
}

} // namespace troupe::chaos
