#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/cluster/cluster_incarnation.hpp"
#include "troupe/cluster/protocol_version.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// The cluster transport interface: what the CAF shell (remote references,
/// membership, heartbeats) and the simulator see of the network. Two
/// implementations: `tcp_transport` (edge, Boost.Asio, optional TLS) and
/// `sim_transport` (core, in memory, deterministic). docs/design/transport.md
/// has the frame format, the handshake, the threat model and the keys.
///
/// Shapes in one paragraph: a transport carries opaque byte payloads
/// ("frames") from this node to a peer node, addressed by the peer's
/// `unique_address` (host, port, uid), on one of two lanes. Per (sender,
/// receiver, lane) frames arrive in the order they were sent, with possible
/// gaps (drops are counted and reported) but never duplicated or reordered.
/// The transport reports peers coming up and going down per direction, and
/// the quarantine of old incarnations. A connection blip is `on_peer_down`,
/// never a removal: only the membership layer removes nodes, as in Akka,
/// where a watch fires on removal and not on a broken TCP connection.
/// Remote watches fire at removal (remoting.hpp, `node_removed`); the
/// transport hears of it later, when remoting quarantines the node
/// (`remove_node`, quarantine_removed_after after the removal, so that the
/// removed node still receives the gossip that removed it).

namespace troupe::cluster {

using runtime::unique_address;

/// A node's transport address without its incarnation: the advertised
/// `host` (compared bytewise, as configured) and `port`. Connections,
/// queues and fault injection are per endpoint; quarantine is per uid.
struct endpoint {
  std::string host;
  uint16_t port = 0;

  friend bool operator==(const endpoint&, const endpoint&) = default;
  friend std::strong_ordering operator<=>(const endpoint&, const endpoint&)
    = default;
};

/// CAF-free inspection (registered as "troupe.cluster.endpoint" by the
/// cluster module's glue: seed lists travel in the daemon's join command).
template <class Inspector>
auto inspect(Inspector& f, endpoint& x) {
  return f(x.host, x.port);
}

/// The endpoint of `x` (host and port; the uid dropped).
endpoint endpoint_of(const unique_address& x);

/// `host:port`, IPv6 hosts bracketed (`[::1]:2552`).
std::string to_string(const endpoint& x);

/// The two lanes of a peer connection. Control frames (heartbeats, gossip,
/// watch notifications) are always written before ordinary ones, so bulk
/// traffic never starves them (Akka Artery's control stream). There is no
/// order between lanes, only within one.
enum class lane : uint8_t {
  control = 0,
  ordinary = 1,
};

/// "control" or "ordinary".
const char* to_string(lane x) noexcept;

/// A direction relative to this node: `outbound` is what this node sends to
/// a peer (on the connection this node dials), `inbound` what it receives
/// from a peer (on the connection the peer dials). Each node dials its own
/// outbound connection, so a peer pair uses two TCP connections, one per
/// direction (as Akka Artery's outbound and inbound streams).
enum class direction : uint8_t {
  outbound = 0,
  inbound = 1,
};

/// "outbound" or "inbound".
const char* to_string(direction x) noexcept;

/// Why a frame was dropped. Every drop is counted in the metrics (per peer
/// and in total) and reported through `transport_listener::on_dropped`.
enum class drop_reason : uint8_t {
  /// The peer's queue of one lane was full; the oldest frame was dropped
  /// to make room (`cluster.transport.outbound_queue_size` for the
  /// ordinary lane, `cluster.transport.control_queue_size` for control).
  queue_overflow = 0,
  /// The frame was addressed to, or came from, a quarantined uid.
  quarantined,
  /// The frame was addressed to a uid that is not the incarnation living
  /// at that host:port (found when the handshake named another uid).
  incarnation_mismatch,
  /// The frame was part of a write when the connection broke: whether the
  /// peer received it is unknown, and it is not sent again.
  connection_lost,
  /// Fault injection: the link was blackholed in this direction.
  blackholed,
  /// Fault injection: dropped by the link's drop probability.
  injected,
  /// The receiver could not deserialize the payload (recorded by the shell
  /// through `transport::record_drop`; the transport never looks inside a
  /// payload).
  undecodable,
  /// The transport shut down with the frame still queued.
  shutdown,
};

/// Number of `drop_reason` values (size of the per-reason arrays).
inline constexpr size_t drop_reason_count = 8;

/// "queue_overflow", "quarantined", ... (the enumerator's name).
const char* to_string(drop_reason x) noexcept;

/// Fault injection for one (peer endpoint, direction): for tests and the
/// simulator, never configured in production. The default value is a
/// healthy link ("pass through").
///
/// Faults apply to message frames only; the handshake of a (re)connection
/// goes through, so a blackholed link still shows the peer as up, as a
/// real partition does until TCP gives up. In the outbound direction a
/// dropped frame is counted at `send`; in the inbound direction, when the
/// frame is read.
struct link_fault {
  /// Drop every frame in this direction.
  bool blackhole = false;
  /// Hold every frame this long before it is written (outbound) or
  /// delivered (inbound). Order is kept: a frame never overtakes one sent
  /// before it, even when the delay shrinks.
  runtime::timespan delay{0};
  /// Drop each frame independently with this probability, 0.0 to 1.0
  /// (values outside are clamped), drawn from the transport's seeded
  /// generator.
  double drop_probability = 0.0;

