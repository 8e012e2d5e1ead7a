#include "troupe/management/management_settings.hpp"

#include <arpa/inet.h>

#include <fmt/format.h>

#include "troupe/management/errc.hpp"

namespace troupe::management {

using runtime::config_type;

namespace {

runtime::error invalid(std::string text) {
  return runtime::make_error(errc::invalid_settings, std::move(text));
}

} // namespace

bool management_settings::loopback() const {
  in_addr v4{};
  if (::inet_pton(AF_INET, bind.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, bind.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

void declare_management_config(runtime::config_schema& schema) {
  runtime::add_non_negative_key(schema, "management.enabled",
                                config_type::boolean, "true",
                                "Serve the management HTTP API (members, "
                                "shards, singletons, leases, probes, "
                                "metrics, dashboard).");
  runtime::add_non_negative_key(
    schema, "management.bind", config_type::string, "127.0.0.1",
    "The IP address the management API binds to. Any address other than "
    "loopback needs management.token for PUT requests.");
  runtime::add_integer_key(
    schema, "management.port", "8558",
    "The management API's TCP port (Akka Management's default); 0 picks a "
    "free one.",
    0, 65535);
  runtime::add_non_negative_key(
    schema, "management.token", config_type::secret, "",
    "Bearer token that PUT requests must carry when the API is not bound "
    "to loopback; at least 16 bytes. Never logged.");
  runtime::add_duration_key(
    schema, "management.query_timeout", "2s",
    "How long a request waits for one module's snapshot before answering "
    "503.",
    std::chrono::milliseconds{1});
  runtime::add_integer_key(
    schema, "management.max_connections", "64",
    "Open management connections at most; more are answered 503 and "
    "closed.",
    1, 10000);
  runtime::add_non_negative_key(
    schema, "management.fault_injection", config_type::boolean, "false",
    "Serve /faults, which blackholes, delays or drops this node's cluster "
    "traffic with chosen peers (chaos tests, the demo's partition). Only "
    "with a loopback management.bind; never in production.");
}

runtime::error validate(const management_settings& s) {
  in_addr v4{};
  in6_addr v6{};
  if (::inet_pton(AF_INET, s.bind.c_str(), &v4) != 1
      && ::inet_pton(AF_INET6, s.bind.c_str(), &v6) != 1)
    return invalid(fmt::format("management.bind must be an IPv4 or IPv6 "
                               "address, got \"{}\"",
                               s.bind.substr(0, 64)));
  if (!s.token.empty() && s.token.reveal().size() < min_token_size)
    return invalid(fmt::format("management.token must have at least {} "
                               "bytes, got {}",
                               min_token_size, s.token.reveal().size()));
  if (s.enabled && !s.loopback() && s.token.empty())
    return invalid(fmt::format("management.bind = {} is not loopback: set "
                               "management.token (PUT requests then need "
                               "it), or bind to 127.0.0.1",
                               s.bind));
  if (s.query_timeout <= std::chrono::milliseconds::zero())
    return invalid(fmt::format("management.query_timeout must be positive, "
                               "got {}ms",
                               s.query_timeout.count()));
  if (s.fault_injection && !s.loopback())
    return invalid(fmt::format("management.fault_injection needs a loopback "
                               "management.bind, got {}: anyone who reaches "
                               "the API could cut the node off",
                               s.bind));
  if (s.max_connections < 1)
    return invalid("management.max_connections must be at least 1, got 0");
  return {};
}

runtime::expected<management_settings>
management_settings_from_config(const runtime::config& cfg) {
  management_settings s;
  s.enabled = cfg.get<bool>("management.enabled");
  s.bind = cfg.get<std::string>("management.bind");
  s.port = static_cast<uint16_t>(cfg.get<int64_t>("management.port"));
  s.token = cfg.get<runtime::secret>("management.token");
  s.query_timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
    cfg.get<runtime::timespan>("management.query_timeout"));
  s.max_connections
    = static_cast<size_t>(cfg.get<int64_t>("management.max_connections"));
  s.fault_injection = cfg.get<bool>("management.fault_injection");
  if (auto err = validate(s))
    return err;
  return s;
}

router_settings router_settings_of(const management_settings& s,
                                   std::string dashboard_html) {
  router_settings r;
  r.require_token = !s.loopback();
  r.token = s.token.reveal();
  r.dashboard_html = std::move(dashboard_html);
  r.fault_injection = s.fault_injection;
  return r;
}

} // namespace troupe::management
