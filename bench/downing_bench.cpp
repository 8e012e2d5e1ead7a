// Split brain resolver benchmark on the real transport (issue 6
// "Benchmark"): the time from an induced partition to the decision, as a
// ratio to its floor.
//
// N nodes (5 by default) in this process on loopback, each with its own
// actor system, remoting over TCP, the cluster daemon and the downing actor
// (keep_majority), with DESIGN.md §10's shortened membership settings
// (heartbeat 100ms, acceptable heartbeat pause 1s, gossip, leader actions
// and reaper 200ms; test/cluster/cluster_daemon_support.hpp) and
// stable_after 2s (down_all_when_unstable Akka's "on": max(3/4 of
// stable_after, 4s)). Once every node sees all N up (and 2s more, so the
// failure detectors have a steady history), the transport's blackhole
// faults cut the first N/2+1 nodes from the others, both directions, and a
// steady clock measures from that moment (the times come from a subscriber
// on each majority node that stamps every membership event on arrival):
//   detect    until the first majority node sees a minority member
//             unreachable (unreachable_member);
//   decide    until the first majority node (the side leader, which acts)
//             sees every minority member down (member_downed, or removed
//             after down);
//   all       until every majority node sees them down (gossip spread);
//   wait      decide - detect: the resolver's stable_after, plus later
//             changes of the leader's unreachable set, plus its timer.
// Floors: detection = the phi accrual detector's detection time for these
// settings (cluster::detection_time: interval + acceptable pause +
// y(threshold) * min_std_deviation, docs/design/cluster.md "Detection
// time"); decision = detection + stable_after. Ratios are time / floor.
// R runs (5 by default), a fresh cluster each; median and max at the end.
// docs/design/downing.md "Measured" has the figures and where the excess
// goes.
//
// Usage: downing_bench [--smoke] [--nodes 5] [--runs 5]
//                      [--stable-after 2s] [--verbose]
//   --smoke    1 run of 3 nodes as 2|1 (the ctest run).
//   --verbose  keep the INFO log lines (the resolver's decision line).
// Exits 1 when a run fails: the cluster does not form within 30s, the
// decision is not seen by every majority node within 5 x the floor, or a
// majority node is downed.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <CLI/CLI.hpp>

#include "cluster_daemon_support.hpp"
#include "tcp_remoting.hpp"
#include "troupe/cluster/phi_accrual_detector.hpp"
#include "troupe/downing/downing_actor.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/test/eventually.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using steady = std::chrono::steady_clock;
using seconds_d = std::chrono::duration<double>;
using runtime::unique_address;

namespace {

// -- event stamps
// --------------------------------------------------------------

/// One membership event and when the subscriber received it.
struct stamped_event {
  steady::time_point at;
  cluster::cluster_event event;
};

/// What a node's subscriber received. Written under `mtx`.
struct event_stamps {
  std::vector<stamped_event> events;
  mutable std::mutex mtx;

  /// When this node first saw `node` unreachable at or after `since`.
  std::optional<steady::time_point>
  first_unreachable(const unique_address& node,
                    steady::time_point since) const {
    std::lock_guard guard{mtx};
    for (auto& e : events)
      if (auto* x = std::get_if<cluster::unreachable_member>(&e.event))
        if (e.at >= since && x->member.address == node)
          return e.at;
    return std::nullopt;
  }

  /// When this node first saw `node` down (downed, or removed after down).
  std::optional<steady::time_point>
  first_down(const unique_address& node) const {
    std::lock_guard guard{mtx};
    for (auto& e : events) {
      if (auto* x = std::get_if<cluster::member_downed>(&e.event))
        if (x->member.address == node)
          return e.at;
      if (auto* x = std::get_if<cluster::member_removed>(&e.event))
        if (x->member.address == node
            && x->previous_status == cluster::member_status::down)
          return e.at;
    }
    return std::nullopt;
  }
};

template <class... Ts>
caf::behavior stamper_impl(std::shared_ptr<event_stamps> log,
                           std::variant<Ts...>*) {
  return {
    [](const cluster::current_cluster_state&) {},
    [log](const Ts& e) {
      auto now = steady::now();
      std::lock_guard guard{log->mtx};
      log->events.push_back({now, cluster::cluster_event{e}});
    }...,
  };
}

/// A subscriber that stamps every event into `log`.
caf::behavior stamper(caf::event_based_actor*,
                      std::shared_ptr<event_stamps> log) {
  return stamper_impl(std::move(log),
                      static_cast<cluster::cluster_event*>(nullptr));
}

// -- nodes
// ---------------------------------------------------------------------

/// One node: its actor system, remoting on loopback, the daemon, the
/// resolver and the event stamper.
/// Members in this order: the hook's log and the stamps outlive the actor
/// system (its shutdown may still call the hook).
struct bench_node {
  test::shutdown_log stops;
  std::shared_ptr<event_stamps> stamps = std::make_shared<event_stamps>();
  test::real_node::config cfg{false};
  caf::actor_system sys{cfg};
  cluster::remoting_handle remoting;
  cluster::cluster_handle handle;
  downing::downing_handle resolver;
  caf::actor recorder;

