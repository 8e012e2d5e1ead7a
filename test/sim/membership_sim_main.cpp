// membership_sim: runs seeds of the membership simulation and prints the
// verdict of each; a failure prints its trace.
//
//   membership_sim --seed 17          one seed, trace on failure
//   membership_sim --seeds 0-499      a range
//   membership_sim --seed 17 --bug forget_tombstones
//   membership_sim --seeds 0-99 --verbose   one line per seed
//   membership_sim --downing keep_majority --seeds 1-1000
//                                    the split brain resolver scenario
//   membership_sim --downing lease_majority --seed 7 --downing-bug reversed
//   membership_sim --singleton --seeds 0-499     the cluster singleton
//   membership_sim --singleton --lease --seed 3 --singleton-bug reuse_token
//   membership_sim --sharding --seeds 0-499      cluster sharding
//   membership_sim --sharding --lease --seed 5 --sharding-bug ignore_lease
//   membership_sim --sharding --rolling --seeds 0-99   scenario S4
//   membership_sim --sharding --rolling --upgrade --seeds 0-99
//                                  S4 with a newer app_version per restart
//   membership_sim --bootstrap --seeds 0-999     cluster bootstrap
//   membership_sim --bootstrap --seed 4 --bootstrap-bug
//   found_without_all_probed
//   membership_sim --merge --seeds 0-499   two clusters made apart, then
//                                  connected: one cluster at the end
//   membership_sim --merge --seed 3 --bug loser_never_leaves

