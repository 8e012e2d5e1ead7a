#include "troupe/bootstrap/discovery_from_config.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "troupe/bootstrap/config_discovery.hpp"
#include "troupe/bootstrap/dns_discovery_config.hpp"
#include "troupe/bootstrap/errc.hpp"
#include "troupe/bootstrap/kubernetes_api_discovery_config.hpp"

namespace troupe::bootstrap {

void declare_discovery_config(runtime::config_schema& schema) {
  declare_dns_discovery_config(schema);
  declare_kubernetes_api_discovery_config(schema);
}

runtime::expected<std::shared_ptr<contact_point_discovery>>
discovery_from_config(const runtime::config& cfg, const bootstrap_settings& s,
                      uint16_t fallback_port) {
  using result = runtime::expected<std::shared_ptr<contact_point_discovery>>;
  switch (s.method) {
    case discovery_method::config:
      return std::shared_ptr<contact_point_discovery>{
        std::make_shared<config_discovery>(s.config_contact_points)};
    case discovery_method::dns: {
      auto d = dns_discovery_from_config(cfg, fallback_port);
      if (!d)
        return result{d.error()};
      return std::shared_ptr<contact_point_discovery>{std::move(*d)};
    }
    case discovery_method::kubernetes_api: {
      auto d = kubernetes_api_discovery_from_config(
        cfg, [](const char* name) { return std::getenv(name); }, fallback_port);
      if (!d)
        return result{d.error()};
      return std::shared_ptr<contact_point_discovery>{std::move(*d)};
    }
    case discovery_method::off:
      break;
  }
  return runtime::make_error(errc::invalid_settings,
                             "cluster.bootstrap.discovery_method is empty: "
                             "bootstrap is off, there is no method to build");
}

} // namespace troupe::bootstrap
