// troupe-demo: the lease demo's launcher (README: scripts/demo).
//
// Starts N troupe-demo-node processes that compete for one file lease,
// shows who holds it with which fencing token, kills the holder with
// SIGKILL `--kills` times (waiting for each takeover), stops everything with
// SIGTERM and prints a verdict computed only from the ledger file, the
// nodes' output and how each node ended (demo_verdict.hpp). Exit 0: every
// invariant held; 1: one was violated; 2: bad flags, a --dir in use by
// another troupe-demo or unusable, or a setup error (the nodes failed or
// nobody acquired the lease: the demo could not run); 130: interrupted.
// SIGINT/SIGTERM are forwarded to the nodes as SIGTERM (they release the
// lease and stop); if the launcher dies, the kernel SIGKILLs them
// (PR_SET_PDEATHSIG, which also ends a frozen one).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "demo_io.hpp"
#include "demo_ledger.hpp"
#include "demo_nodes.hpp"
#include "demo_options.hpp"
#include "demo_verdict.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/file_kind.hpp"

using namespace troupe;
using namespace troupe::demo;
using namespace std::chrono_literals;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) {
  interrupted.store(true);
}

class launcher {
public:
  explicit launcher(options opts) : opts_(std::move(opts)) {}

  ~launcher() {
    for (int fd : log_fds_)
      if (fd >= 0)
        ::close(fd);
    if (ledger_fd_ >= 0)
      ::close(ledger_fd_);
    if (lock_fd_ >= 0)
      ::close(lock_fd_); // drops the flock
  }

  launcher(const launcher&) = delete;
  launcher& operator=(const launcher&) = delete;

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

  runtime::timespan holder_bound() const {
    return 2 * opts_.ttl + 10s;
  }

  bool prepare();
  bool spawn_all();
  void pump(std::chrono::milliseconds timeout);
  void on_line(node_proc& n, const std::string& line);
  void on_exit(node_proc& n);
  void tail_ledger();
  int live_others(const std::string& name) const {
    return nodes_.running_except(name);
  }
  bool wait_until(const std::function<bool()>& pred, runtime::timespan bound);
  bool wait_for_holder(const std::string& context);
  bool has_successor(const std::string& victim, const std::string& step);
  bool hold_a_while(const std::string& context);
  bool kill_holder(int number);
  bool freeze_holder();
  void resume_after_freeze(node_proc& victim, const demo::takeover& t);
  void stop_all();
  int finish();

  options opts_;
  steady::time_point start_ = steady::now();
  fs::path ledger_;
  int lock_fd_ = -1;
  int ledger_fd_ = -1;       // read end of the ledger (the nodes append)
  std::vector<int> log_fds_; // node-N.log, until node N is started
  std::vector<demo::node_event> events_;
  std::vector<demo::takeover> takeovers_;
  std::optional<demo::takeover> freeze_;
  std::optional<demo::early_end> ended_early_;
  // Live view (the verdict recomputes everything from the files/outputs).
  std::string holder_;
  uint64_t holder_token_ = 0;
  size_t holder_entries_ = 0;
  demo::ledger_fence fence_;
  off_t ledger_offset_ = 0;
  std::string ledger_pending_;
  // Last: destroyed first, so that no node outlives the files above.
  node_group nodes_{
    [this](node_proc& n, const std::string& line) { on_line(n, line); },
    [this](node_proc& n) { on_exit(n); }};
};

