#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// A serializable reference to an actor published under a name on a node.

namespace troupe::cluster {

/// A reference to whatever actor is published under `name` on the node
/// incarnation `node` (cluster::remoting publishes local actors).
///
/// A plain value: it can be stored, compared, put into messages and sent to
/// other nodes (registered with CAF by the cluster module's glue). It names
/// a (node incarnation, name) pair, not one actor instance: if the actor
/// published under `name` stops and another one is published under the
/// same name on the same incarnation, the reference reaches the new one
/// (as Akka's actor paths, unlike Akka's ActorRef, which carries a uid).
/// A node restarted on the same host:port has a new uid, so references to
/// the old incarnation never reach the new one.
///
/// `name` is empty for an anonymous sender (a message sent without a
/// reply-to reference): such a reference still tells the node, but
/// nothing can be sent to it (`is_addressable` is false).
///
/// Ordering: `node` first (runtime::unique_address's single comparison:
/// host bytewise, port, uid), then `name` bytewise. Thread-safe as any
/// value.
struct remote_ref {
  runtime::unique_address node;
  std::string name;

  /// True if messages can be sent to this reference: a node with a host
  /// and a port, and a non-empty name.
  bool is_addressable() const noexcept {
    return !node.host.empty() && node.port != 0 && !name.empty();
  }

  friend bool operator==(const remote_ref&, const remote_ref&) = default;
  friend std::strong_ordering operator<=>(const remote_ref&, const remote_ref&)
    = default;
};

/// Renders as `name@host:port#uid`, e.g. `jobs@10.0.0.1:2552#1234`, IPv6
/// hosts bracketed; an anonymous reference renders as `@host:port#uid`.
std::string to_string(const remote_ref& x);

/// Parses the form that `to_string` writes (the name is everything before
/// the first '@'). Errors (runtime::errc::bad_address) name the input.
runtime::expected<remote_ref> parse_remote_ref(std::string_view text);

/// CAF-free inspection (STYLE.md §4); registered as
/// "troupe.cluster.remote_ref" by the cluster module's CAF glue.
template <class Inspector>
auto inspect(Inspector& f, remote_ref& x) {
  return f(x.node, x.name);
}

} // namespace troupe::cluster
