#include "troupe/bootstrap/contact_point.hpp"

#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/cluster/membership_settings.hpp"
#include "troupe/cluster/transport.hpp"

namespace troupe::bootstrap {

std::string to_string(const contact_point& x) {
  return cluster::to_string(cluster::endpoint{x.host, x.port});
}

runtime::expected<contact_point> parse_contact_point(std::string_view text) {
  // One host:port grammar in troupe: the seed node's.
  auto ep = cluster::parse_seed_node(text);
  if (!ep) {
    auto msg = ep.error().message;
    if (auto at = msg.find("bad seed node"); at == 0)
      msg.replace(0, 13, "bad contact point");
    return runtime::make_error(errc::invalid_settings, std::move(msg));
  }
  return contact_point{std::move(ep->host), ep->port};
}

} // namespace troupe::bootstrap
