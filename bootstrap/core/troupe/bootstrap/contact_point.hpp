#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// A contact point: the management endpoint (host and HTTP port) of a node
/// that discovery found, as Akka Management's Cluster Bootstrap names it.
/// A contact point is not a cluster address: its port is the management
/// port (`management.port`), not the cluster port (`cluster.port`); the
/// probe of `GET /bootstrap/seed-nodes` tells the node's cluster address.
///
/// A plain value; thread-safe as any value.

namespace troupe::bootstrap {

/// The management endpoint of one discovered node. Ordered by host
/// (bytewise) and then port, like every address order in troupe
/// (DESIGN.md §10).
struct contact_point {
  /// An IP address or a DNS name, as discovery reported it (IPv6 without
  /// brackets).
  std::string host;
  /// The management HTTP port (1-65535).
  uint16_t port = 0;

  friend bool operator==(const contact_point&, const contact_point&) = default;
  friend std::strong_ordering operator<=>(const contact_point&,
                                          const contact_point&)
    = default;
};

/// `host:port`, IPv6 hosts bracketed (`[::1]:8558`).
std::string to_string(const contact_point& x);

/// Parses `host:port` (IPv6 in brackets). Errors (bootstrap
/// errc::invalid_settings) quote the text and say what is missing or
/// wrong.
runtime::expected<contact_point> parse_contact_point(std::string_view text);

} // namespace troupe::bootstrap
