#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

/// @file
/// The demo launcher's processes (the store, the nodes, the Kubernetes
/// emulator): started with stdout on a pipe (the launcher reads their
/// `listening on` lines) and stderr in a log file, signalled, and reaped.
/// Each dies with the launcher (PR_SET_PDEATHSIG).

namespace troupe::demo {

/// One troupe-demo-node process.
struct node_proc {
  std::string name;
  /// Its stderr log (node-N.log).
  std::filesystem::path log;
  pid_t pid = -1;
  /// Read end of its stdout (-1 once every writer is gone).
  int out_fd = -1;
  /// An incomplete output line.
  std::string pending;
  /// The waitpid status once reaped.
  std::optional<int> status;
  /// The launcher sent it SIGKILL or SIGTERM: an exit is the demo's doing.
  bool signalled = false;

  bool running() const noexcept {
    return pid > 0 && !status;
  }
};

/// The node processes of one demo run.
///
/// Output lines and exits are reported through the handlers, from `pump`,
/// lines of a node before its exit. The destructor SIGKILLs and reaps every
/// node still running. Not thread-safe.
class node_group {
public:
  using line_handler = std::function<void(node_proc&, const std::string&)>;
  using exit_handler = std::function<void(node_proc&)>;

  node_group(line_handler on_line, exit_handler on_exit)
    : on_line_(std::move(on_line)), on_exit_(std::move(on_exit)) {}

  ~node_group();

  node_group(const node_group&) = delete;
  node_group& operator=(const node_group&) = delete;

  /// Starts `argv` (argv[0] a path) as process `name`: stdin /dev/null,
  /// stdout on a pipe, stderr on `log_fd` (closed here either way; `log` is
  /// its path), SIGKILLed by the kernel when the launcher's main thread
  /// dies. Error text naming the binary (e.g. `cannot start /x/node: No
  /// such file or directory`), or an empty string.
  std::string spawn(std::string name, std::filesystem::path log,
                    std::vector<std::string> argv, int log_fd);

  /// Waits up to `timeout` for output, hands complete lines to the line
  /// handler, then reaps exited nodes (exit handler).
  void pump(std::chrono::milliseconds timeout);

  /// Sends `sig`; SIGKILL and SIGTERM mark the node `signalled`.
  void signal(node_proc& n, int sig);

  /// `signal` to every running node.
  void signal_all(int sig);

  /// The latest process started as `name` (a name started again after
  /// its exit names the new process), or nullptr. The pointer is valid
  /// until the next `spawn`.
  node_proc* find(const std::string& name);

  /// Running nodes other than `name` ("": all running nodes).
  int running_except(const std::string& name) const;

  /// True when every node was reaped and its output read to the end.
  bool all_done() const;

  const std::vector<node_proc>& all() const noexcept {
    return nodes_;
  }

private:
  void read_output(node_proc& n);
  void reap();

  line_handler on_line_;
  exit_handler on_exit_;
  std::vector<node_proc> nodes_;
};

} // namespace troupe::demo
