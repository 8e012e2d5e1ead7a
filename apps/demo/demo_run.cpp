#include "demo_run.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "demo_io.hpp"
#include "demo_poll.hpp"
#include "failover_measure.hpp"
#include "log_scan.hpp"
#include "run_outcome.hpp"
#include "troupe/runtime/config.hpp"

namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace troupe::demo {

namespace {

int64_t mono_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Deposits/s the client asks for: leaves the cores the cluster needs (a
// starved failure detector would see false failures).
constexpr double load_rate = 200;

// How long a failover may take before the verdict calls it failed.
constexpr runtime::timespan failover_limit = 60s;

// What a process that ended said last: its own error line (`troupe-demo-
// node: ...`, written by troupe::fail) if there is one, else its log's tail.
std::string why_it_ended(const fs::path& log) {
  auto text = read_all(log);
  for (const char* program :
       {"troupe-demo-node: ", "troupe-demo-store: ", "troupe-k8s-emulator: "})
    if (auto at = text.rfind(program); at != std::string::npos)
      return text.substr(at, text.find('\n', at) - at);
  return read_tail(log);
}

runtime::timespan since_ns(int64_t from) {
  return std::chrono::nanoseconds{mono_ns() - from};
}

demo_timing timing_for(const options& o) {
  demo_timing t;
  t.lease_expiry_observed = o.lease == lease_kind::kubernetes;
  return t;
}

} // namespace

demo_run::demo_run(options opts, const std::atomic<bool>& interrupted)
  : opts_(std::move(opts)), interrupted_(interrupted),
    timing_(timing_for(opts_)), cluster_(opts_, timing_), start_(steady::now()),
    console_(1s) {}

demo_run::~demo_run() {
  if (lock_fd_ >= 0)
    ::close(lock_fd_); // drops the flock
}

void demo_run::say(const std::string& text) {
  if (opts_.quiet)
    return;
  auto t = std::chrono::duration<double>(steady::now() - start_).count();
  std::printf("[%6.2fs] %s\n", t, text.c_str());
  std::fflush(stdout);
}

// Takes --dir for this run (flock on .demo.lock, held until exit).
bool demo_run::lock_dir() {
  auto lock = fs::path{opts_.dir} / ".demo.lock";
  std::string error;
  lock_fd_ = open_regular(lock, O_RDWR | O_CREAT, error);
  if (lock_fd_ < 0)
    return complain(error);
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0)
    return complain(errno == EWOULDBLOCK
                      ? fmt::format("--dir {} is in use by another troupe-demo "
                                    "({} is locked)",
                                    opts_.dir, lock.string())
                      : fmt::format("{}: cannot lock: {}", lock.string(),
                                    std::strerror(errno)));
  return true;
}

bool demo_run::start_processes() {
  // Each failure below was named on stderr already.
  setup_error_ = "a process did not start (see above)";
  if (!cluster_.prepare() || !cluster_.start_store(10s))
    return false;
  say(fmt::format("store listening on {} (files in {})", cluster_.store_url(),
                  opts_.dir));
  if (opts_.lease == lease_kind::kubernetes) {
    if (!cluster_.start_emulator(10s))
      return false;
    say("Kubernetes Lease API emulator started (k8s-emulator.log)");
  }
  if (!cluster_.start_nodes())
    return false;
  say(fmt::format("started {} nodes (seed nodes node-1 and node-2)",
                  opts_.nodes));
  setup_error_.reset();
  return true;
}

// Polls node-1's members until every node is Up (60s at most); false with
// setup_error_ set when a node exits or time runs out.
bool demo_run::wait_for_members() {
  phase_ = "waiting for the cluster to form";
  auto until = steady::now() + 60s;
  while (!interrupted_) {
    cluster_.procs().pump(0ms);
    for (auto& n : cluster_.procs().all())
      if (!n.running()) {
        auto tail = why_it_ended(n.log);
        setup_error_
          = fmt::format("{} {} before the cluster formed (see {}){}", n.name,
                        describe_status(*n.status), n.log.string(),
                        tail.empty() ? "" : ":\n" + tail);
        return false;
      }
    auto snap = poll_cluster(cluster_, http_, cut_off_);
    show(snap);
    if (snap.up_count() == opts_.nodes)
      return true;
    if (steady::now() >= until) {
      setup_error_ = fmt::format("only {} of {} members were Up after 60s",
                                 snap.up_count(), opts_.nodes);
      return false;
    }
    std::this_thread::sleep_for(250ms);
  }
  return false;
}

// The client load: deposits to every node's app API, logged to
// DIR/client.log; false with setup_error_ set when it cannot start.
bool demo_run::start_load() {
  client::load_settings ls;
  for (auto& n : cluster_.nodes())
    ls.nodes.push_back(client::endpoint{"127.0.0.1", n.api});
  ls.accounts = 60;
  // Enough workers that the deposits which start at a dead node (refused
  // at once, retried on the next one after retry_delay) do not hold the
  // rate down after the failover; enough attempts to ride out the shards'
  // failover (each attempt waits at most demo.deposit_timeout, 1.5s, and
  // one in three meets the dead node, which refuses at once).
  ls.workers = 8;
  ls.rate = load_rate;
  ls.retry_delay = 100ms;
  ls.max_attempts = 12;
  auto load
    = client::load_driver::start(ls, fs::path{opts_.dir} / "client.log");
  if (!load) {
    setup_error_ = "the client load did not start: " + load.error().message;
    return false;
  }
  load_ = std::move(*load);
  load_started_ = steady::now();
  say(fmt::format("client load started: {} workers, {} accounts, up to {} "
                  "deposits/s over {} nodes (client.log)",
                  ls.workers, ls.accounts, ls.rate, ls.nodes.size()));
  return true;
}

void demo_run::show(const cluster_snapshot& snap) {
  auto name = [this](std::string_view a) { return cluster_.name_of(a); };
  std::optional<client::load_counters> client;
  if (load_)
    client = load_->counters();
  for (auto& line :
       console_.on_poll(snap, client, steady::now() - start_, name))
    say(line);
}

// Reaps the processes and says once when a node ended during the run, with
// its last error line (a partitioned node downs itself and exits; the
// console would otherwise only lose it from the members line).
void demo_run::pump_and_report() {
  cluster_.procs().pump(0ms);
  for (auto& n : cluster_.procs().all()) {
    if (n.running() || n.name.rfind("node-", 0) != 0
        || !ended_.insert(n.name).second)
      continue;
    // The kill's end needs no explaining.
    if (failover_ && failover_->failure == "kill"
        && failover_->victim == n.name)
      continue;
    auto why = last_problem(read_all(n.log), "");
    say(fmt::format("{} {}{}", n.name, describe_status(*n.status),
                    why.empty() ? "" : "; its last warning or error: " + why));
  }
}

void demo_run::run_for(runtime::timespan d, const char* phase) {
  phase_ = fmt::format("running {}", phase);
  say(fmt::format("running {} for {}", phase, runtime::render_duration(d)));
  auto until = steady::now() + d;
  while (!interrupted_ && steady::now() < until) {
    auto next = steady::now() + 1s;
    pump_and_report();
    show(poll_cluster(cluster_, http_, cut_off_));
    std::this_thread::sleep_until(std::min(next, until));
  }
}

// Finds the singleton's host and SIGKILLs it, or cuts it off from the
// other nodes (--failure partition); false with setup_error_ set when no
// node hosts the singleton within 20s or the cut could not be made.
bool demo_run::fail_singleton_host() {
  auto until = steady::now() + 20s;
  cluster_snapshot snap;
  const node_ports* victim = nullptr;
  auto last_show = steady::now();
  while (!interrupted_ && steady::now() < until) {
    pump_and_report();
    snap = poll_cluster(cluster_, http_, cut_off_);
    if (snap.singleton_host && snap.singleton_token)
      victim = cluster_.node_at(*snap.singleton_host);
    if (victim != nullptr)
      break;
    // Waiting (e.g. for a lease backend that does not answer): the status
    // goes on.
    if (steady::now() - last_show >= 1s) {
      show(snap);
      last_show = steady::now();
    }
    std::this_thread::sleep_for(250ms);
  }
  if (victim == nullptr) {
    if (!interrupted_)
      setup_error_ = "no node reported the scheduler singleton's host within "
                     "20s"
                     + lease_problem();
    return false;
  }
  failover_watch w;
  w.failure = opts_.failure == failure_kind::partition ? "partition" : "kill";
  w.victim = victim->name;
  w.victim_api = fmt::format("127.0.0.1:{}", victim->api);
  w.victim_address = *snap.singleton_host;
  w.victim_token = *snap.singleton_token;
  for (auto& [address, ids] : snap.shards)
    if (cluster_.node_at(address) == victim)
      w.victim_shards.insert(ids.begin(), ids.end());
  if (opts_.failure == failure_kind::partition) {
    say(fmt::format("cutting {} (the singleton's host, fencing token {}, {} "
                    "shards) off from the other nodes: every cluster link "
                    "blackholed both ways through /faults; the lease store, "
                    "the store and the client still reach it",
                    w.victim, w.victim_token, w.victim_shards.size()));
    w.kill_ns = mono_ns();
    if (!cut_off(*victim))
      return false;
  } else {
    auto* proc = cluster_.procs().find(victim->name);
    say(fmt::format("killing {} (the singleton's host, fencing token {}, {} "
                    "shards) with SIGKILL",
                    w.victim, w.victim_token, w.victim_shards.size()));
    w.kill_ns = mono_ns();
    cluster_.procs().signal(*proc, SIGKILL);
  }
  failover_ = std::move(w);
  return true;
}

// What the nodes' logs say last about their leases (a singleton that never
// starts is most often a lease backend that does not answer), as a tail
// for a setup error; empty if no node logged a lease warning or error.
std::string demo_run::lease_problem() {
  for (auto& n : cluster_.nodes()) {
    auto log = fs::path{opts_.dir} / (n.name + ".log");
    if (auto line = last_problem(read_all(log), "lease"); !line.empty())
      return fmt::format("; {} says: {}", log.filename().string(), line);
  }
  return {};
}

// Blackholes every cluster link between `victim` and the other running
// nodes, both ways and on both ends (PUT /faults/{peer} on each node);
// false with setup_error_ set when a node refused or did not answer.
bool demo_run::cut_off(const node_ports& victim) {
  std::vector<runtime::http_request> requests;
  std::vector<std::string> what;
  auto cut = [&](const node_ports& on, const node_ports& peer) {
    runtime::http_request req;
    req.method = "PUT";
    req.url = fmt::format("{}/faults/127.0.0.1:{}", cluster_.management_url(on),
                          peer.cluster);
    req.headers.push_back(
      {"Content-Type", "application/x-www-form-urlencoded"});
    req.body = "blackhole=true&direction=both";
    req.timeout = 2s;
    requests.push_back(std::move(req));
    what.push_back(fmt::format("{} dropping {}", on.name, peer.name));
  };
  for (auto& n : cluster_.nodes())
    if (auto* p = cluster_.procs().find(n.name);
        n.name != victim.name && p && p->running()) {
      cut(victim, n);
      cut(n, victim);
    }
  cut_off_.insert(victim.name);
  auto answers = http_.call_all(std::move(requests));
  for (size_t i = 0; i < answers.size(); ++i) {
    auto& a = answers[i];
    if (!a || a->status != 200) {
      setup_error_ = fmt::format(
        "the partition could not be made ({}): {}", what[i],
        a ? fmt::format("{} {}", a->status, a->body) : a.error().message);
      return false;
    }
  }
  return true;
}

// Watches the singleton and the victim's shards move (60s at most).
void demo_run::watch_failover() {
  phase_ = "watching the failover";
  auto& w = *failover_;
  auto until = steady::now() + 60s;
  while (!interrupted_ && steady::now() < until
         && !(w.singleton_seen && w.shards_seen)) {
    pump_and_report();
    auto snap = poll_cluster(cluster_, http_, cut_off_);
    auto host = snap.singleton_host ? cluster_.name_of(*snap.singleton_host)
                                    : std::string{};
    if (!w.singleton_seen && !host.empty() && host != w.victim
        && snap.singleton_token.value_or(0) > w.victim_token) {
      w.singleton_seen = since_ns(w.kill_ns);
      w.new_host = host;
      w.new_token = *snap.singleton_token;
      say(fmt::format("the singleton runs on {} with fencing token {} ({} "
                      "after the {}, as the management endpoints show it)",
                      host, w.new_token, seconds_text(*w.singleton_seen),
                      w.failure));
    }
    // Every shard the victim hosted has a new home on another node.
    std::set<std::string> rehomed;
    for (auto& [address, ids] : snap.shards)
      if (cluster_.name_of(address) != w.victim)
        for (auto& id : ids)
          if (w.victim_shards.count(id) > 0)
            rehomed.insert(id);
    if (!w.shards_seen && rehomed.size() == w.victim_shards.size()) {
      w.shards_seen = since_ns(w.kill_ns);
      say(fmt::format("the {} shards of {} run on the other nodes ({} after "
                      "the {}, as the management endpoints show it)",
                      rehomed.size(), w.victim, seconds_text(*w.shards_seen),
                      w.failure));
    }
    show(snap);
    std::this_thread::sleep_for(200ms);
  }
  if (!interrupted_ && !(w.singleton_seen && w.shards_seen))
    say("the failover did not complete within 60s");
}

void demo_run::stop_all() {
  if (!interrupted_)
    phase_ = "stopping";
  auto& procs = cluster_.procs();
  auto stop = [&](bool nodes, runtime::timespan bound) {
    auto is_node
      = [](const node_proc& n) { return n.name.rfind("node-", 0) == 0; };
    for (auto& n : procs.all())
      if (is_node(n) == nodes && n.running())
        procs.signal(*procs.find(n.name), SIGTERM);
    auto until = steady::now() + bound;
    auto pending = [&] {
      return std::any_of(procs.all().begin(), procs.all().end(), [&](auto& n) {
        return is_node(n) == nodes && n.running();
      });
    };
    while (pending() && steady::now() < until)
      procs.pump(50ms);
    for (auto& n : procs.all())
      if (is_node(n) == nodes && n.running()) {
        say(fmt::format("{} did not stop within {}: SIGKILL", n.name,
                        runtime::render_duration(bound)));
        procs.signal(*procs.find(n.name), SIGKILL);
      }
  };
  if (load_) {
    load_->stop(); // every deposit it sent is answered or failed first
    load_ran_ = steady::now() - load_started_;
  }
  say("stopping the nodes (SIGTERM: each leaves the cluster)");
  stop(true, 30s);
  stop(false, 5s); // then the store and the emulator
  auto until = steady::now() + 5s;
  while (!procs.all_done() && steady::now() < until)
    procs.pump(50ms);
  // A process that crashed (a signal the launcher did not send) is
  // reported with the verdict, also with --quiet: the verdict judges the
  // data, not how the processes ended.
  for (auto& n : procs.all())
    if (n.status && WIFSIGNALED(*n.status) && WTERMSIG(*n.status) != SIGKILL)
      crashes_.push_back(
        fmt::format("{} {}", n.name, describe_status(*n.status)));
}

std::vector<verdict::failover_measure> demo_run::failover_measures() {
  std::vector<verdict::failover_measure> out;
  if (!failover_)
    return out;
  auto& w = *failover_;
  auto floor = floor_of(timing_);
  auto ms = [](runtime::timespan d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
  };
  auto since_kill =
    [&](std::optional<int64_t> t) -> std::optional<std::chrono::milliseconds> {
    if (!t)
      return std::nullopt;
    return ms(std::chrono::nanoseconds{*t - w.kill_ns});
  };
  auto dir = fs::path{opts_.dir};
  out.push_back(
    {fmt::format("singleton failover (store: first accepted ledger record "
                 "above token {} after the {})",
                 w.victim_token, w.failure),
     since_kill(first_takeover_ns(read_all(dir / "ledger.jsonl"),
                                  w.victim_token, w.kill_ns)),
     ms(floor.singleton), ms(failover_limit)});
  out.push_back(
    {fmt::format("shard failover (client: first ack for an account of {} "
                 "after the {}, from another node)",
                 w.victim, w.failure),
     since_kill(first_victim_ack_ns(read_all(dir / "client.log"),
                                    w.victim_shards, timing_.number_of_shards,
                                    w.kill_ns, w.victim_api)),
     ms(floor.shards), ms(failover_limit)});
  return out;
}

int demo_run::finish(bool completed) {
  auto end = end_of_run(interrupted_, setup_error_.has_value(), completed);
  if (end == run_end::interrupted) {
    std::printf("\n%s", interrupted_text(phase_, opts_.dir).c_str());
    return exit_code(end, false);
  }
  if (end == run_end::setup_error) {
    std::printf("\nsetup error: %s\nthe demo could not run: no verdict "
                "(files: %s)\n",
                setup_error_.value_or("the demo did not complete").c_str(),
                opts_.dir.c_str());
    return exit_code(end, false);
  }
  auto dir = fs::path{opts_.dir};
  verdict::verdict_input in;
  in.client_log = read_all(dir / "client.log");
  in.ledger_jsonl = read_all(dir / "ledger.jsonl");
  in.journal_jsonl = read_all(dir / "journal.jsonl");
  in.failovers = failover_measures();
  auto report = verdict::judge(in);
  std::printf("\nverdict (only from %s: client.log, ledger.jsonl, "
              "journal.jsonl):\n%s",
              opts_.dir.c_str(), verdict::render(report).c_str());
  if (failover_) {
    auto floor = floor_of(timing_);
    std::printf("failover floor: singleton %s\n",
                explain_singleton_floor(timing_, floor).c_str());
    std::printf("failover floor: shards %s\n",
                explain_shard_floor(timing_, floor).c_str());
  }
  if (load_) {
    auto c = load_->counters();
    auto seconds = std::chrono::duration<double>(load_ran_).count();
    std::printf("throughput: %llu deposits acknowledged in %.1fs (%.0f/s on "
                "average%s, %.0f/s at best between two status lines; the "
                "client asks for %.0f/s); latency over the whole run: p50 "
                "%.1fms, p99 %.1fms, max %.1fms\n",
                static_cast<unsigned long long>(c.acked), seconds,
                seconds > 0 ? static_cast<double>(c.acked) / seconds : 0.0,
                failover_ ? " with the failover" : "", console_.best_rate(),
                load_rate, static_cast<double>(c.p50.count()) / 1000,
                static_cast<double>(c.p99.count()) / 1000,
                static_cast<double>(c.max.count()) / 1000);
  }
  for (auto& c : crashes_)
    std::printf("crashed: %s (see its log)\n", c.c_str());
  std::printf("files: %s\n", opts_.dir.c_str());
  return exit_code(end, report.passed());
}

int demo_run::run() {
  if (!lock_dir())
    return 2;
  if (!opts_.quiet)
    std::printf("troupe demo: %d nodes on loopback, lease %s, failure %s, "
                "%s before and after it; files in %s\n",
                opts_.nodes, to_string(opts_, opts_.lease).c_str(),
                to_string(opts_.failure).c_str(),
                runtime::render_duration(opts_.duration).c_str(),
                opts_.dir.c_str());
  bool completed = start_processes() && wait_for_members() && start_load();
  if (completed) {
    for (auto& n : cluster_.nodes())
      say(fmt::format("{}: dashboard {}/  (app API http://127.0.0.1:{}, "
                      "cluster address 127.0.0.1:{})",
                      n.name, cluster_.management_url(n), n.api, n.cluster));
    run_for(opts_.duration, "under load");
    if (opts_.failure != failure_kind::none && !interrupted_) {
      phase_ = "killing the singleton's host";
      completed = fail_singleton_host();
      if (completed)
        watch_failover();
    }
    if (completed && !interrupted_)
      run_for(opts_.duration,
              failover_ ? "after the failover" : "on (--failure none)");
  }
  if (interrupted_)
    say(fmt::format("interrupted while {}", phase_));
  stop_all();
  return finish(completed);
}

} // namespace troupe::demo
