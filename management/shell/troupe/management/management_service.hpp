#pragma once

#include <cstdint>
#include <memory>

#include "troupe/cluster/cluster_handle.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/module.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/sharding/sharding.hpp"
#include "troupe/singleton/singleton.hpp"

/// @file
/// The management API of one node (docs/design/management.md): the HTTP
/// server (`management.*` keys) over the node's live state.
///
/// What it reads:
/// - the membership from the cluster daemon's view subscription (the latest
///   gossip, kept by a small agent actor; `/cluster/members`, `/ready`, the
///   member counts of `/metrics`);
/// - the singleton managers, shard regions and leases the application
///   registered (`add_singleton`, `add_region`, `add_lease`;
///   `troupe::cluster_system` registers what it starts), and, for
///   `/singletons` and `/leases`, every member's own report of them
///   (`peer_view.hpp`), asked over remoting from the agent published as
///   `troupe.management` on each node, each ask bounded by
///   `management.query_timeout` (a member that does not answer is left
///   out, a module that does not answer gives 503);
/// - the modules' counters for `/metrics` (metrics.hpp).
///
/// `PUT /cluster/members/{address}` starts `leave` or `down` through the
/// cluster daemon (Akka Management's semantics: the effect follows through
/// gossip).
///
/// Shutdown: `set_stopping()` (called by `cluster_system::run` when a stop
/// begins) makes `/alive` and `/ready` answer 503 at once; the server stops
/// in the node's shutdown task "management", which runs after the tasks of
/// everything started later (singletons, regions), so the probes see the
/// node go. Thread-safety: every member may be called from any thread.

namespace troupe::management {

/// The management module: the `management.*` keys and the message type of
/// the peer reports. `troupe::cluster_system` adds it.
runtime::module management_module();

/// The name the agent is published under on every node.
inline constexpr const char* agent_name = "troupe.management";

class management_service {
public:
  /// Starts the agent and, with `management.enabled`, the HTTP server from
  /// the `management.*` keys (which `management_module` declares) on
  /// `node`; ties the server's stop to the node's shutdown. Errors:
  /// errc::invalid_settings naming the key (a non-loopback bind without a
  /// token, a port in use, ...), remoting's publish errors.
  static runtime::expected<std::unique_ptr<management_service>>
  start(runtime::node& node, cluster::cluster_handle cluster,
        cluster::remoting_handle remoting);

  ~management_service();

  management_service(const management_service&) = delete;
  management_service& operator=(const management_service&) = delete;

  /// The bound port; 0 when `management.enabled` is false.
  uint16_t port() const noexcept;

  /// Shows `manager` in `/singletons`, its lease in `/leases` and both in
  /// `/metrics` until it stops.
  void add_singleton(singleton::singleton_manager manager);

  /// Shows `region` in `/cluster/shards/{type}` and `/metrics`; its
  /// coordinator's manager (if it has one) as a singleton.
  void add_region(sharding::shard_region region);

  /// Shows `lease` in `/leases` and `/metrics`.
  void add_lease(lease::lease_handle lease);

  /// From now on `/alive` and `/ready` answer 503 ("shutting down").
  void set_stopping() noexcept;

  /// Stops the server and the agent. Idempotent.
  void stop();

  struct state;

private:
  explicit management_service(std::shared_ptr<state> st);
  std::shared_ptr<state> st_;
};

} // namespace troupe::management
