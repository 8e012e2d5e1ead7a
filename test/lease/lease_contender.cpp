// lease_contender: one process of the multi-process file-lease test.
//
// Starts a troupe node with the lease module, spawns a lease over the file
// backend and competes for it forever: acquire(); while held, every ~10 ms
// append a claim line to the shared log file:
//
//   <owner> <token> <begin_ns> <end_ns>
//
// meaning "from begin_ns to end_ns (CLOCK_MONOTONIC) I held the lease with
// this fencing token". begin_ns is read right after acquire() returned true;
// end_ns is read right BEFORE a check_alive() call that returned true, so
// the whole range lies inside the holder's own view of its lease. Lines are
// written with one write() on an O_APPEND descriptor, so lines of several
// processes never interleave. The test judges mutual exclusion from this
// log alone.
//
// SIGTERM/SIGINT: stop competing, shut the node down (which releases the
// lease and waits for the backend), exit 0. The process also asks for
// SIGKILL when its parent dies (PR_SET_PDEATHSIG), so a crashed test run
// leaves no contender behind, not even a frozen one.
//
// Usage: lease_contender --dir D --owner O --log F [--name N] [--ttl 1s]
//        [--poll 50ms] [--key=value ...]   (remaining flags: node config)

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/file_lease_backend.hpp"
#include "troupe/lease/lease_config.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/runtime/stop_signal.hpp"

using namespace troupe;

namespace {

int64_t now_ns() {
  return std::chrono::steady_clock::now().time_since_epoch().count();
}

void say(const std::string& text) {
  auto line = text + "\n";
  // stdout may be a file shared by nothing else; one write per line anyway.
  [[maybe_unused]] auto n = ::write(STDOUT_FILENO, line.data(), line.size());
}

// Holds the lease while check_alive() says so, logging claim ranges.
void hold(lease::lease_handle& lease, int log_fd, const std::string& owner) {
  auto begin = now_ns();
  auto token = lease.token();
  say(fmt::format("{}: acquired token {}", owner, token));
  while (!runtime::stop_requested()) {
    auto end = now_ns(); // read BEFORE check_alive: the claim ends here
    if (!lease.check_alive()) {
      say(fmt::format("{}: no longer holding token {}", owner, token));
      return;
    }
    auto line = fmt::format("{} {} {} {}\n", owner, token, begin, end);
    if (::write(log_fd, line.data(), line.size())
        != static_cast<ssize_t>(line.size()))
      say(fmt::format("{}: short write to the claim log", owner));
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
}

// Parses the duration of `flag`; nullopt after printing which flag was bad
// and why, e.g. `lease_contender: --ttl: bad duration "5": missing unit
// (expected ns, us, ms, s, m, h)`.
std::optional<runtime::timespan> parse_duration_flag(std::string_view flag,
                                                     const std::string& text) {
  auto d = runtime::parse_duration(text);
  if (d)
    return *d;
  std::fprintf(stderr, "lease_contender: %.*s: %s\n",
               static_cast<int>(flag.size()), flag.data(),
               d.error().message.c_str());
  return std::nullopt;
}

} // namespace

int main(int argc, char** argv) {
  // SIGKILL, not SIGTERM: a contender the test froze (SIGSTOP) never runs
  // a pending SIGTERM and would stay stopped forever.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  CLI::App app{"lease_contender: competes for a file lease and logs claims"};
  std::string dir, name = "contended", owner, log_path, ttl_text = "1s",
                   poll_text = "50ms";
  app.add_option("--dir", dir, "Directory of the lease files")->required();
  app.add_option("--name", name, "Lease name");
  app.add_option("--owner", owner, "Owner identity")->required();
  app.add_option("--ttl", ttl_text, "Lease ttl, e.g. 1s");
  app.add_option("--poll", poll_text, "Pause between acquire attempts");
  app.add_option("--log", log_path, "Shared claim log")->required();
  app.allow_extras();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto ttl = parse_duration_flag("--ttl", ttl_text);
  auto poll = parse_duration_flag("--poll", poll_text);
  if (!ttl || !poll)
    return 2;
  runtime::install_stop_signal_handlers();

  runtime::node_options opts;
  opts.modules = {lease::lease_module()};
  // --ttl and --dir are this program's names for lease.ttl and
  // lease.file.directory: one configuration, one set of checks. They come
  // first, so an explicit --lease.* flag after them wins as usual.
  std::vector<std::string> args{"--lease.backend=file",
                                "--lease.ttl=" + ttl_text,
                                "--lease.file.directory=" + dir};
  auto rest = app.remaining();
  args.insert(args.end(), rest.begin(), rest.end());
  opts.sources = runtime::sources_from_process(args, nullptr);
  auto node = runtime::node::start(std::move(opts));
  if (!node) {
    std::fprintf(stderr, "lease_contender: %s\n", node.error().message.c_str());
    return 1;
  }
  auto lease = lease::lease_handle::spawn_from_config(**node, name, owner);
  if (!lease) {
    std::fprintf(stderr, "lease_contender: %s\n",
                 runtime::error_message(lease.error()).c_str());
    return 1;
  }
  int log_fd
    = ::open(log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    std::perror(log_path.c_str());
    return 1;
  }
  say(fmt::format("{}: pid {} competing for \"{}\" in {}", owner, ::getpid(),
                  name, dir));
  auto pause = std::chrono::duration_cast<std::chrono::milliseconds>(*poll);
  while (!runtime::stop_requested()) {
    auto granted = lease->acquire(std::chrono::seconds{5});
    if (!granted) {
      say(fmt::format("{}: acquire failed: {}", owner,
                      (*node)->system().render(granted.error())));
      runtime::sleep_unless_stopped(pause);
    } else if (*granted) {
      hold(*lease, log_fd, owner);
    } else {
      runtime::sleep_unless_stopped(pause);
    }
  }
  say(fmt::format("{}: stopping", owner));
  (*node)->shutdown(); // releases the lease (awaited) before the system stops
  ::close(log_fd);
  say(fmt::format("{}: stopped", owner));
  return 0;
}
