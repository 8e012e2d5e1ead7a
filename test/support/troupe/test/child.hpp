#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

/// @file
/// A child process whose output goes to a file, for multi-process tests and
/// benchmarks (no test framework needed).

namespace troupe::test {

namespace fs = std::filesystem;

/// One child process, its stdout and stderr going to a file; killed and
/// reaped on destruction whatever happened.
class child {
public:
  child(std::string owner, std::vector<std::string> args,
        const fs::path& output)
    : owner_(std::move(owner)) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                     O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    auto rc
      = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
      pid_ = -1;
  }

  ~child() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      reap(std::chrono::seconds{5});
    }
  }

  child(const child&) = delete;
  child& operator=(const child&) = delete;

  const std::string& owner() const noexcept {
    return owner_;
  }

  pid_t pid() const noexcept {
    return pid_;
  }

  bool running() const noexcept {
    return pid_ > 0 && !status_;
  }

  void signal(int sig) {
    if (sig != SIGSTOP && sig != SIGCONT)
      signalled_ = true;
    if (running())
      ::kill(pid_, sig);
  }

  /// True if the process exited although nobody signalled it.
  bool crashed() {
    reap(std::chrono::milliseconds{0});
    return status_ && !signalled_;
  }

  /// Waits up to `bound` for the exit; true if reaped.
  bool reap(std::chrono::milliseconds bound) {
    auto until = std::chrono::steady_clock::now() + bound;
    while (running()) {
      int status = 0;
      auto rc = ::waitpid(pid_, &status, WNOHANG);
      if (rc == pid_) {
        status_ = status;
        break;
      }
      if (rc < 0) {
        status_ = -1;
        break;
      }
      if (std::chrono::steady_clock::now() >= until)
        return false;
      std::this_thread::sleep_for(std::chrono::milliseconds{5});
    }
    return true;
  }

  /// SIGTERM, then SIGKILL if it did not exit within `bound`. True if it
  /// exited by itself.
  bool stop(std::chrono::milliseconds bound) {
    signal(SIGTERM);
    if (reap(bound))
      return true;
    signal(SIGKILL);
    reap(std::chrono::seconds{5});
    return false;
  }

  /// The wait status once reaped.
  std::optional<int> status() const noexcept {
    return status_;
  }

private:
  std::string owner_;
  pid_t pid_ = -1;
  std::optional<int> status_;
  bool signalled_ = false;
};

} // namespace troupe::test
