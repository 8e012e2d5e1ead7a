#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

/// @file
/// The benchmark's helper process (stdin/stdout pipes) and per-process CPU
/// and memory readings from /proc.

namespace troupe::bench {

/// A helper process: `path` with `args`, its stdin a pipe (closing it asks
/// the process to exit) and its stdout read for one ready line. Killed and
/// reaped on destruction.
class peer_process {
public:
  peer_process(std::string path, std::vector<std::string> args) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
      fail("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    args.insert(args.begin(), std::move(path));
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    if (::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ)
        != 0)
      fail("posix_spawn");
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = ::fdopen(out[0], "r");
    char line[512];
    if (std::fgets(line, sizeof(line), stdout_) == nullptr)
      fail("the peer exited before it was ready");
    ready_ = line;
  }

  ~peer_process() {
    ::close(stdin_); // the peer exits on EOF
    for (int i = 0; i < 500; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        std::fclose(stdout_);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    std::fclose(stdout_);
  }

  pid_t pid() const noexcept {
    return pid_;
  }

  /// The words of the peer's ready line.
  std::vector<std::string> words() const {
    std::istringstream in{ready_};
    std::vector<std::string> result;
    for (std::string w; in >> w;)
      result.push_back(w);
    return result;
  }

  [[noreturn]] static void fail(const char* what) {
    std::fprintf(stderr, "bench: %s failed\n", what);
    std::exit(1);
  }

private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  FILE* stdout_ = nullptr;
  std::string ready_;
};

// CPU time (user + system) of process `pid` so far, in seconds.
double cpu_seconds(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  // Fields after the command name (which may hold spaces) in parentheses.
  std::istringstream rest{text.substr(text.rfind(')') + 2)};
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14)
      utime = std::stod(field);
    else if (i == 15)
      stime = std::stod(field);
  }
  return (utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

size_t rss_bytes() {
  std::ifstream in{"/proc/self/statm"};
  size_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

} // namespace troupe::bench
