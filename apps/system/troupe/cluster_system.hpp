#pragma once

#include <memory>
#include <vector>

#include "troupe/bootstrap/bootstrap_coordinator.hpp"
#include "troupe/cluster/cluster_handle.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/downing/downing_actor.hpp"
#include "troupe/management/management_service.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/module.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/sharding/sharding.hpp"
#include "troupe/singleton/singleton.hpp"

/// @file
/// One cluster process in one call: what every troupe cluster application
/// starts, in the order the cluster guide describes, all from its
/// configuration (`--key=value` flags, `TROUPE_*` environment variables,
/// `--config=FILE`; docs/reference/configuration.md):
/// 1. the node with the lease, cluster, downing, singleton and sharding
///    modules (and
///    the application's own, `extra_modules`); SIGTERM/SIGINT handlers;
/// 2. the resolver's settings are checked before any networking starts;
/// 3. remoting (the TCP transport from `cluster.*`);
/// 4. the cluster daemon (a non-empty `cluster.seed_nodes` joins at once);
/// 5. the split brain resolver (`downing.*`, keep_majority by default);
/// 6. the management API (`management.*`: HTTP on 127.0.0.1:8558 by
///    default; docs/design/management.md), which shows every singleton,
///    region and lease started through this class.
/// This is Akka's `ActorSystem` with the Cluster extension and the split
/// brain resolver configured as its downing provider. Anything more (a
/// singleton, a proxy, sharding) is started on top of it.
///
/// Shutdown is the node's coordinated shutdown
/// (runtime/edge/troupe/runtime/coordinated_shutdown.hpp,
/// docs/guides/operations.md): phases with timeouts (`coordinated_shutdown.*`
/// keys) in which the management API's readiness turns 503, the shard
/// regions hand off their shards, the node leaves the cluster (its
/// singletons hand over to the next oldest), the singleton managers stop,
/// the leases are released (awaited), and the actor system stops. It starts
/// on SIGTERM/SIGINT (`run()`), when the cluster stops this node (downed,
/// removed, refused) or when it learns it is leaving (a leave asked
/// through the management API of any member), or when the application
/// calls `shutdown()`; applications add their own tasks to any phase with
/// `node().add_shutdown_task`. The destructor shuts down if nothing did.
///
/// Errors of `start` name the key or value that was wrong (a bad flag, a
/// refused bind address, invalid downing settings); nothing was left
/// running. Thread-safety: the accessors may be used from any thread;
/// `run()` from one.
namespace troupe {

class cluster_system {
public:
  /// Starts everything from `argv` and the process environment.
  static runtime::expected<std::unique_ptr<cluster_system>>
  start(int argc, char** argv, std::vector<runtime::module> extra_modules = {});

  /// As above, from configuration sources made by the caller (tests).
  static runtime::expected<std::unique_ptr<cluster_system>>
  start(runtime::node_options opts);

  ~cluster_system();

  cluster_system(const cluster_system&) = delete;
  cluster_system& operator=(const cluster_system&) = delete;

  runtime::node& node() noexcept {
    return *node_;
  }
  caf::actor_system& actors() noexcept {
    return node_->system();
  }
  const cluster::remoting_handle& remoting() const noexcept {
    return remoting_;
  }
  const cluster::cluster_handle& cluster() const noexcept {
    return cluster_;
  }
  const downing::downing_handle& resolver() const noexcept {
    return resolver_;
  }
  /// The management API (port 0 when `management.enabled` is false).
  management::management_service& management() noexcept {
    return *management_;
  }

  // -- what applications start on top --------------------------------------

  /// This node's name as a lease owner (holder identity): the pod's name
  /// (`POD_NAME`, which the Kubernetes downward API sets) when set, else
  /// this node's address `host:port#uid` (unique per incarnation, so two
  /// nodes on one host never share an owner).
  std::string owner_name() const;

  /// A lease tied to this node's graceful shutdown (released, awaited,
  /// after the singletons that use it stopped), on the backend
  /// `lease.backend` selects (`lease.*` keys, lease_config.hpp). Errors:
  /// the settings' or the backend's, naming the field or key.
  caf::expected<lease::lease_handle> lease(lease::lease_settings settings);

  /// As `lease`, on the Kubernetes Lease API with the in-cluster
  /// configuration (`lease.kubernetes.*`, service account token and CA,
  /// KUBERNETES_SERVICE_HOST/PORT; kubernetes_lease_config.hpp), whatever
  /// `lease.backend` says. Errors name the missing variable or key.
  caf::expected<lease::lease_handle>
  kubernetes_lease(lease::lease_settings settings);

  /// `singleton::singleton_manager::start` on this node (singleton.hpp):
  /// start it on every node that may host the instance.
  runtime::expected<singleton::singleton_manager>
  start_singleton(std::string type_name, singleton::instance_factory factory,
                  singleton::manager_options options = {});

  /// `singleton::singleton_proxy::start` on this node.
  runtime::expected<singleton::singleton_proxy>
  singleton_proxy(std::string type_name, singleton::proxy_options options = {});

  /// `sharding::shard_region::start` on this node (sharding.hpp): start it
  /// on every node that hosts entities of the type (a node without
  /// `sharding.role` gets a proxy-only region).
  runtime::expected<sharding::shard_region>
  start_sharding(std::string type_name, sharding::entity_factory factory,
                 sharding::region_options options = {});

  /// `sharding::shard_region::start_proxy` on this node: routes, hosts
  /// nothing.
  runtime::expected<sharding::shard_region>
  sharding_proxy(std::string type_name, sharding::region_options options = {});

  /// Blocks until a stop is requested (SIGTERM/SIGINT) or the coordinated
  /// shutdown started for another reason, then runs it (reason `signal`
  /// unless it started already) and waits for its end. Returns the
  /// process's exit code: 0 after a signal, `shutdown()` or a leave, 1 when
  /// the cluster stopped this node against its will (downed, removed
  /// without leaving, or it gave up joining, e.g. an incompatible
  /// configuration: `runtime::exit_code`), so that a supervisor (systemd,
  /// Kubernetes) sees a failure, not a clean exit. The reason is logged
  /// (ERROR when the cluster stopped the node).
  int run();

  /// Runs the coordinated shutdown (reason `application` unless it started
  /// already) and waits for its end; returns its report. Idempotent; not
  /// from a shutdown task.
  runtime::shutdown_report shutdown();

private:
  cluster_system() = default;

  std::unique_ptr<runtime::node> node_;
  cluster::remoting_handle remoting_;
  cluster::cluster_handle cluster_;
  downing::downing_handle resolver_;
  std::unique_ptr<management::management_service> management_;
  bootstrap::bootstrap_handle bootstrap_;
};

/// Prints `err`'s message to stderr as "<program>: <message>" and returns
/// 2, the exit code of a configuration error: `return troupe::fail(err);`.
int fail(const runtime::error& err, const char* program = "troupe");

/// As above for a CAF error (e.g. from `lease_handle::spawn`).
int fail(const caf::error& err, const char* program = "troupe");

} // namespace troupe
