// troupe-chaos: the chaos test (docs/design/chaos.md, docs/guides/chaos.md).
//
// Usage: troupe-chaos --dir DIR [--seed N|random] [--duration 75s]
//                     [--nodes 5] [--network auto|netns|transport]
//                     [--settle 10s] [--probe-timeout 45s] [--rate 40]
//                     [--accounts 24] [--faults all] [--bin-dir DIR]
//                     [--quiet]
//        troupe-chaos --check DIR   (judge the files of an earlier run)
//        troupe-chaos --plan --seed N --duration 30m   (print the schedule)
// Exit: 0 no violation, 1 violations (report, seed, timeline), 2 a bad flag
// or a run that could not be set up (named on stderr).

#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <string>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "chaos_probe.hpp"
#include "chaos_run.hpp"

namespace {

// The longest --duration, --settle or --probe-timeout: a day.
constexpr uint64_t max_seconds = 24 * 3600;

// "75s", "2m", "90" (seconds): a whole number of seconds up to a day, or
// nullopt.
std::optional<std::chrono::seconds> parse_seconds(const std::string& text) {
  uint64_t n = 0;
  auto* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc{} || p == text.data())
    return std::nullopt;
  std::string_view unit{p, static_cast<size_t>(end - p)};
  uint64_t per = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : 0;
  if (per == 0 || n > max_seconds / per)
    return std::nullopt;
  return std::chrono::seconds(n * per);
}

std::filesystem::path own_dir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path{} : self.parent_path();
}

} // namespace

int main(int argc, char** argv) {
  troupe::chaos::run_options opts;
  CLI::App app{"troupe-chaos: real processes, real etcd, a seeded nemesis "
               "and a history checker"};
  std::string seed = "1";
  std::string duration = "75s";
  std::string settle = "10s";
  std::string probe = "45s";
  std::string check_dir;
  std::string dir;
  std::string bin_dir;
  bool quiet = false;
  bool plan = false;
  app.add_option("--dir", dir, "The run's directory (new or empty)");
  app.add_option("--seed", seed,
                 "The schedule's seed, or `random` (printed; it replays the "
                 "same schedule)");
  app.add_option("--duration", duration,
                 "How long the nemesis runs, e.g. 75s or 30m");
  app.add_option("--nodes", opts.nodes, "Nodes")->check(CLI::Range(3, 9));
  app
    .add_option("--network", opts.network,
                "How partitions are made: auto (netns when root), netns, "
                "transport")
    ->check(CLI::IsMember({"auto", "netns", "transport"}));
  app.add_option("--settle", settle, "Quiet time before the probe, e.g. 10s");
  app.add_option("--probe-timeout", probe,
                 "How long the probe may take, e.g. 45s");
  app.add_option("--rate", opts.rate, "Client deposits per second")
    ->check(CLI::Range(1.0, 1000.0));
  app.add_option("--accounts", opts.accounts, "Accounts")
    ->check(CLI::Range(1, 10000));
  app.add_option(
    "--bin-dir", bin_dir,
    "Where troupe-demo-node and troupe-demo-store are "
    "(default: next to troupe-chaos, else the build tree's apps/demo)");
  app.add_option("--check", check_dir,
                 "Judge the files of an earlier run in this directory");
  app.add_option("--faults", opts.faults,
                 "Fault kinds, comma-separated: kill, pause, "
                 "partition_symmetric, partition_asymmetric, etcd_stop, "
                 "etcd_slow, lease_delete, majority_restart (kill -9 a "
                 "majority of the seeds together, then restart them), "
                 "slow_restart (kill -9 a node and restart it behind links "
                 "delayed 0.5-2s), or all");
  app.add_flag("--quiet", quiet, "No line per nemesis action");
  app.add_flag("--plan", plan,
               "Print the schedule of --seed, --duration, --nodes and "
               "--faults, and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0)
      return app.exit(e);
    std::fprintf(stderr, "troupe-chaos: %s; see --help\n", e.what());
    return 2;
  }
  auto bad = [](const std::string& what) {
    std::fprintf(stderr, "troupe-chaos: %s; see --help\n", what.c_str());
    return 2;
  };
  if (app.count("--check") > 0) {
    if (check_dir.empty())
      return bad("--check needs a run directory");
    return troupe::chaos::judge_run_dir(check_dir, 0, std::cout);
  }
  if (!std::isfinite(opts.rate))
    return bad("--rate: must be a number from 1 to 1000");
  if (dir.empty() && !plan)
    return bad("--dir is required");
  opts.dir = dir;
  if (seed == "random") {
    std::random_device rd;
    opts.seed = (uint64_t{rd()} << 32) | rd();
  } else {
    auto [p, ec]
      = std::from_chars(seed.data(), seed.data() + seed.size(), opts.seed);
    if (ec != std::errc{} || p != seed.data() + seed.size())
      return bad("--seed " + seed + ": not a number or `random`");
  }
  auto d = parse_seconds(duration);
  auto s = parse_seconds(settle);
  auto p = parse_seconds(probe);
  if (!d)
    return bad("--duration " + duration
               + ": a whole number of seconds or minutes up to a day (e.g. "
                 "75s, 30m)");
  if (d->count() < 10)
    return bad("--duration " + duration + ": at least 10s");
  if (!s)
    return bad("--settle " + settle + ": a number of seconds (e.g. 10s)");
  if (!p || p->count() < 5)
    return bad("--probe-timeout " + probe + ": at least 5s");
  opts.duration = *d;
  opts.settle = *s;
  opts.probe_timeout = *p;
  opts.verbose = !quiet;
  try {
    auto schedule = troupe::chaos::plan_run(opts);
    if (plan) {
      std::cout << render(schedule);
      return 0;
    }
  } catch (const std::invalid_argument& e) {
    return bad(e.what());
  }
  if (!bin_dir.empty()) {
    opts.bin_dir = bin_dir;
  } else {
    auto here = own_dir();
    opts.bin_dir = std::filesystem::exists(here / "troupe-demo-node")
                     ? here
                     : here / "../../apps/demo";
  }
  for (auto* exe : {"troupe-demo-node", "troupe-demo-store"})
    if (::access((opts.bin_dir / exe).c_str(), X_OK) != 0)
      return bad((opts.bin_dir / exe).string()
                 + " is missing or not executable (--bin-dir)");
  return troupe::chaos::run_chaos(opts);
}
