#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include <caf/actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/fwd.hpp>
#include <caf/message.hpp>

#include "troupe/cluster/remote_down.hpp"
#include "troupe/cluster/remote_ref.hpp"
#include "troupe/cluster/remoting_actor.hpp"
#include "troupe/cluster/remoting_shared.hpp"
#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/node.hpp"

/// @file
/// Remote references: publish local actors under a name, send to and watch
/// actors on other nodes over the cluster transport (DESIGN.md §3).
///
/// Delivery. An actor published under `name` on node B receives a message
/// `m` sent to `name@B` as the tuple `(remote_ref from, m...)`: `from.node`
/// is the sending node (as the transport authenticated it, never as the
/// sender claims) and `from.name` the sender's reply-to name, empty for an
/// anonymous send. A handler looks like
/// `[=](const remote_ref& from, const order& o) { ... }`, and replies with
/// `remoting.send(from, make_message(ack{...}))` when
/// `from.is_addressable()`. `reply_ref(actor)` makes any local actor
/// addressable for replies (as `$<actor id>`) without publishing it.
///
/// Order. Per (sending node, receiving node, lane) messages arrive in send
/// order, possibly with gaps (drops are counted by the transport), never
/// duplicated (the transport's FIFO guarantee). Ordinary messages use the
/// ordinary lane unless the sender picks the control lane (heartbeats,
/// gossip); there is no order between lanes.
///
/// Watches (Akka's remote death watch). `watch(ref, watcher)` delivers one
/// `remote_down` to `watcher` when the actor published as `ref` stops or
/// is unpublished, when `ref`'s node is removed (`node_removed`, driven by
/// membership) or quarantined (a new incarnation replaced it), or at once
/// if nothing is published under the name. A connection blip fires
/// nothing: watch requests are repeated when the peer is back. The down
/// of a stopped actor travels on both lanes; the watcher is notified by
/// the ordinary copy, so it sees every ordinary message the actor sent
/// before it stopped first, or, if that copy is lost, when
/// `cluster.remoting.down_flush_timeout` (3 s) has passed since the
/// control copy came (Akka's death-watch-notification flush). Each watch
/// fires once; further watches of a removed node fire at once. A removed
/// node's watches fire at its removal, before its quarantine
/// (`node_removed`).
///
/// What travels: CAF's built-in value types and every type registered with
/// `add_message_type` on both nodes (message_codec.hpp). A type the sender
/// did not register is an error returned by `send` (nothing is sent); a
/// payload the receiver cannot decode is dropped, counted and logged
/// there (`drop_reason::undecodable`). Actor handles do not travel (send a
/// `remote_ref`).
///
/// Threading: every member of `remoting_handle` may be called from any
/// thread, including from inside actors. Sending serializes on the
/// caller's thread and queues the frame in the transport (no actor hop);
/// the receiving io thread decodes and enqueues straight into the target
/// actor's mailbox.

namespace troupe::cluster {

/// Makes the transport remoting runs on, given the listener that must
/// receive its events (tcp_transport::make, or a simulated one).
using transport_factory
  = std::function<runtime::expected<std::shared_ptr<transport>>(
    std::shared_ptr<transport_listener>)>;

/// The node's remoting: a small value over the remoting actor, the
/// registry of published names and the transport. Copies share the same
/// remoting. Default-constructed: invalid (every call fails with
/// `not_running` or does nothing).
class remoting_handle {
public:
  /// Starts remoting on `sys`: makes the transport with `make` (errors are
  /// the factory's, e.g. bind_failed) and spawns the remoting actor.
  static runtime::expected<remoting_handle>
  start(caf::actor_system& sys, const transport_factory& make,
        remoting_settings settings = {});

  /// Starts remoting for `node` (whose modules include `cluster_module()`):
  /// the TCP transport from the node's `cluster.*` keys
  /// (transport_config.hpp) with incarnation `uid` (0: drawn at random),
  /// or the transport `make` gives if set; `cluster.remoting.*` from the
  /// configuration. The node's shutdown stops remoting (transport first,
  /// then the actor) before the actor system stops. Errors: the
  /// transport's (invalid_settings naming the key, tls_setup_failed,
  /// bind_failed).
  static runtime::expected<remoting_handle>
  start(runtime::node& node, uint64_t uid = 0,
        const transport_factory& make = {});

