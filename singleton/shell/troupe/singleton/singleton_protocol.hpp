#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/cluster/remote_ref.hpp"

/// @file
/// The names the singleton's actors are published under, and the two
/// messages of the proxy's identification (Akka's proxy sends `Identify` to
/// the singleton's path on the oldest node and gets `ActorIdentity`; here
/// the proxy asks the manager on the singleton target, which knows whether
/// its instance runs).
/// Both messages travel over remoting and are registered by the singleton
/// module's CAF glue (caf_glue.hpp) under "troupe.singleton.*" names, on
/// every node.

namespace troupe::singleton {

/// `troupe.singleton.<type_name>.manager`: the manager of singleton type
/// `type_name`, on every node that runs one. Hand-over messages and
/// identify requests go there.
std::string manager_name(std::string_view type_name);

/// `troupe.singleton.<type_name>`: the running instance, on the node that
/// runs it (published while it runs).
std::string instance_name(std::string_view type_name);

/// Checks a singleton type name: not empty, at most 200 bytes, letters,
/// digits and `-`, `_`, `.` only (it becomes part of published names and
/// of the lease name). Errors: errc::invalid_name naming the name and the
/// rule.
runtime::error validate_type_name(std::string_view type_name);

/// The proxy's question to a manager, sent as `(remote_ref from,
/// identify_singleton)` to `manager_name(type)` on the expected host with
/// the proxy's reply reference: "which instance runs here?". No fields.
struct identify_singleton {
  friend bool operator==(identify_singleton, identify_singleton) = default;
};

template <class Inspector>
auto inspect(Inspector& f, identify_singleton& x) {
  static_cast<void>(x);
  return f();
}

/// The manager's answer (to the request's reply reference): `running` with
/// the instance's reference (`instance_name(type)` on the manager's node),
/// its incarnation (1, 2, ... per manager) and its fencing token (0 without
/// a lease); or not running (no instance, or it is being stopped), all
/// other fields empty.
struct singleton_identity {
  bool running = false;
  cluster::remote_ref instance;
  uint64_t incarnation = 0;
  uint64_t fencing_token = 0;
  friend bool operator==(const singleton_identity&, const singleton_identity&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, singleton_identity& x) {
  return f(x.running, x.instance, x.incarnation, x.fencing_token);
}

} // namespace troupe::singleton