  ~bench_node() {
    resolver.stop();
    handle.stop();
    if (recorder)
      caf::anon_send_exit(recorder, caf::exit_reason::user_shutdown);
    remoting.stop();
  }

  const unique_address& addr() const {
    return remoting.local_address();
  }

  cluster::endpoint ep() const {
    return cluster::endpoint_of(addr());
  }
};

/// Starts a node joining through `seeds` (empty: founds the cluster).
runtime::expected<std::unique_ptr<bench_node>>
start_node(std::vector<cluster::endpoint> seeds,
           const cluster::membership_settings& ms,
           const downing::downing_actor_settings& ds) {
  auto x = std::make_unique<bench_node>();
  auto r = cluster::remoting_handle::start(x->sys,
                                           test::tcp_factory(test::loopback()));
  if (!r)
    return r.error();
  x->remoting = *r;
  if (seeds.empty())
    seeds.push_back(x->ep());
  cluster::cluster_daemon_settings s;
  s.membership = ms;
  s.membership.seed_nodes = std::move(seeds);
  s.config = test::test_join_config();
  s.on_shutdown = x->stops.hook();
  s.quarantine_removed_after = 1s;
  auto h = cluster::cluster_handle::start(x->sys, x->remoting, std::move(s));
  if (!h)
    return h.error();
  x->handle = *h;
  x->recorder = x->sys.spawn(stamper, x->stamps);
  x->handle.subscribe(x->recorder);
  auto d = downing::downing_handle::start(x->sys, x->handle, ds);
  if (!d)
    return d.error();
  x->resolver = *d;
  return x;
}

using nodes = std::vector<std::unique_ptr<bench_node>>;

bool everyone_sees_all_up(const nodes& xs) {
  for (auto& x : xs) {
    auto s = x->handle.state();
    if (!s || !test::all_up(*s, xs.size()))
      return false;
  }
  return true;
}

/// Blackholes every link between `left` and `right`, both ways.
void cut(nodes& xs, size_t left, size_t n) {
  cluster::link_fault hole{true};
  for (size_t l = 0; l < left; ++l)
    for (size_t r = left; r < n; ++r)
      for (auto dir :
           {cluster::direction::outbound, cluster::direction::inbound}) {
        xs[l]->remoting.transport().set_fault(xs[r]->ep(), dir, hole);
        xs[r]->remoting.transport().set_fault(xs[l]->ep(), dir, hole);
      }
}

// -- one run
// -------------------------------------------------------------------

/// Seconds from the partition; `failure` non-empty: the run failed (why).
struct run_result {
  std::string failure;
  double detect = 0;
  double decide = 0;
  double all = 0;
};

double since(steady::time_point t0, steady::time_point t) {
  return seconds_d{t - t0}.count();
}

/// Forms a cluster of `n`, partitions it, measures.
run_result run_once(size_t n, const cluster::membership_settings& ms,
                    const downing::downing_actor_settings& ds,
                    seconds_d bound) {
  auto fail = [](std::string what) { return run_result{std::move(what)}; };
  nodes xs;
  for (size_t i = 0; i < n; ++i) {
    std::vector<cluster::endpoint> seeds;
    if (i > 0)
      seeds.push_back(xs.front()->ep());
    auto x = start_node(std::move(seeds), ms, ds);
    if (!x)
      return fail("node " + std::to_string(i) + ": " + x.error().message);
    xs.push_back(std::move(*x));
  }
  if (!test::eventually([&] { return everyone_sees_all_up(xs); }, 30s))
    return fail("the cluster of " + std::to_string(n)
                + " did not form within 30s");
  std::this_thread::sleep_for(2s);
  size_t majority = n / 2 + 1;
  auto t0 = steady::now();
  cut(xs, majority, n);
  // The time every majority node first saw every minority member down.
  auto down_at = [&](size_t i) -> std::optional<steady::time_point> {
    steady::time_point last = t0;
    for (size_t j = majority; j < n; ++j) {
      auto t = xs[i]->stamps->first_down(xs[j]->addr());
      if (!t)
        return std::nullopt;
      last = std::max(last, *t);
    }
    return last;
  };
  auto limit = std::chrono::duration_cast<std::chrono::milliseconds>(bound);
  bool decided = test::eventually(
    [&] {
      for (size_t i = 0; i < majority; ++i)
        if (!down_at(i))
          return false;
      return true;
    },
    limit);
  for (size_t i = 0; i < majority; ++i)
    if (xs[i]->stops.count() > 0)
      return fail("majority node " + runtime::to_string(xs[i]->addr())
                  + " was downed: " + xs[i]->stops.first());
  if (!decided)
    return fail("no decision on every majority node within "
                + std::to_string(bound.count()) + "s of the partition");
  std::optional<steady::time_point> detect;
  steady::time_point first = steady::time_point::max();
  steady::time_point last = t0;
  for (size_t i = 0; i < majority; ++i) {
    for (size_t j = majority; j < n; ++j)
      if (auto t = xs[i]->stamps->first_unreachable(xs[j]->addr(), t0))
        detect = detect ? std::min(*detect, *t) : *t;
    first = std::min(first, *down_at(i));
    last = std::max(last, *down_at(i));
  }
  if (!detect)
    return fail("minority downed without an unreachable_member event");
  return run_result{{}, since(t0, *detect), since(t0, first), since(t0, last)};
}

// -- statistics
// ----------------------------------------------------------------

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  auto m = xs.size() / 2;
  return xs.size() % 2 == 1 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
}

