#include "demo_nodes.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace troupe::demo {

node_group::~node_group() {
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

std::string node_group::spawn(std::string name, std::filesystem::path log,
                              std::vector<std::string> argv, int log_fd) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    auto err = errno;
    ::close(log_fd);
    return fmt::format("cannot create a pipe: {}", std::strerror(err));
  }
  // Everything the child needs is made before fork: after it only
  // async-signal-safe calls (the launcher has threads).
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  int exec_err[2];
  if (::pipe2(exec_err, O_CLOEXEC) != 0) {
    auto err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    ::close(log_fd);
    return fmt::format("cannot create a pipe: {}", std::strerror(err));
  }
  auto parent = ::getpid();
  node_proc n;
  n.pid = ::fork();
  if (n.pid == 0) {
    // The kernel SIGKILLs the child when the launcher dies, however it
    // dies: no node, store or emulator outlives it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(127);
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execve(args[0], args.data(), environ);
    int err = errno;
    [[maybe_unused]] auto w = ::write(exec_err[1], &err, sizeof(err));
    ::_exit(127);
  }
  auto fork_errno = errno;
  ::close(fds[1]);
  ::close(log_fd);
  ::close(exec_err[1]);
  if (n.pid < 0) {
    ::close(fds[0]);
    ::close(exec_err[0]);
    return fmt::format("cannot start {}: {}", argv[0],
                       std::strerror(fork_errno));
  }
  int child_err = 0;
  // EOF (exec succeeded, CLOEXEC closed it) or the child's errno.
  auto got = ::read(exec_err[0], &child_err, sizeof(child_err));
  ::close(exec_err[0]);
  if (got == static_cast<ssize_t>(sizeof(child_err))) {
    ::waitpid(n.pid, nullptr, 0);
    ::close(fds[0]);
    return fmt::format("cannot start {}: {}", argv[0],
                       std::strerror(child_err));
  }
  n.name = std::move(name);
  n.log = std::move(log);
  n.out_fd = fds[0];
  ::fcntl(n.out_fd, F_SETFL, ::fcntl(n.out_fd, F_GETFL) | O_NONBLOCK);
  nodes_.push_back(std::move(n));
  return {};
}

void node_group::read_output(node_proc& n) {
  char buf[4096];
  ssize_t got;
  while ((got = ::read(n.out_fd, buf, sizeof(buf))) > 0)
    n.pending.append(buf, static_cast<size_t>(got));
  size_t pos;
  while ((pos = n.pending.find('\n')) != std::string::npos) {
    auto line = n.pending.substr(0, pos);
    n.pending.erase(0, pos + 1);
    on_line_(n, line);
  }
  if (got == 0) { // every writer is gone
    ::close(n.out_fd);
    n.out_fd = -1;
  }
}

void node_group::reap() {
  for (auto& n : nodes_) {
    int status = 0;
    if (n.running() && ::waitpid(n.pid, &status, WNOHANG) == n.pid) {
      n.status = status;
      on_exit_(n);
    }
  }
}

void node_group::pump(std::chrono::milliseconds timeout) {
  std::vector<pollfd> fds;
  for (auto& n : nodes_)
    if (n.out_fd >= 0)
      fds.push_back({n.out_fd, POLLIN, 0});
  if (fds.empty())
    std::this_thread::sleep_for(timeout);
  else
    ::poll(fds.data(), fds.size(), static_cast<int>(timeout.count()));
  for (auto& n : nodes_)
    if (n.out_fd >= 0)
      read_output(n);
  reap();
}

void node_group::signal(node_proc& n, int sig) {
  if (sig == SIGKILL || sig == SIGTERM)
    n.signalled = true;
  if (n.running())
    ::kill(n.pid, sig);
}

void node_group::signal_all(int sig) {
  for (auto& n : nodes_)
    if (n.running())
      signal(n, sig);
}

node_proc* node_group::find(const std::string& name) {
  auto i = std::find_if(nodes_.rbegin(), nodes_.rend(),
                        [&](auto& n) { return n.name == name; });
  return i == nodes_.rend() ? nullptr : &*i;
}

int node_group::running_except(const std::string& name) const {
  return static_cast<int>(
    std::count_if(nodes_.begin(), nodes_.end(),
                  [&](auto& n) { return n.running() && n.name != name; }));
}

bool node_group::all_done() const {
  return std::none_of(nodes_.begin(), nodes_.end(),
                      [](auto& n) { return n.running() || n.out_fd >= 0; });
}

} // namespace troupe::demo
