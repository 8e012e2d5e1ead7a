#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/secret.hpp"

/// @file
/// troupe's log facade (CAF's own logging is compiled out in Debian's build).
///
/// Shells and edges log through `logger`; cores never log (STYLE.md §7).
/// Records go to a process-wide set of sinks: stderr (human readable), JSON
/// lines (one object per line: time, level, component, message) and a
/// capture sink for tests. spdlog does the formatting and sink handling.
///
/// Secrets: wrap any secret in `secret` before it can reach a format call;
/// it renders as `<redacted>`. Config values declared secret are stored as
/// `secret` (runtime config), so they cannot be logged by accident.
///
/// Thread-safety: every function here is thread-safe. `logger` is a cheap
/// value (a component name) that may be shared.

namespace troupe::runtime {

/// Severity of a log record, lowest first.
enum class log_level : uint8_t { trace, debug, info, warning, error, off };

/// "trace", "debug", "info", "warning", "error" or "off".
std::string_view to_string(log_level x) noexcept;

/// Parses the names that `to_string` writes (also "warn").
expected<log_level> parse_log_level(std::string_view text);

/// One log record as a sink receives it.
struct log_record {
  std::chrono::system_clock::time_point time;
  log_level level = log_level::info;
  std::string component;
  std::string message;
};

/// A destination for log records. Implementations must be thread-safe.
class log_sink {
public:
  virtual ~log_sink() = default;
  virtual void write(const log_record& record) = 0;
  virtual void flush() {}
};

/// Human-readable lines on stderr:
/// `2026-11-29T11:37:12.123Z INFO  lease: acquired "jobs" (token 7)`.
std::shared_ptr<log_sink> make_stderr_sink();

/// One JSON object per line, appended to `path`:
/// `{"time":"...","level":"info","component":"lease","message":"..."}`.
/// Errors (file not writable) name the path.
expected<std::shared_ptr<log_sink>>
make_json_lines_sink(const std::string& path);

/// Keeps every record in memory: for tests that assert on log output.
class capture_sink final : public log_sink {
public:
  void write(const log_record& record) override;

  /// A copy of all records so far.
  std::vector<log_record> records() const;

  /// Number of records whose message contains `needle`.
  size_t count(std::string_view needle) const;

  /// True if any record's message contains `needle`.
  bool contains(std::string_view needle) const {
    return count(needle) > 0;
  }

  /// All messages joined with newlines (handy in failure output).
  std::string dump() const;

  void clear();

private:
  mutable std::mutex mtx_;
  std::vector<log_record> records_;
};

/// Replaces the process-wide sinks. The default is one stderr sink.
void set_log_sinks(std::vector<std::shared_ptr<log_sink>> sinks);

/// Adds a sink to the process-wide set.
void add_log_sink(std::shared_ptr<log_sink> sink);

/// Removes a sink from the process-wide set (no-op if absent).
void remove_log_sink(const std::shared_ptr<log_sink>& sink);

/// Sets the minimum level that reaches the sinks (default: info).
void set_log_level(log_level level) noexcept;

/// The current minimum level.
log_level current_log_level() noexcept;

/// Flushes every sink.
void flush_logs();

namespace detail {

extern std::atomic<uint8_t> global_log_level;

void write_log(log_level level, std::string_view component,
               std::string message);

} // namespace detail

/// A named source of log records, e.g. `logger{"lease"}`.
class logger {
public:
  explicit logger(std::string component) : component_(std::move(component)) {}

  const std::string& component() const noexcept {
    return component_;
  }

  /// True if records of `level` currently reach the sinks.
  static bool enabled(log_level level) noexcept {
    return static_cast<uint8_t>(level)
           >= detail::global_log_level.load(std::memory_order_relaxed);
  }

  template <class... Ts>
  void log(log_level level, fmt::format_string<Ts...> fmt, Ts&&... xs) const {
    if (enabled(level))
      detail::write_log(level, component_,
                        fmt::format(fmt, std::forward<Ts>(xs)...));
  }

  template <class... Ts>
  void trace(fmt::format_string<Ts...> fmt, Ts&&... xs) const {
    log(log_level::trace, fmt, std::forward<Ts>(xs)...);
  }

  template <class... Ts>
  void debug(fmt::format_string<Ts...> fmt, Ts&&... xs) const {
    log(log_level::debug, fmt, std::forward<Ts>(xs)...);
  }

  template <class... Ts>
  void info(fmt::format_string<Ts...> fmt, Ts&&... xs) const {
    log(log_level::info, fmt, std::forward<Ts>(xs)...);
  }

  template <class... Ts>
  void warning(fmt::format_string<Ts...> fmt, Ts&&... xs) const {
    log(log_level::warning, fmt, std::forward<Ts>(xs)...);
  }

  template <class... Ts>
  void error(fmt::format_string<Ts...> fmt, Ts&&... xs) const {
    log(log_level::error, fmt, std::forward<Ts>(xs)...);
  }

private:
  std::string component_;
};

} // namespace troupe::runtime
