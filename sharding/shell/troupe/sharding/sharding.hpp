#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/fwd.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/message.hpp>
#include <caf/message_id.hpp>

#include "troupe/cluster/cluster_handle.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/module.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/sharding/allocation_strategy.hpp"
#include "troupe/sharding/coordinator_engine.hpp"
#include "troupe/sharding/sharding_protocol.hpp"
#include "troupe/sharding/sharding_settings.hpp"
#include "troupe/singleton/singleton.hpp"

/// @file
/// Cluster sharding (Akka's ClusterSharding, ShardRegion and
/// ShardCoordinator; DESIGN.md §7, docs/design/sharding.md): entities
/// addressed by (type name, entity id), grouped into shards, spread over
/// the regions of the cluster's members by a coordinator that runs as a
/// cluster singleton (optionally guarded by a lease), moved by rebalance
/// and hand-off, passivated when idle.
///
/// The common case:
/// ```
/// auto accounts = sharding::shard_region::start(
///   *node, cluster, remoting, "account",
///   [](caf::event_based_actor* self, const sharding::entity_context& ctx)
///     -> caf::behavior {
///     return {[=](const deposit& d) { ... }};
///   });
/// accounts->tell("acc-17", deposit{100});
/// ```
/// Start a region of the type on every node that hosts entities (the same
/// `sharding.*` settings everywhere; `number_of_shards` is checked at join)
/// and a proxy (`start_proxy`) where messages are only sent.
///
/// What an entity receives: the message exactly as it was sent, without
/// the entity id (`tell(id, xs...)` delivers `(xs...)`), from a region
/// (no CAF sender to answer: put a `cluster::remote_ref` into the message
/// and answer with `ctx.remoting.send(ref, ...)`). Delivery is at most once
/// (Akka's): messages are buffered while a shard's home is unknown or its
/// hand-off runs, and lost when a node crashes with them. Per sender and
/// entity, messages arrive in send order while the shard stays where it
/// is.
///
/// The entity's life: spawned on the first message for it on the shard's
/// home; stopped with the stop message (`region_options::stop_message`,
/// default an exit with `caf::exit_reason::user_shutdown`) for hand-off,
/// passivation (idle `sharding.passivation_idle_timeout`, the active
/// entity limit, or `entity_context::passivate`) and shutdown; killed if it
/// has not terminated `sharding.entity_stop_timeout` after that. Messages
/// that arrive while it stops reach the next incarnation. At most one
/// incarnation of an entity lives in the cluster at any time (the old
/// owner's entities have terminated before the shard runs elsewhere; a
/// crashed or downed member's shards move only after
/// `sharding.down_removal_margin`).
///
/// Threading: `shard_region` is a small value; every member may be called
/// from any thread, including from inside actors. Sending routes on the
/// caller's thread under the region's lock (a message for a running local
/// entity goes straight into its mailbox: no hop through the region
/// actor); `stop_and_wait` and the blocking queries must not be called
/// from inside an actor or under CAF's deterministic test coordinator.

namespace troupe::sharding {

/// The id of an entity within its type.
using entity_id = std::string;

/// How messages map to entities and shards (Akka's MessageExtractor).
struct message_extractor {
  /// The entity of a message sent without an entity id (`send(msg)`, or a
  /// message sent to the region actor); none: the message cannot be
  /// mapped (errc::unmappable_message). Default: the first element when it
  /// is a non-empty `std::string`.
  std::function<std::optional<entity_id>(const caf::message&)> entity_of;
  /// The shard of an entity. Default: `default_shard_id(entity,
  /// number_of_shards)`. Must give the same answer on every node.
  std::function<shard_id(const entity_id&)> shard_of;
};

/// What the factory gets for one entity incarnation.
struct entity_context {
  std::string type_name;
  entity_id entity;
  shard_id shard;
  /// This node.
  runtime::unique_address node;
  /// For answers (`remoting.send(ref, ...)`).
  cluster::remoting_handle remoting;
  /// The region actor (Akka's `context.parent`): `passivate` sends to it.
  caf::actor region;
  /// What `member_confirmed` asks; empty: always true.
  std::function<bool()> confirmed;

  /// Asks the region to passivate this entity (Akka's `Passivate`): it
  /// gets the stop message; messages that arrive meanwhile reach the next
  /// incarnation.
  void passivate() const;

