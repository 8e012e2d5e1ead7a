#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The rules the modules' validators share for their settings (the
/// `singleton.*`, `sharding.*` ... keys). The schema's bounds
/// (config_key::min_integer, min_duration) only say "not negative"; these
/// are the module-level rules beyond it.
///
/// Each check returns the violated rule as an errc::bad_config_value error
/// whose message names the key and the value, e.g.
/// `sharding.retry_interval must be at least 1ms, got 10us`, or no error.
/// A module re-files the message under its own errc::invalid_settings
/// (its validator's documented error), so one wording serves every module.
/// Pure functions; thread-safe.

namespace troupe::runtime {

/// The longest duration a module's interval or timeout may have: a day.
inline constexpr timespan max_setting_duration = std::chrono::hours{24};

/// The shortest period a module may repeat something at (a shorter one
/// floods the network, and a day divided by 1ns overflows a retry count).
inline constexpr timespan min_setting_interval = std::chrono::milliseconds{1};

/// `value` in (0, 24h]: "<key> must be greater than 0, got 0s" or
/// "<key> must be at most 24h, got 25h".
error check_positive_duration(std::string_view key, timespan value);

/// A period: as check_positive_duration, and at least 1ms ("<key> must be
/// at least 1ms, got 10us").
error check_interval(std::string_view key, timespan value);

/// `value` in [0, 24h]: "<key> must be in [0, 24h], got 25h".
error check_duration_up_to_a_day(std::string_view key, timespan value);

/// `value` in [min, max]: "<key> must be in [1, 10000], got 0".
error check_integer_in(std::string_view key, int64_t value, int64_t min,
                       int64_t max);

/// `value` at most `max`: "<key> must be at most 10000000, got 20000000".
error check_count_at_most(std::string_view key, uint64_t value, uint64_t max);

/// The value of a string key that holds `auto` or a duration with a unit
/// (e.g. `down_removal_margin`): `auto_value` for "auto", else the parsed
/// duration; otherwise "<key> must be auto or a duration with a unit, got
/// \"soon\"".
expected<timespan> auto_or_duration(std::string_view key, std::string_view text,
                                    timespan auto_value);

} // namespace troupe::runtime
