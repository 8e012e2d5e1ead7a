#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

#include "troupe/chaos/nemesis_schedule.hpp"

/// @file
/// One chaos run (docs/design/chaos.md): a real etcd behind a delay proxy,
/// the demo's store, N troupe-demo-node processes with the etcd lease
/// backend, the demo's client load, a nemesis that follows a seeded
/// schedule, a settle period, a convergence probe, then the history
/// checker's verdict. Everything it does to the cluster goes to
/// DIR/nemesis.jsonl; the verdict comes only from the files (the nodes'
/// histories, the client's log, the store's ledger and journal), never
/// from what the nodes report about themselves.

namespace troupe::chaos {

/// What a run does; every field has the short CI run's default.
struct run_options {
  /// The schedule's seed (the same seed replays the same schedule).
  uint64_t seed = 1;
  /// How long the nemesis injects faults.
  std::chrono::seconds duration{75};
  /// Nodes (3 to 9).
  size_t nodes = 5;
  /// The run directory (created; must be empty or absent).
  std::filesystem::path dir;
  /// Where troupe-demo-node and troupe-demo-store are.
  std::filesystem::path bin_dir;
  /// "auto" (netns when root, else transport), "netns" or "transport".
  std::string network = "auto";
  /// The quiet time after the nemesis stops, before the probe.
  std::chrono::seconds settle{10};
  /// How long the probe may take to see every account acknowledged and a
  /// new ledger record.
  std::chrono::seconds probe_timeout{45};
  /// The client's deposits per second and accounts.
  double rate = 40;
  uint32_t accounts = 24;
  /// The fault kinds the schedule draws from (nemesis_ops.hpp's names,
  /// comma-separated; "all").
  std::string faults = "all";
  /// Print one line per nemesis action.
  bool verbose = true;
};

/// The seeded schedule of a run with `opts` (the demo's timing, nodes
/// node-1..node-N). Errors (std::invalid_argument): the schedule's, e.g. an
/// unknown fault kind or a duration too short for one fault.
nemesis_schedule plan_run(const run_options& opts);

/// Runs it; the process's exit code: 0 no violation, 1 violations (the
/// report, the seed and a timeline printed), 2 the run could not be set
/// up (why printed).
int run_chaos(const run_options& opts);

} // namespace troupe::chaos