#include <chrono>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "troupe/sim/bootstrap_world.hpp"
#include "troupe/sim/downing_world.hpp"
#include "troupe/sim/membership_world.hpp"
#include "troupe/sim/merge_scenario.hpp"
#include "troupe/sim/sharding_world.hpp"
#include "troupe/sim/singleton_world.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Runs seeds of troupe's membership simulation"};
  uint64_t seed = 0;
  std::string range;
  std::string bug = "none";
  bool verbose = false;
  auto* one = app.add_option("--seed", seed, "run one seed");
  auto* many = app.add_option("--seeds", range, "run a range, e.g. 0-499");
  one->excludes(many);
  app
    .add_option("--bug", bug,
                "plant a bug: none, status_regression, forget_tombstones, "
                "lead_without_being_leader, loser_never_leaves")
    ->check(CLI::IsMember({"none", "status_regression", "forget_tombstones",
                           "lead_without_being_leader", "loser_never_leaves"}));
  bool merge = false;
  auto* merge_flag = app.add_flag(
    "--merge", merge,
    "run the scenario of two clusters made apart, then connected");
  app.add_flag("--verbose", verbose, "one line per seed");
  std::string downing;
  std::string downing_bug = "none";
  app
    .add_option("--downing", downing,
                "run the split brain resolver scenario with this strategy")
    ->check(CLI::IsMember({"keep_majority", "lease_majority"}));
  app
    .add_option("--downing-bug", downing_bug,
                "plant a downing bug: none, always_down_unreachable, "
                "reversed, keep_running_when_downed, benign_conflict_refused")
    ->check(
      CLI::IsMember({"none", "always_down_unreachable", "reversed",
                     "keep_running_when_downed", "benign_conflict_refused"}));
  bool singleton = false;
  troupe::sim::singleton_scenario singleton_options;
  std::string singleton_bug = "none";
  auto* singleton_flag = app.add_flag("--singleton", singleton,
                                      "run the cluster singleton scenario");
  app.add_flag("--lease", singleton_options.use_lease,
               "the singleton or sharding scenario with a lease");
  app
    .add_option("--singleton-bug", singleton_bug,
                "plant a singleton manager bug: none, skip_hand_over, "
                "trust_any_done, ignore_lease_lost, reuse_token")
    ->check(CLI::IsMember({"none", "skip_hand_over", "trust_any_done",
                           "ignore_lease_lost", "reuse_token"}));
  singleton_flag->excludes("--downing");
  bool sharding = false;
  troupe::sim::sharding_scenario sharding_options;
  std::string sharding_bug = "none";
  auto* sharding_flag
    = app.add_flag("--sharding", sharding, "run the cluster sharding scenario");
  app.add_flag("--rolling", sharding_options.rolling,
               "the sharding scenario as rolling restarts (S4)");
  app.add_flag("--upgrade", sharding_options.upgrade,
               "with --rolling: every restart runs a newer app_version");
  app.add_option("--slow-stop", sharding_options.slow_stop,
                 "the chance that an entity takes 1-4 s to stop");
  app
    .add_option("--sharding-bug", sharding_bug,
                "plant a sharding bug: none, skip_recovery, no_removal_margin, "
                "trust_any_shard_stopped, ignore_lease, early_shard_stopped, "
                "duplicate_forwards")
    ->check([&](const std::string& x) {
      troupe::sim::sharding_scenario probe;
      return troupe::sim::sharding_bug_named(x, probe)
               ? std::string{}
               : "unknown sharding bug " + x;
    });
  sharding_flag->excludes("--downing");
  sharding_flag->excludes(singleton_flag);
  bool bootstrap = false;
  std::string bootstrap_bug = "none";
  auto* bootstrap_flag = app.add_flag("--bootstrap", bootstrap,
                                      "run the cluster bootstrap scenario");
  app
    .add_option("--bootstrap-bug", bootstrap_bug,
                "plant a bootstrap bug: none, found_without_all_probed, "
                "never_found")
    ->check(CLI::IsMember({"none", "found_without_all_probed", "never_found"}));
  bootstrap_flag->excludes("--downing");
  bootstrap_flag->excludes(singleton_flag);
  bootstrap_flag->excludes(sharding_flag);
  merge_flag->excludes(bootstrap_flag);
  merge_flag->excludes("--downing");
  merge_flag->excludes(singleton_flag);
  merge_flag->excludes(sharding_flag);
  CLI11_PARSE(app, argc, argv);
  using boot_planted = troupe::bootstrap::planted_bug;
  auto boot_bug = bootstrap_bug == "found_without_all_probed"
                    ? boot_planted::found_without_all_probed
                  : bootstrap_bug == "never_found" ? boot_planted::never_found
                                                   : boot_planted::none;
  troupe::sim::sharding_bug_named(sharding_bug, sharding_options);
  sharding_options.use_lease = singleton_options.use_lease;
  singleton_options.bug = *troupe::sim::singleton_bug_named(singleton_bug);
  uint64_t first = seed;
  uint64_t last = seed;
  if (!range.empty()) {
    auto dash = range.find('-');
    try {
      first = std::stoull(range.substr(0, dash));
      last = dash == std::string::npos ? first
                                       : std::stoull(range.substr(dash + 1));
    } catch (const std::exception&) {
      std::fprintf(stderr, "--seeds: expected FIRST-LAST, got \"%s\"\n",
                   range.c_str());
      return 2;
    }
    if (last < first) {
      std::fprintf(stderr, "--seeds: %s ends before it starts\n",
                   range.c_str());
      return 2;
    }
  }
  using troupe::cluster::planted_bug;
  auto planted = bug == "status_regression"   ? planted_bug::status_regression
                 : bug == "forget_tombstones" ? planted_bug::forget_tombstones
                 : bug == "lead_without_being_leader"
                   ? planted_bug::lead_without_being_leader
                 : bug == "loser_never_leaves" ? planted_bug::loser_never_leaves
                                               : planted_bug::none;
  troupe::sim::downing_scenario scenario;
  scenario.strategy = downing;
  using troupe::downing::downing_bug;
  scenario.bug = downing_bug == "always_down_unreachable"
                   ? downing_bug::always_down_unreachable
                 : downing_bug == "reversed" ? downing_bug::reversed_decision
                                             : downing_bug::none;
  scenario.keep_running_when_downed = downing_bug == "keep_running_when_downed";
  scenario.benign_conflict_as_refused
    = downing_bug == "benign_conflict_refused";
  int failures = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (auto s = first; s <= last; ++s) {
    auto r
      = bootstrap   ? troupe::sim::run_bootstrap_scenario(s, boot_bug)
        : merge     ? troupe::sim::run_merge_scenario(s, planted)
        : sharding  ? troupe::sim::run_sharding_scenario(s, sharding_options)
        : singleton ? troupe::sim::run_singleton_scenario(s, singleton_options)
        : downing.empty() ? troupe::sim::run_random_scenario(s, planted)
                          : troupe::sim::run_downing_scenario(s, scenario);
    if (r.failure) {
      ++failures;
      std::printf("seed %llu (%zu nodes): FAILED %s: %s\n%s\n",
                  static_cast<unsigned long long>(s), r.nodes,
                  r.failure->checker.c_str(), r.failure->detail.c_str(),
                  r.trace.c_str());
    } else if (verbose) {
      std::printf("seed %llu (%zu nodes): ok, converged after %.1f rounds\n",
                  static_cast<unsigned long long>(s), r.nodes,
                  r.liveness_rounds);
    }
  }
  auto secs
    = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  std::printf("%llu seeds, %d failed, %.1f s\n",
              static_cast<unsigned long long>(last - first + 1), failures,
              secs);
  return failures == 0 ? 0 : 1;
}
