// Cluster formation time with real processes (issue 24, "Benchmark").
//
// Starts N cluster_node processes (default 5) on 127.0.0.1 together and
// measures the time from the first start until every node has printed
// `event member_up` for all N, for:
//   baseline  the join: node 1 runs alone (its own cluster), then the
//             others start with it as their seed, timed from their start
//             until all see all up;
//   config    Cluster Bootstrap through the config method, every node a
//             contact point, required_contact_point_nr = N.
// Both with the same shortened settings (cluster_node_flags: gossip and
// leader actions 200 ms, seed node timeout 1 s). The floor of bootstrap is
// stable_margin + probe_interval + the baseline's join (the set must be
// stable for stable_margin, the founder's last probe answers within an
// interval, then the others join as in the baseline); the ratio printed is
// the measured bootstrap time over that floor, median of the rounds.
// Fails (exit 1) when a cluster does not form within 60 s or a round ends
// with more than one founding.
//
// Usage: formation_bench [--nodes N] [--rounds R] [--stable_margin_ms M]
//                        [--smoke]
//   --smoke  3 nodes, 1 round (the ctest run).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cluster_node_flags.hpp"
#include "cluster_output.hpp"
#include "troupe/test/child.hpp"
#include "troupe/test/free_ports.hpp"

#ifndef TROUPE_CLUSTER_NODE
#  error "TROUPE_CLUSTER_NODE must name the cluster_node executable"
#endif

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using troupe::bench::count_of;
using troupe::bench::members_up;

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "formation_bench: %s\n", why.c_str());
  std::exit(1);
}

std::string read_all(const fs::path& p) {
  std::ifstream in{p};
  return {std::istreambuf_iterator<char>{in}, {}};
}

struct round_result {
  double seconds = 0;
  size_t foundings = 0;
};