  remoting_handle() = default;

  /// True if started (even if stopped since).
  bool valid() const noexcept {
    return sh_ != nullptr;
  }

  /// This node: the transport's local address.
  const unique_address& local_address() const;

  /// The reference to `name` on this node.
  remote_ref local_ref(std::string name) const;

  /// The remoting actor (protocol in remoting_actor.hpp).
  const remoting_actor& actor() const;

  /// The transport (metrics, fault injection in tests).
  cluster::transport& transport() const;

  // -- messaging --------------------------------------------------------------

  /// Sends `msg` to `to` with `reply_to` (a reference to a local actor, or
  /// empty for an anonymous send) on `lane`. Serializes on the calling
  /// thread; a target on this node gets the message directly (after the
  /// same type checks). Returns an empty error when the message was queued
  /// (or delivered locally); a message for a name nothing is published
  /// under is a dead letter at the receiver, not an error here. Errors:
  /// remoting_errc::unregistered_type (names the type; also logged),
  /// serialization_failed, invalid_ref (`to` not addressable, or
  /// `reply_to` not on this node), not_running; and the transport's
  /// (cluster errc: frame_too_large, quarantined, incarnation_mismatch,
  /// shutting_down, ...).
  runtime::error send(const remote_ref& to, const caf::message& msg,
                      const remote_ref& reply_to = {},
                      lane lane = lane::ordinary) const;

  /// Sends `body` with `tag` to the tagged receiver published under `name`
  /// on `node` (see `publish(name, actor, receiver)`), anonymous, ordinary
  /// lane: one frame with the tag in its header (wire format in
  /// remoting_wire.hpp), the body serialized as by `send`. For a router
  /// whose routing data (a shard region's entity and shard) would
  /// otherwise travel as message elements, each a CAF value to build,
  /// serialize, decode and strip again per message. A name without a
  /// tagged receiver drops the message at the receiver (a dead letter,
  /// counted and logged). Errors as `send`, and invalid_ref for a tag
  /// longer than `max_tag_size`.
  runtime::error send_tagged(const unique_address& node, std::string_view name,
                             std::string_view tag,
                             const caf::message& body) const;

  /// `send(to, make_message(xs...))`, anonymous, ordinary lane.
  template <class... Ts>
  runtime::error tell(const remote_ref& to, Ts&&... xs) const {
    return send(to, caf::make_message(std::forward<Ts>(xs)...));
  }

  /// The reply reference of `actor` (`$<actor id>` on this node): exposes
  /// the actor for messages from other nodes until it stops (idempotent).
  /// Like `publish`, this keeps the actor alive until it stops: an actor
  /// that only waits for a remote reply has no other reference.
  remote_ref reply_ref(const caf::actor& actor) const;

  template <class Handle>
  remote_ref reply_ref(const Handle& actor) const {
    return reply_ref(caf::actor_cast<caf::actor>(actor));
  }

  // -- publishing -------------------------------------------------------------

  /// Publishes `actor` under `name` until it stops or `unpublish(name)`;
  /// returns its reference. Errors: remoting_errc::invalid_name,
  /// invalid_actor, name_taken, not_running.
  runtime::expected<remote_ref> publish(const std::string& name,
                                        const caf::actor& actor) const;

  template <class Handle>
  runtime::expected<remote_ref> publish(const std::string& name,
                                        const Handle& actor) const {
    return publish(name, caf::actor_cast<caf::actor>(actor));
  }

  /// Takes the tagged messages (`send_tagged`) for a published name on the
  /// thread that receives them (the io thread, an inbound actor, or a
  /// local sender) instead of a mailbox: the sender's node, the tag, and
  /// the body's elements. Must be thread-safe and must not block. Messages
  /// sent with `send` still go to the actor's mailbox.
  using tagged_receiver = published_registry::tagged_receiver;

  /// `publish(name, actor)` with a tagged receiver for the name; `actor`
  /// still defines the name's life (unpublished when it stops), gets the
  /// ordinary messages and is what watches see. For a router that
  /// forwards most messages on (a shard region) and would otherwise add a
  /// mailbox hop per message. Per-sender order holds among the tagged
  /// messages and among the ordinary ones, not between the two. Errors as
  /// `publish`.
  runtime::expected<remote_ref> publish(const std::string& name,
                                        const caf::actor& actor,
                                        tagged_receiver receiver) const;

