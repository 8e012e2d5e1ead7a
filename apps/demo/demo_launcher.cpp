// troupe-demo: the lease demo's launcher (README: scripts/demo).
//
// Starts N troupe-demo-node processes that compete for one file lease,
// shows who holds it with which fencing token, kills the holder with
// SIGKILL `--kills` times (waiting for each takeover), stops everything with
// SIGTERM and prints a verdict computed only from the ledger file and the
// nodes' output (demo_ledger.hpp). Exit 0: every invariant held; 1: one was
// violated; 2: bad flags; 130: interrupted. SIGINT/SIGTERM are forwarded to
// the nodes; the nodes also stop when the launcher dies (PR_SET_PDEATHSIG).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "demo_ledger.hpp"
#include "troupe/runtime/config.hpp"

extern char** environ;

using namespace troupe;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) {
  interrupted.store(true);
}

struct options {
  int nodes = 3;
  runtime::timespan ttl = 2s;
  int kills = 2;
  bool freeze = false;
  bool quiet = false;
  std::string dir;
  std::string node_binary;
};

// One troupe-demo-node: its pid and the read end of its stdout.
struct node_proc {
  std::string name;
  pid_t pid = -1;
  int out_fd = -1;
  std::string pending; // an incomplete output line
  std::optional<int> status;
  bool running() const {
    return pid > 0 && !status;
  }
};

class launcher {
public:
  explicit launcher(options opts) : opts_(std::move(opts)) {}

  ~launcher() {
    // Never leave a node behind, whatever happened.
    for (auto& n : nodes_)
      if (n.running())
        ::kill(n.pid, SIGKILL);
    for (auto& n : nodes_) {
      if (n.running())
        ::waitpid(n.pid, nullptr, 0);
      if (n.out_fd >= 0)
        ::close(n.out_fd);
    }
  }

  int run();

private:
  void say(const std::string& text) {
    if (opts_.quiet)
      return;
    auto t = steady::now() - start_;
    std::printf("[%6.2fs] %s\n", static_cast<double>(t.count()) / 1e9,
                text.c_str());
    std::fflush(stdout);
  }

  bool spawn_all();
  void pump(std::chrono::milliseconds timeout);
  void on_line(node_proc& n, const std::string& line);
  void tail_ledger();
  void reap();
  bool wait_until(const std::function<bool()>& pred, runtime::timespan bound);
  bool hold_a_while();
  bool kill_holder();
  bool freeze_holder();
  void stop_all();
  int finish();

  options opts_;
  steady::time_point start_ = steady::now();
  fs::path ledger_;
  std::vector<node_proc> nodes_;
  std::vector<demo::node_event> events_;
  std::vector<demo::takeover> takeovers_;
  std::optional<demo::takeover> freeze_;
  // Live view (the verdict recomputes everything from the files/outputs).
  std::string holder_;
  uint64_t holder_token_ = 0;
  size_t holder_entries_ = 0;
  demo::ledger_fence fence_;
  off_t ledger_offset_ = 0;
  std::string ledger_pending_;
};

bool launcher::spawn_all() {
  for (int i = 1; i <= opts_.nodes; ++i) {
    node_proc n;
    n.name = fmt::format("node-{}", i);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return false;
    auto log = (fs::path{opts_.dir} / (n.name + ".log")).string();
    std::vector<std::string> args{opts_.node_binary,
                                  "--dir",
                                  (fs::path{opts_.dir} / "leases").string(),
                                  "--ledger",
                                  ledger_.string(),
                                  "--owner",
                                  n.name,
                                  "--ttl",
                                  runtime::render_duration(opts_.ttl),
                                  "--log.level=warning"};
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY,
                                     0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    auto rc
      = ::posix_spawn(&n.pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      std::fprintf(stderr, "troupe-demo: cannot start %s: %s\n",
                   opts_.node_binary.c_str(), std::strerror(rc));
      return false;
    }
    n.out_fd = fds[0];
    ::fcntl(n.out_fd, F_SETFL, ::fcntl(n.out_fd, F_GETFL) | O_NONBLOCK);
    nodes_.push_back(std::move(n));
  }
  return true;
}

void launcher::on_line(node_proc& n, const std::string& line) {
  auto ev = demo::parse_node_event(line);
  if (!ev) {
    say(fmt::format("{} says: {}", n.name, line));
    return;
  }
  events_.push_back(*ev);
  switch (ev->kind) {
    case demo::event_kind::acquired:
      holder_ = ev->owner;
      holder_token_ = ev->token;
      holder_entries_ = 0;
      say(fmt::format("{} holds the lease, fencing token {}", ev->owner,
                      ev->token));
      break;
    case demo::event_kind::lost:
    case demo::event_kind::released:
      if (ev->owner == holder_)
        holder_.clear();
      say(line);
      break;
    case demo::event_kind::ledger:
      break; // the launcher reports what the ledger accepted instead
    case demo::event_kind::competing:
    case demo::event_kind::stopped:
      say(line);
      break;
  }
}

