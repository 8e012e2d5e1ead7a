#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <sys/types.h>

/// @file
/// A server process that an integration-test fixture starts (etcd,
/// dnsmasq): fork/exec with its output appended to a log file, and the
/// tail of that log for failure messages.

namespace troupe::test {

/// One server process, started with fork/exec and PR_SET_PDEATHSIG =
/// SIGKILL, so a crashed or killed test binary leaves none behind; spawn
/// it from the thread that lives longest (the test's main thread), because
/// the death signal follows the thread that forked. stdin is /dev/null,
/// stdout and stderr are appended to the log file. Only the PID started
/// here is ever signalled. The destructor kills (SIGKILL) and reaps it.
///
/// Errors (test setup) throw std::runtime_error naming the call.
/// Thread-safety: not thread-safe; drive it from the test's thread.
class server_process {
public:
  server_process() = default;
  ~server_process();

  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  /// Starts `args` (args[0] is the path of the program) with its output
  /// appended to `log_path`. Must not be running.
  void spawn(const std::vector<std::string>& args, const std::string& log_path);

  /// The PID, or -1 when not started or reaped.
  pid_t pid() const noexcept {
    return pid_;
  }

  /// True if started and not exited (reaps an exited process).
  bool running();

  /// Sends `sig` if running.
  void signal(int sig);

  /// Waits up to `bound` for the exit; true if reaped (or not running).
  bool reap(std::chrono::milliseconds bound);

  /// SIGTERM (and SIGCONT, so that a stopped process runs it), SIGKILL
  /// after `grace`, then reaps it.
  void terminate(std::chrono::milliseconds grace);

  /// SIGKILL, then reaps it.
  void kill();

private:
  pid_t pid_ = -1;
};

/// The last `lines` lines of the file at `path` (empty if unreadable).
std::string file_tail(const std::string& path, size_t lines = 20);

} // namespace troupe::test
