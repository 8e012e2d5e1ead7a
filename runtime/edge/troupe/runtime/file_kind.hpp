#pragma once

#include <string_view>

#include <sys/stat.h>

/// @file
/// Names a file's type for error messages ("... is a FIFO").

namespace troupe::runtime {

/// "a regular file", "a directory", "a symbolic link", "a FIFO",
/// "a socket", "a device" or "a special file" for an `st_mode`.
/// Thread-safe (pure).
inline std::string_view file_kind(mode_t mode) noexcept {
  if (S_ISREG(mode))
    return "a regular file";
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "a device";
  return "a special file";
}

} // namespace troupe::runtime
