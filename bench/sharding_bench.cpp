// Cluster sharding benchmark on the real transport (issue 8 "Benchmarks"),
// each figure as a ratio to a baseline measured in the same run with the
// same settings. Nodes are in this process on loopback TCP, each its own
// actor system (2 workers), remoting, cluster daemon (DESIGN.md §10's short
// settings) and region of the entity type "bench"; the entities and the
// raw baseline actors run the same behavior (count the messages they get in
// one shared atomic counter).
//
// 1. Local tell. Node A of a pair (100 shards, 50 on each node); from the
//    main thread N messages round robin to M = 100 running entities whose
//    shards live on A, through `region.tell(id, uint64_t)`, against N
//    `caf::anon_send(actor, uint64_t)` to M raw actors with the same
//    behavior; each timed until the receivers counted all N. Ratio:
//    sharded rate / raw rate (see "Passes" below).
// 2. Cross-node tell. The same pair; from A's main thread N messages to M
//    entities whose shards live on B (A's region forwards each as a tagged
//    remoting message, entity and shard in the tag, to B's region, which
//    routes it to the entity; ADR 0008), against N `remoting.send` of the
//    same payload from A to M raw actors published on B. In windows of 1000
//    messages, each awaited (the transport's queue to a peer holds 3072 frames
//    and drops the oldest when full). Ratio: sharded rate / raw rate.
// 3. Entity spawn. K new entities (ids whose shards run on A), each
//    started by its first message through `region.tell`, against
//    `sys.spawn` of K raw actors plus one `anon_send` each; timed until
//    all K counted their message. Ratio: sharded / raw.
//    Figures 1-3 with CAF's default scheduler and with
//    `work-stealing.moderate-sleep-duration=0us` (DESIGN.md §10).
//    Passes: each figure runs 9 passes (--pass-count); in a pass the sharded
//    and the raw run back to back, the raw first on odd passes, and the
//    figure's ratio is the median of the passes' ratios. On a shared
//    machine the load changes within seconds (rates of the same run vary
//    2-3x between passes); a ratio of neighbours under the same load, and
//    its median, is what stays put across runs.
// 4. Memory per idle entity. One node (1000 shards, all local, each with
//    one entity before measuring); the bytes malloc has in use
//    (mallinfo2: uordblks + hblkhd, over all arenas) and VmRSS, before and
//    after K raw actors that each got one message, and before and after K
//    entities started the same way; then one million idle entities on the
//    node (the smoke run: 20,000), bytes per entity. Ratio: entity bytes /
//    raw actor bytes.
// 5. Rebalance after adding a node. Node A alone with S shards (full: 1000,
//    smoke: 100), one entity in each; node B joins and, once it is up on
//    both, starts its region; the time from B's region start until the
//    coordinator's shard map is balanced (the two counts differ by at most
//    one). Floor: the rounds least_shard_allocation needs (ceil(shards to
//    move / max(1, min(absolute_limit, relative_limit * S)))) times
//    rebalance_interval (500ms here). The rounds seen (changes of B's
//    count in the shard map, polled every 20ms) are printed too.
//
// Usage: sharding_bench [--smoke] [--messages 100000] [--spawns 10000]
//                       [--remote-messages 25000] [--pass-count 9]
//                       [--memory 100000] [--million 1000000] [--verbose]
//                       [--passes] [--figures 12345]
//   --smoke    short runs (the ctest run): asserts that every run completes,
//              nothing about the ratios.
// Exits 1 when a run fails (a cluster does not form, messages do not
// arrive within the bounds, the allocation does not balance).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <malloc.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <caf/send.hpp>

#include "cluster_daemon_support.hpp"
#include "tcp_remoting.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/sharding/region_engine.hpp"
#include "troupe/sharding/shard_id.hpp"
#include "troupe/sharding/sharding.hpp"
#include "troupe/singleton/caf_glue.hpp"
#include "troupe/test/eventually.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using steady = std::chrono::steady_clock;
using seconds_d = std::chrono::duration<double>;
using sharding::entity_id;
using sharding::shard_id;
using sharding::shard_region;

namespace {

constexpr auto type_name = "bench";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "sharding_bench: %s\n", what.c_str());
  std::exit(1);
}

// -- the receivers' behavior
// ----------------------------------------------------

