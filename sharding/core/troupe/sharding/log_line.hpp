#pragma once

#include <cstdint>
#include <string>

/// @file
/// A log line that a sharding core returns for its owner to write
/// (component "sharding"): the cores never log themselves (STYLE.md).
namespace troupe::sharding {

/// The severity of a log line.
enum class log_level : uint8_t { debug = 0, info, warning, error };

/// One line for the owner's logger.
struct log_line {
  log_level level = log_level::info;
  std::string text;
  friend bool operator==(const log_line&, const log_line&) = default;
};

} // namespace troupe::sharding
