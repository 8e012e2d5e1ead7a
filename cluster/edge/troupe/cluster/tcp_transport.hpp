#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "troupe/cluster/protocol_version.hpp"
#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/secret.hpp"

/// @file
/// The cluster transport on TCP (Boost.Asio), optionally inside mutual TLS.

namespace troupe::cluster {

/// Mutual TLS between nodes: every node presents `cert_file` (with `key_file`)
/// and accepts only peers whose certificate chains to `ca_file`. All three
/// set turns TLS on; none set leaves it off; anything between is an error.
/// Node certificates need both extended key usages, serverAuth and
/// clientAuth (each node dials and accepts), and a subjectAltName that
/// matches the node's advertised host (DNS name or IP address).
struct tls_files {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;

  bool enabled() const noexcept {
    return !ca_file.empty() || !cert_file.empty() || !key_file.empty();
  }
};

/// The settings of a `tcp_transport` (from the `cluster.*` keys, see
/// transport_config.hpp, where each default is justified).
struct tcp_transport_settings {
  /// `cluster.name`: nodes of different clusters refuse each other.
  std::string cluster_name = "troupe";
  /// This node: advertised host (`cluster.host`), port (`cluster.port`; 0
  /// binds an ephemeral port, which then becomes the advertised one) and
  /// uid (0: drawn at random by `make`).
  unique_address local{"127.0.0.1", 0, 0};
  /// `cluster.bind_host`: the address to listen on; empty means the
  /// advertised host. Use "0.0.0.0" or "::" for every interface.
  std::string bind_host;
  /// `cluster.secret`: the shared cluster secret, at least 16 bytes.
  runtime::secret secret;
  /// `cluster.tls.*`.
  tls_files tls;
  /// `cluster.transport.max_frame_size`: largest payload in bytes.
  uint32_t max_frame_size = 1 << 20;
  /// `cluster.transport.outbound_queue_size`: frames per peer, ordinary lane.
  size_t outbound_queue_size = 3072;
  /// `cluster.transport.control_queue_size`: frames per peer, control lane.
  size_t control_queue_size = 20000;
  /// `cluster.transport.handshake_timeout`: from the start of the TCP
  /// connect (or accept) to the authenticated peer.
  runtime::timespan handshake_timeout = std::chrono::seconds{10};
  /// `cluster.transport.reconnect_backoff_min` / `_max`.
  runtime::timespan reconnect_backoff_min = std::chrono::milliseconds{100};
  runtime::timespan reconnect_backoff_max = std::chrono::seconds{5};
  /// Seed of the fault-injection generator (drop probabilities) and of the
  /// backoff jitter; 0 derives it from the uid.
  uint64_t seed = 0;
  /// The wire protocol this node speaks (protocol_version.hpp); no
  /// configuration key: always `current_protocol` but in tests that play a
  /// node of another release. The major must not be 0.
  protocol_version protocol = current_protocol;
};

/// Checks `s`; the error (errc::invalid_settings) names the key, e.g.
/// `cluster.secret must be at least 16 bytes`. Never shows the secret.
runtime::error validate(const tcp_transport_settings& s);

/// The cluster transport on Boost.Asio TCP: one io thread, one outbound
/// connection per peer (this node dials it) carrying both lanes, and the
/// peers' connections to this node for inbound traffic
/// (docs/design/transport.md).
///
/// - Frames: 8-byte header + payload (frame.hpp). Reads go into a 256 KiB
///   buffer and every complete frame of a read is handed to the listener in
///   one `on_frames` call, without copying.
/// - Writes: `send` copies the frame into the peer's queue under a mutex
///   and posts at most one flush per wake-up; the io thread writes every
///   queued control frame and up to 256 KiB of ordinary frames in one
///   gather write (control first: a control frame waits at most one such
///   write). No per-message syscall or heap allocation once the buffers
///   have grown.
/// - Handshake (handshake.hpp) inside TLS when configured; bounded by
///   `handshake_timeout`; before it completes a connection accepts only
///   handshake frames of at most 1 KiB. With TLS, the dialer verifies the
///   acceptor's certificate against the dialed host, and the acceptor
///   verifies the dialer's certificate against the host its handshake
///   claims.
/// - Violations (bad version, kind, lane, flags, oversized frame, a
///   handshake frame after the handshake or a message before it, any
///   frame on an outbound connection) close the connection with a log
///   line and count as `protocol_violations`.
/// - Reconnects: while frames wait for a peer whose connection is down,
///   with `peer_backoff` (first attempt at once).
///
/// Logging: component "transport"; INFO for peers up/down and quarantine,
/// WARNING for handshake failures, violations and overflow episodes.
///
/// Thread-safety: every member function may be called from any thread.
/// Listener callbacks run on the io thread, one at a time.
class tcp_transport final : public transport {
public:
  /// Validates `settings`, loads the TLS files, binds the listening socket
  /// and starts the io thread. Errors: `invalid_settings` (names the key),
  /// `tls_setup_failed` (names the file), `bind_failed` (names the
  /// address). `listener` receives every event until `shutdown` returns.
  static runtime::expected<std::unique_ptr<tcp_transport>>
  make(tcp_transport_settings settings,
       std::shared_ptr<transport_listener> listener);

  /// Calls `shutdown()`.
  ~tcp_transport() override;

  tcp_transport(const tcp_transport&) = delete;
  tcp_transport& operator=(const tcp_transport&) = delete;

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

  /// Closes the listening socket and every connection, drops the queues
  /// (counted as `shutdown`) and joins the io thread (from the io thread
  /// itself it detaches instead). No callback runs after it returns.
  void shutdown() override;

  /// Implementation detail, defined in the edge's .cpp files.
  class impl;

private:
  explicit tcp_transport(std::shared_ptr<impl> ptr);

  std::shared_ptr<impl> impl_;
};

} // namespace troupe::cluster
