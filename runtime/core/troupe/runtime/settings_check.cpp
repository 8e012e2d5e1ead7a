#include "troupe/runtime/settings_check.hpp"

#include <utility>

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"
#include "troupe/runtime/errc.hpp"

namespace troupe::runtime {

namespace {

error violation(std::string text) {
  return make_error(errc::bad_config_value, std::move(text));
}

} // namespace

error check_positive_duration(std::string_view key, timespan value) {
  if (value <= timespan::zero())
    return violation(fmt::format("{} must be greater than 0, got {}", key,
                                 render_duration(value)));
  if (value > max_setting_duration)
    return violation(fmt::format("{} must be at most 24h, got {}", key,
                                 render_duration(value)));
  return {};
}

error check_interval(std::string_view key, timespan value) {
  if (auto err = check_positive_duration(key, value))
    return err;
  if (value < min_setting_interval)
    return violation(fmt::format("{} must be at least 1ms, got {}", key,
                                 render_duration(value)));
  return {};
}

error check_duration_up_to_a_day(std::string_view key, timespan value) {
  if (value < timespan::zero() || value > max_setting_duration)
    return violation(fmt::format("{} must be in [0, 24h], got {}", key,
                                 render_duration(value)));
  return {};
}

error check_integer_in(std::string_view key, int64_t value, int64_t min,
                       int64_t max) {
  if (value < min || value > max)
    return violation(
      fmt::format("{} must be in [{}, {}], got {}", key, min, max, value));
  return {};
}

error check_count_at_most(std::string_view key, uint64_t value, uint64_t max) {
  if (value > max)
    return violation(
      fmt::format("{} must be at most {}, got {}", key, max, value));
  return {};
}

expected<timespan> auto_or_duration(std::string_view key, std::string_view text,
                                    timespan auto_value) {
  if (text == "auto")
    return auto_value;
  auto d = parse_duration(text);
  if (!d)
    return violation(fmt::format(
      "{} must be auto or a duration with a unit, got \"{}\"", key, text));
  return *d;
}

} // namespace troupe::runtime
