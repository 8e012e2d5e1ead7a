// The cost of an idle cluster, with real processes (issue 5 "Benchmark
// (bench/membership)", real-process part).
//
// Starts N cluster_node processes (default 5) on 127.0.0.1 that form one
// cluster through the first as seed, with every membership setting at its
// default (Akka's: heartbeat 1s, gossip 1s, leader actions 1s), and, in the
// same run and window, N baseline processes: a raw CAF actor system with
// the same scheduler settings and one idle actor (idle_caf_process). Once
// every node sees all N members up and a warm-up has passed, it measures
// over the window, per process:
//   cpu%     (user + system CPU time) / wall time, from /proc/<pid>/stat;
//   rss      resident memory at the end, VmRSS from /proc/<pid>/status;
// and per cluster node, from the node's own `stats` lines (the transport's
// cumulative frame counters, printed every second):
//   bytes/s and messages/s out and in (heartbeats, heartbeat responses and
//   gossip: an idle cluster sends nothing else).
// Ratios: cpu and rss against the baseline processes; messages/s out
// against the heartbeat floor, 2 * min(N - 1, monitored_by_nr_of_members)
// per second: each node sends a heartbeat per second to each node it
// monitors and answers each heartbeat of each node that monitors it (with
// N - 1 <= 9 every node monitors every other). The rest is gossip.
// The run fails (exit 1) when the cluster does not form within 60 s or a
// node reports a member unreachable during the window (then it was not
// idle).
//
// Usage: membership_idle_bench [--nodes N] [--seconds S] [--warmup S]
//                              [--smoke]
//   --smoke  3 nodes, 3 s window, 1 s warm-up (the ctest run).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "bench_process.hpp"
#include "cluster_output.hpp"
#include "troupe/test/child.hpp"
#include "troupe/test/free_ports.hpp"

#ifndef TROUPE_CLUSTER_NODE
#  error "TROUPE_CLUSTER_NODE must name the cluster_node executable"
#endif
#ifndef TROUPE_IDLE_CAF_PROCESS
#  error "TROUPE_IDLE_CAF_PROCESS must name the idle_caf_process executable"
#endif

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using troupe::bench::cpu_seconds;

namespace {

using troupe::bench::count_of;
using troupe::bench::members_up;

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "membership_idle_bench: %s\n", why.c_str());
  std::exit(1);
}

/// A child process (stdout and stderr into `output`) and its output.
class logged_process {
public:
  logged_process(std::string name, std::vector<std::string> args,
                 fs::path output)
    : output_(output), proc_(name, std::move(args), output) {
    if (proc_.pid() <= 0)
      fail("cannot start " + name);
  }

  ~logged_process() {
    proc_.stop(5s);
  }

  pid_t pid() const noexcept {
    return proc_.pid();
  }

  bool exited() {
    return proc_.crashed();
  }

  std::string output() const {
    std::ifstream in{output_};
    return {std::istreambuf_iterator<char>{in}, {}};
  }

private:
  fs::path output_;
  troupe::test::child proc_;
};

/// Resident memory of `pid` in bytes (VmRSS).
double rss_bytes_of(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stod(line.substr(6)) * 1024.0; // "VmRSS:  1234 kB"
  return 0;
}

/// One `stats` line of a cluster_node.
struct counters {
  double bytes_in = 0, bytes_out = 0, messages_in = 0, messages_out = 0;
};

/// Every `stats` line printed so far, in order.
std::vector<counters> stats_lines(const std::string& text) {
  static const std::regex line{"stats bytes_in=(\\d+) bytes_out=(\\d+) "
                               "messages_in=(\\d+) messages_out=(\\d+)"};
  std::vector<counters> result;
  for (std::sregex_iterator i{text.begin(), text.end(), line}, end; i != end;
       ++i)
    result.push_back({std::stod((*i)[1]), std::stod((*i)[2]),
                      std::stod((*i)[3]), std::stod((*i)[4])});
  return result;
}

