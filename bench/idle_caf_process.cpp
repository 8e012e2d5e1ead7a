// idle_caf_process: the baseline of the idle-cluster benchmark
// (membership_idle_bench): a raw CAF actor system with the scheduler
// settings troupe's runtime::node uses by default (2 threads, moderate
// sleep 50us), one idle actor, nothing else. Prints `ready` and runs until
// SIGTERM or SIGINT. Asks for SIGKILL when its parent dies.

#include <chrono>
#include <csignal>
#include <cstdio>

#include <sys/prctl.h>
#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>

int main() {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", size_t{2});
  cfg.set("work-stealing.moderate-sleep-duration",
          caf::timespan{std::chrono::microseconds{50}});
  cfg.set("logger.file-verbosity", caf::atom("quiet"));
  cfg.set("logger.console-verbosity", caf::atom("quiet"));
  caf::actor_system sys{cfg};
  auto idle = sys.spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](int x) { return x; }};
  });
  std::printf("ready\n");
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  caf::anon_send_exit(idle, caf::exit_reason::user_shutdown);
  return 0;
}
