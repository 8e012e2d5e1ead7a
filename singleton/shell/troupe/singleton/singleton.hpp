#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/fwd.hpp>
#include <caf/message.hpp>

#include "troupe/cluster/cluster_handle.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/singleton/manager_engine.hpp"
#include "troupe/singleton/singleton_protocol.hpp"
#include "troupe/singleton/singleton_settings.hpp"

/// @file
/// The cluster singleton (Akka's ClusterSingletonManager and
/// ClusterSingletonProxy; DESIGN.md §6, docs/design/singleton.md): one
/// instance of a singleton type in the cluster, on the singleton target:
/// the oldest up member among those that run the highest
/// `cluster.app_version` (with `singleton.role`: among the members with the
/// role; with one app_version, simply the oldest, as in Akka), handed over
/// on graceful leave and to the first member of a newer app_version during
/// a rolling update, gated by an optional lease, found by proxies.
///
/// The common case:
/// ```
/// auto jobs = singleton::singleton_manager::start(
///   *node, cluster, remoting, "jobs",
///   [](caf::event_based_actor* self, const singleton::instance_context& ctx)
///     -> caf::behavior {
///     return {[=](const cluster::remote_ref& from, const job& j) { ... }};
///   });
/// auto to_jobs = singleton::singleton_proxy::start(*node, cluster, remoting,
///                                                  "jobs");
/// caf::anon_send(to_jobs->actor(), job{...});  // or to_jobs->tell(job{...})
/// ```
/// Start a manager on every node that may host the instance (the settings,
/// `singleton.*`, must be the same on all of them) and a proxy wherever
/// messages are sent to it.
///
/// What the instance receives: every message sent to a proxy arrives as
/// `(remote_ref from, payload...)`, as any message over remoting
/// (remoting.hpp): `from.node` is the proxy's node, `from.name` the reply
/// reference of the actor that sent to the proxy (empty for an anonymous
/// send); answer with `ctx.remoting.send(from, caf::make_message(...))`
/// when `from.is_addressable()`. Delivery is at most once (Akka's): the
/// proxy buffers while it does not know the instance, and what is in
/// flight when an instance stops is lost.
///
/// The instance's life: the manager spawns it (the factory) when this node
/// is entitled (the target, members ahead cleared, lease acquired), publishes
/// it as `instance_name(type)`, and stops it with the stop message (default: an
/// exit with `caf::exit_reason::user_shutdown`) on hand-over, lease loss or
/// shutdown. It must terminate in bounded time after that: the lease is
/// released, and the hand-over confirmed, only after it terminated; one
/// that has not terminated `singleton.instance_stop_timeout` (10s) after
/// the stop message (it ignores it, or does not handle it) is killed
/// (`caf::exit_reason::kill`) with an ERROR line. An
/// instance that stops by itself is restarted after a backoff
/// (`singleton.restart_on_stop`). With a lease, every instance gets a new
/// fencing token, and `ctx.lease_alive()` must be checked before every
/// side effect outside the process (DESIGN.md §10).
///
/// Threading: the handles are small values; every member may be called from
/// any thread. `stop_and_wait` blocks (not from inside an actor, nor under
/// CAF's deterministic test coordinator).

namespace troupe::singleton {

using stop_atom = caf::atom_constant<caf::atom("sgstop")>;
using status_atom = caf::atom_constant<caf::atom("sgstatus")>;

/// What the factory gets for one instance.
struct instance_context {
  /// The singleton type name.
  std::string type_name;
  /// This manager's count of instances (1, 2, ...).
  uint64_t incarnation = 0;
  /// The lease's fencing token of the acquisition that guards this
  /// instance (strictly greater than any earlier one); 0 without a lease.
  uint64_t fencing_token = 0;
  /// This node.
  runtime::unique_address node;
  /// For answers (`remoting.send(from, ...)`).
  cluster::remoting_handle remoting;
  /// The lease's `check_alive()`; empty without a lease.
  std::function<bool()> check_alive;