double mean(const std::vector<double>& xs) {
  double sum = 0;
  for (auto x : xs)
    sum += x;
  return xs.empty() ? 0 : sum / static_cast<double>(xs.size());
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"The cost of an idle cluster of real processes."};
  size_t n = 5;
  int seconds = 30;
  int warmup = 5;
  bool smoke = false;
  app.add_option("--nodes", n, "Cluster size")->check(CLI::Range(2, 50));
  app.add_option("--seconds", seconds, "Measuring window (s)")
    ->check(CLI::Range(1, 3600));
  app.add_option("--warmup", warmup, "Warm-up after all are up (s)")
    ->check(CLI::Range(0, 600));
  app.add_flag("--smoke", smoke, "3 nodes, 3 s window, 1 s warm-up");
  CLI11_PARSE(app, argc, argv);
  if (smoke) {
    n = 3;
    seconds = 3;
    warmup = 1;
  }
  std::string tmpl = (fs::temp_directory_path() / "troupe-idle-XXXXXX");
  if (::mkdtemp(tmpl.data()) == nullptr)
    fail("mkdtemp failed");
  fs::path dir = tmpl;
  std::vector<uint16_t> ports;
  try {
    ports = troupe::test::free_ports(n);
  } catch (const std::exception& e) {
    fail(e.what());
  }
  auto seed = "127.0.0.1:" + std::to_string(ports[0]);
  std::vector<std::unique_ptr<logged_process>> nodes, baseline;
  auto started = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n; ++i) {
    nodes.push_back(std::make_unique<logged_process>(
      "cluster_node",
      std::vector<std::string>{
        TROUPE_CLUSTER_NODE, "--report_interval=1s", "--cluster.name=idle",
        "--cluster.secret=idle-cluster-benchmark-secret-0123",
        "--cluster.host=127.0.0.1",
        "--cluster.port=" + std::to_string(ports[i]),
        "--cluster.seed_nodes=" + seed, "--log.level=warning"},
      dir / ("node" + std::to_string(i) + ".out")));
    baseline.push_back(std::make_unique<logged_process>(
      "idle_caf_process", std::vector<std::string>{TROUPE_IDLE_CAF_PROCESS},
      dir / ("caf" + std::to_string(i) + ".out")));
  }
  // Formation: every node has printed member_up for all N.
  auto deadline = started + 60s;
  for (;;) {
    bool all = true;
    for (auto& p : nodes) {
      if (p->exited())
        fail("a cluster_node exited:\n" + p->output());
      all = all && members_up(p->output()) >= n;
    }
    if (all)
      break;
    if (std::chrono::steady_clock::now() > deadline)
      fail("the cluster did not form within 60 s; node 0 printed:\n"
           + nodes[0]->output());
    std::this_thread::sleep_for(50ms);
  }
  auto formed
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
        .count();
  std::this_thread::sleep_for(std::chrono::seconds{warmup});
  // The window.
  std::vector<double> cpu0, base_cpu0;
  std::vector<size_t> stats0, unreachable0;
  for (size_t i = 0; i < n; ++i) {
    auto text = nodes[i]->output();
    stats0.push_back(stats_lines(text).size());
    unreachable0.push_back(count_of(text, "event unreachable_member"));
    cpu0.push_back(cpu_seconds(nodes[i]->pid()));
    base_cpu0.push_back(cpu_seconds(baseline[i]->pid()));
  }
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds{seconds});
  auto wall
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  std::vector<double> cpu, base_cpu, rss, base_rss, out_bps, in_bps, out_mps,
    in_mps;
  for (size_t i = 0; i < n; ++i) {
    cpu.push_back((cpu_seconds(nodes[i]->pid()) - cpu0[i]) / wall * 100);
    base_cpu.push_back((cpu_seconds(baseline[i]->pid()) - base_cpu0[i]) / wall
                       * 100);
    rss.push_back(rss_bytes_of(nodes[i]->pid()) / (1 << 20));
    base_rss.push_back(rss_bytes_of(baseline[i]->pid()) / (1 << 20));
    auto text = nodes[i]->output();
    if (count_of(text, "event unreachable_member") != unreachable0[i])
      fail("node " + std::to_string(i)
           + " reported a member unreachable during the window:\n" + text);
    auto lines = stats_lines(text);
    // From the last line before the window to the last line: one line per
    // second.
    if (stats0[i] == 0 || lines.size() < stats0[i] + 1)
      fail("node " + std::to_string(i) + " printed too few stats lines");
    auto& a = lines[stats0[i] - 1];
    auto& b = lines.back();
    auto secs = static_cast<double>(lines.size() - stats0[i]);
    out_bps.push_back((b.bytes_out - a.bytes_out) / secs);
    in_bps.push_back((b.bytes_in - a.bytes_in) / secs);
    out_mps.push_back((b.messages_out - a.messages_out) / secs);
    in_mps.push_back((b.messages_in - a.messages_in) / secs);
  }
  auto monitored = static_cast<double>(std::min<size_t>(n - 1, 9));
  auto floor = 2 * monitored;
  std::printf("idle cluster: %zu cluster_node processes (default membership "
              "settings) and %zu raw CAF processes (baseline), formed in "
              "%.1f s, warm-up %d s, window %.1f s\n",
              n, n, formed, warmup, wall);
  std::printf("%5s %8s %8s %9s %9s %10s %10s %8s %8s\n", "node", "cpu%",
              "base%", "rss_MiB", "base_MiB", "out_B/s", "in_B/s", "out_m/s",
              "in_m/s");
  for (size_t i = 0; i < n; ++i)
    std::printf("%5zu %8.2f %8.2f %9.1f %9.1f %10.0f %10.0f %8.1f %8.1f\n", i,
                cpu[i], base_cpu[i], rss[i], base_rss[i], out_bps[i], in_bps[i],
                out_mps[i], in_mps[i]);
  auto ratio = [](double x, double base) { return base > 0 ? x / base : 0.0; };
  std::printf("per node (mean): cpu %.2f%% vs raw CAF %.2f%% (ratio %.2f); "
              "rss %.1f MiB vs raw CAF %.1f MiB (ratio %.2f)\n",
              mean(cpu), mean(base_cpu), ratio(mean(cpu), mean(base_cpu)),
              mean(rss), mean(base_rss), ratio(mean(rss), mean(base_rss)));
  std::printf("per node (mean): %.0f bytes/s out, %.0f bytes/s in; %.1f "
              "messages/s out vs heartbeat floor %.0f/s (ratio %.2f; the rest "
              "is gossip), %.0f bytes per message\n",
              mean(out_bps), mean(in_bps), mean(out_mps), floor,
              ratio(mean(out_mps), floor), ratio(mean(out_bps), mean(out_mps)));
  nodes.clear();
  baseline.clear();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return 0;
}
