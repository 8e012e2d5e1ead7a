// Cluster singleton benchmark on the real transport (issue 7 "Benchmark"),
// each figure as a ratio to a floor or baseline measured in the same run:
//
// 1. Graceful hand-over. Two nodes in this process on loopback TCP (each its
//    own actor system, remoting, cluster daemon with DESIGN.md §10's short
//    settings, singleton manager); the instance runs on the oldest, A,
//    which then leaves. Measured on a steady clock:
//      leave     A's leave call to the instance's start on B (whole time:
//                includes the membership's leaving -> exiting, gossip and
//                leader actions);
//      handover  the first member_exited(A) seen on A or B (the managers
//                hand over only once the old oldest is exiting) to the
//                start on B.
//    Floor of handover: the protocol's critical path, take_over_from_me
//    (A->B), hand_over_to_me (B->A), hand_over_done (A->B): 1.5 round trips,
//    timed raw in the same run as a remoting ping-pong between the same two
//    nodes (200 round trips, mean), plus the instance's stop time (its stop
//    request to its termination, from the instance's own stamps). Run with
//    CAF's default scheduler and with moderate-sleep 0us (DESIGN.md §10).
// 2. Crash with a lease. Three cluster_node processes with the file lease
//    (ttl 5s, renewal 1s), keep_majority with stable_after 2s; kill -9 of
//    the oldest; the time to the instance's start on its successor, read
//    from the shared journal (test/singleton/singleton_journal.hpp).
//    Floor: the successor may start once A is downed (detection time of
//    the phi accrual detector for these settings, cluster::detection_time,
//    plus stable_after) and A's lease record expired (the remaining ttl at
//    the kill, read from the record file's expires_at_ns): the two run at
//    the same time, so the floor is their maximum. The sum of the three
//    (detection + stable_after + remaining ttl) is printed too.
// 3. Proxy overhead. Two nodes as in 1, the instance on A; from B's main
//    thread N messages through B's proxy, against N messages sent directly
//    with remoting to the instance's remote_ref; each timed until the
//    instance counted all of them, in windows of 1000 (each awaited, as the
//    transport's queue to a peer is bounded). Best of 3 passes each.
//    Ratio: direct rate / proxy rate.
//
// Usage: singleton_bench [--smoke] [--runs 5] [--crash-runs 2]
//                        [--messages 20000] [--verbose]
//   --smoke    1 run of each, 2000 messages (the ctest run).
// Exits 1 when a run fails (a cluster does not form, an instance does not
// start, messages do not arrive within the bounds).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <csignal>

#include <CLI/CLI.hpp>
#include <caf/scoped_actor.hpp>

#include "cluster_daemon_support.hpp"
#include "cluster_node_flags.hpp"
#include "singleton_journal.hpp"
#include "tcp_remoting.hpp"
#include "troupe/cluster/phi_accrual_detector.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/singleton/caf_glue.hpp"
#include "troupe/singleton/singleton.hpp"
#include "troupe/test/child.hpp"
#include "troupe/test/eventually.hpp"
#include "troupe/test/free_ports.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using steady = std::chrono::steady_clock;
using seconds_d = std::chrono::duration<double>;
using runtime::unique_address;

namespace {

constexpr auto type_name = "bench";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "singleton_bench: %s\n", what.c_str());
  std::exit(1);
}

double since(steady::time_point t0, steady::time_point t) {
  return seconds_d{t - t0}.count();
}

// -- stamps
// ---------------------------------------------------------------------

/// What the instances and the subscribers of one run saw, on the steady
/// clock. Written under `mtx`.
struct stamps {
  mutable std::mutex mtx;
  /// Per instance start: the node and the time.
  std::vector<std::pair<unique_address, steady::time_point>> starts;
  std::optional<steady::time_point> stop_requested;
  std::optional<steady::time_point> terminated;
  std::optional<steady::time_point> exiting_seen;
  uint64_t received = 0;

  template <class F>
  auto with(F f) {
    std::lock_guard guard{mtx};
    return f(*this);
  }
};