/// Messages counted by every entity and raw actor of one node pair.
struct counter {
  std::atomic<uint64_t> n{0};
  uint64_t get() const {
    return n.load(std::memory_order_acquire);
  }
};

/// The behavior of an entity and of a raw actor: counts `uint64_t` (a local
/// send or an entity's message) and `(remote_ref, uint64_t)` (a remoting
/// send to a published actor).
caf::behavior counting(std::shared_ptr<counter> c) {
  return {
    [c](uint64_t) { c->n.fetch_add(1, std::memory_order_release); },
    [c](const cluster::remote_ref&, uint64_t) {
      c->n.fetch_add(1, std::memory_order_release);
    },
  };
}

/// Waits until `c` reached `target` (polling every 20us: the figures are
/// many milliseconds long).
void await_count(const counter& c, uint64_t target, std::chrono::seconds limit,
                 const char* what) {
  auto until = steady::now() + limit;
  while (c.get() < target) {
    if (steady::now() > until)
      fail(std::string{what} + ": " + std::to_string(c.get()) + " of "
           + std::to_string(target) + " messages arrived within "
           + std::to_string(limit.count()) + "s");
    std::this_thread::sleep_for(20us);
  }
}

// -- in-process nodes
// -----------------------------------------------------------

/// CAF's default scheduler, or with `tuned` its moderate sleep at 0us.
struct node_config : test::real_node::config {
  explicit node_config(bool tuned) : test::real_node::config(false) {
    lease::add_lease_types(*this);
    singleton::add_singleton_types(*this);
    sharding::add_sharding_types(*this);
    if (tuned)
      set("work-stealing.moderate-sleep-duration", caf::timespan{0});
  }
};

sharding::sharding_settings bench_settings(uint32_t shards) {
  sharding::sharding_settings s;
  s.number_of_shards = shards;
  s.retry_interval = 200ms;
  s.rebalance_interval = 24h; // figures 1-4: nothing moves
  s.passivation_idle_timeout = 0s;
  s.entity_stop_timeout = 2s;
  s.hand_off_timeout = 10s;
  return s;
}

/// One node: its actor system, remoting on loopback TCP, the cluster daemon
/// (short settings). Members in this order: the hook's log outlives the
/// actor system.
struct bench_node {
  test::shutdown_log stops;
  explicit bench_node(bool tuned) : cfg(tuned) {}

  node_config cfg;
  caf::actor_system sys{cfg};
  cluster::remoting_handle remoting;
  cluster::cluster_handle handle;
  std::optional<shard_region> region;
  std::vector<caf::actor> helpers;

  ~bench_node() {
    if (region) {
      caf::anon_send_exit(region->actor(), caf::exit_reason::kill);
      if (auto m = region->coordinator_manager())
        m->stop_and_wait(5s);
    }
    handle.stop();
    for (auto& a : helpers)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    remoting.stop();
  }

  const runtime::unique_address& addr() const {
    return remoting.local_address();
  }

  cluster::endpoint ep() const {
    return cluster::endpoint_of(addr());
  }

  bool up(size_t n) {
    auto s = handle.state();
    return s && test::all_up(*s, n);
  }

  void start_region(sharding::sharding_settings settings,
                    std::shared_ptr<counter> c) {
    sharding::region_options opts;
    opts.settings = settings;
    auto r = shard_region::start(
      sys, handle, remoting, type_name,
      [c](caf::event_based_actor*, const sharding::entity_context&) {
        return counting(c);
      },
      std::move(opts), false, true);
    if (!r)
      fail(r.error().message);
    region = *r;
  }
};

std::unique_ptr<bench_node> start_node(std::optional<cluster::endpoint> seed,
                                       bool tuned) {
  auto x = std::make_unique<bench_node>(tuned);
  auto r = cluster::remoting_handle::start(x->sys,
                                           test::tcp_factory(test::loopback()));
  if (!r)
    fail(r.error().message);
  x->remoting = *r;
  cluster::cluster_daemon_settings s;
  s.membership = test::short_settings();
  s.membership.seed_nodes = {seed.value_or(x->ep())};
  s.config = test::test_join_config();
  s.on_shutdown = x->stops.hook();
  s.quarantine_removed_after = 1s;
  auto h = cluster::cluster_handle::start(x->sys, x->remoting, std::move(s));
  if (!h)
    fail(h.error().message);
  x->handle = *h;
  return x;
}

