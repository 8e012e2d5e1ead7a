#include "troupe/singleton/singleton_settings.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "troupe/runtime/settings_check.hpp"
#include "troupe/singleton/errc.hpp"

namespace troupe::singleton {

namespace {

using runtime::config_type;
using runtime::render_duration;

runtime::error invalid(std::string what) {
  return runtime::make_error(errc::invalid_settings, std::move(what));
}

// The shared rules (runtime/settings_check.hpp), filed under this module's
// errc.
runtime::error check_positive(std::string_view key, timespan value) {
  if (auto err = runtime::check_positive_duration(key, value))
    return invalid(std::move(err.message));
  return {};
}

runtime::error check_interval(std::string_view key, timespan value) {
  if (auto err = runtime::check_interval(key, value))
    return invalid(std::move(err.message));
  return {};
}

runtime::error check_retries(int64_t value) {
  if (auto err = runtime::check_integer_in(
        "singleton.min_number_of_hand_over_retries", value, 1, 10000))
    return invalid(std::move(err.message));
  return {};
}

} // namespace

int max_hand_over_retries(const manager_settings& s) noexcept {
  auto by_margin = s.hand_over_retry_interval > timespan::zero()
                     ? s.down_removal_margin / s.hand_over_retry_interval + 3
                     : 3;
  // Validated settings stay far below; unvalidated ones must not wrap.
  return static_cast<int>(std::min<int64_t>(
    std::max<int64_t>(s.min_number_of_hand_over_retries, by_margin),
    std::numeric_limits<int>::max() / 2));
}

int max_take_over_retries(const manager_settings& s) noexcept {
  return std::max(1, max_hand_over_retries(s) - 3);
}

runtime::error validate(const manager_settings& s) {
  if (auto err = check_interval("singleton.hand_over_retry_interval",
                                s.hand_over_retry_interval))
    return err;
  if (auto err = check_retries(s.min_number_of_hand_over_retries))
    return err;
  if (auto err = check_interval("singleton.lease_retry_interval",
                                s.lease_retry_interval))
    return err;
  if (auto err = runtime::check_duration_up_to_a_day(
        "singleton.down_removal_margin", s.down_removal_margin))
    return invalid(std::move(err.message));
  if (auto err
      = check_positive("singleton.restart_min_backoff", s.restart_min_backoff))
    return err;
  if (auto err
      = check_positive("singleton.restart_max_backoff", s.restart_max_backoff))
    return err;
  if (s.restart_min_backoff > s.restart_max_backoff)
    return invalid(fmt::format("singleton.restart_min_backoff ({}) must not "
                               "exceed singleton.restart_max_backoff ({})",
                               render_duration(s.restart_min_backoff),
                               render_duration(s.restart_max_backoff)));
  if (auto err = check_positive("singleton.instance_stop_timeout",
                                s.instance_stop_timeout))
    return err;
  return {};
}

runtime::error validate(const proxy_settings& s) {
  if (auto err = check_interval("singleton.proxy.identification_interval",
                                s.identification_interval))
    return err;
  if (auto err = runtime::check_count_at_most("singleton.proxy.buffer_size",
                                              s.buffer_size, 10'000'000))
    return invalid(std::move(err.message));
  return {};
}

void declare_singleton_config(runtime::config_schema& schema) {
  runtime::add_non_negative_key(
    schema, "singleton.role", config_type::string, "",
    "Only members with this role host singletons (empty: all).");
  runtime::add_non_negative_key(
    schema, "singleton.hand_over_retry_interval", config_type::duration, "1s",
    "How often a new oldest repeats hand_over_to_me and an old oldest "
    "take_over_from_me.");
  runtime::add_non_negative_key(
    schema, "singleton.min_number_of_hand_over_retries", config_type::integer,
    "15",
    "Unanswered hand-over rounds before the hand-over is declared "
    "stuck (at least down_removal_margin / interval + 3).");
  runtime::add_non_negative_key(
    schema, "singleton.use_lease", config_type::boolean, "false",
    "Acquire the singleton's lease (lease.* settings) before starting "
    "an instance; stop the instance when the lease is lost.");
  runtime::add_non_negative_key(
    schema, "singleton.lease_name", config_type::string, "",
    "The singleton's lease name (empty: <cluster name>-singleton-"
    "<singleton name>); shared by every singleton type, so leave it "
    "empty when a node runs several with use_lease.");
  runtime::add_non_negative_key(
    schema, "singleton.lease_retry_interval", config_type::duration, "5s",
    "How often an oldest that was refused the lease asks again.");
  runtime::add_non_negative_key(
    schema, "singleton.down_removal_margin", config_type::string, "auto",
    "How long after a downed older member was removed the new oldest "
    "still waits: auto (0 with use_lease, else downing.stable_after) "
    "or a duration.");
  runtime::add_non_negative_key(
    schema, "singleton.restart_on_stop", config_type::boolean, "true",
    "Restart an instance that stopped by itself, with backoff.");
  runtime::add_non_negative_key(
    schema, "singleton.restart_min_backoff", config_type::duration, "1s",
    "The first restart's delay; doubles per restart.");
  runtime::add_non_negative_key(
    schema, "singleton.restart_max_backoff", config_type::duration, "30s",
    "The longest restart delay; an instance that ran this long resets "
    "the backoff.");
  runtime::add_non_negative_key(
    schema, "singleton.instance_stop_timeout", config_type::duration, "10s",
    "How long the instance may take to terminate after its stop "
    "message before the manager kills it.");
  runtime::add_non_negative_key(
    schema, "singleton.proxy.identification_interval", config_type::duration,
    "1s",
    "How often a proxy asks for the instance while it does not know "
    "it.");
  runtime::add_non_negative_key(
    schema, "singleton.proxy.buffer_size", config_type::integer, "1000",
    "Messages a proxy keeps while the instance is unknown; when full "
    "the oldest is dropped and counted.");
}

runtime::expected<manager_settings>
manager_settings_from_config(const runtime::config& cfg,
                             timespan stable_after) {
  manager_settings s;
  s.role = cfg.get<std::string>("singleton.role");
  s.hand_over_retry_interval
    = cfg.get<timespan>("singleton.hand_over_retry_interval");
  // Checked here, where the value still fits: the field is an int.
  auto retries = cfg.get<int64_t>("singleton.min_number_of_hand_over_retries");
  if (auto err = check_retries(retries))
    return err;
  s.min_number_of_hand_over_retries = static_cast<int>(retries);
  s.use_lease = cfg.get<bool>("singleton.use_lease");
  s.lease_retry_interval = cfg.get<timespan>("singleton.lease_retry_interval");
  auto margin = runtime::auto_or_duration(
    "singleton.down_removal_margin",
    cfg.get<std::string>("singleton.down_removal_margin"),
    s.use_lease ? timespan::zero() : stable_after);
  if (!margin)
    return invalid(margin.error().message);
  s.down_removal_margin = *margin;
  s.restart_on_stop = cfg.get<bool>("singleton.restart_on_stop");
  s.restart_min_backoff = cfg.get<timespan>("singleton.restart_min_backoff");
  s.restart_max_backoff = cfg.get<timespan>("singleton.restart_max_backoff");
  s.instance_stop_timeout
    = cfg.get<timespan>("singleton.instance_stop_timeout");
  if (auto err = validate(s))
    return err;
  return s;
}

runtime::expected<proxy_settings>
proxy_settings_from_config(const runtime::config& cfg) {
  proxy_settings s;
  s.role = cfg.get<std::string>("singleton.role");
  s.identification_interval
    = cfg.get<timespan>("singleton.proxy.identification_interval");
  s.buffer_size
    = static_cast<size_t>(cfg.get<int64_t>("singleton.proxy.buffer_size"));
  if (auto err = validate(s))
    return err;
  return s;
}

std::string singleton_lease_name(const std::string& configured,
                                 const std::string& cluster_name,
                                 const std::string& singleton_name) {
  if (!configured.empty())
    return configured;
  return fmt::format("{}-singleton-{}", cluster_name, singleton_name);
}

} // namespace troupe::singleton
