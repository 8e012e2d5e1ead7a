// Transport benchmark: two processes on loopback, 100-byte messages.
//
// Subjects and baselines, all measured in the same run against one peer
// process (transport_bench_peer) with the same CAF scheduler settings:
//   one_way/<x>    N messages one way, then the receiver reports its count:
//                  time per message (1 / throughput).
//   round_trip/<x> one message there and back, K times: p50 (the reported
//                  time), p99 and mean as counters.
// where <x> is
//   raw_tcp        Asio, blocking sockets: the physical limit here (one-way:
//                  256 frames per write; round trip: write then read);
//   raw_transport  troupe's tcp_transport, frames without CAF;
//   troupe_actor   actor to actor through cluster::remoting (what users
//                  get): a sender actor, a published sink/echo actor;
//   caf_basp       the same actors over CAF's BASP (remote_actor).
// Each set runs twice: with CAF's default scheduler and with
// work-stealing.moderate-sleep-duration=0us ("tuned"); DESIGN.md §10 says
// the tuned round trip is the one compared with the target. Targets
// (issue 4), for (a) "troupe's transport" = raw_transport and, like for
// like with BASP, troupe_actor: one-way throughput >= 5x caf_basp;
// round-trip p50 <= 2x raw_tcp (tuned).
// Also: memory per idle peer connection of the transport (RSS growth of a
// node that 64 peers connected to, and that connected back to them).
//
// Usage: transport_bench [--smoke] [--io-thread] [google benchmark flags]
//   --smoke      tiny counts (the ctest smoke run); figures mean nothing.
//   --io-thread  both sides decode on the transport's io thread
//                (cluster.remoting.deliver_on_io_thread) instead of in
//                per-peer inbound actors.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/io/middleman.hpp>
#include <caf/send.hpp>

#include "bench_main.hpp"
#include "bench_process.hpp"
#include "transport_bench_actors.hpp"
#include "transport_bench_common.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/runtime/log.hpp"

#ifndef TROUPE_BENCH_PEER
#  error "TROUPE_BENCH_PEER must name the transport_bench_peer executable"
#endif

extern char** environ;

using namespace troupe;
using namespace troupe::bench;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using asio::ip::tcp;
using cluster::remote_ref;
using cluster::remoting_handle;
using runtime::unique_address;
using steady = std::chrono::steady_clock;

namespace {

// Counts of one run (full or smoke).
struct counts {
  uint64_t one_way_raw = 2'000'000; // raw TCP and raw transport
  uint64_t one_way_actor = 400'000; // troupe actors
  uint64_t one_way_basp = 150'000;  // BASP
  int trials = 3;                   // one-way: median of these
  int round_trips = 4000;           // per round-trip subject
  int warmup_round_trips = 300;
  int idle_connections = 64;
};

counts n;

// --io-thread: remoting decodes on the transport's io thread on both sides
// (cluster.remoting.deliver_on_io_thread) instead of in inbound actors.
cluster::remoting_settings remoting_opts;

// Google Benchmark's full name of a benchmark registered by register_all.
std::string full_name(const std::string& name) {
  return name + "/iterations:1/manual_time";
}

// The value of `f`, or exit: a benchmark never hangs.
template <class T>
T get_or_fail(std::future<T>& f, const char* what) {
  if (f.wait_for(120s) != std::future_status::ready) {
    std::fprintf(stderr, "transport_bench: %s did not finish in 120 s\n", what);
    std::exit(1);
  }
  return f.get();
}

double seconds_since(steady::time_point t0) {
  return std::chrono::duration<double>(steady::now() - t0).count();
}

// -- raw transport listener of the driver -------------------------------------

class raw_driver_listener final : public cluster::transport_listener {
public:
  std::atomic<uint64_t> pongs{0};
  std::atomic<uint64_t> count_replies{0};
  std::atomic<uint64_t> last_count{0};

  void on_frame(const cluster::unique_address&, cluster::lane,
                std::span<const std::byte> payload) override {
    if (!payload.empty() && static_cast<char>(payload[0]) == 'C') {
      std::string text{reinterpret_cast<const char*>(payload.data()) + 1,
                       payload.size() - 1};
      last_count = std::stoull(text);
      count_replies.fetch_add(1);
      count_replies.notify_all();
    } else {
      pongs.fetch_add(1);
      pongs.notify_all();
    }
  }

