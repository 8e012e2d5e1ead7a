#include "history_log.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "troupe/runtime/errc.hpp"

namespace troupe::demo {

namespace {

int64_t mono_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

} // namespace

runtime::expected<history_ptr> history_log::open(const std::string& path,
                                                 std::string node,
                                                 std::string address) {
  int fd = -1;
  if (!path.empty()) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
      return runtime::make_error(
        runtime::errc::bad_config_value,
        fmt::format("demo.history_file: cannot open {}: {}", path,
                    std::strerror(errno)));
  }
  return history_ptr{new history_log(fd, std::move(node), std::move(address))};
}

history_log::history_log(int fd, std::string node, std::string address)
  : fd_(fd), node_(std::move(node)), address_(std::move(address)) {}

history_log::~history_log() {
  if (fd_ >= 0)
    ::close(fd_);
}

void history_log::record(std::string_view event,
                         std::initializer_list<history_field> fields) const {
  if (fd_ < 0)
    return;
  auto line = history_line(mono_now_ns(), node_, address_, event, fields);
  auto n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size()) && !write_failed_) {
    write_failed_ = true;
    std::fprintf(stderr, "troupe-demo-node: history file: write failed: %s\n",
                 n < 0 ? std::strerror(errno) : "short write");
  }
}

} // namespace troupe::demo
