#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "client/demo_client.hpp"
#include "cluster_view.hpp"
#include "console_view.hpp"
#include "demo_cluster.hpp"
#include "demo_http.hpp"
#include "demo_options.hpp"
#include "demo_timing.hpp"
#include "verdict/verdict_core.hpp"

/// @file
/// One run of the demo, start to verdict (demo_launcher.cpp).

namespace troupe::demo {

/// What the launcher saw of the failover (the verdict measures it again
/// from the store's and the client's files).
struct failover_watch {
  /// "kill" or "partition".
  std::string failure;
  /// The node killed (or cut off) and the token its singleton instance
  /// held.
  std::string victim;
  /// The victim's app API, `host:port` (its acks do not count as the
  /// shards' failover).
  std::string victim_api;
  std::string victim_address;
  uint64_t victim_token = 0;
  /// The shards the victim hosted when it was killed.
  std::set<std::string> victim_shards;
  /// CLOCK_MONOTONIC of the kill or the cut, ns (the store stamps its
  /// lines with the same clock).
  int64_t kill_ns = 0;
  /// When the management endpoints first showed a new host with a higher
  /// token, and no shard on the victim any more (since the kill).
  std::optional<runtime::timespan> singleton_seen;
  std::optional<runtime::timespan> shards_seen;
  std::string new_host;
  uint64_t new_token = 0;
};

/// The demo, start to verdict. Not thread-safe (the main thread);
/// `interrupted` is set by the signal handler.
class demo_run {
public:
  demo_run(options opts, const std::atomic<bool>& interrupted);
  ~demo_run();

  demo_run(const demo_run&) = delete;
  demo_run& operator=(const demo_run&) = delete;

  /// Runs the demo; the process's exit code (0, 1, 2 or 130).
  int run();

private:
  void say(const std::string& text);
  bool lock_dir();
  bool start_processes();
  bool wait_for_members();
  bool start_load();
  void show(const cluster_snapshot& snap);
  void run_for(runtime::timespan d, const char* phase);
  bool fail_singleton_host();
  bool cut_off(const node_ports& victim);
  std::string lease_problem();
  void pump_and_report();
  void watch_failover();
  void stop_all();
  int finish(bool completed);
  std::vector<verdict::failover_measure> failover_measures();

  options opts_;
  const std::atomic<bool>& interrupted_;
  demo_timing timing_;
  demo_cluster cluster_;
  http_getter http_;
  std::chrono::steady_clock::time_point start_;
  console_view console_;
  /// What the run is doing, for an interrupted run's last line.
  std::string phase_ = "starting the processes";
  int lock_fd_ = -1;
  std::optional<failover_watch> failover_;
  // Nodes behind the partition: not polled (their view is their own).
  std::set<std::string> cut_off_;
  // Nodes whose end was reported (pump_and_report).
  std::set<std::string> ended_;
  // Processes that ended by a signal the launcher did not send.
  std::vector<std::string> crashes_;
  std::optional<std::string> setup_error_;
  std::unique_ptr<client::load_driver> load_;
  std::chrono::steady_clock::time_point load_started_;
  runtime::timespan load_ran_{};
};

} // namespace troupe::demo