  void on_peer_up(const cluster::unique_address&, cluster::direction) override {
  }

  void on_peer_down(const cluster::unique_address&, cluster::direction,
                    std::string_view) override {}

  void on_peer_quarantined(const cluster::unique_address&,
                           std::string_view) override {}
};

std::unique_ptr<cluster::tcp_transport>
make_transport(std::shared_ptr<cluster::transport_listener> listener) {
  auto t = cluster::tcp_transport::make(bench_transport_settings(),
                                        std::move(listener));
  if (!t) {
    std::fprintf(stderr, "transport_bench: %s\n", t.error().message.c_str());
    std::exit(1);
  }
  return std::move(*t);
}

unique_address parse_address(const std::string& text) {
  auto a = runtime::parse_unique_address(text);
  if (!a)
    peer_process::fail("parsing the peer's address");
  return *a;
}

// -- one environment per scheduler setting ------------------------------------

std::vector<std::string> peer_args(bool tuned) {
  std::vector<std::string> args;
  if (tuned)
    args.emplace_back("--tuned");
  if (remoting_opts.deliver_on_io_thread)
    args.emplace_back("--io-thread");
  return args;
}

struct environment {
  bool tuned;
  peer_process peer;
  bench_config cfg;
  caf::actor_system sys;
  remoting_handle remoting;
  std::shared_ptr<raw_driver_listener> raw_listener
    = std::make_shared<raw_driver_listener>();
  std::unique_ptr<cluster::tcp_transport> raw;
  unique_address raw_peer;
  remote_ref sink, echo;
  caf::actor basp_sink, basp_echo;
  asio::io_context ioc;
  tcp::socket pump{ioc}, ping{ioc};

  explicit environment(bool tuned_scheduler)
    : tuned(tuned_scheduler),
      peer(TROUPE_BENCH_PEER, peer_args(tuned_scheduler)), cfg(tuned_scheduler),
      sys(cfg) {
    auto w = peer.words(); // ready pump echo transport remoting bsink becho
    if (w.size() != 7 || w[0] != "ready")
      peer_process::fail("reading the peer's ready line");
    raw = make_transport(raw_listener);
    raw_peer = parse_address(w[3]);
    auto made = remoting_handle::start(
      sys,
      [](std::shared_ptr<cluster::transport_listener> l)
        -> runtime::expected<std::shared_ptr<cluster::transport>> {
        return std::shared_ptr<cluster::transport>{make_transport(l)};
      },
      remoting_opts);
    if (!made)
      peer_process::fail("starting remoting");
    remoting = *made;
    auto node = parse_address(w[4]);
    sink = remote_ref{node, "sink"};
    echo = remote_ref{node, "echo"};
    auto bs
      = sys.middleman().remote_actor("127.0.0.1", uint16_t(std::stoi(w[5])));
    auto be
      = sys.middleman().remote_actor("127.0.0.1", uint16_t(std::stoi(w[6])));
    if (!bs || !be)
      peer_process::fail("BASP remote_actor");
    basp_sink = *bs;
    basp_echo = *be;
    auto loopback = asio::ip::make_address("127.0.0.1");
    pump.connect(tcp::endpoint{loopback, uint16_t(std::stoi(w[1]))});
    ping.connect(tcp::endpoint{loopback, uint16_t(std::stoi(w[2]))});
    pump.set_option(tcp::no_delay{true});
    ping.set_option(tcp::no_delay{true});
  }

