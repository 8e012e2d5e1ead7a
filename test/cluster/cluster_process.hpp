#pragma once

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include <csignal>
#include <sys/wait.h>

#include <catch2/catch.hpp>

#include "cluster_node_flags.hpp"
#include "troupe/test/child_process.hpp"
#include "troupe/test/eventually.hpp"
#include "troupe/test/free_ports.hpp"
#include "troupe/test/journal_file.hpp"

#ifndef TROUPE_CLUSTER_NODE
#  error "TROUPE_CLUSTER_NODE must name the cluster_node executable"
#endif

/// @file
/// A cluster_node process (test/cluster/cluster_node.cpp) as the
/// multi-process cluster tests see it: started with DESIGN.md §10's
/// shortened settings, its address from its `ready` line, and its
/// `event <kind> <address>` lines.

namespace troupe::test {

using namespace std::chrono_literals;

/// One cluster_node process, its output (stdout and the log on stderr) in
/// `<dir>/<name>.out`; killed on
/// destruction. `launcher` goes before the executable (e.g. `ip netns exec
/// <ns>`, which execs it: the child's pid is the node's).
class cluster_process {
public:
  cluster_process(const temp_dir& dir, std::string name,
                  std::vector<std::string> flags,
                  std::vector<std::string> launcher = {})
    : name_(std::move(name)), out_(dir.path / (name_ + ".out")),
      proc_(name_, command(std::move(launcher), std::move(flags)), out_) {
    REQUIRE(proc_.pid() > 0);
  }

  /// Waits for the `ready <address>` line; fails the test if the process
  /// exits first or the line does not come within `bound`.
  void wait_ready(std::chrono::milliseconds bound = 20s) {
    auto ok = eventually(
      [&] {
        if (proc_.crashed())
          FAIL(name_ << " exited:\n" << output());
        return !ready_line().empty();
      },
      bound);
    INFO(name_ << " output:\n" << output());
    REQUIRE(ok);
    addr_ = ready_line().substr(6);
  }

  const std::string& name() const noexcept {
    return name_;
  }

  /// `host:port#uid`, from the ready line.
  const std::string& addr() const noexcept {
    return addr_;
  }

  child& proc() noexcept {
    return proc_;
  }

  std::string output() const {
    return journal_text(out_);
  }

  /// Complete lines so far (a line still being written is left out).
  std::vector<std::string> lines() const {
    return journal_lines(out_);
  }

  /// True if a line equals `line`.
  bool has_line(const std::string& line) const {
    auto ls = lines();
    return std::find(ls.begin(), ls.end(), line) != ls.end();
  }

  /// The number of lines equal to `event <kind> <of>`.
  size_t count(const std::string& kind, const std::string& of) const {
    auto ls = lines();
    return static_cast<size_t>(
      std::count(ls.begin(), ls.end(), "event " + kind + " " + of));
  }

  /// True if `event <kind> <of>` was printed more than `before` times.
  bool printed(const std::string& kind, const std::string& of,
               size_t before = 0) const {
    return count(kind, of) > before;
  }

private:
  /// The `ready <address>` line, or empty. (The log's lines on stderr go
  /// to the same file; every line of ours is one write, so they do not
  /// interleave within a line.)
  std::string ready_line() const {
    for (auto& l : lines())
      if (l.rfind("ready ", 0) == 0)
        return l;
    return {};
  }

  static std::vector<std::string> command(std::vector<std::string> launcher,
                                          std::vector<std::string> flags) {
    launcher.emplace_back(TROUPE_CLUSTER_NODE);
    launcher.insert(launcher.end(), flags.begin(), flags.end());
    return launcher;
  }

