#pragma once

// The cluster of the operating tests: cluster_node processes on 127.0.0.1,
// slot 0 the seed and the client (no "worker" role: it hosts neither the
// singleton nor shards), slots 1-3 workers that host the singleton "jobs",
// the shards of "acct" and the shard coordinator, both singletons under file
// leases with a ttl of 20 s.
//
// Verdicts come from the shared journals and the client's acknowledgement
// log (DESIGN.md §10), never from the nodes' reports: the singleton journal
// (at most one instance at a time, tokens increasing), the sharding journal
// (at most one live incarnation per entity and one coordinator, every
// acknowledged message handled exactly once by the incarnation its ack
// names).

#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "cluster_process.hpp"
#include "sharded_cluster.hpp"
#include "sharding_journal.hpp"
#include "singleton_processes.hpp"

namespace troupe::test {

inline constexpr uint64_t entities = 300;
// Far above every hand-over: a successor that had to wait for the old
// holder's lease to expire would start 20 s late.
inline constexpr auto lease_ttl = std::chrono::seconds{20};
// A lease released on shutdown is acquired by the next holder at its next
// attempt, every 500 ms; 3 s is the generous bound of "one retry interval
// plus the hand-over's messages", still far below the ttl.
inline constexpr double release_bound_s = 3.0;

/// The flags of every slot: the singleton "jobs" and the coordinator under
/// file leases (ttl 20 s), roles as above.
struct worker_cluster {
  temp_dir dir2; // the singleton journal and the leases
  std::filesystem::path singleton_journal = dir2.path / "singleton";
  std::filesystem::path leases = dir2.path / "leases";
  sharded_cluster c;

  explicit worker_cluster(std::function<std::vector<std::string>(size_t)> more
                          = [](size_t) { return std::vector<std::string>{}; })
    : c{4, entities, [this, more](size_t slot) {
          std::vector<std::string> f{
            "--singleton=jobs",
            "--singleton_journal=" + singleton_journal.string(),
            "--singleton.role=worker", "--sharding.role=worker",
            "--singleton.hand_over_retry_interval=200ms",
            "--singleton.proxy.identification_interval=200ms",
            "--singleton.restart_min_backoff=200ms",
            "--singleton.use_lease=true",
            "--singleton.lease_retry_interval=500ms",
            "--sharding.use_lease=true", "--lease.backend=file",
            "--lease.ttl=20s", "--lease.renewal_interval=1s",
            "--lease.file.directory=" + leases.string(),
            // Longer than sharded_cluster::terminate's 20 s bound: a
            // hand-off or hand-over stuck until its phase's timeout fails
            // the test instead of passing late.
            "--coordinated_shutdown.cluster_sharding_shutdown_region.timeout="
            "30s",
            "--coordinated_shutdown.cluster_exiting.timeout=30s"};
          if (slot > 0)
            f.emplace_back("--cluster.roles=worker");
          for (auto& x : more(slot))
            f.push_back(std::move(x));
          return f;
        }} {}

  /// The slot of the process with address `addr` (0 when none).
  size_t slot_of(const std::string& addr) const {
    for (size_t i = 0; i < c.ps.size(); ++i)
      if (c.ps[i] && c.ps[i]->addr() == addr)
        return i;
    return 0;
  }

  /// The live singleton instance (a start without a stop), waited for.
  instance_window live_instance(std::chrono::milliseconds bound) {
    std::optional<instance_window> live;
    auto ok = eventually(
      [&] {
        for (auto& w : instance_windows(read_journal(singleton_journal)))
          if (!w.stop_ns && slot_of(w.node) > 0
              && !c.ps[slot_of(w.node)]->proc().status())
            live = w;
        return live.has_value();
      },
      bound, 100ms);
    INFO(c.outputs() << "---- singleton journal\n"
                     << journal_text(singleton_journal));
    REQUIRE(ok);
    return *live;
  }

  /// Waits until a singleton instance started on a node other than `old`'s
  /// after `old` started.
  instance_window successor_of(const instance_window& old,
                               std::chrono::milliseconds bound) {
    std::optional<instance_window> next;
    auto ok = eventually(
      [&] {
        for (auto& w : instance_windows(read_journal(singleton_journal)))
          if (w.node != old.node && w.first_ns > old.first_ns)
            next = w;
        return next.has_value();
      },
      bound, 50ms);
    INFO(c.outputs() << "---- singleton journal\n"
                     << journal_text(singleton_journal));
    REQUIRE(ok);
    return *next;
  }

  /// The exit code of the process in `slot`, which must have exited.
  int exit_code(size_t slot) {
    auto st = c.ps[slot]->proc().status();
    REQUIRE(st);
    REQUIRE(WIFEXITED(*st));
    return WEXITSTATUS(*st);
  }

  /// No process printed `kind` for `addr` (unreachable_member,
  /// member_downed: the node left without failure detection or downing).
  void check_nobody_printed(const char* kind, const std::string& addr) {
    for (auto& p : c.ps)
      if (p) {
        INFO(p->name() << " printed " << kind << " " << addr);
        CHECK_FALSE(p->printed(kind, addr));
      }
  }

  /// Starts the slots one after the other, each up before the next starts,
  /// so that their age is their slot order: worker 1 (slot 1) is the
  /// oldest worker and hosts the singleton, slot 2 is the next oldest.
  void start_in_order(size_t n) {
    c.start_all_up(2);
    for (size_t s = 2; s < n; ++s) {
      c.start(s);
      c.wait_up(s);
    }
  }

  /// Every verdict the tests end with.
  void judge() {
    c.judge();
    check_oracle(singleton_journal, true);
  }
};

/// The live coordinator (from the sharding journal), if any.
inline std::optional<incarnation_window>
live_coordinator(const sharded_cluster& c) {
  for (auto& [key, w] : c.read().coordinators)
    if (end_of(w, c.exits) == std::numeric_limits<uint64_t>::max())
      return w;
  return std::nullopt;
}

} // namespace troupe::test