  ~environment() {
    pump.close();
    ping.close();
    remoting.stop();
    raw->shutdown();
    basp_sink = nullptr;
    basp_echo = nullptr;
  }
};

std::unique_ptr<environment> the_env;

environment& env_for(bool tuned) {
  if (!the_env || the_env->tuned != tuned) {
    the_env.reset();
    the_env = std::make_unique<environment>(tuned);
  }
  return *the_env;
}

// -- one-way ------------------------------------------------------------------

// Runs `trial(count)` (returns the count the receiver saw) after a small
// warm-up; reports the median time per message of `n.trials` trials.
// Also reports the CPU time both processes spent per message (us): on a
// busy machine the fairer comparison, since throughput there depends on
// what else runs.
template <class Trial>
void one_way(benchmark::State& state, pid_t peer, uint64_t count, Trial trial) {
  trial(std::min<uint64_t>(count, 1000));
  std::vector<double> per_message, cpu_per_message;
  for (auto _ : state) {
    for (int t = 0; t < n.trials; ++t) {
      auto cpu0 = cpu_seconds(::getpid()) + cpu_seconds(peer);
      auto t0 = steady::now();
      auto received = trial(count);
      auto elapsed = seconds_since(t0);
      auto cpu = cpu_seconds(::getpid()) + cpu_seconds(peer) - cpu0;
      if (received != count) {
        state.SkipWithError("the receiver counted a different number");
        return;
      }
      per_message.push_back(elapsed / static_cast<double>(count));
      cpu_per_message.push_back(cpu / static_cast<double>(count));
    }
    std::sort(per_message.begin(), per_message.end());
    std::sort(cpu_per_message.begin(), cpu_per_message.end());
    auto median = per_message[per_message.size() / 2];
    state.SetIterationTime(median);
    state.counters["Mmsg_per_s"] = 1e-6 / median;
    state.counters["cpu_us_per_msg"]
      = cpu_per_message[cpu_per_message.size() / 2] * 1e6;
  }
}

void one_way_raw_tcp(benchmark::State& state, bool tuned) {
  auto& env = env_for(tuned);
  auto chunk = raw_frames(256, raw_data);
  auto end = raw_frames(1, raw_end);
  one_way(state, env.peer.pid(), n.one_way_raw, [&](uint64_t count) {
    for (uint64_t sent = 0; sent < count;) {
      auto k = std::min<uint64_t>(256, count - sent);
      asio::write(env.pump, asio::buffer(chunk.data(), k * raw_frame_size));
      sent += k;
    }
    asio::write(env.pump, asio::buffer(end));
    uint64_t received = 0;
    asio::read(env.pump, asio::buffer(&received, sizeof(received)));
    return received;
  });
}

void one_way_raw_transport(benchmark::State& state, bool tuned) {
  auto& env = env_for(tuned);
  std::string data(payload_size, 'p');
  data[0] = raw_data;
  std::string end = "E";
  one_way(state, env.peer.pid(), n.one_way_raw, [&](uint64_t count) {
    auto replies = env.raw_listener->count_replies.load();
    for (uint64_t i = 0; i < count; ++i)
      env.raw->send(env.raw_peer, cluster::lane::ordinary,
                    std::as_bytes(std::span{data}));
    env.raw->send(env.raw_peer, cluster::lane::ordinary,
                  std::as_bytes(std::span{end}));
    env.raw_listener->count_replies.wait(replies);
    return env.raw_listener->last_count.load();
  });
}

void one_way_troupe_actor(benchmark::State& state, bool tuned) {
  auto& env = env_for(tuned);
  one_way(state, env.peer.pid(), n.one_way_actor, [&](uint64_t count) {
    auto done = std::make_shared<std::promise<uint64_t>>();
    auto f = done->get_future();
    env.sys.spawn(troupe_sender, env.remoting, env.sink, count, done);
    return get_or_fail(f, "one_way/troupe_actor");
  });
}

void one_way_caf_basp(benchmark::State& state, bool tuned) {
  auto& env = env_for(tuned);
  one_way(state, env.peer.pid(), n.one_way_basp, [&](uint64_t count) {
    auto done = std::make_shared<std::promise<uint64_t>>();
    auto f = done->get_future();
    env.sys.spawn(basp_sender, env.basp_sink, count, done);
    return get_or_fail(f, "one_way/caf_basp");
  });
}

// -- round trips --------------------------------------------------------------

// Reports p50 as the time, p50/p99/mean as counters (us).
template <class Run>
void round_trip(benchmark::State& state, Run run) {
  run(n.warmup_round_trips);
  for (auto _ : state) {
    auto samples = run(n.round_trips);
    if (samples.empty()) {
      state.SkipWithError("no samples");
      return;
    }
    std::sort(samples.begin(), samples.end());
    auto at = [&](double q) {
      return samples[std::min(samples.size() - 1,
                              static_cast<size_t>(q * samples.size()))];
    };
    state.SetIterationTime(at(0.5) * 1e-6);
    state.counters["p50_us"] = at(0.5);
    state.counters["p99_us"] = at(0.99);
    state.counters["mean_us"]
      = std::accumulate(samples.begin(), samples.end(), 0.0)
        / static_cast<double>(samples.size());
  }
}

void round_trip_raw_tcp(benchmark::State& state, bool tuned) {
  auto& env = env_for(tuned);
  auto frame = raw_frames(1, 'P');
  round_trip(state, [&](int k) {
    std::vector<double> samples;
    for (int i = 0; i < k; ++i) {
      auto t0 = steady::now();
      asio::write(env.ping, asio::buffer(frame));
      asio::read(env.ping, asio::buffer(frame));
      samples.push_back(
        std::chrono::duration<double, std::micro>(steady::now() - t0).count());
    }
    return samples;
  });
}

void round_trip_raw_transport(benchmark::State& state, bool tuned) {
  auto& env = env_for(tuned);
  std::string ping(payload_size, 'P');
  round_trip(state, [&](int k) {
    std::vector<double> samples;
    for (int i = 0; i < k; ++i) {
      auto before = env.raw_listener->pongs.load();
      auto t0 = steady::now();
      env.raw->send(env.raw_peer, cluster::lane::ordinary,
                    std::as_bytes(std::span{ping}));
      env.raw_listener->pongs.wait(before);
      samples.push_back(
        std::chrono::duration<double, std::micro>(steady::now() - t0).count());
    }
    return samples;
  });
}

void round_trip_troupe_actor(benchmark::State& state, bool tuned) {
  auto& env = env_for(tuned);
  round_trip(state, [&](int k) {
    auto done = std::make_shared<std::promise<std::vector<double>>>();
    auto f = done->get_future();
    env.sys.spawn(troupe_pinger, env.remoting, env.echo, k, done);
    return get_or_fail(f, "round_trip/troupe_actor");
  });
}

void round_trip_caf_basp(benchmark::State& state, bool tuned) {
  auto& env = env_for(tuned);
  round_trip(state, [&](int k) {
    auto done = std::make_shared<std::promise<std::vector<double>>>();
    auto f = done->get_future();
    env.sys.spawn(basp_pinger, env.basp_echo, k, done);
    return get_or_fail(f, "round_trip/caf_basp");
  });
}

// -- memory per idle connection -----------------------------------------------

// A hub transport in this process; a peer process opens `k` idle
// connections to it (one frame each) and the hub connects back to each:
// the RSS growth per peer is one inbound plus one outbound connection.
class hub_listener final : public cluster::transport_listener {
public:
  std::atomic<int> inbound{0}, outbound{0};
  std::mutex mtx;
  std::vector<unique_address> peers;