/// The instance: stamps its start, its stop request (the exit handler) and
/// its termination, and counts `(remote_ref, uint64_t)` messages.
singleton::instance_factory instance_of(std::shared_ptr<stamps> st) {
  return [st](caf::event_based_actor* self,
              const singleton::instance_context& ctx) -> caf::behavior {
    auto node = ctx.node;
    st->with([&](stamps& s) { s.starts.emplace_back(node, steady::now()); });
    self->set_exit_handler([self, st](caf::exit_msg& m) {
      st->with([](stamps& s) { s.stop_requested = steady::now(); });
      self->quit(m.reason);
    });
    self->attach_functor(
      [st] { st->with([](stamps& s) { s.terminated = steady::now(); }); });
    return {
      [st](const cluster::remote_ref&, uint64_t) {
        st->with([](stamps& s) { ++s.received; });
      },
    };
  };
}

/// A subscriber that stamps the first member_exited of `who`.
caf::behavior exit_stamper(caf::event_based_actor* self,
                           std::shared_ptr<stamps> st, unique_address who) {
  self->set_default_handler(caf::drop);
  return {
    [st, who](const cluster::member_exited& x) {
      if (x.member.address == who)
        st->with([](stamps& s) {
          if (!s.exiting_seen)
            s.exiting_seen = steady::now();
        });
    },
  };
}

// -- in-process nodes
// -----------------------------------------------------------

/// CAF's default scheduler, or with `tuned` its moderate sleep at 0us
/// (caf-notes.md §9; DESIGN.md §10: latency figures in both).
struct node_config : test::real_node::config {
  explicit node_config(bool tuned) : test::real_node::config(false) {
    singleton::add_singleton_types(*this);
    if (tuned)
      set("work-stealing.moderate-sleep-duration", caf::timespan{0});
  }
};

/// One node: its actor system, remoting on loopback TCP, the cluster daemon
/// (short settings), a singleton manager and proxy of "bench".
/// Members in this order: the hook's log outlives the actor system.
struct bench_node {
  test::shutdown_log stops;
  explicit bench_node(bool tuned) : cfg(tuned) {}

  node_config cfg;
  caf::actor_system sys{cfg};
  cluster::remoting_handle remoting;
  cluster::cluster_handle handle;
  singleton::singleton_manager manager;
  singleton::singleton_proxy proxy;
  std::vector<caf::actor> helpers;

  ~bench_node() {
    proxy.stop();
    manager.stop_and_wait(5s);
    handle.stop();
    for (auto& a : helpers)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    remoting.stop();
  }

  const unique_address& addr() const {
    return remoting.local_address();
  }

  cluster::endpoint ep() const {
    return cluster::endpoint_of(addr());
  }
};

std::unique_ptr<bench_node> start_node(std::optional<cluster::endpoint> seed,
                                       std::shared_ptr<stamps> st, bool tuned) {
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
  singleton::manager_options mo;
  mo.settings = singleton::manager_settings{};
  auto m = singleton::singleton_manager::start(x->sys, x->handle, x->remoting,
                                               type_name, instance_of(st), mo);
  if (!m)
    fail(m.error().message);
  x->manager = *m;
  singleton::proxy_options po;
  po.settings = singleton::proxy_settings{};
  po.settings->identification_interval = 200ms;
  auto p = singleton::singleton_proxy::start(x->sys, x->handle, x->remoting,
                                             type_name, po);
  if (!p)
    fail(p.error().message);
  x->proxy = *p;
  return x;
}

/// Two nodes, A founding and B joining, both up; the instance on A.
std::pair<std::unique_ptr<bench_node>, std::unique_ptr<bench_node>>
start_pair(const std::shared_ptr<stamps>& st, bool tuned) {
  auto a = start_node(std::nullopt, st, tuned);
  if (!test::eventually(
        [&] { return st->with([](stamps& s) { return !s.starts.empty(); }); },
        20s))
    fail("no instance on the founding node within 20s");
  auto b = start_node(a->ep(), st, tuned);
  auto up = [](bench_node& x) {
    auto s = x.handle.state();
    return s && test::all_up(*s, 2);
  };
  if (!test::eventually([&] { return up(*a) && up(*b); }, 30s))
    fail("two nodes did not form a cluster within 30s");
  return {std::move(a), std::move(b)};
}

// -- the raw round trip
// ---------------------------------------------------------

