#include "nemesis_log.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fmt/format.h>

namespace troupe::chaos {

namespace {

using json_writer = rapidjson::Writer<rapidjson::StringBuffer>;

void put_text(json_writer& w, std::string_view x) {
  w.String(x.data(), static_cast<rapidjson::SizeType>(x.size()));
}

struct value_writer {
  json_writer& w;
  void operator()(const std::string& x) const {
    put_text(w, x);
  }
  void operator()(uint64_t x) const {
    w.Uint64(x);
  }
  void operator()(const std::vector<std::string>& xs) const {
    w.StartArray();
    for (auto& x : xs)
      put_text(w, x);
    w.EndArray();
  }
};

} // namespace

std::string nemesis_line(int64_t mono_ns, std::string_view op,
                         const std::vector<log_field>& fields) {
  rapidjson::StringBuffer buf;
  json_writer w{buf};
  w.StartObject();
  w.Key("mono_ns");
  w.Int64(mono_ns);
  w.Key("op");
  put_text(w, op);
  for (auto& f : fields) {
    w.Key(f.key.data(), static_cast<rapidjson::SizeType>(f.key.size()));
    std::visit(value_writer{w}, f.value);
  }
  w.EndObject();
  std::string line = buf.GetString();
  line += '\n';
  return line;
}

int64_t mono_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

line_file::line_file(const std::filesystem::path& path)
  : name_(path.filename().string()) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw std::runtime_error(
      fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
}

line_file::~line_file() {
  if (fd_ >= 0)
    ::close(fd_);
}

void line_file::append(std::string_view line) {
  if (::write(fd_, line.data(), line.size())
      != static_cast<ssize_t>(line.size()))
    throw std::runtime_error(
      fmt::format("{}: write failed: {}", name_, std::strerror(errno)));
}

int64_t nemesis_log::write(std::string_view op,
                           const std::vector<log_field>& fields) {
  auto now = mono_now_ns();
  file_.append(nemesis_line(now, op, fields));
  return now;
}

} // namespace troupe::chaos
