#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <sys/types.h>

/// @file
/// File and process helpers of the demo launcher (troupe-demo): opening
/// only regular files, reading them, describing a wait status.

namespace troupe::demo {

/// Prints `troupe-demo: <why>` on stderr; returns false.
bool complain(const std::string& why);

/// Opens `path` with `flags` (O_CLOEXEC added) if it is a regular file or
/// missing; -1 with `error` naming the path otherwise, e.g. `/tmp/d/ledger.txt
/// is a FIFO, not a regular file`. A symbolic link is refused too (the
/// launcher truncates these files), and a FIFO never blocks the call (it
/// is opened with O_NONBLOCK, which is cleared again on a regular file).
int open_regular(const std::filesystem::path& path, int flags,
                 std::string& error);

/// Reads `fd` from `offset` to its end (pread; the file offset stays).
std::string read_from(int fd, off_t offset);

/// The whole regular file at `path` (empty if unreadable).
std::string read_all(const std::filesystem::path& path);

/// The last 4 KiB of the regular file at `path` (empty if unreadable).
std::string read_tail(const std::filesystem::path& path);

/// A waitpid status for people: "exited with code 2", "was killed by
/// signal 9 (Killed)".
std::string describe_status(int status);

} // namespace troupe::demo
