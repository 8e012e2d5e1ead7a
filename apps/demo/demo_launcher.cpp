// troupe-demo: the demo's launcher (README: scripts/demo;
// docs/guides/quickstart.md).
//
// Starts the store (troupe-demo-store), N troupe-demo-node processes on
// loopback (keep_majority downing, the scheduler singleton and the account
// coordinator under leases) and the client load, shows the cluster from
// the nodes' management endpoints and the client's counters (a status line
// a second, an event line per change: console_view.hpp), then SIGKILLs
// the singleton's host, watches the singleton and its shards move, runs
// on, stops everything with SIGTERM and prints a verdict computed only
// from the client's log and the store's files, with the failover time
// measured from those files next to its floor (demo_timing.hpp). Exit 0:
// every invariant held; 1: one was violated; 2: bad flags (one line:
// `troupe-demo: what; see --help`), an unusable --dir, or the demo could
// not run (a process did not start, the cluster did not form); 130:
// interrupted (SIGINT or SIGTERM; the processes are stopped with SIGTERM
// and the run is not judged). Every child dies with
// the launcher (PR_SET_PDEATHSIG).

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "demo_options.hpp"
#include "demo_run.hpp"

namespace {

std::atomic<bool> interrupted{false};

extern "C" void on_interrupt(int) {
  interrupted.store(true);
}

} // namespace

int main(int argc, char** argv) {
  using namespace troupe::demo;
  int exit_code = 0;
  auto opts = parse_flags(argc, argv, exit_code, std::cout, std::cerr);
  if (!opts)
    return exit_code;
  if (!complete(*opts))
    return 2;
  struct sigaction sa {};
  sa.sa_handler = on_interrupt; // no SA_RESTART: poll() returns at once
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  demo_run run{std::move(*opts), interrupted};
  return run.run();
}
