#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// A simulated network of transports for the seeded simulator: in memory,
/// deterministic, no threads, no clock reads, no I/O.

namespace troupe::cluster {

/// The simulated network's model parameters.
struct sim_settings {
  /// One-way latency of every frame.
  runtime::timespan latency = std::chrono::milliseconds{1};
  /// Extra latency per frame, uniform in [0, jitter) from the seeded
  /// generator; order per (sender, receiver) is kept regardless.
  runtime::timespan jitter{0};
  /// Bound of the per-peer ordinary queue while no connection is up
  /// (drop-oldest), as `cluster.transport.outbound_queue_size`.
  size_t outbound_queue_size = 3072;
  /// Bound of the per-peer control queue, as
  /// `cluster.transport.control_queue_size`.
  size_t control_queue_size = 20000;
  /// Largest payload `send` accepts.
  uint32_t max_frame_size = 1 << 20;
  /// Reconnect backoff (peer_backoff.hpp).
  runtime::timespan reconnect_backoff_min = std::chrono::milliseconds{100};
  runtime::timespan reconnect_backoff_max = std::chrono::seconds{5};
};

class sim_transport;

/// The world of the simulator's transports: nodes, links, and a queue of
/// timed events that only moves when `advance_to` is called.
///
/// The model follows `tcp_transport`'s semantics (transport.hpp) with
/// simplified timing:
/// - The first `send` to an endpoint dials it. The handshake takes two
///   round trips (4 x latency). No live node at the endpoint, or a
///   quarantined uid on either side, fails the attempt (counted as a
///   handshake failure for a refusal); attempts repeat with `peer_backoff`
///   while frames wait. Frames wait in bounded drop-oldest queues.
/// - On an established connection each frame arrives after latency (+
///   jitter, + injected delay in either direction), FIFO per (sender,
///   receiver). There is no bandwidth model.
/// - `crash` and `disconnect` break connections: frames in flight are
///   lost (`connection_lost`), both sides see `on_peer_down` after one
///   latency, and the next `send` reconnects. Restarting a node at the same
///   endpoint with a new uid makes peers quarantine the old uid at their
///   next handshake with it, as in the TCP transport.
/// - Faults (`set_fault`) apply to message frames only, as in the TCP
///   transport; an inbound delay applies to frames sent after it was set.
/// - The handshake compares the two nodes' cluster incarnations
///   (`set_incarnation`): when both are set and differ, both listeners get
///   `on_foreign_incarnation`, as the TCP transport's two sides would.
///
/// Every callback runs inside `advance_to`, in event-time order (ties in
/// the order the events were scheduled), so a run is a pure function of
/// the seed and the calls made. Not thread-safe: one simulator thread.
class sim_network {
public:
  /// A network whose clock starts at `start`; `seed` drives jitter, drop
  /// probabilities and backoff jitter.
  explicit sim_network(uint64_t seed, sim_settings settings = {},
                       runtime::timestamp start
                       = runtime::timestamp{std::chrono::hours{1}});

  ~sim_network();

  sim_network(const sim_network&) = delete;
  sim_network& operator=(const sim_network&) = delete;

  /// Starts a node at `addr` (uid not 0) whose events go to `listener`
  /// (which must outlive the node's transport). The transport lives until
  /// the network is destroyed. A live node at the same endpoint is a
  /// programmer error (asserts): crash it first to restart.
  sim_transport& start_node(const unique_address& addr,
                            transport_listener& listener);

  /// The live node at `ep`, or nullptr.
  sim_transport* find(const endpoint& ep);

  /// Kills the node at `ep` without a goodbye (kill -9): its connections
  /// break and its queued frames are gone. No-op if none lives there.
  void crash(const endpoint& ep);

  /// Breaks the connections between `a` and `b` in both directions (a
  /// connection blip): both see `on_peer_down`, and traffic reconnects on
  /// demand.
  void disconnect(const endpoint& a, const endpoint& b);

  /// The simulated time.
  runtime::timestamp now() const noexcept;

  /// The time of the next pending event, if any.
  std::optional<runtime::timestamp> next_event_time() const;

  /// Runs every event due at or before `t` and sets the time to `t` (a
  /// `t` in the past runs nothing). Returns the number of events run.
  size_t advance_to(runtime::timestamp t);

  /// Runs events until none is left or the next is later than
  /// `now() + limit`; returns the number run.
  size_t run_until_idle(runtime::timespan limit = std::chrono::minutes{1});

  /// Implementation detail, defined in the .cpp.
  class impl;

private:
  std::unique_ptr<impl> impl_;
};

/// One node's transport in a `sim_network`. Not thread-safe (the
/// simulator's thread); callbacks run inside `sim_network::advance_to`.
class sim_transport final : public transport {
public:
  sim_transport(sim_network::impl& net, size_t node) : net_(net), node_(node) {}

  const unique_address& local_address() const noexcept override;

  runtime::error send(const unique_address& to, lane lane,
                      std::span<const std::byte> payload) override;

  void remove_node(const unique_address& node) override;

  bool is_quarantined(const unique_address& node) const override;

  void set_fault(const endpoint& peer, direction dir,
                 const link_fault& fault) override;

  void record_drop(const unique_address& from, lane lane,
                   drop_reason reason) override;

  transport_metrics metrics() const override;

  void set_incarnation(const cluster_incarnation& x) override;

  /// Stops the node gracefully (as `sim_network::crash`, but only this
  /// incarnation).
  void shutdown() override;

private:
  sim_network::impl& net_;
  size_t node_;
};

} // namespace troupe::cluster
