// troupe-demo-node: one competitor of the lease demo.
//
// Starts a troupe node with the lease module and competes for one file
// lease. While it holds the lease it appends one fenced ledger record per
// second of holding to the ledger file (`<token> <owner> <entry>
// <mono_ns>`, one O_APPEND write each), each only after check_alive() said
// it still holds the lease. It tells people (and the launcher, which parses
// the lines, see demo_ledger.hpp) when it acquires, writes, loses and
// releases; its last line is "stopped". SIGTERM/SIGINT: stop, release the
// lease (node shutdown), exit 0. SIGKILLed when the launcher dies.
//
// Usage: troupe-demo-node --dir DIR --ledger FILE --owner NAME [--name demo]
//        [--ttl 2s] [--launcher-pid PID] [--key=value ...]   (remaining
//        flags: node configuration, e.g. --log.level=warning)

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "demo_ledger.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/file_lease_backend.hpp"
#include "troupe/lease/lease_config.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/runtime/stop_signal.hpp"

using namespace troupe;
using namespace std::chrono_literals;

namespace {

int64_t now_ns() {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

// One line on stdout, in one write (the launcher reads a pipe).
void say(const demo::node_event& ev) {
  auto line = demo::format_node_event(ev) + "\n";
  [[maybe_unused]] auto n = ::write(STDOUT_FILENO, line.data(), line.size());
}

struct flags {
  std::string dir;
  std::string ledger;
  std::string owner;
  std::string name = "demo";
  std::string ttl = "2s";
};

// Holds the lease while check_alive() is true; a ledger record per second.
void hold(lease::lease_handle& lease, int ledger_fd, const std::string& owner) {
  auto token = lease.token();
  say({demo::event_kind::acquired, owner, token});
  uint64_t entry = 0;
  auto next_write = std::chrono::steady_clock::now();
  while (!runtime::stop_requested()) {
    auto t = now_ns(); // before check_alive(): the record claims this time
    if (!lease.check_alive()) {
      say({demo::event_kind::lost, owner, token, 0,
           "check_alive() turned false"});
      return;
    }
    if (std::chrono::steady_clock::now() >= next_write) {
      demo::ledger_record rec{token, owner, ++entry, t};
      auto line = demo::format_ledger_record(rec);
      if (::write(ledger_fd, line.data(), line.size())
          == static_cast<ssize_t>(line.size()))
        say({demo::event_kind::ledger, owner, token, entry});
      next_write += 1s;
    }
    std::this_thread::sleep_for(20ms);
  }
}

} // namespace

int main(int argc, char** argv) {
  // Die with the launcher, even if it is killed. SIGKILL, not SIGTERM: a
  // node frozen by --freeze (SIGSTOP) never runs a pending SIGTERM and
  // would stay stopped forever. A normal stop is the launcher's SIGTERM.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  CLI::App app{"troupe-demo-node: one competitor for the demo's file lease"};
  flags f;
  pid_t launcher_pid = 0;
  app.add_option("--dir", f.dir, "Directory of the lease files")->required();
  app.add_option("--ledger", f.ledger, "The fenced ledger file")->required();
  app.add_option("--owner", f.owner, "This node's name")->required();
  app.add_option("--name", f.name, "Lease name")->capture_default_str();
  app.add_option("--ttl", f.ttl, "Lease ttl")->capture_default_str();
  app.add_option("--launcher-pid", launcher_pid,
                 "Exit at once unless this is the parent (the launcher died "
                 "before PR_SET_PDEATHSIG took effect)");
  app.allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (launcher_pid != 0 && ::getppid() != launcher_pid) {
    std::fprintf(stderr, "troupe-demo-node: the launcher (pid %d) is gone\n",
                 static_cast<int>(launcher_pid));
    return 1;
  }
  auto ttl = runtime::parse_duration(f.ttl);
  if (!ttl) {
    std::fprintf(stderr, "troupe-demo-node: --ttl: %s\n",
                 ttl.error().message.c_str());
    return 2;
  }
  runtime::install_stop_signal_handlers();

  runtime::node_options opts;
  opts.modules = {lease::lease_module()};
  // --ttl and --dir are this program's names for lease.ttl and
  // lease.file.directory: one configuration, one set of checks. They come
  // first, so an explicit --lease.* flag after them wins as usual.
  std::vector<std::string> args{"--lease.backend=file", "--lease.ttl=" + f.ttl,
                                "--lease.file.directory=" + f.dir};
  auto rest = app.remaining();
  args.insert(args.end(), rest.begin(), rest.end());
  opts.sources = runtime::sources_from_process(args, nullptr);
  auto node = runtime::node::start(std::move(opts));
  if (!node) {
    std::fprintf(stderr, "troupe-demo-node: %s\n",
                 node.error().message.c_str());
    return 1;
  }
  auto lease = lease::lease_handle::spawn_from_config(**node, f.name, f.owner);
  if (!lease) {
    std::fprintf(stderr, "troupe-demo-node: %s\n",
                 runtime::error_message(lease.error()).c_str());
    return 1;
  }
  auto sub = lease->on_lost([owner = f.owner](const lease::lease_lost& msg) {
    std::fprintf(stderr, "%s: lease lost: %s\n", owner.c_str(),
                 msg.reason.c_str());
  });
  int ledger_fd
    = ::open(f.ledger.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (ledger_fd < 0) {
    std::perror(f.ledger.c_str());
    return 1;
  }
  say(
    {demo::event_kind::competing, f.owner, 0, 0,
     fmt::format("\"{}\" (pid {}, ttl {}, {})", f.name, ::getpid(),
                 runtime::render_duration(lease->settings().ttl),
                 "file store "
                   + (*node)->cfg().get<std::string>("lease.file.directory"))});
  while (!runtime::stop_requested()) {
    auto granted = lease->acquire(5s);
    if (!granted)
      std::fprintf(stderr, "%s: acquire failed: %s\n", f.owner.c_str(),
                   (*node)->system().render(granted.error()).c_str());
    if (granted && *granted)
      hold(*lease, ledger_fd, f.owner);
    else
      std::this_thread::sleep_for(100ms);
  }
  bool held = lease->check_alive();
  auto token = lease->token();
  sub.unsubscribe();
  // Release explicitly to report the outcome; node shutdown would also
  // release (scenario S6) but only logs a failure.
  auto err = held ? lease->release(5s) : caf::error{};
  if (held && !err)
    say({demo::event_kind::released, f.owner, token});
  else if (held)
    std::fprintf(stderr, "%s: release failed: %s\n", f.owner.c_str(),
                 (*node)->system().render(err).c_str());
  (*node)->shutdown();
  ::close(ledger_fd);
  say({demo::event_kind::stopped, f.owner});
  return 0;
}