  void on_frame(const cluster::unique_address& from, cluster::lane,
                std::span<const std::byte>) override {
    std::lock_guard guard{mtx};
    peers.push_back(from);
  }

  void on_peer_up(const cluster::unique_address&,
                  cluster::direction dir) override {
    (dir == cluster::direction::inbound ? inbound : outbound).fetch_add(1);
  }

  void on_peer_down(const cluster::unique_address&, cluster::direction,
                    std::string_view) override {}

  void on_peer_quarantined(const cluster::unique_address&,
                           std::string_view) override {}
};

bool wait_until(const std::function<bool()>& pred, std::chrono::seconds t) {
  auto until = steady::now() + t;
  while (!pred()) {
    if (steady::now() > until)
      return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

void idle_connection_memory(benchmark::State& state) {
  the_env.reset(); // measure in a quiet process
  auto listener = std::make_shared<hub_listener>();
  auto hub = make_transport(listener);
  int k = n.idle_connections;
  for (auto _ : state) {
    ::malloc_trim(0);
    auto before = rss_bytes();
    peer_process clients{TROUPE_BENCH_PEER,
                         {"--idle-clients", std::to_string(k), "--hub",
                          runtime::to_string(hub->local_address())}};
    if (!wait_until([&] { return listener->inbound.load() >= k; }, 30s)) {
      state.SkipWithError("the idle clients did not all connect");
      return;
    }
    std::string hello = "h";
    {
      std::lock_guard guard{listener->mtx};
      for (auto& p : listener->peers)
        hub->send(p, cluster::lane::ordinary, std::as_bytes(std::span{hello}));
    }
    if (!wait_until([&] { return listener->outbound.load() >= k; }, 30s)) {
      state.SkipWithError("the hub did not connect back to every client");
      return;
    }
    std::this_thread::sleep_for(200ms);
    ::malloc_trim(0);
    auto after = rss_bytes();
    auto per_peer
      = (static_cast<double>(after) - static_cast<double>(before)) / k;
    state.SetIterationTime(1e-9); // not a time; see the counters
    state.counters["KiB_per_peer"] = per_peer / 1024;
    state.counters["peers"] = k;
  }
  hub->shutdown();
}

void register_all() {
  benchmark::RegisterBenchmark("idle_connection_memory", idle_connection_memory)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
  for (bool tuned : {false, true}) {
    std::string mode = tuned ? "/tuned" : "/default";
    auto add = [&](const char* name, void (*fn)(benchmark::State&, bool)) {
      benchmark::RegisterBenchmark((name + mode).c_str(), fn, tuned)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    };
    add("one_way/raw_tcp", one_way_raw_tcp);
    add("one_way/raw_transport", one_way_raw_transport);
    add("one_way/troupe_actor", one_way_troupe_actor);
    add("one_way/caf_basp", one_way_caf_basp);
    add("round_trip/raw_tcp", round_trip_raw_tcp);
    add("round_trip/raw_transport", round_trip_raw_transport);
    add("round_trip/troupe_actor", round_trip_troupe_actor);
    add("round_trip/caf_basp", round_trip_caf_basp);
  }
}

// The issue names "(a) troupe's transport": that is raw_transport (frames
// through tcp_transport). troupe_actor (the same traffic as serialized
// actor messages through remoting) is the like-for-like comparison with
// BASP, which also serializes and delivers to actors; both are printed.
void print_targets(const ratio_reporter& r) {
  std::printf("\ntargets (issue 4):\n");
  for (auto mode : {"default", "tuned"}) {
    auto m = std::string{"/"} + mode;
    auto basp = r.time_ns(full_name("one_way/caf_basp" + m));
    auto raw = r.time_ns(full_name("round_trip/raw_tcp" + m));
    for (auto subject : {"raw_transport", "troupe_actor"}) {
      auto x = std::string{subject};
      auto one_way = r.time_ns(full_name("one_way/" + x + m));
      if (one_way && basp)
        std::printf("  %-8s one-way throughput %-13s / caf_basp = %5.2fx "
                    "(target >= 5x)\n",
                    mode, subject, *basp / *one_way);
      auto rtt = r.time_ns(full_name("round_trip/" + x + m));
      if (rtt && raw)
        std::printf("  %-8s round-trip p50    %-13s / raw_tcp  = %5.2fx "
                    "(target <= 2x; the tuned figure counts)\n",
                    mode, subject, *rtt / *raw);
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  runtime::set_log_level(runtime::log_level::warning);
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view{argv[i]} == "--smoke")
      n = counts{20'000, 5'000, 2'000, 1, 50, 10, 4};
    else if (std::string_view{argv[i]} == "--io-thread")
      remoting_opts.deliver_on_io_thread = true;
    else
      args.push_back(argv[i]);
  }
  int argn = static_cast<int>(args.size());
  benchmark::Initialize(&argn, args.data());
  register_all();
  ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  the_env.reset();
  std::vector<std::pair<std::string, std::string>> pairs;
  auto pair = [&](const std::string& subject, const std::string& baseline) {
    pairs.emplace_back(full_name(subject), full_name(baseline));
  };
  for (std::string m : {"/default", "/tuned"}) {
    pair("one_way/troupe_actor" + m, "one_way/caf_basp" + m);
    pair("one_way/raw_transport" + m, "one_way/caf_basp" + m);
    pair("one_way/raw_transport" + m, "one_way/raw_tcp" + m);
    pair("one_way/troupe_actor" + m, "one_way/raw_transport" + m);
    pair("round_trip/troupe_actor" + m, "round_trip/raw_tcp" + m);
    pair("round_trip/raw_transport" + m, "round_trip/raw_tcp" + m);
    pair("round_trip/caf_basp" + m, "round_trip/raw_tcp" + m);
    pair("round_trip/troupe_actor" + m, "round_trip/caf_basp" + m);
  }
  bool complete = reporter.print_ratios(pairs);
  print_targets(reporter);
  benchmark::Shutdown();
  return complete ? 0 : 1;
}