  /// True if this fault changes nothing (the default value).
  bool is_healthy() const noexcept {
    return !blackhole && delay.count() <= 0 && drop_probability <= 0.0;
  }

  friend bool operator==(const link_fault&, const link_fault&) = default;
};

/// Traffic and failure counters of one peer (or of the whole transport).
/// Bytes count whole frames (8-byte header plus payload) after TLS
/// decryption, i.e. what troupe writes and reads, not TCP or TLS overhead.
struct peer_counters {
  uint64_t bytes_out = 0;
  uint64_t messages_out = 0;
  uint64_t bytes_in = 0;
  uint64_t messages_in = 0;
  /// Outbound connection attempts after the first one (after a failure or
  /// a lost connection).
  uint64_t reconnects = 0;
  /// Handshakes that failed (either side, any reason: TLS, wrong secret,
  /// wrong cluster name, timeout, malformed, quarantined).
  uint64_t handshake_failures = 0;
  /// Connections closed because the peer broke the frame protocol (bad
  /// version, bad length, oversized frame, unexpected frame kind).
  uint64_t protocol_violations = 0;
  /// Dropped frames, indexed by `drop_reason`.
  std::array<uint64_t, drop_reason_count> drops{};

  /// Dropped frames for `reason`.
  uint64_t dropped(drop_reason reason) const noexcept {
    return drops[static_cast<size_t>(reason)];
  }

  /// Dropped frames for every reason.
  uint64_t dropped() const noexcept;

  /// Adds every counter of `other` to this one.
  void add(const peer_counters& other) noexcept;

  friend bool operator==(const peer_counters&, const peer_counters&) = default;
};

/// The counters of one peer endpoint.
struct peer_metrics {
  endpoint peer;
  /// The uid of the incarnation last seen at this endpoint (0: none yet).
  uint64_t uid = 0;
  peer_counters counters;
  /// The wire protocol version that incarnation announced in its last
  /// handshake (0.0: none yet). Its minor says which optional features
  /// the peer understands (protocol_version.hpp).
  protocol_version protocol;
};

/// A snapshot of the transport's counters.
struct transport_metrics {
  /// One entry per peer endpoint this transport has talked to or tried to,
  /// sorted by endpoint.
  std::vector<peer_metrics> peers;
  /// The sum over `peers`, plus what belongs to no known peer (e.g. an
  /// inbound connection that failed its handshake before the peer was
  /// authenticated).
  peer_counters total;