caf::behavior echo(caf::event_based_actor*, cluster::remoting_handle r) {
  return {
    [r](const cluster::remote_ref& from, uint64_t i) {
      r.send(from, caf::make_message(i));
    },
  };
}

caf::behavior pinger(caf::event_based_actor* self, cluster::remoting_handle r,
                     cluster::remote_ref to, cluster::remote_ref me, uint64_t k,
                     std::shared_ptr<std::promise<void>> done) {
  return {
    [=](const cluster::remote_ref&, uint64_t i) {
      if (i >= k) {
        done->set_value();
        self->quit();
        return;
      }
      r.send(to, caf::make_message(i + 1), me);
    },
  };
}

/// The mean remoting round trip between `a` and `b` over `k` round trips
/// (after as many to warm up), in seconds.
double round_trip(bench_node& a, bench_node& b, uint64_t k) {
  auto e = b.sys.spawn(echo, b.remoting);
  b.helpers.push_back(e);
  auto to = b.remoting.publish("bench.echo", e);
  if (!to)
    fail(to.error().message);
  double result = 0;
  for (int pass = 0; pass < 2; ++pass) {
    auto done = std::make_shared<std::promise<void>>();
    auto fut = done->get_future();
    auto name = "bench.pinger" + std::to_string(pass);
    auto me = a.remoting.local_ref(name);
    auto p = a.sys.spawn(pinger, a.remoting, *to, me, k, done);
    a.helpers.push_back(p);
    if (!a.remoting.publish(name, p))
      fail("cannot publish the pinger");
    auto t0 = steady::now();
    a.remoting.send(*to, caf::make_message(uint64_t{0}), me);
    if (fut.wait_for(30s) != std::future_status::ready)
      fail("the ping-pong did not finish within 30s");
    result = seconds_d{steady::now() - t0}.count() / static_cast<double>(k + 1);
  }
  return result;
}

// -- 1. graceful hand-over
// ------------------------------------------------------

struct handover_result {
  double leave = 0;
  double handover = 0;
  double floor = 0;
  double rtt = 0;
  double stop = 0;
};

handover_result run_handover(bool tuned) {
  auto st = std::make_shared<stamps>();
  auto [a, b] = start_pair(st, tuned);
  auto rtt = round_trip(*a, *b, 200);
  for (auto* x : {a.get(), b.get()}) {
    auto sub = x->sys.spawn(exit_stamper, st, a->addr());
    x->helpers.push_back(sub);
    x->handle.subscribe(sub);
  }
  auto t_leave = steady::now();
  a->handle.leave(a->addr());
  auto started_on_b = [&] {
    return st->with([&](stamps& s) {
      return s.starts.size() >= 2 && s.starts.back().first == b->addr();
    });
  };
  if (!test::eventually(started_on_b, 20s))
    fail("the instance did not start on B within 20s of A's leave");
  handover_result r;
  st->with([&](stamps& s) {
    auto t_start = s.starts.back().second;
    if (!s.exiting_seen || !s.stop_requested || !s.terminated)
      fail("a stamp is missing (exiting, stop request or termination)");
    r.leave = since(t_leave, t_start);
    r.handover = since(*s.exiting_seen, t_start);
    r.stop = since(*s.stop_requested, *s.terminated);
  });
  r.rtt = rtt;
  r.floor = 1.5 * rtt + r.stop;
  return r;
}

// -- 3. proxy overhead
// ----------------------------------------------------------

struct proxy_result {
  double proxy_rate = 0;
  double direct_rate = 0;
};

