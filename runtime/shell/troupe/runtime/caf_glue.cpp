#include "troupe/runtime/caf_glue.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/message.hpp>

#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/http_types.hpp"
#include "troupe/runtime/shutdown_sequence.hpp"
#include "troupe/runtime/unique_address.hpp"

namespace troupe::runtime {

caf::error to_caf_error(const error& err) {
  if (!err)
    return caf::error{};
  return caf::error{err.code, caf::atom_from_string(err.category),
                    caf::make_message(err.message)};
}

std::string error_message(const caf::error& err) {
  auto& ctx = err.context();
  if (!ctx.empty() && ctx.match_element<std::string>(0))
    return ctx.get_as<std::string>(0);
  return {};
}

void add_runtime_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<unique_address>("troupe.runtime.unique_address");
  cfg.add_message_type<http_header>("troupe.runtime.http_header");
  cfg.add_message_type<std::vector<http_header>>(
    "std::vector<troupe.runtime.http_header>");
  cfg.add_message_type<http_request>("troupe.runtime.http_request");
  cfg.add_message_type<http_response>("troupe.runtime.http_response");
  add_error_category<errc>(cfg);
}

void declare_runtime_config(config_schema& schema) {
  auto level = make_config_key("log.level", config_type::string, "info",
                               "Minimum level of log records.");
  level.allowed = {"trace", "debug", "info", "warning", "error", "off"};
  schema.add(std::move(level));
  schema.add(
    make_config_key("log.json_file", config_type::string, "",
                    "Also write JSON lines to this file (empty: off)."));
  schema.add(make_config_key("log.stderr", config_type::boolean, "true",
                             "Write human-readable lines to stderr."));
  auto threads
    = make_config_key("scheduler.max_threads", config_type::integer, "2",
                      "CAF worker threads (CAF's default of 4 is the "
                      "slowest setting measured on 2 cores).");
  threads.min_integer = 1;
  threads.max_integer = 256;
  schema.add(std::move(threads));
  schema.add(
    make_config_key("scheduler.moderate_sleep", config_type::duration, "50us",
                    "CAF work-stealing sleep between polls when idle; 0us "
                    "trades idle CPU for ~120us lower cross-process "
                    "latency."));
  declare_shutdown_config(schema);
}

module runtime_module() {
  return module{"runtime", declare_runtime_config, add_runtime_types};
}

} // namespace troupe::runtime
