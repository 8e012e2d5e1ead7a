#include <caf/actor_system_config.hpp>

#include <fmt/format.h>

#include "troupe/runtime/caf_glue.hpp"
#include "troupe/sharding/errc.hpp"
#include "troupe/sharding/sharding.hpp"
#include "troupe/sharding/shell_log.hpp"
#include "troupe/singleton/singleton_protocol.hpp"

namespace troupe::sharding {

std::string region_name(std::string_view type_name) {
  return fmt::format("troupe.sharding.{}.region", type_name);
}

std::string coordinator_singleton_type(std::string_view type_name) {
  return fmt::format("sharding.{}", type_name);
}

runtime::error validate_type_name(std::string_view type_name) {
  // The singleton's rule (the same names end up in published names and
  // lease names), reported as sharding's error.
  if (auto err = singleton::validate_type_name(type_name)) {
    auto text = err.message;
    if (auto pos = text.find("a singleton type name"); pos != std::string::npos)
      text.replace(pos, 21, "an entity type name");
    else if (pos = text.find("singleton type name"); pos != std::string::npos)
      text.replace(pos, 19, "entity type name");
    return runtime::make_error(errc::invalid_name, std::move(text));
  }
  return {};
}

void write_log(const runtime::logger& log, std::string_view type_name,
               const log_line& line) {
  runtime::log_level level = runtime::log_level::error;
  switch (line.level) {
    case log_level::debug:
      level = runtime::log_level::debug;
      break;
    case log_level::info:
      level = runtime::log_level::info;
      break;
    case log_level::warning:
      level = runtime::log_level::warning;
      break;
    case log_level::error:
      level = runtime::log_level::error;
      break;
  }
  log.log(level, "{}: {}", type_name, line.text);
}

void add_sharding_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<register_region>("troupe.sharding.register_region");
  cfg.add_message_type<get_shard_home>("troupe.sharding.get_shard_home");
  cfg.add_message_type<shard_started>("troupe.sharding.shard_started");
  cfg.add_message_type<begin_hand_off_ack>(
    "troupe.sharding.begin_hand_off_ack");
  cfg.add_message_type<shard_stopped>("troupe.sharding.shard_stopped");
  cfg.add_message_type<graceful_shutdown_request>(
    "troupe.sharding.graceful_shutdown_request");
  cfg.add_message_type<coordinator_hello>("troupe.sharding.coordinator_hello");
  cfg.add_message_type<register_ack>("troupe.sharding.register_ack");
  cfg.add_message_type<shard_home>("troupe.sharding.shard_home");
  cfg.add_message_type<host_shard>("troupe.sharding.host_shard");
  cfg.add_message_type<begin_hand_off>("troupe.sharding.begin_hand_off");
  cfg.add_message_type<hand_off>("troupe.sharding.hand_off");
  cfg.add_message_type<graceful_shutdown_ack>(
    "troupe.sharding.graceful_shutdown_ack");
  cfg.add_message_type<get_shard_map>("troupe.sharding.get_shard_map");
  cfg.add_message_type<shard_map_reply>("troupe.sharding.shard_map_reply");
  cfg.add_message_type<region_status>("troupe.sharding.region_status");
  runtime::add_error_category<errc>(cfg);
}

runtime::module sharding_module() {
  return runtime::module{"sharding", declare_sharding_config,
                         add_sharding_types};
}

} // namespace troupe::sharding
