#pragma once

#include <string_view>

#include "troupe/runtime/log.hpp"
#include "troupe/sharding/log_line.hpp"

/// @file
/// Writes the cores' log lines (internal to the sharding shell).

namespace troupe::sharding {

/// Writes `line` to `log` at its level, prefixed with the entity type.
void write_log(const runtime::logger& log, std::string_view type_name,
               const log_line& line);

} // namespace troupe::sharding