proxy_result run_proxy(uint64_t n, int passes) {
  auto st = std::make_shared<stamps>();
  auto [a, b] = start_pair(st, false);
  auto knows = [&] {
    caf::scoped_actor self{b->sys};
    bool result = false;
    self->request(b->proxy.actor(), 1s, singleton::status_atom::value)
      .receive(
        [&](const singleton::proxy_status& s) {
          result = s.target.is_addressable();
        },
        [](const caf::error&) {});
    return result;
  };
  if (!test::eventually(knows, 20s))
    fail("B's proxy did not find the instance within 20s");
  cluster::remote_ref instance{a->addr(), singleton::instance_name(type_name)};
  auto received
    = [&] { return st->with([](stamps& s) { return s.received; }); };
  // In windows of `window` messages, each awaited before the next (the
  // transport's queue to a peer holds 3072 frames and drops the oldest when
  // full).
  constexpr uint64_t window = 1000;
  auto timed = [&](auto send_one) {
    auto before = received();
    auto t0 = steady::now();
    for (uint64_t sent = 0; sent < n;) {
      auto batch = std::min(window, n - sent);
      for (uint64_t i = 0; i < batch; ++i)
        send_one(sent + i);
      sent += batch;
      if (!test::eventually([&] { return received() >= before + sent; }, 20s))
        fail("not every message arrived within 20s ("
             + std::to_string(received() - before) + " of "
             + std::to_string(sent) + ")");
    }
    return static_cast<double>(n) / seconds_d{steady::now() - t0}.count();
  };
  std::vector<double> proxied, direct;
  for (int pass = 0; pass < passes; ++pass) {
    proxied.push_back(timed([&](uint64_t i) { b->proxy.tell(i); }));
    direct.push_back(timed([&](uint64_t i) {
      if (auto err = b->remoting.send(instance, caf::make_message(i)))
        fail(err.message);
    }));
  }
  // The best pass of each (the least disturbed by the shared machine).
  return {*std::max_element(proxied.begin(), proxied.end()),
          *std::max_element(direct.begin(), direct.end())};
}

// -- 2. crash with a lease (processes)
// ------------------------------------------

struct crash_result {
  double failover = 0;
  double remaining_ttl = 0;
};

/// A fresh directory under /tmp, removed on destruction.
struct scratch_dir {
  std::filesystem::path path;
  scratch_dir() {
    std::string tmpl = std::filesystem::temp_directory_path()
                       / "troupe-singleton-bench-XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr)
      fail("cannot make a scratch directory");
    path = tmpl;
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

crash_result run_crash() {
  scratch_dir dir;
  auto journal = dir.path / "journal";
  auto leases = dir.path / "leases";
  auto ports = test::free_ports(3);
  auto seed = "127.0.0.1:" + std::to_string(ports[0]);
  std::vector<std::unique_ptr<test::child>> ps;
  for (size_t i = 0; i < 3; ++i) {
    auto flags = test::cluster_node_flags("127.0.0.1", ports[i], seed);
    for (auto& f :
         test::with_file_lease(test::singleton_flags(journal), leases, "5s"))
      flags.push_back(f);
    flags.insert(flags.begin(), TROUPE_CLUSTER_NODE);
    flags.emplace_back("--log.level=warning");
    ps.push_back(std::make_unique<test::child>(
      "node" + std::to_string(i + 1), std::move(flags),
      dir.path / ("node" + std::to_string(i + 1) + ".out")));
  }
  auto windows
    = [&] { return test::instance_windows(test::read_journal(journal)); };
  if (!test::eventually([&] { return !windows().empty(); }, 30s))
    fail("no singleton instance in the processes within 30s");
  auto first = windows().front();
  // A steady heartbeat history on every node, and the kill half-way between
  // two renewals (every 1s from the acquisition), so that the remaining ttl
  // is not always a whole one.
  std::this_thread::sleep_for(2500ms);
  // The oldest is the node the first instance runs on: find its process by
  // its port.
  size_t victim = 3;
  for (size_t i = 0; i < 3; ++i)
    if (first.node.find(":" + std::to_string(ports[i]) + "#")
        != std::string::npos)
      victim = i;
  if (victim == 3)
    fail("the first instance runs on no known process: " + first.node);
  auto kill_ns = test::monotonic_ns();
  ps[victim]->signal(SIGKILL);
  auto expiry = test::lease_expiry_ns(leases);
  auto successor = [&]() -> std::optional<test::instance_window> {
    for (auto& w : windows())
      if (w.node != first.node)
        return w;
    return std::nullopt;
  };
  if (!test::eventually([&] { return successor().has_value(); }, 30s))
    fail("no successor instance within 30s of the kill");
  crash_result r;
  r.failover = static_cast<double>(successor()->first_ns - kill_ns) / 1e9;
  r.remaining_ttl
    = expiry > kill_ns ? static_cast<double>(expiry - kill_ns) / 1e9 : 0.0;
  for (auto& p : ps)
    if (p->running())
      p->stop(10s);
  return r;
}

// -- statistics
// ------------------------------------------------------------------

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  auto m = xs.size() / 2;
  return xs.size() % 2 == 1 ? xs[m] : (xs[m - 1] + xs[m]) / 2;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"Cluster singleton: hand-over, failover and proxy overhead"};
  bool smoke = false;
  bool verbose = false;
  size_t runs = 5;
  size_t crash_runs = 2;
  uint64_t messages = 20000;
  app.add_flag("--smoke", smoke, "1 run of each, 2000 messages");
  app.add_flag("--verbose", verbose, "keep INFO log lines");
  app.add_option("--runs", runs, "hand-over runs, a fresh pair each");
  app.add_option("--crash-runs", crash_runs, "crash runs (processes)");
  app.add_option("--messages", messages, "messages per proxy pass");
  CLI11_PARSE(app, argc, argv);
  if (smoke) {
    runs = 1;
    crash_runs = 1;
    messages = 2000;
  }
  if (runs < 1 || crash_runs < 1 || messages < 1)
    fail("--runs, --crash-runs and --messages must be at least 1");
  if (!verbose)
    runtime::set_log_level(runtime::log_level::warning);