/// The shard of `id` (the region's default extractor).
shard_id shard_of(const entity_id& id, uint32_t shards) {
  auto s = sharding::default_shard_id(id, shards);
  if (!s)
    fail(s.error().message);
  return *s;
}

/// `n` entity ids "<prefix><j>" whose shards are in `among` (every shard
/// when empty).
std::vector<entity_id> ids_in(const std::string& prefix, size_t n,
                              const std::set<shard_id>& among,
                              uint32_t shards) {
  std::vector<entity_id> out;
  for (size_t j = 0; out.size() < n; ++j) {
    auto id = prefix + std::to_string(j);
    if (among.empty() || among.count(shard_of(id, shards)) > 0)
      out.push_back(std::move(id));
  }
  return out;
}

/// One entity id for each of the `shards` shards.
std::vector<entity_id> one_per_shard(const std::string& prefix,
                                     uint32_t shards) {
  std::map<shard_id, entity_id> found;
  for (size_t j = 0; found.size() < shards; ++j) {
    auto id = prefix + std::to_string(j);
    found.emplace(shard_of(id, shards), id);
  }
  std::vector<entity_id> out;
  for (auto& [shard, id] : found)
    out.push_back(id);
  return out;
}

/// Sends one message to each of `ids` through `r` and waits until all
/// arrived (starts the entities, and their shards if new).
void warm(const shard_region& r, const std::vector<entity_id>& ids,
          const counter& c, std::chrono::seconds limit = 30s) {
  auto before = c.get();
  for (auto& id : ids)
    if (auto err = r.tell(id, uint64_t{0}))
      fail(err.message);
  await_count(c, before + ids.size(), limit, "warm-up");
}

/// The coordinator's shard map: shards per region.
std::map<runtime::unique_address, std::set<shard_id>>
shard_map(const shard_region& r) {
  auto m = r.shard_map(5s);
  if (!m)
    fail(m.error().message);
  std::map<runtime::unique_address, std::set<shard_id>> out;
  for (auto& [node, shards] : *m)
    out[node].insert(shards.begin(), shards.end());
  return out;
}

