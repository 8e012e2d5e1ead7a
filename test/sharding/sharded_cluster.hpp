#pragma once

// The multi-process sharding cluster of the integration tests: cluster_node
// processes on 127.0.0.1 in slots, each with a shard region of "acct"
// (--sharding), slot 0 running the client; the exit times the oracle needs;
// waits on the shared journal (sharding_journal.hpp) with deadlines. Used by
// sharding_multiprocess_test and the coordinated shutdown's tests
// (test/operating).

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster_process.hpp"
#include "sharding_journal.hpp"
#include "troupe/sharding/shard_id.hpp"

namespace troupe::test {

inline constexpr uint32_t number_of_shards = 100;

/// The flags of a node with the region of "acct" (the settings above).
inline std::vector<std::string>
sharding_flags(const std::filesystem::path& journal) {
  return {"--sharding=acct",
          "--sharding_journal=" + journal.string(),
          "--sharding.number_of_shards=" + std::to_string(number_of_shards),
          "--sharding.retry_interval=300ms",
          "--sharding.rebalance_interval=1s",
          "--sharding.hand_off_timeout=10s",
          "--downing.active_strategy=keep_majority",
          "--downing.stable_after=2s"};
}

/// The coordinator lease with the file backend in `dir` (ttl 3 s).
inline std::vector<std::string> lease_flags(const std::filesystem::path& dir) {
  return {"--sharding.use_lease=true", "--lease.backend=file", "--lease.ttl=3s",
          "--lease.renewal_interval=1s",
          "--lease.file.directory=" + dir.string()};
}

/// A cluster of cluster_node processes in slots (a restarted node gets a new
/// process, and so a new address, in its slot, on the same port); slot 0 is
/// the seed and runs the client. Records the exit time of every process
/// that ended (after reaping it) for the oracle.
struct sharded_cluster {
  temp_dir dir;
  std::filesystem::path journal = dir.path / "journal";
  std::filesystem::path client_log = dir.path / "client.log";
  std::filesystem::path leases = dir.path / "leases";
  std::vector<uint16_t> ports;
  std::vector<std::vector<std::string>> flags;
  cluster_processes ps;
  std::vector<int> generation;
  exit_times exits;

  /// `slots` slots; slot 0 sends to `entities` entities; `extra(slot)` adds
  /// flags.
  template <class Extra>
  sharded_cluster(size_t slots, uint64_t entities, Extra extra)
    : ports(free_ports(slots)), ps(slots), generation(slots, 0) {
    auto seed = "127.0.0.1:" + std::to_string(ports[0]);
    for (size_t i = 0; i < slots; ++i) {
      auto f = cluster_node_flags("127.0.0.1", ports[i], seed);
      for (auto& x : sharding_flags(journal))
        f.push_back(x);
      if (i == 0) {
        f.push_back("--sharding_client=" + std::to_string(entities));
        f.push_back("--sharding_client_log=" + client_log.string());
      }
      for (auto& x : extra(i))
        f.push_back(x);
      flags.push_back(std::move(f));
    }
  }

  /// Starts the process of `slot` (without waiting for it).
  void start(size_t slot) {
    auto name = "node" + std::to_string(slot + 1);
    if (generation[slot] > 0)
      name += "-" + std::to_string(generation[slot]);
    ++generation[slot];
    ps[slot] = std::make_unique<cluster_process>(dir, name, flags[slot]);
  }

  /// Starts the slots [0, n) and waits until each saw all up.
  void start_all_up(size_t n) {
    for (size_t i = 0; i < n; ++i)
      start(i);
    cluster_processes up;
    for (size_t i = 0; i < n; ++i)
      ps[i]->wait_ready();
    auto ok = eventually(
      [&] {
        for (size_t i = 0; i < n; ++i)
          for (size_t k = 0; k < n; ++k)
            if (!ps[i]->printed("member_up", ps[k]->addr()))
              return false;
        return true;
      },
      30s);
    INFO(outputs());
    REQUIRE(ok);
  }

  /// Waits until the node in slot 0 saw `slot`'s process up.
  void wait_up(size_t slot) {
    ps[slot]->wait_ready();
    auto ok = eventually(
      [&] { return ps[0]->printed("member_up", ps[slot]->addr()); }, 30s);
    INFO(outputs());
    REQUIRE(ok);
  }

  /// kill -9; returns the time just before the signal.
  uint64_t kill(size_t slot) {
    auto t = monotonic_ns();
    ps[slot]->proc().signal(SIGKILL);
    REQUIRE(ps[slot]->proc().reap(10s));
    exits[ps[slot]->addr()] = monotonic_ns();
    return t;
  }

