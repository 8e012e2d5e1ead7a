#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

/// @file
/// DIR/nemesis.jsonl, the chaos driver's record of what it did to the
/// cluster (docs/design/chaos.md): one JSON object per line,
/// `{"mono_ns":N,"op":"kill","node":"node-3","pid":1234}`, `mono_ns`
/// CLOCK_MONOTONIC in nanoseconds (the clock of the nodes' histories, the
/// store and the client). Each line is written and flushed at once, so the
/// checker reads every fault even when the driver is killed.

namespace troupe::chaos {

/// A field's value: text, an unsigned number, or a list of names.
using log_value = std::variant<std::string, uint64_t, std::vector<std::string>>;

struct log_field {
  std::string key;
  log_value value;
};

/// The line of `op` at `mono_ns` (with its newline). Pure.
std::string nemesis_line(int64_t mono_ns, std::string_view op,
                         const std::vector<log_field>& fields);

/// CLOCK_MONOTONIC now, in nanoseconds.
int64_t mono_now_ns();

/// A file the driver appends whole lines to, each with one write(2), so a
/// reader sees every line the driver finished even when it is killed. Not
/// thread-safe (the driver's main thread).
class line_file {
public:
  /// Creates (truncates) `path`; throws std::runtime_error naming the
  /// path and the OS's reason when it cannot.
  explicit line_file(const std::filesystem::path& path);
  ~line_file();

  line_file(const line_file&) = delete;
  line_file& operator=(const line_file&) = delete;

  /// Appends `line` (with its newline); a failed or short write throws
  /// std::runtime_error naming the file (a lost line would hide something
  /// from the checker, so it stops the run).
  void append(std::string_view line);

private:
  std::string name_;
  int fd_ = -1;
};

/// The open nemesis log. Not thread-safe (the driver's main thread).
class nemesis_log {
public:
  /// Creates (truncates) `path`; errors as line_file's.
  explicit nemesis_log(const std::filesystem::path& path) : file_(path) {}

  /// Appends `op`, stamped now; returns the stamp.
  int64_t write(std::string_view op, const std::vector<log_field>& fields = {});

private:
  line_file file_;
};

} // namespace troupe::chaos
