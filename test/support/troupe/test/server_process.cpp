#include "troupe/test/server_process.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

namespace troupe::test {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

server_process::~server_process() {
  kill();
}

void server_process::spawn(const std::vector<std::string>& args,
                           const std::string& log_path) {
  auto fail = [&](int err, std::string_view what) {
    throw std::runtime_error(fmt::format("server_process {}: {}: {}",
                                         args.empty() ? "?" : args[0], what,
                                         std::strerror(err)));
  };
  if (pid_ > 0)
    throw std::runtime_error(fmt::format("server_process {}: still running "
                                         "(pid {})",
                                         args.at(0), pid_));
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  auto parent = ::getpid();
  int log_fd
    = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0)
    fail(errno, fmt::format("open {}", log_path));
  auto child = ::fork();
  if (child < 0) {
    int err = errno;
    ::close(log_fd);
    fail(err, "fork");
  }
  if (child == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
      ::_exit(126);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0)
      ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  pid_ = child;
}

bool server_process::running() {
  return pid_ > 0 && !reap(0ms);
}

void server_process::signal(int sig) {
  if (pid_ > 0)
    ::kill(pid_, sig);
}

bool server_process::reap(std::chrono::milliseconds bound) {
  auto until = steady::now() + bound;
  while (pid_ > 0) {
    int status = 0;
    auto rc = ::waitpid(pid_, &status, WNOHANG);
    if (rc == pid_ || (rc < 0 && errno == ECHILD)) {
      pid_ = -1;
      break;
    }
    if (steady::now() >= until)
      return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

void server_process::terminate(std::chrono::milliseconds grace) {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGTERM);
  ::kill(pid_, SIGCONT); // a stopped process runs SIGTERM only after this
  if (!reap(grace))
    kill();
}

void server_process::kill() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGKILL);
  reap(10s);
}

std::string file_tail(const std::string& path, size_t lines) {
  std::ifstream in{path};
  std::deque<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(std::move(line));
    if (tail.size() > lines)
      tail.pop_front();
  }
  std::string out;
  for (auto& l : tail)
    out += l + "\n";
  return out;
}

} // namespace troupe::test