  /// The counters of `peer`, or nullptr.
  const peer_metrics* find(const endpoint& peer) const;
};

/// A frame as the listener receives it. `payload` points into the
/// transport's buffers and is valid only during the callback.
struct received_frame {
  cluster::lane lane = lane::ordinary;
  std::span<const std::byte> payload;
};

/// Receives a transport's events. The shell implements it (posting to
/// actors); tests implement it to record.
///
/// Threading: each implementation states the thread its callbacks run on
/// (`tcp_transport`: its io thread; `sim_transport`: inside
/// `sim_network::advance_to`). Callbacks of one transport never run
/// concurrently, must not block, and may call the transport's `send`,
/// `remove_node`, `set_fault` and `metrics`.
class transport_listener {
public:
  virtual ~transport_listener();

  /// Frames from `from` (an authenticated peer), in arrival order. Called
  /// once per batch (e.g. per socket read); the default calls `on_frame`
  /// for each. Override it to hand a whole batch to an actor in one
  /// message (the batched prototype measured 1.8x the per-message rate).
  virtual void on_frames(const unique_address& from,
                         std::span<const received_frame> frames);

  /// One frame from `from`. `payload` is valid only during the call.
  virtual void on_frame(const unique_address& from, lane lane,
                        std::span<const std::byte> payload)
    = 0;

  /// A connection to or from `peer` completed its handshake: `outbound`
  /// means frames sent to `peer` now flow, `inbound` that `peer` can now
  /// send to this node.
  virtual void on_peer_up(const unique_address& peer, direction dir) = 0;

  /// The connection of direction `dir` with `peer` is gone (closed, reset,
  /// timed out, or closed by this transport after a violation). NOT a
  /// removal: outbound traffic is queued and the transport reconnects.
  /// `reason` is for logs.
  virtual void on_peer_down(const unique_address& peer, direction dir,
                            std::string_view reason)
    = 0;

  /// `peer`'s uid is quarantined from now on: no frame is sent to it or
  /// accepted from it again, and its connections are closed. Causes:
  /// a new incarnation at the same host:port completed a handshake, or
  /// `remove_node(peer)` was called. `reason` is for logs.
  virtual void on_peer_quarantined(const unique_address& peer,
                                   std::string_view reason)
    = 0;

  /// `count` frames to or from `peer` on `lane` were dropped for `reason`
  /// since the last report (reports are coalesced). The default does
  /// nothing; the metrics count drops either way.
  virtual void on_dropped(const unique_address& peer, lane lane,
                          drop_reason reason, uint64_t count);

  /// A handshake with `peer` (authenticated, of this cluster's name)
  /// named the cluster incarnation `theirs`, and this node's (set by
  /// `transport::set_incarnation`) is another one, both set: two clusters
  /// of one name met (cluster_merge.hpp). The connection is established
  /// as usual, so that the two can exchange what the merge needs. Reported
  /// by the side that completes the handshake on each connection, so a
  /// pair that talks in both directions reports it on both nodes. The
  /// default does nothing.
  virtual void on_foreign_incarnation(const unique_address& peer,
                                      const cluster_incarnation& theirs);
};

/// A node's cluster transport: frames to and from peer nodes.
///
/// Semantics (both implementations):
/// - Connections are made on demand: the first `send` to an endpoint dials
///   it; a lost connection is re-dialled while frames wait, with
///   exponential backoff and jitter (`cluster.transport.reconnect_backoff_*`,
///   peer_backoff.hpp). Each side authenticates the other with the cluster
///   secret before any frame flows (handshake.hpp).
/// - FIFO per (this node, peer endpoint, lane): frames arrive in send
///   order, possibly with gaps; never duplicated, never reordered. A frame
///   that was being written when a connection broke is dropped
///   (`connection_lost`); frames queued behind it go out on the next
///   connection.
/// - Incarnations (Akka's rule): when a handshake names a new uid at a
///   host:port, the new incarnation replaces the old one and the old uid
///   is quarantined (`on_peer_quarantined`). A quarantined uid is refused
///   in both directions for good; the node must restart with a new uid.
/// - Backpressure: per peer and lane a bounded queue; when it is full the
///   oldest frame is dropped (counted, logged, reported). A frame is never
///   silently lost: every loss has a `drop_reason`.
///
/// Errors of `send` are `cluster::errc` values (category "cluster"); each
/// message names the peer.
///
/// Thread-safety is the implementation's: every method of `tcp_transport`
/// may be called from any thread; `sim_transport` is single-threaded (the
/// simulator's thread).
class transport {
public:
  virtual ~transport();

