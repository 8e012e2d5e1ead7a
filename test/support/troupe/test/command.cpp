#include "troupe/test/command.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace troupe::test {

namespace {

std::string joined(const std::vector<std::string>& args) {
  std::string line;
  for (auto& a : args)
    line += (line.empty() ? "" : " ") + a;
  return line;
}

std::string describe(int status) {
  if (WIFEXITED(status))
    return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

/// Reads `fd` into `out` until EOF or `deadline`; false on the deadline.
bool drain(int fd, std::string& out,
           std::chrono::steady_clock::time_point deadline) {
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd, POLLIN, 0};
    auto rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR)
      continue;
    if (rc <= 0)
      return rc == 0 ? false : true;
    auto n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return true;
    out.append(buf, static_cast<size_t>(n));
  }
}

} // namespace

std::string find_program(std::string_view program) {
  for (auto dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
    auto path = std::filesystem::path{dir} / program;
    if (::access(path.c_str(), X_OK) == 0)
      return path;
  }
  return {};
}

command_result run_command(const std::vector<std::string>& args,
                           std::chrono::milliseconds bound) {
  command_result result;
  auto fail = [&](const std::string& why) {
    result.ok = false;
    result.output
      = "`" + joined(args) + "` failed (" + why + "): " + result.output;
    return result;
  };
  if (args.empty())
    return fail("no program");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return fail(std::string{"pipe: "} + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  auto rc
    = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return fail(std::string{"spawn: "} + std::strerror(rc));
  }
  auto deadline = std::chrono::steady_clock::now() + bound;
  auto in_time = drain(fds[0], result.output, deadline);
  ::close(fds[0]);
  if (!in_time)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!in_time)
    return fail("timed out after " + std::to_string(bound.count()) + "ms");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(describe(status));
  result.ok = true;
  return result;
}

} // namespace troupe::test