  for (bool tuned : {false, true}) {
    std::printf("1. graceful hand-over, 2 nodes on loopback TCP, %s "
                "scheduler (floor: 1.5 remoting round trips + the instance's "
                "stop)\n",
                tuned ? "tuned (moderate-sleep 0us)"
                      : "CAF default (moderate-sleep 50us)");
    std::printf("%4s %9s %9s %9s %9s %9s %9s\n", "run", "leave", "handover",
                "rtt", "stop", "floor", "ho/floor");
    std::vector<double> ho_ratios, leaves;
    for (size_t i = 0; i < runs; ++i) {
      auto r = run_handover(tuned);
      ho_ratios.push_back(r.handover / r.floor);
      leaves.push_back(r.leave);
      std::printf("%4zu %8.3fs %8.4fs %7.1fus %7.1fus %7.1fus %9.1f\n", i + 1,
                  r.leave, r.handover, r.rtt * 1e6, r.stop * 1e6, r.floor * 1e6,
                  ho_ratios.back());
      std::fflush(stdout);
    }
    std::printf("hand-over / floor: median %.1f, min %.1f; leave to start: "
                "median %.3fs\n\n",
                median(ho_ratios),
                *std::min_element(ho_ratios.begin(), ho_ratios.end()),
                median(leaves));
  }

  auto ms = test::short_settings();
  auto& fd = ms.failure_detector;
  double detect = seconds_d{cluster::detection_time(
                              fd.phi_accrual(),
                              cluster::fractional_ms{fd.heartbeat_interval},
                              cluster::fractional_ms{0})}
                    .count();
  double stable_after = 2.0;
  std::printf("2. crash with a file lease (ttl 5s), 3 processes, "
              "keep_majority stable_after %.1fs; detection %.3fs\n",
              stable_after, detect);
  std::printf("%4s %9s %9s %9s %9s %9s %9s\n", "run", "failover", "ttl left",
              "floor", "f/floor", "sum", "f/sum");
  std::vector<double> crash_ratios;
  for (size_t i = 0; i < crash_runs; ++i) {
    auto r = run_crash();
    auto floor = std::max(detect + stable_after, r.remaining_ttl);
    auto sum = detect + stable_after + r.remaining_ttl;
    crash_ratios.push_back(r.failover / floor);
    std::printf("%4zu %8.3fs %8.3fs %8.3fs %9.2f %8.3fs %9.2f\n", i + 1,
                r.failover, r.remaining_ttl, floor, crash_ratios.back(), sum,
                r.failover / sum);
    std::fflush(stdout);
  }
  std::printf("median failover / floor %.2f\n\n", median(crash_ratios));

  std::printf("3. proxy overhead, %llu messages per pass, best of 3 passes\n",
              static_cast<unsigned long long>(messages));
  auto p = run_proxy(messages, 3);
  std::printf("through the proxy %.0f msg/s, direct remoting %.0f msg/s, "
              "direct / proxy = %.2f\n",
              p.proxy_rate, p.direct_rate, p.direct_rate / p.proxy_rate);
  return 0;
}