  /// This node's address: the advertised host and port (the bound port
  /// when configured as 0) and this incarnation's uid.
  virtual const unique_address& local_address() const noexcept = 0;

  /// Queues `payload` (copied; any size from 0 to
  /// `cluster.transport.max_frame_size` bytes) for `to` on `lane`.
  ///
  /// `to.uid == 0` means "whichever incarnation lives at to.host:to.port"
  /// (for the first contact with a seed node, whose uid is unknown).
  ///
  /// Returns an empty error when the frame is queued (or dropped by an
  /// injected fault, as a network would drop it), or:
  /// - `errc::frame_too_large`: `payload` exceeds the maximum frame size;
  /// - `errc::invalid_destination`: empty host, port 0, or this node's own
  ///   endpoint;
  /// - `errc::quarantined`: `to.uid` is quarantined (also counted as a
  ///   `quarantined` drop);
  /// - `errc::incarnation_mismatch`: an established outbound connection to
  ///   to.host:to.port leads to another uid (also counted). The
  ///   membership layer resolves this by `remove_node` of the old one, or
  ///   the new incarnation's own connection to this node replaces it;
  /// - `errc::shutting_down`: `shutdown()` was called.
  virtual runtime::error send(const unique_address& to, lane lane,
                              std::span<const std::byte> payload)
    = 0;

  /// Membership removed `node` (Akka: the member reached `removed`) and the
  /// quarantine delay after it has passed (remoting.hpp): its uid is
  /// quarantined, frames queued for it are dropped (`quarantined`), its
  /// connections are closed (`on_peer_down`) and `on_peer_quarantined`
  /// fires. Frames queued for the endpoint with uid 0 are kept for the
  /// next incarnation. Idempotent; a uid of 0 is ignored.
  virtual void remove_node(const unique_address& node) = 0;

  /// True if `node`'s uid is quarantined.
  virtual bool is_quarantined(const unique_address& node) const = 0;

  /// Sets the fault of (`peer`, `dir`) (tests and simulation only). The
  /// healthy `link_fault{}` passes traffic through again ("heal").
  virtual void set_fault(const endpoint& peer, direction dir,
                         const link_fault& fault)
    = 0;

  /// Heals both directions of `peer`.
  void heal(const endpoint& peer) {
    set_fault(peer, direction::outbound, link_fault{});
    set_fault(peer, direction::inbound, link_fault{});
  }

  /// Counts a drop that the caller decided on, e.g. a payload from `from`
  /// that the shell could not deserialize (`drop_reason::undecodable`).
  /// Reported through the metrics (not through `on_dropped`).
  virtual void record_drop(const unique_address& from, lane lane,
                           drop_reason reason)
    = 0;

  /// A snapshot of the counters.
  virtual transport_metrics metrics() const = 0;

  /// This node's cluster incarnation (cluster_incarnation.hpp), carried in
  /// every handshake from now on (connections already up keep what they
  /// exchanged). Not set (the default) until the node joined a cluster;
  /// the membership layer sets it when it learns it, so the transport
  /// stays below membership. Thread-safety as the other methods.
  virtual void set_incarnation(const cluster_incarnation& x) = 0;

  /// Closes every connection, drops every queued frame (`shutdown`) and
  /// stops calling the listener: when `shutdown` returns, no callback runs
  /// or will run (unless called from a callback, where the current one
  /// finishes). Idempotent; the destructor calls it. Later `send` calls
  /// fail with `errc::shutting_down`.
  virtual void shutdown() = 0;
};

} // namespace troupe::cluster
