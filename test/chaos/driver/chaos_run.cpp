#include "chaos_run.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "chaos_probe.hpp"
#include "client/demo_client.hpp"
#include "cluster_view.hpp"
#include "demo_http.hpp"
#include "demo_io.hpp"
#include "demo_nodes.hpp"
#include "demo_timing.hpp"
#include "fault_network.hpp"
#include "nemesis_log.hpp"
#include "troupe/chaos/delay_proxy.hpp"
#include "troupe/chaos/nemesis_schedule.hpp"
#include "troupe/lease/etcd_protocol.hpp"
#include "troupe/singleton/singleton_settings.hpp"
#include "troupe/test/etcd_fixture.hpp"
#include "view_sampler.hpp"

namespace troupe::chaos {

namespace {

namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* cluster_name = "troupe-chaos";

// How often the driver asks every live node for its membership view, how
// long one answer may take, and how long it keeps asking after the probe
// for the final view (the checker judges the last final round).
constexpr auto view_interval = 1s;
constexpr auto view_timeout = std::chrono::milliseconds{900};
constexpr auto final_views_timeout = 20s;

/// A node's state in the driver (the process may be gone).
struct node_slot {
  /// Starts so far (its history files are node-N.1.jsonl, ...).
  uint64_t starts = 0;
  pid_t pid = -1;
  bool running = false;
  bool paused = false;
  /// The nemesis killed it: it stays down until its restart action.
  bool held_down = false;
  /// It ended by itself (downed, crashed): the supervisor starts it again
  /// at this time, as Kubernetes would restart a pod.
  std::optional<steady::time_point> restart_at;
  /// It printed `api listening`.
  bool ready = false;
};

std::string random_hex(size_t bytes) {
  std::random_device rd;
  std::string out;
  for (size_t i = 0; i < bytes; ++i)
    out += fmt::format("{:02x}", rd() & 0xff);
  return out;
}

// `host:port` of every node, comma-separated.
std::string seed_list(const std::vector<node_place>& places) {
  std::string out;
  for (auto& p : places)
    out += (out.empty() ? "" : ",") + p.cluster_endpoint();
  return out;
}

// "node-3" -> 2; the schedule names nodes as the driver does.
size_t index_of(const std::string& name) {
  return std::stoul(name.substr(name.rfind('-') + 1)) - 1;
}

std::vector<size_t> indexes_of(const std::vector<std::string>& names) {
  std::vector<size_t> out;
  for (auto& n : names)
    out.push_back(index_of(n));
  return out;
}

class chaos_run {
public:
  explicit chaos_run(const run_options& opts)
    : opts_(opts), procs_([this](demo::node_proc& n,
                                 const std::string& line) { on_line(n, line); },
                          [this](demo::node_proc& n) { on_exit(n); }) {}

  int run();

private:
  void say(const std::string& line) {
    std::printf("troupe-chaos: %s\n", line.c_str());
    std::fflush(stdout);
  }

  void setup();
  void start_store();
  std::vector<std::string> node_argv(size_t i);
  void start_node(size_t i);
  void wait_for_members();
  void pump(steady::duration d);
  void supervise();
  void execute(const nemesis_step& a);
  void end_nemesis();
  void probe();
  void sample_views();
  std::vector<view_target> view_targets() const;
  void final_views();
  void stop_all();
  int judge();

  void execute_process(const nemesis_step& a, std::string& note);
  void execute_etcd(const nemesis_step& a, std::string& note);
  void execute_links(const nemesis_step& a, std::string& note);
  void on_line(demo::node_proc& n, const std::string& line);
  void on_exit(demo::node_proc& n);
  std::optional<size_t> slot_of(const std::string& name) const;