  /// Sends SIGTERM to every slot in `slots`, then waits for each (20 s,
  /// then SIGKILL, which fails the test: a graceful stop must end).
  ///
  /// Each exit time is taken when that process is reaped, all of them
  /// polled together: reaping one after the other stamped a process that
  /// exited while the first was still stopping with the first's (later)
  /// time, and the checker then saw its incarnations overlap their
  /// successors (a false "two live incarnations" under load).
  void terminate(const std::vector<size_t>& slots) {
    for (auto s : slots)
      ps[s]->proc().signal(SIGTERM);
    std::vector<size_t> pending = slots;
    auto until = std::chrono::steady_clock::now() + 20s;
    while (!pending.empty() && std::chrono::steady_clock::now() < until) {
      std::erase_if(pending, [&](size_t s) {
        if (!ps[s]->proc().reap(0ms))
          return false;
        exits[ps[s]->addr()] = monotonic_ns();
        return true;
      });
      std::this_thread::sleep_for(5ms);
    }
    for (auto s : slots) {
      auto graceful
        = std::find(pending.begin(), pending.end(), s) == pending.end();
      if (!graceful) {
        ps[s]->proc().stop(1s);
        exits[ps[s]->addr()] = monotonic_ns();
      }
      INFO(ps[s]->name() << " output:\n" << ps[s]->output());
      CHECK(graceful);
    }
  }

  std::string outputs() const {
    std::ostringstream out;
    for (auto& p : ps)
      if (p)
        out << "---- " << p->name() << " (" << p->addr() << ")\n"
            << p->output();
    return out.str();
  }

  sharding_journal read() const {
    return read_sharding_journal(journal);
  }

  /// Waits until each of the `n` entities e0..e<n-1> handled a message
  /// after `since_ns` (all of them get traffic again).
  void wait_all_handled(uint64_t n, uint64_t since_ns,
                        std::chrono::milliseconds bound) {
    auto ok = eventually(
      [&] { return entities_handled_since(read(), since_ns).size() >= n; },
      bound, 100ms);
    INFO("entities handled since then: "
         << entities_handled_since(read(), since_ns).size() << " of " << n);
    INFO(outputs());
    REQUIRE(ok);
  }

  /// The oracle's verdict; fails the test on any violation.
  sharding_verdict judge() const {
    auto v = judge_sharding(journal, client_log, exits);
    INFO(to_string(v));
    CHECK(v.ok());
    CHECK(v.acked > 0);
    return v;
  }
};

inline std::vector<std::string> no_extra(size_t) {
  return {};
}

/// The shard of each live entity's home: shard -> node (a shard whose
/// entities live on several nodes would be two homes: the last one wins
/// here; the oracle catches the overlap itself).
inline std::map<std::string, std::string> shard_homes(const sharding_journal& j,
                                                      const exit_times& exits) {
  std::map<std::string, std::string> result;
  for (auto& [entity, node] : live_homes(j, exits))
    result[*sharding::default_shard_id(entity, number_of_shards)] = node;
  return result;
}

inline double share_of(const std::map<std::string, std::string>& homes,
                       const std::string& node) {
  if (homes.empty())
    return 0;
  auto n = std::count_if(homes.begin(), homes.end(),
                         [&](auto& kv) { return kv.second == node; });
  return static_cast<double>(n) / static_cast<double>(homes.size());
}

/// Waits until the first allocation and rebalance among the first `n`
/// slots settled: every shard has a home, each node hosts at least 0.9 / n
/// of them, and nothing moved for 2 s (40 s); returns the homes.
inline std::map<std::string, std::string>
wait_balanced(const sharded_cluster& c, size_t n) {
  std::map<std::string, std::string> homes;
  auto since = monotonic_ns();
  auto ok = eventually(
    [&] {
      auto now = shard_homes(c.read(), c.exits);
      if (now != homes) {
        homes = std::move(now);
        since = monotonic_ns();
      }
      if (homes.size() < number_of_shards)
        return false;
      for (size_t i = 0; i < n; ++i)
        if (share_of(homes, c.ps[i]->addr()) < 0.9 / static_cast<double>(n))
          return false;
      return seconds_between(since, monotonic_ns()) >= 2.0;
    },
    40s, 200ms);
  INFO(c.outputs());
  REQUIRE(ok);
  return homes;
}

} // namespace troupe::test