  /// True while the cluster still counts this node in as far as it can
  /// tell: a member answered one of its heartbeats sent within the last
  /// half of `down_removal_margin` (cluster_handle::last_confirmed), or it
  /// is alone. Check it right before a side effect, as a lease's
  /// check_alive(): a process that was frozen (SIGSTOP, a long GC) or cut
  /// off from every member longer than that may already be downed, and
  /// its shards may run elsewhere once the margin has passed, before it
  /// learns so. Why half the margin suffices: the others re-allocate a
  /// shard only after stable_after + the margin without hearing from this
  /// node, and a member that has it down or removed does not answer its
  /// heartbeats.
  /// Always true with a margin of 0 (nothing to size it by; per-shard
  /// leases guard instead). troupe's own (DESIGN.md §10: a frozen process
  /// re-checks before any side effect); Akka has no such check. Lock-free
  /// (an atomic load and a clock read); any thread.
  bool member_confirmed() const {
    return !confirmed || confirmed();
  }
};

/// Makes an entity's behavior (called on the entity's own actor). The
/// context lives for the call: a behavior that needs it later copies what
/// it needs (an idle entity keeps nothing it does not use).
using entity_factory = std::function<caf::behavior(caf::event_based_actor*,
                                                   const entity_context&)>;

/// The region's options; every field has a default.
struct region_options {
  /// None: from the node's configuration (`sharding.*`, with
  /// `downing.stable_after` for `down_removal_margin = auto`); the
  /// actor-system `start` uses `sharding_settings{}`.
  std::optional<sharding_settings> settings;
  /// Missing functions take their defaults (message_extractor).
  message_extractor extractor;
  /// What an entity gets when it must stop; none: an exit with
  /// `caf::exit_reason::user_shutdown`.
  std::optional<caf::message> stop_message;
  /// The coordinator's allocation strategy; null: least_shard_allocation
  /// with the settings' limits. Must be the same on every node that may
  /// run the coordinator.
  std::shared_ptr<const allocation_strategy> strategy;
  /// The coordinator lease; none: with `sharding.use_lease`, the node
  /// `start` makes it from the `lease.*` keys, named
  /// `coordinator_lease_name(sharding.lease_name, cluster.name, type)` and
  /// owned by this node's address. A lease given here turns use_lease on.
  std::optional<lease::lease_handle> coordinator_lease;
  /// How long the node's shutdown waits for the region's graceful stop
  /// (its shards handed off).
  runtime::timespan stop_timeout = std::chrono::seconds{60};
  /// The longest the split brain resolver may take to decide after a
  /// partition starts: stable_after + down_all_when_unstable (the
  /// resolver downs all when no decision came within that); what
  /// `sharding.down_removal_margin = auto` resolves to (ADR 0007). None:
  /// `downing.stable_after` alone (`cluster_system::start_sharding` fills
  /// it from the resolver's settings; the sharding module does not depend
  /// on downing).
  std::optional<runtime::timespan> decision_bound;
  /// The monotonic clock; nullptr: the node's (or the actor system's).
  const runtime::clock_source* clock = nullptr;
  /// Planted bugs (tests only).
  coordinator_bug bug = coordinator_bug::none;
};

/// A snapshot of one region (local only).
struct region_status {
  std::string type_name;
  bool proxy_only = false;
  /// The node the region sends to as the coordinator's (empty host: none).
  runtime::unique_address coordinator;
  /// Shards hosted here with their number of live entities.
  std::map<shard_id, uint64_t> shards;
  uint64_t entities = 0;
  uint64_t buffered = 0;
  uint64_t dropped = 0;
  uint64_t delivered = 0;
  uint64_t forwarded = 0;
  uint64_t spawned = 0;
  uint64_t passivated = 0;
  friend bool operator==(const region_status&, const region_status&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, region_status& x) {
  return f(x.type_name, x.proxy_only, x.coordinator, x.shards, x.entities,
           x.buffered, x.dropped, x.delivered, x.forwarded, x.spawned,
           x.passivated);
}

/// A small value over one region (Akka's ShardRegion ActorRef plus the
/// send path); copies share it.
///
/// The region actor's protocol (untyped): messages from other regions and
/// the coordinator over remoting (sharding_protocol.hpp), `(view_atom,
/// gossip)` from the cluster daemon, its own timer, entity terminations,
/// `(passivate_atom, entity_id)`, and the queries `(status_atom) ->
/// region_status`, `(entities_atom, shard_id) -> std::vector<entity_id>`,
/// `(shard_map_atom) -> shard_map_reply` (asks the coordinator). Any other
/// message goes through the extractor (an unmappable one is dropped,
/// counted and logged at WARNING naming its types).
class shard_region {
public:
  /// Starts the region of `type_name` on `node`, and on a node that may
  /// run the coordinator (it has `sharding.role`) the coordinator's
  /// singleton manager; ties both to the node's shutdown (the region hands
  /// its shards off before the node leaves). A node without the role gets
  /// a proxy-only region. Errors: errc::invalid_name, errc::invalid_settings
  /// (naming the key), errc::start_failed (no cluster or remoting, a region
  /// of this type already ran on this node, the lease could not be made).
  static runtime::expected<shard_region>
  start(runtime::node& node, cluster::cluster_handle cluster,
        cluster::remoting_handle remoting, std::string type_name,
        entity_factory factory, region_options options = {});