  std::string name_;
  fs::path out_;
  child proc_;
  std::string addr_;
};

using cluster_processes = std::vector<std::unique_ptr<cluster_process>>;

/// True if every process printed `event member_up <a>` for every process's
/// address `a` (itself included).
inline bool everyone_saw_all_up(const cluster_processes& ps) {
  for (auto& p : ps)
    for (auto& q : ps)
      if (!p->printed("member_up", q->addr()))
        return false;
  return true;
}

/// True if no process sees another unreachable any more: for every pair,
/// each `unreachable_member` line was followed by a `reachable_member` line
/// (the two alternate per member, so their counts are equal).
inline bool everyone_sees_all_reachable(const cluster_processes& ps) {
  for (auto& p : ps)
    for (auto& q : ps)
      if (p->count("unreachable_member", q->addr())
          != p->count("reachable_member", q->addr()))
        return false;
  return true;
}

/// Checks that no process printed `member_downed` or `member_removed` for
/// any process, and that each still runs: nothing downs (the resolver's
/// stable_after, 20 s by default, is far longer than these faults last).
inline void check_nobody_downed(const cluster_processes& ps) {
  for (auto& p : ps) {
    INFO(p->name() << " output:\n" << p->output());
    CHECK(p->proc().running());
    for (auto& q : ps) {
      CHECK(!p->printed("member_downed", q->addr()));
      CHECK(!p->printed("member_removed", q->addr()));
    }
  }
}

/// Stops every process with SIGTERM and checks that each shut down
/// gracefully: exit code 0 within 10 s after printing `stopped`.
inline void check_graceful_stop(const cluster_processes& ps) {
  for (auto& p : ps)
    p->proc().signal(SIGTERM);
  for (auto& p : ps) {
    INFO(p->name() << " output:\n" << p->output());
    CHECK(p->proc().stop(10s));
    REQUIRE(p->proc().status());
    CHECK(WIFEXITED(*p->proc().status()));
    CHECK(WEXITSTATUS(*p->proc().status()) == 0);
    CHECK(p->has_line("stopped"));
  }
}

/// Every process's output, for a failure's message (slots not started yet
/// are left out).
inline std::string outputs(const cluster_processes& ps) {
  std::ostringstream out;
  for (auto& p : ps)
    if (p)
      out << "---- " << p->name() << " (" << p->addr() << ")\n" << p->output();
  return out.str();
}

/// `n` cluster_node processes on 127.0.0.1 (free ports; the first is the
/// seed), named node1..node<n>, with cluster_node_flags plus `extra`.
inline cluster_processes
loopback_processes(const temp_dir& dir, size_t n,
                   const std::vector<std::string>& extra = {}) {
  auto ports = free_ports(n);
  auto seed = "127.0.0.1:" + std::to_string(ports[0]);
  cluster_processes ps;
  for (size_t i = 0; i < n; ++i) {
    auto flags = cluster_node_flags("127.0.0.1", ports[i], seed);
    flags.insert(flags.end(), extra.begin(), extra.end());
    ps.push_back(std::make_unique<cluster_process>(
      dir, "node" + std::to_string(i + 1), std::move(flags)));
  }
  return ps;
}

/// Waits for every process's ready line, then until every process printed
/// member_up for every process (30 s).
inline void require_all_up(cluster_processes& ps) {
  for (auto& p : ps)
    p->wait_ready();
  auto ok = eventually([&] { return everyone_saw_all_up(ps); }, 30s);
  INFO(outputs(ps));
  REQUIRE(ok);
}

/// A fault and its healing: runs `inject`, waits until
/// `printed_by_all("unreachable_member")` (15 s), runs `heal` (whatever
/// happened), waits until `printed_by_all("reachable_member")` and no
/// process sees another unreachable any more (15 s each). Then checks that
/// nobody was downed, and stops every process gracefully.
template <class Inject, class Heal, class Printed>
void check_fault_and_heal(cluster_processes& ps, Inject inject, Heal heal,
                          Printed printed_by_all) {
  auto shows = [&](const char* kind) {
    return eventually([&] { return printed_by_all(kind); }, 15s);
  };
  inject();
  auto unreachable = shows("unreachable_member");
  heal();
  auto reachable
    = unreachable && shows("reachable_member")
      && eventually([&] { return everyone_sees_all_reachable(ps); }, 15s);
  {
    INFO(outputs(ps));
    REQUIRE(unreachable);
    CHECK(reachable);
  }
  check_nobody_downed(ps);
  check_graceful_stop(ps);
}

} // namespace troupe::test