// Starts n nodes with `flags(i)` and returns the time until all see all.
// With `first_alone`, node 1 is started first and awaited (up in its own
// cluster); the clock starts when the others start: the time of a join.
round_result form(size_t n, const fs::path& dir, const std::string& tag,
                  const std::function<std::vector<std::string>(size_t)>& flags,
                  bool first_alone = false) {
  std::vector<std::unique_ptr<troupe::test::child>> nodes;
  std::vector<fs::path> outs;
  auto spawn = [&](size_t i) {
    auto args = flags(i);
    args.insert(args.begin(), TROUPE_CLUSTER_NODE);
    outs.push_back(dir / fmt::format("{}-node{}.out", tag, i + 1));
    nodes.push_back(std::make_unique<troupe::test::child>(
      fmt::format("node{}", i + 1), std::move(args), outs.back()));
  };
  size_t first = 0;
  if (first_alone) {
    spawn(0);
    first = 1;
    auto until = std::chrono::steady_clock::now() + 30s;
    while (members_up(read_all(outs[0])) < 1) {
      if (nodes[0]->crashed() || std::chrono::steady_clock::now() > until)
        fail(fmt::format("{}: node 1 did not come up:\n{}", tag,
                         read_all(outs[0])));
      std::this_thread::sleep_for(10ms);
    }
  }
  auto started = std::chrono::steady_clock::now();
  for (size_t i = first; i < n; ++i)
    spawn(i);
  auto deadline = started + 60s;
  for (;;) {
    bool all = true;
    for (size_t i = 0; i < n; ++i) {
      if (nodes[i]->crashed())
        fail(fmt::format("{}: node {} exited:\n{}", tag, i + 1,
                         read_all(outs[i])));
      all = all && members_up(read_all(outs[i])) >= n;
    }
    if (all)
      break;
    if (std::chrono::steady_clock::now() > deadline)
      fail(fmt::format("{}: no cluster within 60 s; node 1 printed:\n{}", tag,
                       read_all(outs[0])));
    std::this_thread::sleep_for(10ms);
  }
  round_result r;
  r.seconds
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
        .count();
  for (auto& n : nodes)
    n->stop(10s);
  for (auto& o : outs)
    r.foundings += count_of(read_all(o), "founding a new cluster");
  return r;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  return xs.empty() ? 0 : xs[xs.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Cluster formation time: Cluster Bootstrap against its floor."};
  size_t n = 5;
  int rounds = 3;
  int stable_ms = 1000;
  int probe_ms = 200;
  bool smoke = false;
  app.add_option("--nodes", n, "Cluster size")->check(CLI::Range(2, 20));
  app.add_option("--rounds", rounds, "Rounds per method")
    ->check(CLI::Range(1, 50));
  app
    .add_option("--stable_margin_ms", stable_ms,
                "cluster.bootstrap.stable_margin (ms)")
    ->check(CLI::Range(100, 60000));
  app.add_flag("--smoke", smoke, "3 nodes, 1 round");
  CLI11_PARSE(app, argc, argv);
  if (smoke) {
    n = 3;
    rounds = 1;
  }
  std::string tmpl = (fs::temp_directory_path() / "troupe-formation-XXXXXX");
  if (::mkdtemp(tmpl.data()) == nullptr)
    fail("mkdtemp failed");
  fs::path dir = tmpl;
  std::vector<double> baseline, config;
  for (int r = 0; r < rounds; ++r) {
    auto ports = troupe::test::free_ports(2 * n);
    std::string contacts;
    for (size_t i = 0; i < n; ++i) {
      contacts += fmt::format("{}127.0.0.1:{}", i ? "," : "", ports[2 * i + 1]);
    }
    auto common = [&](size_t i, const std::string& seed) {
      auto f
        = troupe::test::cluster_node_flags("127.0.0.1", ports[2 * i], seed);
      f.push_back("--log.level=info");
      return f;
    };
    // The join: n - 1 nodes joining a running node through it as seed.
    auto first_seed = fmt::format("127.0.0.1:{}", ports[0]);
    auto b = form(
      n, dir, fmt::format("join{}", r),
      [&](size_t i) { return common(i, first_seed); }, true);
    auto c = form(n, dir, fmt::format("config{}", r), [&](size_t i) {
      auto f = common(i, "");
      f.push_back("--with_management");
      f.push_back(fmt::format("--management.port={}", ports[2 * i + 1]));
      f.push_back("--cluster.bootstrap.discovery_method=config");
      f.push_back("--cluster.bootstrap.config.contact_points=" + contacts);
      f.push_back(
        fmt::format("--cluster.bootstrap.required_contact_point_nr={}", n));
      f.push_back(
        fmt::format("--cluster.bootstrap.stable_margin={}ms", stable_ms));
      f.push_back(
        fmt::format("--cluster.bootstrap.probe_interval={}ms", probe_ms));
      f.push_back("--cluster.bootstrap.discovery_interval=200ms");
      return f;
    });
    if (c.foundings != 1)
      fail(fmt::format("round {}: {} foundings through bootstrap", r + 1,
                       c.foundings));
    baseline.push_back(b.seconds);
    config.push_back(c.seconds);
    std::printf("round %d: join %.3f s, bootstrap (config) %.3f s\n", r + 1,
                b.seconds, c.seconds);
  }
  auto join = median(baseline);
  auto floor = stable_ms / 1000.0 + probe_ms / 1000.0 + join;
  auto measured = median(config);
  std::printf("formation of %zu processes (median of %d rounds):\n", n, rounds);
  std::printf("  join of %zu nodes to a running one      %.3f s\n", n - 1,
              join);
  std::printf("  bootstrap, config method               %.3f s\n", measured);
  std::printf("  floor: stable_margin %.3f + probe_interval %.3f + join %.3f "
              "= %.3f s\n",
              stable_ms / 1000.0, probe_ms / 1000.0, join, floor);
  std::printf("  ratio config / floor                   %.2f\n",
              measured / floor);
  fs::remove_all(dir);
  return 0;
}