/// CPU time in seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID) or
/// the whole process (CLOCK_PROCESS_CPUTIME_ID).
double cpu_seconds(clockid_t which) {
  timespec ts{};
  ::clock_gettime(which, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

double thread_cpu_seconds() {
  return cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  auto n = xs.size();
  return n % 2 == 1 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

/// One figure: the rates of each pass, sharded and raw measured back to
/// back (in alternating order) so that a pass's ratio compares runs under
/// the same machine load.
struct figure {
  std::vector<double> sharded, raw;
  double ratio() const {
    std::vector<double> rs;
    for (size_t i = 0; i < sharded.size(); ++i)
      rs.push_back(sharded[i] / raw[i]);
    return median(rs);
  }
  double median_sharded() const {
    return median(sharded);
  }
  double median_raw() const {
    return median(raw);
  }
};

// -- figures 1-3 on a pair
// -------------------------------------------------------

struct pair_result {
  figure local, remote, spawn;
};

struct pair_sizes {
  uint64_t messages = 100000;
  uint64_t remote_messages = 25000;
  size_t spawns = 10000;
  int passes = 9;
};

pair_result run_pair(bool tuned, const pair_sizes& n, bool verbose) {
  constexpr uint32_t shards = 100;
  constexpr size_t m = 100;
  auto c = std::make_shared<counter>();
  auto a = start_node(std::nullopt, tuned);
  if (!test::eventually([&] { return a->up(1); }, 20s))
    fail("the first node did not come up within 20s");
  auto b = start_node(a->ep(), tuned);
  if (!test::eventually([&] { return a->up(2) && b->up(2); }, 30s))
    fail("two nodes did not form a cluster within 30s");
  a->start_region(bench_settings(shards), c);
  b->start_region(bench_settings(shards), c);
  auto& ra = *a->region;
  // Every shard allocated (least_shard_allocation alternates: 50 on each).
  warm(ra, one_per_shard("w", shards), *c);
  auto map = shard_map(ra);
  auto on_a = map[a->addr()];
  auto on_b = map[b->addr()];
  if (on_a.empty() || on_b.empty())
    fail("the shards are not on both nodes (" + std::to_string(on_a.size())
         + " on A, " + std::to_string(on_b.size()) + " on B)");
  auto local_ids = ids_in("l", m, on_a, shards);
  auto remote_ids = ids_in("r", m, on_b, shards);
  warm(ra, local_ids, *c);
  warm(ra, remote_ids, *c);

  // Raw receivers: M on A (local sends), M published on B (remoting).
  std::vector<caf::actor> raw_local;
  std::vector<cluster::remote_ref> raw_remote;
  auto spawn_raw = [&](caf::actor_system& sys) {
    return sys.spawn(
      [c](caf::event_based_actor*) -> caf::behavior { return counting(c); });
  };
  for (size_t i = 0; i < m; ++i) {
    raw_local.push_back(spawn_raw(a->sys));
    a->helpers.push_back(raw_local.back());
    auto actor = spawn_raw(b->sys);
    b->helpers.push_back(actor);
    auto ref = b->remoting.publish("bench.raw" + std::to_string(i), actor);
    if (!ref)
      fail(ref.error().message);
    raw_remote.push_back(*ref);
  }

  // Times `n` sends (`send_one(i)`) until counted, in windows of `window`
  // (0: one window).
  auto timed = [&](uint64_t total, uint64_t window, auto send_one,
                   const char* what) {
    if (window == 0)
      window = total;
    // Let what the previous run left (mailboxes, frames, timers) drain.
    std::this_thread::sleep_for(50ms);
    auto before = c->get();
    auto process_cpu0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    auto t0 = steady::now();
    steady::duration sending{};
    double cpu = 0;
    for (uint64_t sent = 0; sent < total;) {
      auto batch = std::min(window, total - sent);
      auto t_batch = steady::now();
      auto cpu0 = thread_cpu_seconds();
      for (uint64_t i = 0; i < batch; ++i)
        send_one(sent + i);
      cpu += thread_cpu_seconds() - cpu0;
      sending += steady::now() - t_batch;
      sent += batch;
      await_count(*c, before + sent, 60s, what);
    }
    auto rate
      = static_cast<double>(total) / seconds_d{steady::now() - t0}.count();
    auto process_cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - process_cpu0;
    auto per_msg = [&](double seconds) {
      return seconds * 1e9 / static_cast<double>(total);
    };
    if (verbose)
      std::printf("    %-30s %10.0f msg/s, the sender's loop %7.1f ns/msg "
                  "(its CPU time %7.1f ns/msg; all threads' %7.1f ns/msg)\n",
                  what, rate, per_msg(seconds_d{sending}.count()), per_msg(cpu),
                  per_msg(process_cpu));
    return rate;
  };

  // One pass of a figure: sharded and raw back to back, the raw first on
  // odd passes (a drift in the machine's load then favours neither).
  auto measure = [](figure& f, int pass, auto sharded, auto raw) {
    if (pass % 2 == 0) {
      f.sharded.push_back(sharded());
      f.raw.push_back(raw());
    } else {
      f.raw.push_back(raw());
      f.sharded.push_back(sharded());
    }
  };
  pair_result r;
  for (int pass = 0; pass < n.passes; ++pass) {
    measure(
      r.local, pass,
      [&] {
        return timed(
          n.messages, 0,
          [&](uint64_t i) {
            if (auto err = ra.tell(local_ids[i % m], i))
              fail(err.message);
          },
          "local sharded tell");
      },
      [&] {
        return timed(
          n.messages, 0,
          [&](uint64_t i) { caf::anon_send(raw_local[i % m], i); },
          "local raw send");
      });
    measure(
      r.remote, pass,
      [&] {
        return timed(
          n.remote_messages, 1000,
          [&](uint64_t i) {
            if (auto err = ra.tell(remote_ids[i % m], i))
              fail(err.message);
          },
          "cross-node sharded tell");
      },
      [&] {
        return timed(
          n.remote_messages, 1000,
          [&](uint64_t i) {
            if (auto err
                = a->remoting.send(raw_remote[i % m], caf::make_message(i)))
              fail(err.message);
          },
          "cross-node raw remoting send");
      });
    // Spawns: fresh ids on A's shards; the entities stay (passivation is
    // off), the raw actors live until the pass ends.
    auto fresh
      = ids_in("s" + std::to_string(pass) + "-", n.spawns, on_a, shards);
    std::vector<caf::actor> spawned;
    spawned.reserve(n.spawns);
    auto running_before = a->sys.registry().running();
    measure(
      r.spawn, pass,
      [&] {
        return timed(
          n.spawns, 0,
          [&](uint64_t i) {
            if (auto err = ra.tell(fresh[i], i))
              fail(err.message);
          },
          "entity spawn");
      },
      [&] {
        return timed(
          n.spawns, 0,
          [&](uint64_t i) {
            spawned.push_back(spawn_raw(a->sys));
            caf::anon_send(spawned.back(), i);
          },
          "raw spawn");
      });
    for (auto& x : spawned)
      caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
    spawned.clear();
    // The next pass starts once the raw actors are gone: their cleanup
    // would load the workers during its first measurement.
    auto entities_added = n.spawns;
    if (!test::eventually(
          [&] {
            return a->sys.registry().running()
                   <= running_before + entities_added;
          },
          30s))
      fail("the raw actors of a spawn pass did not stop within 30s");
  }
  for (auto& x : raw_remote)
    b->remoting.unpublish(x.name);
  return r;
}

// -- 4. memory
// -------------------------------------------------------------------

/// Bytes malloc has handed out and not taken back, over all arenas.
double malloc_in_use() {
  auto mi = ::mallinfo2();
  return static_cast<double>(mi.uordblks + mi.hblkhd);
}

/// This process's resident memory in bytes (VmRSS).
double rss_bytes() {
  std::ifstream in{"/proc/self/status"};
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stod(line.substr(6)) * 1024.0;
  return 0;
}

struct footprint {
  double heap = 0;
  double rss = 0;
  static footprint now() {
    // Let the workers free the last mailbox elements, and give freed pages
    // back (else what the raw actors freed is reused by the entities
    // without growing the RSS).
    std::this_thread::sleep_for(200ms);
    ::malloc_trim(0);
    return {malloc_in_use(), rss_bytes()};
  }
  footprint operator-(const footprint& x) const {
    return {heap - x.heap, rss - x.rss};
  }
};

struct memory_result {
  size_t k = 0;
  footprint raw, sharded;
  size_t million = 0;
  footprint all;
  double million_seconds = 0;
};

memory_result run_memory(size_t k, size_t million) {
  constexpr uint32_t shards = 1000;
  auto c = std::make_shared<counter>();
  auto a = start_node(std::nullopt, false);
  if (!test::eventually([&] { return a->up(1); }, 20s))
    fail("the node did not come up within 20s");
  a->start_region(bench_settings(shards), c);
  auto& r = *a->region;
  warm(r, one_per_shard("w", shards), *c);
  memory_result out;
  out.k = k;
  out.million = million;
  {
    std::vector<caf::actor> raw;
    raw.reserve(k);
    auto running = a->sys.registry().running();
    auto before = footprint::now();
    auto base = c->get();
    for (size_t i = 0; i < k; ++i) {
      raw.push_back(a->sys.spawn(
        [c](caf::event_based_actor*) -> caf::behavior { return counting(c); }));
      caf::anon_send(raw.back(), uint64_t{1});
    }
    await_count(*c, base + k, 120s, "raw actors for the memory figure");
    out.raw = footprint::now() - before;
    for (auto& x : raw)
      caf::anon_send_exit(x, caf::exit_reason::user_shutdown);
    raw.clear();
    // Gone before the entities are measured (else what they free while
    // the entities start counts against the entities).
    if (!test::eventually(
          [&] { return a->sys.registry().running() <= running; }, 60s))
      fail("the raw actors did not terminate within 60s");
  }
  // The ids exist before the measurement starts (the caller's, not the
  // region's: the region keeps its own copy of each).
  auto ids = ids_in("m", std::max(k, million), {}, shards);
  auto before = footprint::now();
  auto base = c->get();
  for (size_t i = 0; i < k; ++i)
    if (auto err = r.tell(ids[i], uint64_t{1}))
      fail(err.message);
  await_count(*c, base + k, 120s, "entities for the memory figure");
  out.sharded = footprint::now() - before;
  auto t0 = steady::now();
  for (size_t i = k; i < million; ++i)
    if (auto err = r.tell(ids[i], uint64_t{1}))
      fail(err.message);
  await_count(*c, base + std::max(k, million), 600s,
              "entities for the million");
  out.million_seconds = seconds_d{steady::now() - t0}.count();
  out.all = footprint::now() - before;
  auto st = r.status(30s);
  if (!st)
    fail(st.error().message);
  if (st->entities < std::max(k, million))
    fail("the region holds " + std::to_string(st->entities)
         + " entities, expected at least " + std::to_string(million));
  return out;
}

// -- 5. rebalance
// ----------------------------------------------------------------

struct rebalance_result {
  uint32_t shards = 0;
  double seconds = 0;
  size_t rounds = 0;
  size_t rounds_seen = 0;
  runtime::timespan interval{};
};

rebalance_result run_rebalance(uint32_t shards, bool tuned) {
  auto settings = bench_settings(shards);
  settings.rebalance_interval = 500ms;
  auto c = std::make_shared<counter>();
  auto a = start_node(std::nullopt, tuned);
  if (!test::eventually([&] { return a->up(1); }, 20s))
    fail("the first node did not come up within 20s");
  a->start_region(settings, c);
  warm(*a->region, one_per_shard("w", shards), *c, 60s);
  auto b = start_node(a->ep(), tuned);
  if (!test::eventually([&] { return a->up(2) && b->up(2); }, 30s))
    fail("two nodes did not form a cluster within 30s");
  auto t0 = steady::now();
  b->start_region(settings, c);
  rebalance_result r;
  r.shards = shards;
  r.interval = settings.rebalance_interval;
  // The rounds least_shard_allocation needs: A gives up its newest shards
  // down to optimal = ceil(S / 2), at most `limit` per round.
  auto optimal = (shards + 1) / 2;
  auto to_move = shards - optimal;
  auto limit = std::max<size_t>(
    1, std::min<size_t>(
         static_cast<size_t>(settings.least_shard_allocation_absolute_limit),
         static_cast<size_t>(settings.least_shard_allocation_relative_limit
                             * shards)));
  r.rounds = (to_move + limit - 1) / limit;
  size_t last_b = 0;
  auto until = steady::now() + 300s;
  for (;;) {
    auto map = shard_map(*a->region);
    auto na = map[a->addr()].size();
    auto nb = map[b->addr()].size();
    if (nb != last_b) {
      ++r.rounds_seen;
      last_b = nb;
    }
    if (na + nb == shards && (na > nb ? na - nb : nb - na) <= 1) {
      r.seconds = seconds_d{steady::now() - t0}.count();
      break;
    }
    if (steady::now() > until)
      fail("the allocation did not balance within 300s (" + std::to_string(na)
           + " shards on A, " + std::to_string(nb) + " on B)");
    std::this_thread::sleep_for(20ms);
  }
  return r;
}

const char* scheduler_name(bool tuned) {
  return tuned ? "tuned (moderate-sleep 0us)"
               : "CAF default (moderate-sleep 50us)";
}

void print_ratio(const char* what, double ratio, const char* target) {
  std::printf("  %-38s = %5.2f (target %s)\n", what, ratio, target);
}

void print_memory(const memory_result& m) {
  auto per
    = [](double bytes, size_t n) { return bytes / static_cast<double>(n); };
  std::printf(
    "4. memory per idle entity, one node, 1000 shards, CAF default "
    "scheduler (entity record: %zu bytes)\n",
    sharding::region_engine<caf::message, caf::actor>::entity_record_size());
  std::printf("  %zu raw actors:     heap %7.0f B each, rss %7.0f B each\n",
              m.k, per(m.raw.heap, m.k), per(m.raw.rss, m.k));
  std::printf("  %zu idle entities:  heap %7.0f B each, rss %7.0f B each\n",
              m.k, per(m.sharded.heap, m.k), per(m.sharded.rss, m.k));
  auto all = std::max(m.k, m.million);
  std::printf("  %zu idle entities on one node: heap %.0f MiB (%.0f B "
              "each), rss %.0f MiB (%.0f B each); the last %zu started in "
              "%.2fs\n",
              all, m.all.heap / (1 << 20), per(m.all.heap, all),
              m.all.rss / (1 << 20), per(m.all.rss, all), all - m.k,
              m.million_seconds);
  print_ratio("memory per idle entity: heap sharded/raw",
              m.sharded.heap / m.raw.heap, "<= 1.25");
  print_ratio("memory per idle entity: rss sharded/raw",
              m.sharded.rss / m.raw.rss, "<= 1.25");
  std::printf("\n");
  std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Cluster sharding: tell, spawn, memory, rebalance"};
  bool smoke = false;
  bool verbose = false;
  bool verbose_rates = false;
  pair_sizes sizes;
  size_t memory = 100000;
  size_t million = 1000000;
  uint32_t rebalance_shards = 1000;
  std::string figures = "12345";
  app.add_flag("--smoke", smoke, "short runs (the ctest run)");
  app.add_flag("--verbose", verbose, "keep INFO log lines");
  app.add_flag("--passes", verbose_rates,
               "print every pass of figures 1-3 with the sender's time");
  app.add_option("--messages", sizes.messages, "local messages per pass");
  app.add_option("--remote-messages", sizes.remote_messages,
                 "cross-node messages per pass");
  app.add_option("--spawns", sizes.spawns, "entities started per pass");
  app.add_option("--pass-count", sizes.passes,
                 "passes of figures 1-3 (the median ratio is reported)");
  app.add_option("--memory", memory, "idle entities and raw actors compared");
  app.add_option("--million", million, "idle entities on one node");
  app.add_option("--rebalance-shards", rebalance_shards,
                 "shards on the first node before the second joins");
  app.add_option("--figures", figures,
                 "which figures to run: 1-3 share one run, e.g. 45");
  CLI11_PARSE(app, argc, argv);
  auto wants = [&](char x) { return figures.find(x) != std::string::npos; };
  if (smoke) {
    sizes = {20000, 5000, 2000, 1};
    memory = 5000;
    million = 20000;
    rebalance_shards = 100;
  }
  if (sizes.messages < 1 || sizes.remote_messages < 1 || sizes.spawns < 1
      || sizes.passes < 1 || memory < 1 || rebalance_shards < 2)
    fail("every size must be at least 1 (--rebalance-shards at least 2)");
  if (!verbose)
    runtime::set_log_level(runtime::log_level::warning);

  for (bool tuned : {false, true}) {
    if (!wants('1') && !wants('2') && !wants('3'))
      break;
    auto r = run_pair(tuned, sizes, verbose_rates);
    std::printf("1-3. two nodes on loopback TCP, 100 shards, 100 entities, "
                "%s scheduler, median of %d passes\n",
                scheduler_name(tuned), sizes.passes);
    std::printf("  local tell       %8llu msgs: sharded %10.0f/s, raw CAF "
                "send %10.0f/s\n",
                static_cast<unsigned long long>(sizes.messages),
                r.local.median_sharded(), r.local.median_raw());
    std::printf("  cross-node tell  %8llu msgs: sharded %10.0f/s, raw "
                "remoting %10.0f/s\n",
                static_cast<unsigned long long>(sizes.remote_messages),
                r.remote.median_sharded(), r.remote.median_raw());
    std::printf("  entity spawn     %8zu new:  sharded %10.0f/s, raw CAF "
                "spawn %9.0f/s\n",
                sizes.spawns, r.spawn.median_sharded(), r.spawn.median_raw());
    print_ratio("local tell: sharded/raw", r.local.ratio(), ">= 0.8");
    print_ratio("cross-node tell: sharded/raw", r.remote.ratio(), ">= 0.8");
    print_ratio("entity spawn: sharded/raw", r.spawn.ratio(), ">= 0.8");
    std::printf("\n");
    std::fflush(stdout);
  }

  if (wants('4'))
    print_memory(run_memory(memory, million));
  for (bool tuned : {false, true}) {
    if (!wants('5'))
      break;
    auto r = run_rebalance(rebalance_shards, tuned);
    auto interval = seconds_d{r.interval}.count();
    auto floor = static_cast<double>(r.rounds) * interval;
    std::printf("5. rebalance after adding a node, %u shards with one entity "
                "each, %s scheduler\n",
                r.shards, scheduler_name(tuned));
    // The first round may start at once (the coordinator's timer runs
    // since its start, not since B's), so the time may be below the floor
    // by up to one interval.
    std::printf("  balanced after %.2fs; rounds %zu (seen %zu) x "
                "rebalance_interval %.3fs = floor %.2fs (first round at "
                "once: %.2fs)\n",
                r.seconds, r.rounds, r.rounds_seen, interval, floor,
                floor - interval);
    print_ratio("rebalance: time/floor", r.seconds / floor, "1 = the floor");
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
