#include "troupe/bootstrap/dns_discovery_config.hpp"

#include <fmt/format.h>

#include "troupe/bootstrap/dns_discovery.hpp"
#include "troupe/bootstrap/errc.hpp"

namespace troupe::bootstrap {

namespace {

constexpr std::string_view prefix = "cluster.bootstrap.dns.";

std::string key_of(std::string_view option) {
  // contact_point_port is not a dns key: the caller resolved it from
  // cluster.bootstrap.contact_point_port (0: management.port).
  if (option == "contact_point_port")
    return "cluster.bootstrap.contact_point_port";
  return fmt::format("{}{}", prefix, option);
}

} // namespace

void declare_dns_discovery_config(runtime::config_schema& schema) {
  using runtime::config_type;
  using runtime::make_config_key;
  schema.add(make_config_key(
    "cluster.bootstrap.dns.service_name", config_type::string, "",
    "DNS name of the headless service whose records are the contact points "
    "(e.g. troupe.default.svc.cluster.local); required with "
    "discovery_method dns."));
  auto type = make_config_key(
    "cluster.bootstrap.dns.record_type", config_type::string, "a",
    "a: the A and AAAA records of service_name, each address on "
    "cluster.bootstrap.contact_point_port; srv: the SRV records of "
    "_<port_name>._<protocol>.<service_name>, each target's address and "
    "port.");
  type.allowed = {"a", "srv"};
  schema.add(std::move(type));
  schema.add(make_config_key(
    "cluster.bootstrap.dns.port_name", config_type::string, "management",
    "The port name of the SRV lookup (the Kubernetes service port's name)."));
  schema.add(make_config_key("cluster.bootstrap.dns.protocol",
                             config_type::string, "tcp",
                             "The protocol of the SRV lookup."));
  schema.add(make_config_key(
    "cluster.bootstrap.dns.server", config_type::string, "",
    "DNS server to ask as ip:port ([ipv6]:port), without search domains; "
    "empty: the system resolver (/etc/resolv.conf, with its search "
    "domains)."));
}

runtime::expected<std::unique_ptr<contact_point_discovery>>
dns_discovery_from_config(const runtime::config& cfg, uint16_t fallback_port) {
  auto get = [&](std::string_view option) {
    return cfg.get<std::string>(key_of(option));
  };
  dns_discovery_options opts;
  opts.service_name = get("service_name");
  // The key's allowed values make any other value fail when it is set.
  auto type = parse_dns_record_type(get("record_type"));
  TROUPE_ASSERT(type.has_value());
  opts.record_type = *type;
  opts.port_name = get("port_name");
  opts.protocol = get("protocol");
  opts.server = get("server");
  opts.contact_point_port = fallback_port;
  if (auto problem = check(opts)) {
    auto key = key_of(problem->option);
    auto from
      = cfg.schema().find(key) != nullptr ? cfg.origin(key).text : "the caller";
    return runtime::make_error(
      errc::invalid_settings,
      fmt::format("{} (from {}) {}", key, from, problem->reason));
  }
  auto discovery = dns_discovery::make(std::move(opts));
  if (!discovery)
    return discovery.error();
  return std::unique_ptr<contact_point_discovery>{std::move(*discovery)};
}

} // namespace troupe::bootstrap