  /// Unpublishes `name` (its watchers get `remote_down{unpublished}`);
  /// false if nothing was published under it.
  bool unpublish(const std::string& name) const;

  // -- watching ---------------------------------------------------------------

  /// `watcher` receives one `remote_down` when `ref` is gone (see the file
  /// comment). Idempotent per (watcher, ref). Errors: remoting_errc::
  /// invalid_ref (not addressable, or uid 0: a watch needs the
  /// incarnation), invalid_actor, not_running.
  runtime::error watch(const remote_ref& ref, const caf::actor& watcher) const;

  template <class Handle>
  runtime::error watch(const remote_ref& ref, const Handle& watcher) const {
    return watch(ref, caf::actor_cast<caf::actor>(watcher));
  }

  /// Undoes `watch` (no-op if not watching).
  void unwatch(const remote_ref& ref, const caf::actor& watcher) const;

  template <class Handle>
  void unwatch(const remote_ref& ref, const Handle& watcher) const {
    unwatch(ref, caf::actor_cast<caf::actor>(watcher));
  }

  /// Membership removed `node` (Akka: the member reached removed). The
  /// API the membership layer drives, in two steps:
  /// - now: every watch on an actor of `node` fires (`remote_down` with
  ///   `down_cause::node_removed` and `reason`), and from then on a watch
  ///   of an actor of `node` fires at once: a removed incarnation never
  ///   returns (`node.uid` matters; a new incarnation at the same
  ///   host:port is another node). The downs are sent when the remoting
  ///   actor handles the removal, so a watcher gets them behind the
  ///   messages from `node` already in its mailbox (as before this split);
  ///   a stopped actor's own down (the flush, file comment) is not waited
  ///   for. Traffic with `node` still flows: sends to it and messages from
  ///   it are delivered as before;
  /// - after `quarantine_after` (0 or less: at once): the transport
  ///   quarantines `node`'s uid (`transport::remove_node`): nothing more
  ///   is sent to or received from that incarnation.
  /// The delay is for the removed node: it must still receive the gossip
  /// that removed it, or it would never learn it and stop. This is Akka's
  /// split: ClusterRemoteWatcher publishes AddressTerminated (watches
  /// fire) when the member is removed and quarantines the address
  /// `akka.cluster.quarantine-removed-node-after` (5 s) later. The delay
  /// lives here (the remoting actor's timer), not in the caller, so that
  /// removal is one call and its semantics (watches now, traffic until
  /// the quarantine, the transport's quarantine report finding the node
  /// removed) are in one place; the value is the caller's
  /// (cluster_daemon_settings::quarantine_removed_after).
  /// Idempotent: a second call fires nothing, and may only bring the
  /// quarantine forward. Does nothing for uid 0 or once stopped.
  void node_removed(const unique_address& node, std::string reason,
                    runtime::timespan quarantine_after) const;

  // -- operations -------------------------------------------------------------

  /// This node's shutdown began: from now on dead letters are still
  /// counted but logged at debug, not info (Akka's
  /// log-dead-letters-during-shutdown = off): until the others learn that
  /// this node left, they still send to its regions and singletons, which
  /// have stopped. Thread-safe, idempotent.
  void begin_shutdown() const;

  /// Counters of this node's remote messaging.
  remoting_metrics metrics() const;

  /// From now on `handler` is told, on the transport's io thread, of every
  /// handshake that named another cluster incarnation than this node's
  /// (the cluster daemon forwards it to its engine; cluster_merge.hpp).
  /// Replaces an earlier handler; empty: nobody is told.
  void on_foreign_incarnation(foreign_incarnation_handler handler) const;

  /// Shuts the transport down and stops the remoting actor. Idempotent.
  void stop() const;

private:
  explicit remoting_handle(std::shared_ptr<detail::remoting_shared> sh)
    : sh_(std::move(sh)) {}

  std::shared_ptr<detail::remoting_shared> sh_;
};

} // namespace troupe::cluster