  /// True while the lease guarding this instance is held and its local
  /// deadline has not passed (lock-free, cheap); always true without a
  /// lease.
  bool lease_alive() const {
    return !check_alive || check_alive();
  }
};

/// Makes the instance's behavior (called on the instance's own actor).
using instance_factory = std::function<caf::behavior(caf::event_based_actor*,
                                                     const instance_context&)>;

/// The manager's options; every field has a default.
struct manager_options {
  /// None: from the node's configuration (`singleton.*`, with
  /// `downing.stable_after` for `down_removal_margin = auto`, 20s if the
  /// node has no downing keys); the actor-system `start` uses
  /// `manager_settings{}`.
  std::optional<manager_settings> settings;
  /// The lease. None: with `use_lease`, the node `start` makes it from the
  /// `lease.*` keys, named `singleton_lease_name(singleton.lease_name,
  /// cluster.name, type)` and owned by this node's address, tied to the
  /// node's shutdown. A lease given here turns `use_lease` on; tie it to
  /// the node (`lease_handle::spawn(node, ...)`) before starting the
  /// manager, so that its own shutdown release runs after the manager's.
  std::optional<lease::lease_handle> lease;
  /// What the instance gets when it must stop; none: an exit with
  /// `caf::exit_reason::user_shutdown`. An instance that does not handle
  /// it (a WARNING) or does not terminate is killed after
  /// `instance_stop_timeout` (manager_settings).
  std::optional<caf::message> stop_message;
  /// How long one acquire or release of the lease may take (the lease
  /// actor's `wait`); a timeout counts as refused (acquire) or done
  /// (release: the record then expires after its ttl).
  runtime::timespan lease_timeout = std::chrono::seconds{10};
  /// How long the node's shutdown waits for the manager's graceful stop.
  runtime::timespan stop_timeout = std::chrono::seconds{30};
  /// The monotonic clock; nullptr: the node's (or the actor system's)
  /// clock. Must outlive the manager.
  const runtime::clock_source* clock = nullptr;
  /// Planted bugs (tests only).
  manager_bug bug = manager_bug::none;
};

/// A snapshot of a manager, for status pages and tests (local only).
struct manager_status {
  /// The engine's state (`to_string(manager_state)`): "younger", "oldest",
  /// ...
  std::string state;
  /// The running instance's incarnation; 0 when none runs.
  uint64_t incarnation = 0;
  /// The fencing token of the current lease acquisition (0: none).
  uint64_t fencing_token = 0;
  manager_counters counters;
};

template <class Inspector>
auto inspect(Inspector& f, manager_counters& x) {
  return f(x.started, x.terminated, x.handed_over, x.stuck, x.leases_lost,
           x.ignored_messages);
}

template <class Inspector>
auto inspect(Inspector& f, manager_status& x) {
  return f(x.state, x.incarnation, x.fencing_token, x.counters);
}

/// A small value over one manager actor; copies share it.
///
/// The actor's protocol (untyped):
/// - `(remote_ref from, m)` for the four hand-over messages and
///   `identify_singleton` (from other nodes, over remoting);
/// - `(view_atom, gossip)` from the cluster daemon; `(tick_atom, due)`: its
///   own timer; `lease::lease_lost` from the lease;
/// - `(stop_atom) -> bool`: graceful stop (the instance stopped, then the
///   lease released, each awaited), answered `true` when done, after which
///   the actor exits;
/// - `(status_atom) -> manager_status`.
class singleton_manager {
public:
  /// Starts the manager of `type_name` on `node` (see manager_options for
  /// the defaults taken from the configuration) and ties it to the node's
  /// shutdown: the manager stops gracefully (awaited, at most
  /// `stop_timeout`) before the lease actors and the cluster daemon stop,
  /// which is also the way out of a node that was downed (scenario S6: the
  /// lease is released during shutdown, not left to its ttl). Errors:
  /// errc::invalid_name, errc::invalid_settings (naming the key),
  /// errc::start_failed (no cluster or remoting, a manager of this type
  /// already runs here, the lease could not be made, or its lease (name and
  /// owner) is already used by the manager of another singleton type on
  /// this node: one `singleton.lease_name` for several types, which had the
  /// second refused by its own node forever).
  static runtime::expected<singleton_manager>
  start(runtime::node& node, cluster::cluster_handle cluster,
        cluster::remoting_handle remoting, std::string type_name,
        instance_factory factory, manager_options options = {});

  /// As above on a bare actor system (tests): nothing is tied to a
  /// shutdown, `options.settings` or `manager_settings{}` is used, and with
  /// `use_lease` a lease must be given.
  static runtime::expected<singleton_manager>
  start(caf::actor_system& sys, cluster::cluster_handle cluster,
        cluster::remoting_handle remoting, std::string type_name,
        instance_factory factory, manager_options options);

