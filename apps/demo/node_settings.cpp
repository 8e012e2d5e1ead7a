#include "node_settings.hpp"

#include <fmt/format.h>

#include "troupe/runtime/http_types.hpp"

using namespace std::chrono_literals;

namespace troupe::demo {

namespace {

constexpr runtime::timespan min_demo_interval = 10ms;

void declare_demo_config(runtime::config_schema& schema) {
  schema.add(runtime::make_config_key(
    "demo.store_url", runtime::config_type::string, "http://127.0.0.1:7070",
    "The demo store's base URL (http://host:port): the scheduler's ledger "
    "and the accounts' journal."));
  schema.add(runtime::make_config_key(
    "demo.api_bind", runtime::config_type::string, "127.0.0.1",
    "The address the demo's app API (POST /deposit) binds to."));
  runtime::add_integer_key(schema, "demo.api_port", "8080",
                           "The app API's port (0: a free one, printed at "
                           "start).",
                           0, 65535);
  runtime::add_duration_key(schema, "demo.tick_interval", "500ms",
                            "How often the scheduler singleton writes a "
                            "fenced record to the store's ledger.",
                            min_demo_interval);
  runtime::add_duration_key(schema, "demo.store_timeout", "2s",
                            "The deadline of one request to the store.",
                            min_demo_interval);
  runtime::add_duration_key(schema, "demo.deposit_timeout", "3s",
                            "How long the app API waits for an account to "
                            "persist a deposit before it answers 504.",
                            min_demo_interval);
  schema.add(runtime::make_config_key(
    "demo.node_name", runtime::config_type::string, "",
    "This node's name in its history file (empty: its cluster address)."));
  schema.add(runtime::make_config_key(
    "demo.history_file", runtime::config_type::string, "",
    "A file to append this node's history to (JSON lines for the chaos "
    "checker, docs/design/chaos.md); empty: none."));
}

} // namespace

runtime::module demo_module() {
  return runtime::module{"demo", declare_demo_config, {}};
}

runtime::expected<node_settings>
node_settings_from_config(const runtime::config& cfg) {
  node_settings s;
  s.store_url = cfg.get<std::string>("demo.store_url");
  auto url = runtime::parse_url(s.store_url);
  auto bad_url = [&](std::string_view why) {
    const auto* key = cfg.schema().find("demo.store_url");
    return runtime::bad_value_error(*key, fmt::format("\"{}\"", s.store_url),
                                    cfg.origin("demo.store_url"), why);
  };
  if (!url)
    return bad_url(url.error().message);
  if (url->is_tls() || url->target != "/")
    return bad_url("must be http://host:port without a path");
  while (!s.store_url.empty() && s.store_url.back() == '/')
    s.store_url.pop_back();
  s.api_bind = cfg.get<std::string>("demo.api_bind");
  s.api_port = static_cast<uint16_t>(cfg.get<int64_t>("demo.api_port"));
  s.tick_interval = cfg.get<runtime::timespan>("demo.tick_interval");
  s.store_timeout = cfg.get<runtime::timespan>("demo.store_timeout");
  s.deposit_timeout = cfg.get<runtime::timespan>("demo.deposit_timeout");
  s.node_name = cfg.get<std::string>("demo.node_name");
  s.history_file = cfg.get<std::string>("demo.history_file");
  return s;
}

} // namespace troupe::demo
