#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// Running a system command (ip, iptables, etcdctl) to completion and
/// capturing its output, for tests and the chaos driver.

namespace troupe::test {

/// The absolute path of `program` in /usr/sbin, /sbin, /usr/bin or /bin
/// (posix_spawn does not search PATH); empty if it is in none of them.
std::string find_program(std::string_view program);

/// The outcome of a command.
struct command_result {
  /// True if it exited with status 0 within the bound.
  bool ok = false;
  /// Its stdout and stderr, interleaved as written; when not ok, prefixed
  /// with "`<args>` failed (<exit status, signal or timeout>): ".
  std::string output;
};

/// Runs `args` (argv[0] an absolute path, e.g. from find_program) with
/// stdin from /dev/null, stdout and stderr captured through a pipe, and
/// waits for it at most `bound`; past the bound it is killed (SIGKILL) and
/// the result says "timed out". Never throws; a failed spawn is a result
/// that is not ok, naming the errno.
///
/// Thread-safety: safe to call from several threads (the pipe is opened
/// close-on-exec, so concurrent spawns do not inherit it).
command_result run_command(const std::vector<std::string>& args,
                           std::chrono::milliseconds bound
                           = std::chrono::seconds{20});

} // namespace troupe::test