// Takes the directory for this run (flock on .demo.lock, held until exit)
// and opens every file the launcher writes or reads, before any node
// starts: a missing file is created, anything but a regular file is an
// error naming it.
bool launcher::prepare() {
  fs::path dir{opts_.dir};
  std::string error;
  auto lock = dir / ".demo.lock";
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
  auto leases = dir / "leases";
  struct stat st {};
  if (::stat(leases.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    return complain(fmt::format("{} is {}, not a directory (the lease files go "
                                "there)",
                                leases.string(),
                                runtime::file_kind(st.st_mode)));
  ledger_ = dir / "ledger.txt";
  // A fresh ledger for this run.
  ledger_fd_ = open_regular(ledger_, O_RDWR | O_CREAT | O_TRUNC, error);
  if (ledger_fd_ < 0)
    return complain(error);
  for (int i = 1; i <= opts_.nodes; ++i) {
    auto log = dir / fmt::format("node-{}.log", i);
    log_fds_.push_back(open_regular(log, O_WRONLY | O_CREAT | O_TRUNC, error));
    if (log_fds_.back() < 0)
      return complain(error);
  }
  return true;
}

bool launcher::spawn_all() {
  for (int i = 1; i <= opts_.nodes; ++i) {
    auto name = fmt::format("node-{}", i);
    auto log = fs::path{opts_.dir} / (name + ".log");
    auto& log_fd = log_fds_[static_cast<size_t>(i - 1)];
    auto error = nodes_.spawn(
      name, log,
      {opts_.node_binary, "--dir", (fs::path{opts_.dir} / "leases").string(),
       "--ledger", ledger_.string(), "--owner", name, "--ttl",
       runtime::render_duration(opts_.ttl), "--launcher-pid",
       std::to_string(::getpid()), "--log.level=warning"},
      log_fd);
    log_fd = -1; // closed by spawn
    if (!error.empty())
      return complain(error);
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
  auto text = read_from(ledger_fd_, ledger_offset_);
  ledger_offset_ += static_cast<off_t>(text.size());
  ledger_pending_ += text;
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

void launcher::on_exit(node_proc& n) {
  auto status = *n.status;
  if (n.signalled) {
    if (WIFSIGNALED(status))
      say(fmt::format("{} (pid {}) died: {}", n.name, n.pid,
                      strsignal(WTERMSIG(status))));
    else if (WEXITSTATUS(status) != 0)
      say(fmt::format("{} (pid {}) exited with code {} (see {})", n.name, n.pid,
                      WEXITSTATUS(status), n.log.string()));
    return;
  }
  say(fmt::format("{} (pid {}) {}, not stopped by the demo (see {})", n.name,
                  n.pid, describe_status(status), n.log.string()));
  if (n.name == holder_) {
    say(fmt::format("{} held token {}: waiting for the next holder", n.name,
                    holder_token_));
    holder_.clear();
  }
}

void launcher::pump(std::chrono::milliseconds timeout) {
  nodes_.pump(timeout);
  tail_ledger();
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

// Waits for a holder (none: the last one lost the lease or exited on its
// own); false, with ended_early_ set, if none came.
bool launcher::wait_for_holder(const std::string& context) {
  if (holder_.empty() && !events_.empty())
    say(fmt::format("nobody holds the lease right now; waiting for the next "
                    "holder {}",
                    context));
  auto bound = holder_bound();
  wait_until([&] { return !holder_.empty() || live_others("") == 0; }, bound);
  if (!holder_.empty())
    return true;
  if (!interrupted && !ended_early_) {
    auto running = live_others("");
    ended_early_ = demo::early_end{
      running == 0 ? fmt::format("every node had exited {}", context)
                   : fmt::format("no node held the lease within {} {}",
                                 demo::format_seconds(bound), context),
      running};
    say(ended_early_->why);
  }
  return false;
}

// True if a node besides the holder `victim` runs to take over; else the
// demo ends early (excused: the other nodes ended on their own).
bool launcher::has_successor(const std::string& victim,
                             const std::string& step) {
  if (live_others(victim) > 0)
    return true;
  ended_early_ = demo::early_end{
    fmt::format("{} is the only node left running, so {} was skipped "
                "(nobody could take over)",
                victim, step),
    0};
  say(ended_early_->why);
  return false;
}

// Lets the current holder write two ledger entries (about a second).
bool launcher::hold_a_while(const std::string& context) {
  if (!wait_for_holder(context))
    return false;
  if (wait_until([&] { return holder_entries_ >= 2 || holder_.empty(); },
                 holder_bound()))
    return true;
  if (!interrupted && !ended_early_) {
    ended_early_ = demo::early_end{
      fmt::format("{} held the lease but wrote fewer than 2 ledger entries "
                  "in {} {}",
                  holder_, demo::format_seconds(holder_bound()), context),
      live_others("")};
    say(ended_early_->why);
  }
  return false;
}

bool launcher::kill_holder(int number) {
  if (!wait_for_holder(fmt::format("before kill {}", number)))
    return false;
  demo::takeover t;
  t.victim = holder_;
  t.victim_token = holder_token_;
  auto* victim = nodes_.find(t.victim);
  if (victim == nullptr)
    return complain(
      fmt::format("the holder {} is none of the demo's nodes", t.victim));
  if (!has_successor(t.victim, fmt::format("kill {}", number)))
    return false;
  say(fmt::format("killing {} (holder of token {}) with SIGKILL", t.victim,
                  t.victim_token));
  auto killed_at = steady::now();
  nodes_.signal(*victim, SIGKILL);
  holder_.clear();
  auto taken
    = [&] { return !holder_.empty() && holder_token_ > t.victim_token; };
  wait_until([&] { return taken() || live_others(t.victim) == 0; },
             holder_bound());
  t.live_others = live_others(t.victim);
  if (taken()) {
    t.elapsed = steady::now() - killed_at;
    t.successor = holder_;
    t.successor_token = holder_token_;
    // The record expires ttl after the victim's last renewal, which came
    // at most renewal_interval (ttl / 3) before the kill.
    say(fmt::format("takeover by {} {} after the kill (expected about {} "
                    "to {}: {}'s record expires ttl {} after its last "
                    "renewal, which came up to ttl/3 before the kill; the "
                    "others poll every 100ms)",
                    t.successor, demo::format_seconds(t.elapsed),
                    demo::format_seconds(opts_.ttl - opts_.ttl / 3),
                    demo::format_seconds(opts_.ttl + 100ms), t.victim,
                    runtime::render_duration(opts_.ttl)));
  } else if (!interrupted) {
    say(fmt::format("nobody took over from {} ({} other node(s) running)",
                    t.victim, t.live_others));
  }
  if (!interrupted)
    takeovers_.push_back(t);
  return taken();
}

// SIGSTOPs the holder until another takes over, then resumes it: it must
// notice (check_alive() false) and write nothing with its old token.
bool launcher::freeze_holder() {
  if (!wait_for_holder("before the freeze"))
    return false;
  demo::takeover t;
  t.victim = holder_;
  t.victim_token = holder_token_;
  auto* victim = nodes_.find(t.victim);
  if (victim == nullptr)
    return complain(
      fmt::format("the holder {} is none of the demo's nodes", t.victim));
  if (!has_successor(t.victim, "the freeze"))
    return false;
  auto taken = [&] {
    return !holder_.empty() && holder_ != t.victim
           && holder_token_ > t.victim_token;
  };
  for (int attempt = 0; attempt < 3 && !interrupted; ++attempt) {
    say(fmt::format("freezing {} (holder of token {}) with SIGSTOP", t.victim,
                    t.victim_token));
    auto frozen_at = steady::now();
    nodes_.signal(*victim, SIGSTOP);
    wait_until([&] { return taken() || live_others(t.victim) == 0; },
               2 * opts_.ttl + 5s);
    if (taken()) {
      t.elapsed = steady::now() - frozen_at;
      t.successor = holder_;
      t.successor_token = holder_token_;
      say(fmt::format("takeover by {} in {} while {} is frozen", t.successor,
                      demo::format_seconds(t.elapsed), t.victim));
      break;
    }
    nodes_.signal(*victim, SIGCONT);
    if (interrupted)
      break; // not a failed takeover: the user stopped the demo
    if (live_others(t.victim) == 0) {
      say(fmt::format("no other node is running to take over from {}; "
                      "resumed it",
                      t.victim));
      break;
    }
    // Frozen inside a backend call, it keeps the file lock: nobody can
    // take over (by design). Thaw it and try again.
    say(fmt::format("no takeover: {} was frozen holding the file lock; "
                    "resumed it, trying again",
                    t.victim));
    wait_until([] { return false; }, 300ms);
  }
  t.live_others = live_others(t.victim);
  if (!interrupted)
    freeze_ = t;
  if (t.successor.empty())
    return false;
  resume_after_freeze(*victim, t);
  return true;
}

// Lets the successor write, then resumes the frozen victim and waits for
// it to report the loss.
void launcher::resume_after_freeze(node_proc& victim, const demo::takeover& t) {
  wait_until([&] { return holder_entries_ >= 1; }, 2 * opts_.ttl + 5s);
  say(fmt::format("resuming {} (SIGCONT): it must see check_alive() false and "
                  "write nothing with token {}",
                  t.victim, t.victim_token));
  nodes_.signal(victim, SIGCONT);
  auto reported = [&] {
    return std::any_of(events_.begin(), events_.end(), [&](auto& e) {
      return e.kind == demo::event_kind::lost && e.owner == t.victim
             && e.token == t.victim_token;
    });
  };
  wait_until(reported, opts_.ttl + 5s);
}

void launcher::stop_all() {
  if (live_others("") > 0)
    say("stopping every node (SIGTERM)");
  nodes_.signal_all(SIGTERM);
  nodes_.signal_all(SIGCONT); // a frozen one must run to act on SIGTERM
  auto until = steady::now() + 10s;
  while (!nodes_.all_done() && steady::now() < until)
    pump(50ms);
  for (auto& n : nodes_.all())
    if (n.running())
      say(fmt::format("{} did not stop within 10s: SIGKILL", n.name));
  nodes_.signal_all(SIGKILL);
  until = steady::now() + 5s;
  while (!nodes_.all_done() && steady::now() < until)
    pump(50ms);
}

int launcher::finish() {
  demo::verdict_input vin;
  vin.ledger_text = read_from(ledger_fd_, 0);
  vin.events = events_;
  vin.takeovers = takeovers_;
  vin.kills_requested
    = interrupted ? static_cast<int>(takeovers_.size()) : opts_.kills;
  vin.ttl = opts_.ttl;
  vin.freeze = freeze_;
  vin.freeze_requested = opts_.freeze && !interrupted;
  for (auto& n : nodes_.all())
    vin.nodes.push_back(demo::node_report{
      n.name, n.status ? describe_status(*n.status) : std::string{},
      n.status && !n.signalled, demo::stderr_tail(read_tail(n.log))});
  vin.ended_early = ended_early_;
  vin.holder_bound = holder_bound();
  vin.interrupted = interrupted;
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
  if (v.setup_error)
    std::printf("setup error: %s\n", v.setup_error->c_str());
  switch (v.exit_code()) {
    case 0:
      std::printf("PASS: every invariant held\n");
      break;
    case 1:
      std::printf("FAIL: an invariant was violated\n");
      break;
    default:
      std::printf("the demo could not run: no verdict on the lease\n");
      break;
  }
  return v.exit_code();
}

int launcher::run() {
  if (!prepare())
    return 2;
  if (!opts_.quiet)
    std::printf("troupe demo: %d nodes compete for one file lease (ttl %s) "
                "in %s; the holder is killed %d time(s)%s\n",
                opts_.nodes, runtime::render_duration(opts_.ttl).c_str(),
                opts_.dir.c_str(), opts_.kills,
                opts_.freeze ? ", then frozen once" : "");
  if (!spawn_all()) {
    stop_all();
    return 2;
  }
  bool completed = hold_a_while("after the start");
  for (int i = 1; completed && i <= opts_.kills; ++i)
    completed = kill_holder(i) && hold_a_while(fmt::format("after kill {}", i));
  if (completed && opts_.freeze)
    completed = freeze_holder() && hold_a_while("after the freeze");
  if (interrupted)
    say("interrupted");
  stop_all();
  return finish();
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