  singleton_manager() = default;

  const caf::actor& actor() const noexcept {
    return actor_;
  }

  const std::string& type_name() const noexcept {
    return type_name_;
  }

  /// The lease guarding the instances (none without `use_lease`), for
  /// status pages and metrics.
  const std::optional<lease::lease_handle>& lease() const noexcept {
    return lease_;
  }

  /// Starts the graceful stop and returns (the actor exits when done).
  void stop() const;

  /// Graceful stop, waiting at most `timeout`; on a timeout the actor is
  /// killed (its instance with it) and the error returned.
  runtime::error stop_and_wait(runtime::timespan timeout
                               = std::chrono::seconds{30}) const;

private:
  caf::actor_system* sys_ = nullptr;
  caf::actor actor_;
  std::string type_name_;
  std::optional<lease::lease_handle> lease_;
};

/// The proxy's options.
struct proxy_options {
  /// None: from the node's configuration (`singleton.role`,
  /// `singleton.proxy.*`); the actor-system `start` uses `proxy_settings{}`.
  std::optional<proxy_settings> settings;
  /// The monotonic clock; nullptr: the node's (or the actor system's).
  const runtime::clock_source* clock = nullptr;
};

/// A snapshot of a proxy, for status pages and tests (local only).
struct proxy_status {
  /// The instance the proxy sends to; empty (not addressable) while it
  /// knows none.
  cluster::remote_ref target;
  /// Where it looks for the instance (the singleton target with the role);
  /// empty host while there is none.
  runtime::unique_address expected_host;
  uint64_t buffered = 0;
  uint64_t dropped = 0;
  /// Identify requests sent.
  uint64_t identifications = 0;
};

template <class Inspector>
auto inspect(Inspector& f, proxy_status& x) {
  return f(x.target, x.expected_host, x.buffered, x.dropped, x.identifications);
}

/// A small value over one proxy actor (Akka's ClusterSingletonProxy): send
/// it any message and it goes to the singleton instance, wherever that
/// runs. While it does not know the instance it buffers (bounded by
/// `singleton.proxy.buffer_size`; when full the oldest message is dropped
/// and counted, logged at WARNING the first time and every 1000th) and asks
/// the manager on the expected host every identification_interval. It
/// watches the instance and asks again at once when the instance is gone,
/// also when it restarts on the same node (scenario S5), and when the
/// singleton target changes.
///
/// The actor's protocol (untyped): any message is forwarded, an error
/// value too (CAF would otherwise end the proxy on it; a message of a type
/// not registered with add_message_type is refused by remoting with a
/// WARNING naming the type) (use `send`, not `request`: the instance answers
/// over remoting to the sender's reply reference, see the file comment); its
/// own messages are `(view_atom, gossip)`, `(tick_atom, due)`, `(remote_ref,
/// singleton_identity)`, `remote_down`, and `(status_atom) -> proxy_status`.
class singleton_proxy {
public:
  /// Starts a proxy of `type_name` on `node`; the node's shutdown stops it.
  /// Errors: errc::invalid_name, errc::invalid_settings,
  /// errc::start_failed (no cluster or remoting).
  static runtime::expected<singleton_proxy>
  start(runtime::node& node, cluster::cluster_handle cluster,
        cluster::remoting_handle remoting, std::string type_name,
        proxy_options options = {});

  /// As above on a bare actor system (tests).
  static runtime::expected<singleton_proxy>
  start(caf::actor_system& sys, cluster::cluster_handle cluster,
        cluster::remoting_handle remoting, std::string type_name,
        proxy_options options);

  singleton_proxy() = default;

  const caf::actor& actor() const noexcept {
    return actor_;
  }

  /// Sends `xs...` to the instance anonymously (no reply reference).
  template <class... Ts>
  void tell(Ts&&... xs) const {
    send(caf::make_message(std::forward<Ts>(xs)...));
  }

  /// Sends `msg` to the instance anonymously.
  void send(caf::message msg) const;

  /// Stops the proxy (what it buffers is dropped). Idempotent.
  void stop() const;

private:
  caf::actor actor_;
};

} // namespace troupe::singleton