  run_options opts_;
  demo::demo_timing timing_;
  std::unique_ptr<fault_network> net_;
  std::unique_ptr<test::etcd_cluster> etcd_;
  std::unique_ptr<delay_proxy> etcd_proxy_;
  uint16_t etcd_proxy_port_ = 0;
  bool etcd_stopped_ = false;
  std::unique_ptr<nemesis_log> log_;
  demo::node_group procs_;
  std::vector<node_slot> slots_;
  pid_t store_pid_ = -1;
  uint16_t store_port_ = 0;
  std::optional<std::string> store_listening_;
  std::unique_ptr<demo::client::load_driver> load_;
  // Made after setup: its io thread must start in the hub namespace.
  std::unique_ptr<demo::http_getter> http_;
  std::unique_ptr<view_sampler> views_;
  steady::time_point next_view_{};
  // After the probe: the rounds are the final ones.
  bool final_views_ = false;
  // The nodes whose links are slow (links_slow without links_fast yet).
  std::set<size_t> slowed_;
  int64_t probe_start_ns_ = 0;
  // run_end: the nodes are being stopped, none is started again.
  bool stopping_ = false;
};

std::optional<size_t> chaos_run::slot_of(const std::string& name) const {
  for (size_t i = 0; i < net_->nodes().size(); ++i)
    if (net_->nodes()[i].name == name)
      return i;
  return std::nullopt;
}

void chaos_run::on_line(demo::node_proc& n, const std::string& line) {
  if (n.name == "store") {
    if (!store_listening_ && line.rfind("listening on ", 0) == 0)
      store_listening_ = line;
    return;
  }
  auto i = slot_of(n.name);
  if (!i || slots_[*i].pid != n.pid)
    return;
  if (line.rfind("api listening on ", 0) == 0) {
    slots_[*i].ready = true;
    if (auto err = net_->node_started(*i); !err.empty())
      say(fmt::format("{}: re-applying its partitions: {}", n.name, err));
  }
}

void chaos_run::on_exit(demo::node_proc& n) {
  auto status = demo::describe_status(*n.status);
  if (n.name == "store") {
    log_->write("store_exit", {{"status", status}});
    return;
  }
  auto i = slot_of(n.name);
  if (!i)
    return;
  log_->write("node_exit", {{"node", n.name},
                            {"pid", static_cast<uint64_t>(n.pid)},
                            {"status", status}});
  auto& s = slots_[*i];
  if (s.pid != n.pid)
    return;
  s.running = false;
  s.ready = false;
  s.paused = false;
  if (!s.held_down && !stopping_) {
    // Downed, or it crashed: the supervisor starts it again.
    s.restart_at = steady::now() + 1s;
    if (opts_.verbose)
      say(fmt::format("{} {}; restarting it in 1s", n.name, status));
  }
}

void chaos_run::setup() {
  std::error_code ec;
  if (fs::exists(opts_.dir) && !fs::is_empty(opts_.dir, ec))
    throw std::runtime_error(fmt::format(
      "{} is not empty (a run needs a fresh directory)", opts_.dir.string()));
  fs::create_directories(opts_.dir / "history", ec);
  if (ec)
    throw std::runtime_error(
      fmt::format("cannot create {}: {}", opts_.dir.string(), ec.message()));
  // The network first: in netns mode this thread enters the hub namespace
  // and everything started after it (threads, etcd, the store) lives there.
  auto network = opts_.network;
  if (network == "auto")
    network = netns_unsupported().empty() ? "netns" : "transport";
  if (network == "netns") {
    if (auto why = netns_unsupported(); !why.empty())
      throw std::runtime_error("--network netns: " + why);
    net_ = make_netns_network(opts_.nodes);
  } else {
    net_ = make_transport_network(opts_.nodes);
  }
  slots_.resize(opts_.nodes);
  http_ = std::make_unique<demo::http_getter>();
  log_ = std::make_unique<nemesis_log>(opts_.dir / "nemesis.jsonl");
  views_
    = std::make_unique<view_sampler>(opts_.dir / "views.jsonl", view_timeout);
  {
    std::ofstream secret{opts_.dir / "cluster.secret"};
    secret << random_hex(32) << '\n';
    if (!secret.flush())
      throw std::runtime_error(fmt::format(
        "cannot write {}", (opts_.dir / "cluster.secret").string()));
  }
  ::chmod((opts_.dir / "cluster.secret").c_str(), 0600);
  // A non-loopback management bind needs a token (PUTs need it; the
  // driver only reads). From the environment, so it is not on any
  // command line.
  ::setenv("TROUPE_MANAGEMENT__TOKEN", random_hex(16).c_str(), 1);
  etcd_ = std::make_unique<test::etcd_cluster>(1);
  auto upstream = etcd_->endpoint(0); // http://127.0.0.1:PORT
  auto port = static_cast<uint16_t>(
    std::stoul(upstream.substr(upstream.rfind(':') + 1)));
  delay_proxy_config pc;
  pc.listen_host = net_->hub_host();
  pc.upstream_port = port;
  auto proxy = delay_proxy::start(pc);
  if (!proxy)
    throw std::runtime_error("etcd's delay proxy: " + proxy.error().message);
  etcd_proxy_ = std::move(*proxy);
  etcd_proxy_port_ = etcd_proxy_->port();
  start_store();
}

void chaos_run::start_store() {
  auto log = opts_.dir / "store.log";
  std::string error;
  int fd = demo::open_regular(log, O_WRONLY | O_CREAT | O_TRUNC, error);
  if (fd < 0)
    throw std::runtime_error(error);
  auto bin = opts_.bin_dir / "troupe-demo-store";
  if (auto why = procs_.spawn("store", log,
                              {bin.string(), "--bind", net_->hub_host(),
                               "--port", "0", "--dir", opts_.dir.string()},
                              fd);
      !why.empty())
    throw std::runtime_error(why);
  auto until = steady::now() + 10s;
  while (!store_listening_ && steady::now() < until)
    procs_.pump(50ms);
  if (!store_listening_)
    throw std::runtime_error("troupe-demo-store printed no `listening on` "
                             "line within 10s: "
                             + demo::read_tail(log));
  store_pid_ = procs_.find("store")->pid;
  auto& line = *store_listening_;
  store_port_
    = static_cast<uint16_t>(std::stoul(line.substr(line.rfind(':') + 1)));
}

std::vector<std::string> chaos_run::node_argv(size_t i) {
  auto& places = net_->nodes();
  auto& p = places[i];
  auto argv = net_->launcher(i);
  argv.push_back((opts_.bin_dir / "troupe-demo-node").string());
  auto hub = net_->hub_host();
  std::vector<std::string> flags{
    fmt::format("--cluster.name={}", cluster_name),
    fmt::format("--cluster.host={}", p.host),
    fmt::format("--cluster.port={}", p.cluster_port),
    // Every node is a seed and a silent seed never makes the first found a
    // cluster: a node restarted behind a partition waits for a member
    // instead of founding a second cluster (docs/design/cluster.md).
    "--cluster.seed_nodes=" + seed_list(places),
    "--cluster.first_seed_founds_on_timeout=false",
    "--cluster.secret_file=" + (opts_.dir / "cluster.secret").string(),
    fmt::format("--management.bind={}", p.host),
    fmt::format("--management.port={}", p.management_port),
    fmt::format("--demo.api_bind={}", p.host),
    fmt::format("--demo.api_port={}", p.api_port),
    fmt::format("--demo.store_url=http://{}:{}", hub, store_port_),
    fmt::format("--demo.node_name={}", p.name),
    fmt::format("--demo.history_file={}",
                (opts_.dir / "history"
                 / fmt::format("{}.{}.jsonl", p.name, slots_[i].starts))
                  .string()),
    "--log.level=info",
    "--lease.backend=etcd",
    "--lease.etcd.request_timeout=500ms",
    fmt::format("--lease.etcd.endpoints=http://{}:{}", hub, etcd_proxy_port_),
  };
  if (net_->mechanism() == "transport")
    flags.push_back("--management.fault_injection=true");
  for (auto& f : timing_.node_flags())
    flags.push_back(f);
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

void chaos_run::start_node(size_t i) {
  auto& s = slots_[i];
  auto& p = net_->nodes()[i];
  ++s.starts;
  auto log = opts_.dir / fmt::format("{}.{}.log", p.name, s.starts);
  std::string error;
  int fd = demo::open_regular(log, O_WRONLY | O_CREAT | O_TRUNC, error);
  if (fd < 0)
    throw std::runtime_error(error);
  if (auto why = procs_.spawn(p.name, log, node_argv(i), fd); !why.empty())
    throw std::runtime_error(why);
  s.pid = procs_.find(p.name)->pid;
  s.running = true;
  s.ready = false;
  s.paused = false;
  s.held_down = false;
  s.restart_at.reset();
  log_->write("node_start", {{"node", p.name},
                             {"pid", static_cast<uint64_t>(s.pid)},
                             {"start", s.starts}});
}

void chaos_run::pump(steady::duration d) {
  auto until = steady::now() + d;
  do {
    procs_.pump(50ms);
    supervise();
    sample_views();
  } while (steady::now() < until);
}

void chaos_run::supervise() {
  auto now = steady::now();
  for (size_t i = 0; i < slots_.size(); ++i)
    if (auto& s = slots_[i];
        !stopping_ && !s.running && s.restart_at && *s.restart_at <= now)
      start_node(i);
}

void chaos_run::wait_for_members() {
  auto until = steady::now() + 60s;
  auto url = net_->nodes()[0].management_url() + "/cluster/members";
  int up = 0;
  while (steady::now() < until) {
    pump(500ms);
    auto answer = http_->get(url, 1s);
    demo::cluster_snapshot snap;
    if (answer && answer->status == 200
        && demo::read_members(answer->body, snap)) {
      up = snap.up_count();
      if (up == static_cast<int>(opts_.nodes))
        return;
    }
  }
  throw std::runtime_error(
    fmt::format("the cluster did not come up: {} of {} members Up after 60s "
                "(see {}/node-*.log)",
                up, opts_.nodes, opts_.dir.string()));
}

void chaos_run::execute(const nemesis_step& a) {
  std::string note;
  switch (a.op) {
    case step_op::kill:
    case step_op::restart:
    case step_op::pause:
    case step_op::resume:
      execute_process(a, note);
      break;
    case step_op::partition: {
      partition_spec p{a.id, a.partition == partition_kind::symmetric,
                       indexes_of(a.nodes), indexes_of(a.to)};
      log_->write("partition", {{"id", uint64_t{a.id}},
                                {"kind", std::string{to_string(a.partition)}},
                                {"from", a.nodes},
                                {"to", a.to},
                                {"mechanism", net_->mechanism()}});
      note += net_->partition(p);
      break;
    }
    case step_op::heal:
      log_->write("heal", {{"id", uint64_t{a.id}}});
      note += net_->heal(a.id);
      break;
    case step_op::links_slow:
    case step_op::links_fast:
      execute_links(a, note);
      break;
    case step_op::etcd_stop:
    case step_op::etcd_start:
    case step_op::etcd_slow:
    case step_op::etcd_fast:
    case step_op::lease_delete:
      execute_etcd(a, note);
      break;
  }
  if (opts_.verbose)
    say(render(a) + (note.empty() ? "" : " (" + note + ")"));
}

void chaos_run::execute_process(const nemesis_step& a, std::string& note) {
  auto& places = net_->nodes();
  auto node_fields = [&](size_t i) {
    return std::vector<log_field>{
      {"node", places[i].name}, {"pid", static_cast<uint64_t>(slots_[i].pid)}};
  };
  auto signal = [&](size_t i, int sig) {
    if (auto* n = procs_.find(places[i].name); n && n->pid == slots_[i].pid)
      procs_.signal(*n, sig);
  };
  if (a.op == step_op::kill && a.kind == fault_kind::majority_restart)
    log_->write("majority_restart", {{"nodes", a.nodes}});
  for (auto i : indexes_of(a.nodes)) {
    auto& s = slots_[i];
    if (a.op == step_op::restart) {
      if (!s.running)
        start_node(i);
      continue;
    }
    if (a.op == step_op::kill) {
      s.held_down = true;
      s.restart_at.reset();
    }
    if (a.op == step_op::resume) {
      if (s.running && s.paused) {
        log_->write("resume", node_fields(i));
        signal(i, SIGCONT);
        s.paused = false;
      }
      continue;
    }
    if (!s.running) {
      note += places[i].name + " is not running; ";
      continue;
    }
    bool kill = a.op == step_op::kill;
    log_->write(kill ? "kill" : "pause", node_fields(i));
    signal(i, kill ? SIGKILL : SIGSTOP);
    if (!kill)
      s.paused = true;
  }
}

void chaos_run::execute_etcd(const nemesis_step& a, std::string& note) {
  switch (a.op) {
    case step_op::etcd_stop:
      log_->write("etcd_stop");
      etcd_->stop(0);
      etcd_stopped_ = true;
      return;
    case step_op::etcd_start:
      etcd_->start(0, false);
      etcd_stopped_ = false;
      log_->write("etcd_start");
      return;
    case step_op::etcd_slow:
      etcd_proxy_->set_delay(a.delay);
      log_->write("etcd_slow",
                  {{"delay_ms", static_cast<uint64_t>(a.delay.count())}});
      return;
    case step_op::etcd_fast:
      etcd_proxy_->set_delay(0ms);
      log_->write("etcd_fast");
      return;
    default:
      break;
  }
  auto key = "/troupe/leases/"
             + singleton::singleton_lease_name("", cluster_name, "scheduler");
  log_->write("lease_delete", {{"key", key}});
  if (etcd_stopped_) {
    note += "etcd is stopped; ";
    return;
  }
  auto body = fmt::format(R"({{"key":"{}"}})", lease::etcd::base64_encode(key));
  try {
    auto r = etcd_->post("/v3/kv/deleterange", body);
    if (r.status != 200)
      note += fmt::format("deleterange: HTTP {}: {}; ", r.status, r.body);
  } catch (const std::exception& e) {
    note += fmt::format("deleterange: {}; ", e.what());
  }
}

void chaos_run::execute_links(const nemesis_step& a, std::string& note) {
  for (auto i : indexes_of(a.nodes)) {
    auto& name = net_->nodes()[i].name;
    if (a.op == step_op::links_slow) {
      log_->write("links_slow",
                  {{"node", name},
                   {"delay_ms", static_cast<uint64_t>(a.delay.count())},
                   {"mechanism", net_->mechanism()}});
      note += net_->slow_links(i, a.delay);
      slowed_.insert(i);
    } else {
      log_->write("links_fast", {{"node", name}});
      note += net_->fast_links(i);
      slowed_.erase(i);
    }
  }
}

void chaos_run::end_nemesis() {
  log_->write("nemesis_end");
  for (auto i : std::set<size_t>{slowed_}) {
    nemesis_step fast;
    fast.op = step_op::links_fast;
    fast.nodes = {net_->nodes()[i].name};
    std::string note;
    execute_links(fast, note);
    if (!note.empty())
      say("ending slow links: " + note);
  }
  if (auto err = net_->heal(0); !err.empty())
    say("healing: " + err);
  log_->write("heal", {{"id", uint64_t{0}}});
  etcd_proxy_->set_delay(0ms);
  if (etcd_stopped_) {
    etcd_->start(0, false);
    etcd_stopped_ = false;
    log_->write("etcd_start");
  }
  for (size_t i = 0; i < slots_.size(); ++i) {
    auto& s = slots_[i];
    if (s.running && s.paused) {
      log_->write("resume", {{"node", net_->nodes()[i].name},
                             {"pid", static_cast<uint64_t>(s.pid)}});
      if (auto* n = procs_.find(net_->nodes()[i].name))
        procs_.signal(*n, SIGCONT);
      s.paused = false;
    }
    if (!s.running && s.held_down)
      start_node(i);
  }
}

void chaos_run::probe() {
  probe_start_ns_ = log_->write("probe_start");
  auto until = steady::now() + opts_.probe_timeout;
  while (steady::now() < until) {
    pump(1s);
    if (probe_complete(opts_.dir, probe_start_ns_, opts_.accounts))
      return;
  }
}

std::vector<view_target> chaos_run::view_targets() const {
  std::vector<view_target> out;
  for (size_t i = 0; i < slots_.size(); ++i)
    if (auto& s = slots_[i]; s.running && !s.paused)
      out.push_back({net_->nodes()[i].name, static_cast<uint64_t>(s.pid),
                     s.starts, net_->nodes()[i].management_url()});
  return out;
}

void chaos_run::sample_views() {
  views_->poll();
  auto now = steady::now();
  if (stopping_ || views_->busy() || now < next_view_)
    return;
  next_view_ = now + view_interval;
  views_->start_round(view_targets(), final_views_);
}

void chaos_run::final_views() {
  final_views_ = true;
  auto until = steady::now() + final_views_timeout;
  while (steady::now() < until) {
    pump(1s);
    if (views_complete(opts_.dir))
      return;
  }
}

void chaos_run::stop_all() {
  if (load_)
    load_->stop();
  stopping_ = true;
  log_->write("run_end");
  for (size_t i = 0; i < slots_.size(); ++i)
    if (auto* n = procs_.find(net_->nodes()[i].name); n && n->running())
      procs_.signal(*n, SIGTERM);
  auto until = steady::now() + 20s;
  auto nodes_running = [&] {
    for (auto& n : procs_.all())
      if (n.name != "store" && n.running())
        return true;
    return false;
  };
  while (nodes_running() && steady::now() < until)
    procs_.pump(100ms);
  for (auto& n : procs_.all())
    if (n.name != "store" && n.running())
      say(n.name + " did not stop within 20s of SIGTERM: killed");
  // The store last: it flushes its files on SIGTERM.
  if (auto* s = procs_.find("store"); s && s->running())
    procs_.signal(*s, SIGTERM);
  until = steady::now() + 10s;
  while (!procs_.all_done() && steady::now() < until)
    procs_.pump(100ms);
}

int chaos_run::run() {
  setup();
  say(fmt::format("seed {}, {} nodes, network {}, nemesis {}s, settle {}s; "
                  "files in {}",
                  opts_.seed, opts_.nodes, net_->mechanism(),
                  opts_.duration.count(), opts_.settle.count(),
                  opts_.dir.string()));
  auto schedule = plan_run(opts_);
  {
    std::ofstream out{opts_.dir / "schedule.txt"};
    out << render(schedule);
  }
  log_->write("run_start",
              {{"seed", opts_.seed},
               {"nodes", static_cast<uint64_t>(opts_.nodes)},
               {"mechanism", net_->mechanism()},
               {"duration_s", static_cast<uint64_t>(opts_.duration.count())},
               {"quiet_after_ms",
                static_cast<uint64_t>(schedule.rules.quiet_after.count())}});
  for (size_t i = 0; i < opts_.nodes; ++i)
    start_node(i);
  wait_for_members();
  say("all members Up; starting the load");
  demo::client::load_settings ls;
  for (auto& p : net_->nodes())
    ls.nodes.push_back({p.host, p.api_port});
  ls.accounts = opts_.accounts;
  ls.rate = opts_.rate;
  auto load = demo::client::load_driver::start(ls, opts_.dir / "client.log");
  if (!load)
    throw std::runtime_error("client: " + load.error().message);
  load_ = std::move(*load);
  pump(3s); // a little load before the first fault
  log_->write("nemesis_start");
  auto start = steady::now();
  for (auto& a : schedule.steps) {
    auto due = start + a.at;
    if (steady::now() < due)
      pump(due - steady::now());
    execute(a);
  }
  if (steady::now() < start + opts_.duration)
    pump(start + opts_.duration - steady::now());
  end_nemesis();
  say(fmt::format("nemesis over; settling for {}s", opts_.settle.count()));
  pump(opts_.settle);
  say("probing every account and the singleton");
  probe();
  say("asking every live node for its membership view");
  final_views();
  stop_all();
  return judge();
}

int chaos_run::judge() {
  return judge_run_dir(opts_.dir, opts_.seed, std::cout);
}

} // namespace

nemesis_schedule plan_run(const run_options& opts) {
  demo::demo_timing timing;
  nemesis_inputs in;
  in.seed = opts.seed;
  in.duration = opts.duration;
  in.nodes = default_nodes(opts.nodes);
  auto ms = [](runtime::timespan d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d);
  };
  in.timing.heartbeat_interval = ms(timing.heartbeat_interval);
  in.timing.acceptable_heartbeat_pause = ms(timing.acceptable_heartbeat_pause);
  in.timing.min_std_deviation = ms(timing.min_std_deviation);
  in.timing.threshold = timing.threshold;
  in.timing.stable_after = ms(timing.stable_after);
  in.timing.down_all_when_unstable = ms(timing.down_all_when_unstable);
  in.timing.lease_ttl = ms(timing.lease_ttl);
  in.timing.gossip_interval = ms(timing.gossip_interval);
  auto kinds = parse_fault_kinds(opts.faults);
  if (!kinds)
    throw std::invalid_argument(kinds.error().message);
  in.kinds = *kinds;
  auto schedule = make_schedule(in);
  if (!schedule)
    throw std::invalid_argument(schedule.error().message);
  return std::move(*schedule);
}

int run_chaos(const run_options& opts) {
  try {
    chaos_run run{opts};
    return run.run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "troupe-chaos: %s\n", e.what());
    return 2;
  }
}

} // namespace troupe::chaos
