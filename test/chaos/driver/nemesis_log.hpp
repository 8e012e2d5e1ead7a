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

/// The open nemesis log. Not thread-safe (the driver's main thread).
class nemesis_log {
public:
  /// Creates (truncates) `path`; throws std::runtime_error naming the
  /// path and the OS's reason when it cannot.
  explicit nemesis_log(const std::filesystem::path& path);
  ~nemesis_log();

  nemesis_log(const nemesis_log&) = delete;
  nemesis_log& operator=(const nemesis_log&) = delete;

  /// Appends `op`, stamped now; returns the stamp.
  int64_t write(std::string_view op, const std::vector<log_field>& fields = {});

private:
  int fd_ = -1;
};

} // namespace troupe::chaos
