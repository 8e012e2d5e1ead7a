#include "demo_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "troupe/runtime/file_kind.hpp"

namespace fs = std::filesystem;

namespace troupe::demo {

bool complain(const std::string& why) {
  std::fprintf(stderr, "troupe-demo: %s\n", why.c_str());
  return false;
}

int open_regular(const fs::path& path, int flags, std::string& error) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    error = fmt::format("{} is {}, not a regular file", path.string(),
                        runtime::file_kind(st.st_mode));
    return -1;
  }
  // O_NOFOLLOW: a link planted in --dir must not make the launcher truncate
  // a file elsewhere.
  int fd
    = ::open(path.c_str(), flags | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW, 0644);
  if (fd < 0) {
    error = fmt::format("{}: {}", path.string(), std::strerror(errno));
    return -1;
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { // replaced meanwhile
    error = fmt::format("{} is not a regular file", path.string());
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_from(int fd, off_t offset) {
  std::string result;
  char buf[4096];
  ssize_t n;
  while ((n = ::pread(fd, buf, sizeof(buf), offset)) > 0) {
    offset += n;
    result.append(buf, static_cast<size_t>(n));
  }
  return result;
}

std::string read_all(const fs::path& path) {
  std::string error;
  int fd = open_regular(path, O_RDONLY, error);
  if (fd < 0)
    return {};
  auto text = read_from(fd, 0);
  ::close(fd);
  return text;
}

std::string read_tail(const fs::path& path) {
  std::string error;
  int fd = open_regular(path, O_RDONLY, error);
  if (fd < 0)
    return {};
  struct stat st {};
  ::fstat(fd, &st);
  auto text = read_from(fd, std::max<off_t>(0, st.st_size - 4096));
  ::close(fd);
  return text;
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  return fmt::format("exited with code {}", WEXITSTATUS(status));
}

} // namespace troupe::demo
