#include "troupe/runtime/log.hpp"

#include <algorithm>
#include <shared_mutex>

#include <fmt/chrono.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/details/log_msg.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "troupe/runtime/errc.hpp"

namespace troupe::runtime {

namespace {

spdlog::level::level_enum to_spdlog(log_level x) {
  switch (x) {
    case log_level::trace:
      return spdlog::level::trace;
    case log_level::debug:
      return spdlog::level::debug;
    case log_level::info:
      return spdlog::level::info;
    case log_level::warning:
      return spdlog::level::warn;
    case log_level::error:
      return spdlog::level::err;
    case log_level::off:
      break;
  }
  return spdlog::level::off;
}

spdlog::details::log_msg to_spdlog(const log_record& r) {
  spdlog::details::log_msg msg{spdlog::source_loc{}, r.component,
                               to_spdlog(r.level), r.message};
  msg.time = r.time;
  return msg;
}

// Human-readable lines through spdlog's stderr sink and pattern formatter.
class stderr_sink final : public log_sink {
public:
  stderr_sink() {
    impl_.set_formatter(std::make_unique<spdlog::pattern_formatter>(
      "%Y-%m-%dT%H:%M:%S.%eZ %-7l %n: %v", spdlog::pattern_time_type::utc));
  }

  void write(const log_record& record) override {
    impl_.log(to_spdlog(record));
  }

  void flush() override {
    impl_.flush();
  }

private:
  spdlog::sinks::stderr_sink_mt impl_;
};

// JSON lines: the object is built with RapidJSON (which escapes), the line
// is written by spdlog's file sink.
class json_lines_sink final : public log_sink {
public:
  explicit json_lines_sink(const std::string& path) : impl_(path) {
    impl_.set_formatter(std::make_unique<spdlog::pattern_formatter>(
      "%v", spdlog::pattern_time_type::utc));
  }

  void write(const log_record& record) override {
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w{buf};
    w.StartObject();
    w.Key("time");
    auto time = fmt::format(
      "{:%Y-%m-%dT%H:%M:%S}Z",
      std::chrono::time_point_cast<std::chrono::milliseconds>(record.time));
    w.String(time.c_str(), static_cast<rapidjson::SizeType>(time.size()));
    w.Key("level");
    auto lvl = to_string(record.level);
    w.String(lvl.data(), static_cast<rapidjson::SizeType>(lvl.size()));
    w.Key("component");
    w.String(record.component.c_str(),
             static_cast<rapidjson::SizeType>(record.component.size()));
    w.Key("message");
    w.String(record.message.c_str(),
             static_cast<rapidjson::SizeType>(record.message.size()));
    w.EndObject();
    log_record line = record;
    line.message.assign(buf.GetString(), buf.GetSize());
    impl_.log(to_spdlog(line));
    impl_.flush();
  }

  void flush() override {
    impl_.flush();
  }

private:
  spdlog::sinks::basic_file_sink_mt impl_;
};

struct registry {
  std::shared_mutex mtx;
  std::vector<std::shared_ptr<log_sink>> sinks{make_stderr_sink()};
};

registry& reg() {
  static auto* instance = new registry;
  return *instance;
}

} // namespace

namespace detail {

std::atomic<uint8_t> global_log_level{static_cast<uint8_t>(log_level::info)};

void write_log(log_level level, std::string_view component,
               std::string message) {
  log_record record{std::chrono::system_clock::now(), level,
                    std::string{component}, std::move(message)};
  auto& r = reg();
  std::shared_lock guard{r.mtx};
  for (auto& sink : r.sinks)
    sink->write(record);
}

} // namespace detail

std::string_view to_string(log_level x) noexcept {
  switch (x) {
    case log_level::trace:
      return "trace";
    case log_level::debug:
      return "debug";
    case log_level::info:
      return "info";
    case log_level::warning:
      return "warning";
    case log_level::error:
      return "error";
    case log_level::off:
      return "off";
  }
  return "off";
}

expected<log_level> parse_log_level(std::string_view text) {
  for (auto lvl : {log_level::trace, log_level::debug, log_level::info,
                   log_level::warning, log_level::error, log_level::off})
    if (text == to_string(lvl))
      return lvl;
  if (text == "warn")
    return log_level::warning;
  return make_error(errc::bad_config_value,
                    fmt::format("bad log level \"{}\" (expected one of trace, "
                                "debug, info, warning, error, off)",
                                text));
}

std::shared_ptr<log_sink> make_stderr_sink() {
  return std::make_shared<stderr_sink>();
}

expected<std::shared_ptr<log_sink>>
make_json_lines_sink(const std::string& path) {
  try {
    return std::shared_ptr<log_sink>{std::make_shared<json_lines_sink>(path)};
  } catch (const std::exception& ex) {
    return make_error(
      errc::bad_config_value,
      fmt::format("cannot open JSON log file \"{}\": {}", path, ex.what()));
  }
}

void capture_sink::write(const log_record& record) {
  std::lock_guard guard{mtx_};
  records_.push_back(record);
}

std::vector<log_record> capture_sink::records() const {
  std::lock_guard guard{mtx_};
  return records_;
}

size_t capture_sink::count(std::string_view needle) const {
  std::lock_guard guard{mtx_};
  return static_cast<size_t>(
    std::count_if(records_.begin(), records_.end(), [&](const log_record& r) {
      return r.message.find(needle) != std::string::npos;
    }));
}

std::string capture_sink::dump() const {
  std::lock_guard guard{mtx_};
  std::string result;
  for (auto& r : records_) {
    result += r.component;
    result += ": ";
    result += r.message;
    result += '\n';
  }
  return result;
}

void capture_sink::clear() {
  std::lock_guard guard{mtx_};
  records_.clear();
}

void set_log_sinks(std::vector<std::shared_ptr<log_sink>> sinks) {
  auto& r = reg();
  std::unique_lock guard{r.mtx};
  r.sinks = std::move(sinks);
}

void add_log_sink(std::shared_ptr<log_sink> sink) {
  auto& r = reg();
  std::unique_lock guard{r.mtx};
  r.sinks.push_back(std::move(sink));
}

void remove_log_sink(const std::shared_ptr<log_sink>& sink) {
  auto& r = reg();
  std::unique_lock guard{r.mtx};
  std::erase(r.sinks, sink);
}

void set_log_level(log_level level) noexcept {
  detail::global_log_level.store(static_cast<uint8_t>(level));
}

log_level current_log_level() noexcept {
  return static_cast<log_level>(detail::global_log_level.load());
}

void flush_logs() {
  auto& r = reg();
  std::shared_lock guard{r.mtx};
  for (auto& sink : r.sinks)
    sink->flush();
}

} // namespace troupe::runtime