double max_of(const std::vector<double>& xs) {
  return *std::max_element(xs.begin(), xs.end());
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Partition to split brain resolver decision on loopback TCP"};
  bool smoke = false;
  bool verbose = false;
  size_t n = 5;
  size_t runs = 5;
  std::string stable_after_text = "2s";
  app.add_flag("--smoke", smoke, "1 run, 3 nodes as 2|1");
  app.add_flag("--verbose", verbose, "keep INFO log lines");
  app.add_option("--nodes", n, "cluster size (3 at least)");
  app.add_option("--runs", runs, "runs, a fresh cluster each");
  app.add_option("--stable-after", stable_after_text,
                 "downing.stable_after (a duration)");
  CLI11_PARSE(app, argc, argv);
  if (smoke) {
    n = 3;
    runs = 1;
  }
  if (n < 3 || runs < 1) {
    std::fprintf(stderr, "--nodes must be at least 3, --runs at least 1\n");
    return 2;
  }
  auto stable_after = runtime::parse_duration(stable_after_text);
  if (!stable_after) {
    std::fprintf(stderr, "--stable-after: %s\n",
                 stable_after.error().message.c_str());
    return 2;
  }
  if (!verbose)
    runtime::set_log_level(runtime::log_level::warning);

  auto ms = test::short_settings();
  downing::downing_actor_settings ds;
  ds.engine.downing.active_strategy = downing::keep_majority{};
  ds.engine.downing.stability.stable_after = *stable_after;
  ds.engine.downing.stability.down_all_when_unstable
    = std::max<runtime::timespan>(*stable_after * 3 / 4, 4s);

  // The floors: the detector's detection time in steady state (intervals
  // exactly heartbeat_interval apart, std below min_std_deviation).
  auto& fd = ms.failure_detector;
  double detect_floor
    = seconds_d{cluster::detection_time(
                  fd.phi_accrual(),
                  cluster::fractional_ms{fd.heartbeat_interval},
                  cluster::fractional_ms{0})}
        .count();
  double floor = detect_floor + seconds_d{*stable_after}.count();
  seconds_d bound{floor * 5};

  size_t majority = n / 2 + 1;
  std::printf("downing_bench: %zu nodes, %zu|%zu blackhole, keep_majority, "
              "stable_after %.3fs; heartbeat %.3fs, acceptable pause %.3fs, "
              "threshold %.1f, min std %.3fs\n",
              n, majority, n - majority, seconds_d{*stable_after}.count(),
              seconds_d{fd.heartbeat_interval}.count(),
              seconds_d{fd.acceptable_heartbeat_pause}.count(), fd.threshold,
              seconds_d{fd.min_std_deviation}.count());
  std::printf("detection floor %.3fs (interval + pause + y(threshold) * "
              "min std); decision floor %.3fs (+ stable_after)\n",
              detect_floor, floor);
  std::printf("%4s %8s %9s %8s %8s %8s %8s %9s %9s\n", "run", "detect",
              "det/floor", "wait", "decide", "all", "floor", "dec/floor",
              "all/floor");
  std::vector<double> det_ratios;
  std::vector<double> dec_ratios;
  std::vector<double> all_ratios;
  for (size_t i = 0; i < runs; ++i) {
    auto r = run_once(n, ms, ds, bound);
    if (!r.failure.empty()) {
      std::fprintf(stderr, "run %zu failed: %s\n", i + 1, r.failure.c_str());
      return 1;
    }
    det_ratios.push_back(r.detect / detect_floor);
    dec_ratios.push_back(r.decide / floor);
    all_ratios.push_back(r.all / floor);
    std::printf("%4zu %7.3fs %9.3f %7.3fs %7.3fs %7.3fs %7.3fs %9.3f %9.3f\n",
                i + 1, r.detect, det_ratios.back(), r.decide - r.detect,
                r.decide, r.all, floor, dec_ratios.back(), all_ratios.back());
    std::fflush(stdout);
  }
  std::printf("median %17.3f %45.3f %9.3f\n", median(det_ratios),
              median(dec_ratios), median(all_ratios));
  std::printf("max    %17.3f %45.3f %9.3f\n", max_of(det_ratios),
              max_of(dec_ratios), max_of(all_ratios));
  return 0;
}
