#pragma once

#include <functional>
#include <string>
#include <vector>

#include "troupe/bootstrap/contact_point.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The edge interface of contact-point discovery (Akka Discovery's
/// `ServiceDiscovery.lookup`, as Cluster Bootstrap uses it): one call asks
/// the method for the current set of contact points. The bootstrap
/// coordinator calls it every `cluster.bootstrap.discovery_interval` and
/// keeps no state in the method: each answer is the whole set as the
/// method sees it now.
///
/// Implementations: `config_discovery` (a static list),
/// `dns_discovery` (A/AAAA or SRV records through c-ares) and
/// `kubernetes_api_discovery` (pods of a namespace by label selector).

namespace troupe::bootstrap {

/// Finds the contact points of the service this node belongs to.
///
/// Contract:
/// - `discover` returns at once; `done` is called exactly once, with the
///   contact points (duplicates removed, sorted) or an error
///   (errc::discovery_unavailable, discovery_refused or
///   bad_discovery_answer) whose message names the method, the service
///   and the cause. It is called within `timeout` (a method that cannot
///   finish in time answers discovery_unavailable naming the timeout).
/// - An empty list is a valid answer (nothing found yet), not an error.
/// - `done` runs on the method's own thread (or inline for methods that
///   need no I/O); it must not block.
/// - Thread-safety: `discover` may be called from any thread, also while
///   an earlier call is pending. Destroying the method completes pending
///   calls with discovery_unavailable.
class contact_point_discovery {
public:
  using callback
    = std::function<void(runtime::expected<std::vector<contact_point>>)>;

  virtual ~contact_point_discovery() = default;

  /// Looks the contact points up; see the class comment.
  virtual void discover(runtime::timespan timeout, callback done) = 0;

  /// What is asked where, for log lines (`DNS SRV
  /// _management._tcp.troupe.default.svc at the system resolver`). Never
  /// contains a secret.
  virtual std::string describe() const = 0;
};

} // namespace troupe::bootstrap