void launcher::tail_ledger() {
  int fd = ::open(ledger_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  char buf[4096];
  ssize_t n;
  while ((n = ::pread(fd, buf, sizeof(buf), ledger_offset_)) > 0) {
    ledger_offset_ += n;
    ledger_pending_.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t pos;
  while ((pos = ledger_pending_.find('\n')) != std::string::npos) {
    auto line = ledger_pending_.substr(0, pos);
    ledger_pending_.erase(0, pos + 1);
    auto rec = demo::parse_ledger_record(line);
    if (!rec) {
      say(fmt::format("ledger: malformed record \"{}\"", line));
      continue;
    }
    if (fence_.offer(*rec)) {
      if (rec->owner == holder_ && rec->token == holder_token_)
        ++holder_entries_;
      say(fmt::format("ledger accepts entry #{} of {} (token {})", rec->entry,
                      rec->owner, rec->token));
    } else {
      say(fmt::format("ledger REJECTS entry #{} of {}: stale token {} < {}",
                      rec->entry, rec->owner, rec->token,
                      fence_.highest_token()));
    }
  }
}

void launcher::reap() {
  for (auto& n : nodes_) {
    if (!n.running())
      continue;
    int status = 0;
    if (::waitpid(n.pid, &status, WNOHANG) == n.pid) {
      n.status = status;
      if (WIFSIGNALED(status))
        say(fmt::format("{} (pid {}) died: {}", n.name, n.pid,
                        strsignal(WTERMSIG(status))));
      else if (WEXITSTATUS(status) != 0)
        say(fmt::format("{} (pid {}) exited with status {} (see {}.log)",
                        n.name, n.pid, WEXITSTATUS(status), n.name));
    }
  }
}

void launcher::pump(std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  std::vector<node_proc*> owners;
  for (auto& n : nodes_)
    if (n.out_fd >= 0) {
      fds.push_back({n.out_fd, POLLIN, 0});
      owners.push_back(&n);
    }
  if (fds.empty())
    std::this_thread::sleep_for(timeout);
  else
    ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
  for (size_t i = 0; i < fds.size(); ++i) {
    auto& n = *owners[i];
    char buf[4096];
    ssize_t got;
    while ((got = ::read(n.out_fd, buf, sizeof(buf))) > 0)
      n.pending.append(buf, static_cast<size_t>(got));
    size_t pos;
    while ((pos = n.pending.find('\n')) != std::string::npos) {
      auto line = n.pending.substr(0, pos);
      n.pending.erase(0, pos + 1);
      on_line(n, line);
    }
    if (got == 0) { // every writer is gone
      ::close(n.out_fd);
      n.out_fd = -1;
    }
  }
  tail_ledger();
  reap();
}

bool launcher::wait_until(const std::function<bool()>& pred,
                          runtime::timespan bound) {
  auto until = steady::now() + bound;
  while (!pred()) {
    if (interrupted || steady::now() >= until)
      return false;
    pump(50ms);
  }
  return true;
}

// Lets the current holder write two ledger entries (about a second).
bool launcher::hold_a_while() {
  auto bound = 2 * opts_.ttl + 10s;
  return wait_until([&] { return !holder_.empty(); }, bound)
         && wait_until([&] { return holder_entries_ >= 2 || holder_.empty(); },
                       bound);
}

bool launcher::kill_holder() {
  demo::takeover t;
  t.victim = holder_;
  t.victim_token = holder_token_;
  auto victim = std::find_if(nodes_.begin(), nodes_.end(),
                             [&](auto& n) { return n.name == t.victim; });
  if (victim == nodes_.end() || !victim->running())
    return false;
  say(fmt::format("killing {} (holder of token {}) with SIGKILL", t.victim,
                  t.victim_token));
  auto killed_at = steady::now();
  ::kill(victim->pid, SIGKILL);
  holder_.clear();
  auto ok = wait_until(
    [&] { return !holder_.empty() && holder_token_ > t.victim_token; },
    2 * opts_.ttl + 10s);
  if (ok) {
    t.elapsed = steady::now() - killed_at;
    t.successor = holder_;
    t.successor_token = holder_token_;
    // The record expires ttl after the victim's last renewal, which came
    // at most renewal_interval (ttl / 3) before the kill.
    say(fmt::format("takeover by {} {} after the kill (expected {} to {}: "
                    "{}'s record expires ttl {} after its last renewal, "
                    "which came up to ttl/3 before the kill)",
                    t.successor, demo::format_seconds(t.elapsed),
                    demo::format_seconds(opts_.ttl - opts_.ttl / 3),
                    demo::format_seconds(opts_.ttl), t.victim,
                    runtime::render_duration(opts_.ttl)));
  }
  if (!interrupted)
    takeovers_.push_back(t);
  return ok;
}

// SIGSTOPs the holder until another takes over, then resumes it: it must
// notice (check_alive() false) and write nothing with its old token.
bool launcher::freeze_holder() {
  demo::takeover t;
  t.victim = holder_;
  t.victim_token = holder_token_;
  auto victim = std::find_if(nodes_.begin(), nodes_.end(),
                             [&](auto& n) { return n.name == t.victim; });
  if (victim == nodes_.end() || !victim->running())
    return false;
  bool ok = false;
  for (int attempt = 0; attempt < 3 && !ok && !interrupted; ++attempt) {
    say(fmt::format("freezing {} (holder of token {}) with SIGSTOP", t.victim,
                    t.victim_token));
    auto frozen_at = steady::now();
    ::kill(victim->pid, SIGSTOP);
    ok = wait_until(
      [&] {
        return holder_token_ > t.victim_token && holder_ != t.victim
               && !holder_.empty();
      },
      2 * opts_.ttl + 5s);
    if (ok) {
      t.elapsed = steady::now() - frozen_at;
      t.successor = holder_;
      t.successor_token = holder_token_;
      say(fmt::format("takeover by {} in {} while {} is frozen", t.successor,
                      demo::format_seconds(t.elapsed), t.victim));
    } else {
      // Frozen inside a backend call, it keeps the file lock: nobody can
      // take over (by design). Thaw it and try again.
      say(fmt::format("no takeover: {} was frozen holding the file lock; "
                      "resuming it and trying again",
                      t.victim));
      ::kill(victim->pid, SIGCONT);
      wait_until([] { return false; }, 300ms);
    }
  }
  if (!interrupted)
    freeze_ = t;
  if (!ok)
    return false;
  wait_until([&] { return holder_entries_ >= 1; }, 2 * opts_.ttl + 5s);
  say(fmt::format("resuming {} (SIGCONT): it must see check_alive() false and "
                  "write nothing with token {}",
                  t.victim, t.victim_token));
  ::kill(victim->pid, SIGCONT);
  auto reported = [&] {
    return std::any_of(events_.begin(), events_.end(), [&](auto& e) {
      return e.kind == demo::event_kind::lost && e.owner == t.victim
             && e.token == t.victim_token;
    });
  };
  wait_until(reported, opts_.ttl + 5s);
  return true;
}

void launcher::stop_all() {
  say("stopping every node (SIGTERM)");
  for (auto& n : nodes_)
    if (n.running())
      ::kill(n.pid, SIGTERM);
  auto all_done = [&] {
    return std::none_of(nodes_.begin(), nodes_.end(),
                        [](auto& n) { return n.running() || n.out_fd >= 0; });
  };
  auto until = steady::now() + 10s;
  while (!all_done() && steady::now() < until)
    pump(50ms);
  for (auto& n : nodes_)
    if (n.running()) {
      say(fmt::format("{} did not stop within 10s: SIGKILL", n.name));
      ::kill(n.pid, SIGKILL);
    }
  until = steady::now() + 5s;
  while (!all_done() && steady::now() < until)
    pump(50ms);
}

int launcher::finish() {
  std::ifstream in{ledger_};
  demo::verdict_input vin;
  vin.ledger_text.assign(std::istreambuf_iterator<char>{in}, {});
  vin.events = events_;
  vin.takeovers = takeovers_;
  vin.kills_requested
    = interrupted ? static_cast<int>(takeovers_.size()) : opts_.kills;
  vin.ttl = opts_.ttl;
  vin.freeze = freeze_;
  vin.freeze_requested = opts_.freeze && !interrupted;
  auto v = demo::judge(vin);
  std::printf("\nverdict (from %s and the nodes' output):\n", ledger_.c_str());
  for (auto& line : v.report)
    std::printf("  %s\n", line.c_str());
  for (auto& line : v.violations)
    std::printf("  VIOLATION: %s\n", line.c_str());
  std::printf("files: %s (ledger.txt, node-N.log, leases/)\n",
              opts_.dir.c_str());
  if (interrupted) {
    std::printf("INTERRUPTED\n");
    return 130;
  }
  std::printf("%s\n", v.ok() ? "PASS: every invariant held"
                             : "FAIL: an invariant was violated");
  return v.ok() ? 0 : 1;
}

int launcher::run() {
  ledger_ = fs::path{opts_.dir} / "ledger.txt";
  std::ofstream{ledger_, std::ios::trunc}; // a fresh ledger for this run
  if (!opts_.quiet)
    std::printf("troupe demo: %d nodes compete for one file lease (ttl %s) "
                "in %s; the holder is killed %d time(s)%s\n",
                opts_.nodes, runtime::render_duration(opts_.ttl).c_str(),
                opts_.dir.c_str(), opts_.kills,
                opts_.freeze ? ", then frozen once" : "");
  if (!spawn_all()) {
    stop_all();
    return 1;
  }
  bool completed = hold_a_while();
  if (!completed && !interrupted)
    say("nobody acquired the lease in time");
  for (int i = 0; completed && i < opts_.kills; ++i)
    completed = kill_holder() && hold_a_while();
  if (completed && opts_.freeze)
    completed = freeze_holder() && hold_a_while();
  if (interrupted)
    say("interrupted");
  stop_all();
  return finish();
}

// Parses the flags; nullopt after printing help (exit 0) or a usage error
// naming the flag (exit 2), as `exit_code` says.
std::optional<options> parse_flags(int argc, char** argv, int& exit_code) {
  CLI::App app{"troupe-demo: processes compete for a file lease; holders "
               "are killed; a fenced ledger checks the outcome"};
  options o;
  std::string ttl = "2s";
  app.add_option("--nodes", o.nodes, "Number of competing node processes")
    ->check(CLI::Range(2, 20))
    ->capture_default_str();
  app.add_option("--ttl", ttl, "Lease ttl (500ms .. 60s)")
    ->capture_default_str()
    ->check([](const std::string& text) -> std::string {
      auto d = runtime::parse_duration(text);
      if (!d)
        return d.error().message;
      if (*d < 500ms || *d > 60s)
        return "must be between 500ms and 60s";
      return {};
    });
  app.add_option("--kills", o.kills, "How many times the holder is SIGKILLed")
    ->check(CLI::Range(0, 19))
    ->capture_default_str();
  app.add_flag("--freeze", o.freeze,
               "After the kills, freeze the holder (SIGSTOP) until another "
               "takes over, then resume it");
  app.add_flag("--quiet", o.quiet, "Print only the verdict");
  app.add_option("--dir", o.dir,
                 "Working directory (default: a fresh temp "
                 "directory)");
  app.add_option("--node-binary", o.node_binary,
                 "Path of troupe-demo-node (default: next to troupe-demo)");
  try {
    app.parse(argc, argv);
    if (o.kills >= o.nodes)
      throw CLI::ValidationError(
        "--kills", fmt::format("{} must be less than --nodes {}: somebody must "
                               "survive to take over",
                               o.kills, o.nodes));
    if (o.freeze && o.kills + 2 > o.nodes)
      throw CLI::ValidationError(
        "--freeze", fmt::format("needs --nodes of at least --kills + 2 ({}): "
                                "somebody must take over from the frozen "
                                "holder",
                                o.kills + 2));
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    exit_code = 0;
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    std::cerr << "troupe-demo: " << e.what() << "\n\n" << app.help();
    exit_code = 2;
    return std::nullopt;
  }
  o.ttl = *runtime::parse_duration(ttl);
  return o;
}

// Fills in --node-binary and --dir defaults; false after printing why not.
bool complete(options& o) {
  if (o.node_binary.empty()) {
    std::error_code ec;
    auto self = fs::read_symlink("/proc/self/exe", ec);
    o.node_binary = (self.parent_path() / "troupe-demo-node").string();
  }
  if (::access(o.node_binary.c_str(), X_OK) != 0) {
    std::fprintf(stderr,
                 "troupe-demo: --node-binary %s: not an executable file\n",
                 o.node_binary.c_str());
    return false;
  }
  if (o.dir.empty()) {
    auto tmpl = (fs::temp_directory_path() / "troupe-demo-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) {
      std::perror("troupe-demo: cannot create a temp directory");
      return false;
    }
    o.dir = tmpl;
  }
  std::error_code ec;
  fs::create_directories(o.dir, ec);
  if (ec) {
    std::fprintf(stderr, "troupe-demo: --dir %s: %s\n", o.dir.c_str(),
                 ec.message().c_str());
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  auto opts = parse_flags(argc, argv, exit_code);
  if (!opts)
    return exit_code;
  if (!complete(*opts))
    return 2;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt; // no SA_RESTART: poll() returns at once
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  launcher l{std::move(*opts)};
  return l.run();
}