  /// A proxy-only region (hosts nothing, routes everything) on `node`.
  static runtime::expected<shard_region>
  start_proxy(runtime::node& node, cluster::cluster_handle cluster,
              cluster::remoting_handle remoting, std::string type_name,
              region_options options = {});

  /// As above on a bare actor system (tests): nothing is tied to a
  /// shutdown, `options.settings` or `sharding_settings{}` is used; the
  /// coordinator's manager is started when `with_coordinator`.
  static runtime::expected<shard_region>
  start(caf::actor_system& sys, cluster::cluster_handle cluster,
        cluster::remoting_handle remoting, std::string type_name,
        entity_factory factory, region_options options, bool proxy_only,
        bool with_coordinator);

  shard_region() = default;

  /// The region actor.
  const caf::actor& actor() const noexcept;

  const std::string& type_name() const noexcept;

  /// Sends `(xs...)` to entity `entity`. Errors: errc::unmappable_message
  /// (an empty entity id), errc::not_running.
  ///
  /// Cost: to a running local entity, one allocation (the mailbox element
  /// with the values in it, made before the region's lock is taken), as
  /// `caf::anon_send`; otherwise the element's content becomes a
  /// `caf::message` and is routed as `send` routes it.
  template <class... Ts>
  runtime::error tell(const entity_id& entity, Ts&&... xs) const {
    if constexpr (sizeof...(Ts) == 0)
      return send(entity, caf::message{});
    else
      return send_element(
        entity, caf::make_mailbox_element(nullptr, caf::make_message_id(), {},
                                          std::forward<Ts>(xs)...));
  }

  /// Sends `msg` to entity `entity` (its shard from the extractor's
  /// shard_of).
  runtime::error send(const entity_id& entity, caf::message msg) const;

  /// Sends `msg` to the entity the extractor maps it to. Errors:
  /// errc::unmappable_message naming the message's types, not_running.
  runtime::error send(caf::message msg) const;

  /// The region's status (blocking, at most `timeout`).
  runtime::expected<region_status> status(runtime::timespan timeout
                                          = std::chrono::seconds{5}) const;

  /// The live entities of `shard` on this region (blocking).
  runtime::expected<std::vector<entity_id>>
  entities(const shard_id& shard,
           runtime::timespan timeout = std::chrono::seconds{5}) const;

  /// The cluster-wide shard map from the coordinator (blocking). Errors:
  /// errc::no_coordinator when none answered within `timeout`.
  runtime::expected<region_shards> shard_map(runtime::timespan timeout
                                             = std::chrono::seconds{5}) const;

  /// Starts the graceful stop (shards handed off) and returns.
  void stop() const;

  /// Graceful stop, waiting at most `timeout`; then the region and its
  /// entities are killed and errc::stop_failed returned. A timeout that is
  /// not positive is errc::stop_failed with nothing done. Stopped already:
  /// no error.
  runtime::error stop_and_wait(runtime::timespan timeout
                               = std::chrono::seconds{60}) const;

  /// The coordinator's singleton manager started with this region (none
  /// for a proxy-only region).
  std::optional<singleton::singleton_manager> coordinator_manager() const;

  /// The state the handles and the region actor share (region.cpp).
  struct shared;

  explicit shard_region(std::shared_ptr<shared> sh) : sh_(std::move(sh)) {}

private:
  // `tell`'s body: straight into the mailbox of a running local entity
  // (no shard id computed), else routed as `send`.
  runtime::error send_element(const entity_id& entity,
                              caf::mailbox_element_ptr elem) const;

  std::shared_ptr<shared> sh_;
};

/// The region of `type_name` started on `sys`. Errors: errc::unknown_type
/// naming the type and the types that run there.
runtime::expected<shard_region> find_region(caf::actor_system& sys,
                                            std::string_view type_name);

/// Registers every sharding type that travels over remoting and the
/// "sharding" error category.
void add_sharding_types(caf::actor_system_config& cfg);

/// The module descriptor for `runtime::node::start`: declares the
/// `sharding.*` keys and calls `add_sharding_types`. A node that starts a
/// region needs it, with the cluster, lease and singleton modules.
runtime::module sharding_module();

} // namespace troupe::sharding
