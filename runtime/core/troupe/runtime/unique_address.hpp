#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// The identity of one incarnation of a node: (host, port, uid).

namespace troupe::runtime {

/// One incarnation of a cluster node, as Akka's `UniqueAddress`.
///
/// - `host`: the canonical (advertised) address exactly as configured, an IP
///   or a DNS name. It is compared bytewise, so every node must configure
///   hosts the same way (DESIGN.md §10). The bind address is separate.
/// - `port`: the advertised TCP port of the cluster transport.
/// - `uid`: a random 64-bit incarnation number drawn at node start. A node
///   restarted on the same host:port has a new uid and is a new member.
///
/// Ordering (host bytewise, then port, then uid) is the single comparison
/// used for the leader, the oldest tie-break and "lowest address" in the
/// split brain resolver. A plain value; thread-safe as any value.
struct unique_address {
  std::string host;
  uint16_t port = 0;
  uint64_t uid = 0;

  friend bool operator==(const unique_address&, const unique_address&)
    = default;
  friend std::strong_ordering operator<=>(const unique_address&,
                                          const unique_address&)
    = default;
};

/// Renders as `host:port#uid`, e.g. `10.0.0.1:2552#1234`; IPv6 hosts are
/// bracketed (`[::1]:2552#7`).
std::string to_string(const unique_address& x);

/// Parses the form that `to_string` writes. Errors name the offending input
/// (runtime::errc::bad_address).
expected<unique_address> parse_unique_address(std::string_view text);

/// CAF-free inspection (STYLE.md §4): registered as a message type by the
/// runtime's CAF glue.
template <class Inspector>
auto inspect(Inspector& f, unique_address& x) {
  return f(x.host, x.port, x.uid);
}

} // namespace troupe::runtime
