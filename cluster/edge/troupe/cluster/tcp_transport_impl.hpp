#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>

#include "troupe/cluster/frame.hpp"
#include "troupe/cluster/frame_queue.hpp"
#include "troupe/cluster/handshake.hpp"
#include "troupe/cluster/peer_backoff.hpp"
#include "troupe/cluster/quarantine.hpp"
#include "troupe/cluster/tcp_transport.hpp"
#include "troupe/runtime/log.hpp"

/// @file
/// Internals of `tcp_transport` shared by its two .cpp files (the transport
/// and the connection). Not part of the public API.
///
/// Threads: `send`, `remove_node`, `set_fault`, `metrics` and friends run on
/// callers' threads and touch only what `impl::mtx` guards. Everything else
/// (connections, timers, in-flight buffers) belongs to the io thread.
/// Listener callbacks run on the io thread without the mutex held.

namespace troupe::cluster {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

class tcp_connection;

/// Bytes of ordinary frames per write at most (control frames all go).
inline constexpr size_t max_ordinary_batch = 256 * 1024;

/// An inbound connection's read buffer: it starts at the smallest size,
/// doubles after a read that filled it, up to the largest, and halves again
/// after `read_buffer_shrink_after` reads in a row that used less than a
/// quarter of it. An idle peer costs little memory; a busy one gets few,
/// large reads. Outbound connections only read handshake frames and keep
/// the handshake-sized buffer.
inline constexpr size_t min_read_buffer_size = 16 * 1024;
inline constexpr size_t max_read_buffer_size = 256 * 1024;
inline constexpr size_t read_buffer_shrink_after = 64;

/// Unauthenticated inbound connections at most; more are closed at once.
inline constexpr size_t max_pending_inbound = 64;

/// A frame held back by an injected delay (`uid`: the destination of an
/// outbound frame, the sender of an inbound one).
struct delayed_frame {
  std::chrono::steady_clock::time_point due;
  cluster::lane lane;
  uint64_t uid;
  std::vector<std::byte> payload;
};

/// How a connection ended, for counting and the log level.
enum class close_kind : uint8_t {
  /// Closed after it was established, or by this node.
  normal,
  /// Nobody answered (resolve or connect failed).
  unreachable,
  /// The handshake failed (TLS, authentication, timeout, quarantine).
  handshake_failed,
  /// The peer broke the frame protocol.
  violation,
};

/// Everything about one peer endpoint.
struct peer_state {
  peer_state(asio::io_context& ioc, endpoint ep,
             const tcp_transport_settings& s);

  const endpoint ep;

  // -- guarded by impl::mtx ---------------------------------------------------
  std::array<frame_queue, 2> pending;
  /// A flush is posted to the io thread and has not run yet.
  bool flush_posted = false;
  /// Somebody writes to the outbound connection: the io thread (an async
  /// write) or a sending thread (a direct write). The writer owns
  /// `inflight` and `batch`; it changes them only with the mutex held, so
  /// others may read them under the mutex.
  bool writing = false;
  /// The outbound connection is established, plain TCP and free of
  /// handshake writes: a sending thread that finds nothing queued and
  /// nobody writing may write to `direct_fd` itself (saves the wake-up of
  /// the io thread on an idle connection).
  bool direct_ready = false;
  /// Counts closed outbound connections; a direct write that started
  /// before a close must not leave half a frame for the next connection.
  uint64_t generation = 0;
  peer_counters counters;
  /// The uid of the last handshake with this endpoint (0: none yet).
  uint64_t last_uid = 0;
  /// The protocol version of the last handshake with this endpoint.
  protocol_version protocol;
  /// The uid of the established outbound connection, if any.
  std::optional<uint64_t> established_uid;
  /// Drops not yet reported to the listener, per lane and reason.
  std::array<std::array<uint64_t, drop_reason_count>, 2> unreported{};
  /// In an overflow episode (logged when it starts and ends).
  bool overflowing = false;
  /// Frames held by an outbound delay fault, in order.
  std::deque<delayed_frame> delayed;

  // -- owned by the writer (see `writing`) -----------------------------------
  /// Frames taken from `pending`, written from here.
  std::array<frame_queue, 2> inflight;
  /// Frames and bytes of each lane in the async write in progress.
  std::array<size_t, 2> batch{0, 0};
  std::array<size_t, 2> batch_bytes{0, 0};

  // -- guarded by fd_mtx ------------------------------------------------------
  /// Held during a direct write and while the io thread closes the
  /// outbound socket: a direct write never reaches a closed (or reused)
  /// descriptor. Never taken before `impl::mtx`.
  std::mutex fd_mtx;
  /// The outbound socket's descriptor for direct writes (-1: none).
  int direct_fd = -1;

  // -- io thread only ---------------------------------------------------------
  /// The outbound connection (connecting or established).
  std::shared_ptr<tcp_connection> conn;
  peer_backoff backoff;
  bool attempted = false;
  bool reconnect_armed = false;
  asio::steady_timer reconnect_timer;
  bool delay_armed = false;
  asio::steady_timer delay_timer;
  /// Frames from this peer held by an inbound delay fault, in order.
  std::deque<delayed_frame> inbound_delayed;
  bool inbound_delay_armed = false;
  asio::steady_timer inbound_delay_timer;
};

/// The transport's state and the io thread's logic.
class tcp_transport::impl : public std::enable_shared_from_this<impl> {
public:
  impl(tcp_transport_settings settings,
       std::shared_ptr<transport_listener> listener);
  ~impl();

  /// Loads TLS and binds; errors name the file or the address.
  runtime::error open();
  void launch();
  void run();

  // -- public API (any thread) ------------------------------------------------
  runtime::error send(const unique_address& to, lane ln,
                      std::span<const std::byte> payload);
  void remove_node(const unique_address& node);
  bool is_quarantined(const unique_address& node) const;
  void set_fault(const endpoint& peer, direction dir, const link_fault& f);
  void record_drop(const unique_address& from, lane ln, drop_reason reason);
  transport_metrics metrics() const;
  void set_incarnation(const cluster_incarnation& x);
  void shutdown();

  // -- called by connections (io thread) ------------------------------------
  /// A fresh nonce from the CSPRNG.
  nonce make_nonce();
  handshake_settings handshake_params() const;
  /// Runs the quarantine rules for an authenticated peer; false: refuse.
  bool admit(tcp_connection& conn, const unique_address& peer);
  /// The connection completed its handshake and was admitted.
  void on_established(const std::shared_ptr<tcp_connection>& conn);
  /// Frames read on an established inbound connection.
  void on_frames(tcp_connection& conn, std::vector<received_frame>& batch,
                 size_t bytes);
  /// The connection finished writing its handshake messages.
  void on_writable(tcp_connection& conn);
  /// The connection is about to close its socket.
  void on_closing(tcp_connection& conn);
  /// The connection is closed (exactly once per connection).
  void on_closed(const std::shared_ptr<tcp_connection>& conn,
                 const std::string& reason, close_kind kind);
  /// Counts a failed handshake for `peer` (or for no known peer).
  void count_handshake_failure(const std::optional<endpoint>& peer);

  ssl::context* tls_context() {
    return tls_ctx_.get();
  }

  const tcp_transport_settings& settings() const {
    return settings_;
  }

  const runtime::logger& log() const {
    return log_;
  }

  bool quiet() const {
    return quiet_;
  }

  asio::io_context ioc{1};
  unique_address local;

private:
  std::shared_ptr<peer_state> peer_locked(const endpoint& ep);
  void post_flush_locked(const std::shared_ptr<peer_state>& p);
  void count_drop_locked(peer_state& p, lane ln, drop_reason r, uint64_t n);
  link_fault fault_locked(const endpoint& ep, direction dir) const;
  bool draw_drop_locked(const link_fault& f);
  void enqueue_locked(peer_state& p, lane ln, uint64_t uid,
                      std::span<const std::byte> payload);
  void write_direct(std::unique_lock<std::mutex>& guard,
                    const std::shared_ptr<peer_state>& p);
  void drop_partial_locked(peer_state& p);

  void accept();
  void flush(const std::shared_ptr<peer_state>& p);
  void write_batch(const std::shared_ptr<peer_state>& p);
  void on_written(const std::shared_ptr<peer_state>& p,
                  const boost::system::error_code& ec);
  void maybe_connect(const std::shared_ptr<peer_state>& p);
  void connect(const std::shared_ptr<peer_state>& p);
  void arm_delay_timer(const std::shared_ptr<peer_state>& p);
  void release_delayed(const std::shared_ptr<peer_state>& p);
  void report_drops(peer_state& p);
  void on_quarantined(const unique_address& peer, const std::string& reason);
  void keep_only(peer_state& p, uint64_t uid);
  void purge_quarantined(peer_state& p);
  void delay_inbound(const std::shared_ptr<peer_state>& p,
                     const unique_address& from, const link_fault& f,
                     std::vector<received_frame>& batch);
  void arm_inbound_delay_timer(const std::shared_ptr<peer_state>& p);
  void close_all();
  template <class F>
  void notify(F&& f);

  tcp_transport_settings settings_;
  std::shared_ptr<transport_listener> listener_;
  runtime::logger log_{"transport"};
  std::unique_ptr<ssl::context> tls_ctx_;
  tcp::acceptor acceptor_{ioc};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
    guard_{ioc.get_executor()};
  std::thread thread_;

  // This node's cluster incarnation for new handshakes (its own lock: the
  // handshake reads it on the io thread, the daemon writes it).
  mutable std::mutex incarnation_mtx_;
  cluster_incarnation incarnation_;

  mutable std::mutex mtx_;
  // -- guarded by mtx_ --------------------------------------------------------
  bool stopped_ = false;
  std::map<endpoint, std::shared_ptr<peer_state>> peers_;
  quarantine_registry registry_;
  std::map<std::pair<endpoint, direction>, link_fault> faults_;
  std::mt19937_64 rng_;
  peer_counters unattributed_;

  // -- io thread only ---------------------------------------------------------
  bool quiet_ = false; // shutting down: no more callbacks
  size_t pending_inbound_ = 0;
  std::map<endpoint, std::shared_ptr<tcp_connection>> inbound_;
  std::vector<std::shared_ptr<tcp_connection>> handshaking_;
};

/// One TCP connection (inside TLS when configured), either direction: the
/// handshake, then frames. Lives on the io thread.
class tcp_connection : public std::enable_shared_from_this<tcp_connection> {
public:
  tcp_connection(tcp_transport::impl& owner, direction dir, tcp::socket socket,
                 std::optional<endpoint> dialed);

  /// Outbound: resolve, connect, TLS, handshake.
  void start_outbound();
  /// Inbound: TLS, handshake.
  void start_inbound();

  /// Closes the socket; `on_closed` follows once. Idempotent.
  void close(const std::string& reason, close_kind kind = close_kind::normal);

  /// Writes `bufs` (an established outbound connection's frames).
  void write(std::array<asio::const_buffer, 2> bufs,
             std::function<void(const boost::system::error_code&)> done);

  bool established() const noexcept {
    return established_;
  }

  bool closed() const noexcept {
    return closed_;
  }

  /// True when no handshake message is still being written.
  bool can_write() const noexcept {
    return established_ && !closed_ && !hs_writing_;
  }

  /// The socket's descriptor when it carries plain TCP (no TLS), else -1.
  int plain_fd() {
    return tls_ ? -1 : plain_->native_handle();
  }

  direction dir() const noexcept {
    return dir_;
  }

  /// The authenticated peer (after the handshake).
  const unique_address& peer() const noexcept {
    return peer_;
  }

  /// The authenticated peer's wire protocol version (after the
  /// handshake; the minor gates features, protocol_version.hpp).
  protocol_version peer_protocol() const noexcept {
    return peer_protocol_;
  }

  /// The authenticated peer's cluster incarnation (after the handshake;
  /// not set when the peer is not a member of a cluster yet).
  const cluster_incarnation& peer_incarnation() const noexcept {
    return peer_incarnation_;
  }

  /// The dialed endpoint (outbound only).
  const std::optional<endpoint>& dialed() const noexcept {
    return dialed_;
  }

  /// For log lines: `outbound to 127.0.0.1:5000` / `inbound from ...`.
  std::string describe() const;

private:
  template <class F>
  void with_stream(F&& f);
  tcp::socket& socket();

  void arm_handshake_timer();
  void on_connected();
  void tls_handshake(ssl::stream_base::handshake_type role);
  void begin_handshake();
  void read();
  void on_read(const boost::system::error_code& ec, size_t n);
  void resize_read_buffer(size_t last_read);
  bool on_handshake_frame(const frame_view& f);
  void send_handshake(const std::vector<std::byte>& payload);
  void flush_handshake();
  bool verify_peer_certificate(const unique_address& peer);
  void fail_handshake(const std::string& reason);

  tcp_transport::impl& owner_;
  direction dir_;
  std::optional<tcp::socket> plain_;
  std::optional<ssl::stream<tcp::socket>> tls_;
  std::optional<endpoint> dialed_;
  // Inbound: the TCP peer's address (ip:port) for log lines.
  std::string remote_;
  // Inbound: the peer's endpoint once its proof verified.
  std::optional<endpoint> authenticated_;
  tcp::resolver resolver_;
  asio::steady_timer handshake_timer_;
  std::optional<handshake> handshake_;
  frame_decoder decoder_{handshake_max_frame_size};
  std::vector<std::byte> read_buf_;
  // Reads in a row that used less than a quarter of `read_buf_`.
  size_t small_reads_ = 0;
  std::vector<received_frame> batch_;
  std::vector<std::byte> hs_out_;     // handshake frames being written
  std::vector<std::byte> hs_pending_; // queued behind them
  bool hs_writing_ = false;
  unique_address peer_;
  protocol_version peer_protocol_;
  cluster_incarnation peer_incarnation_;
  // Set while a protocol-major refusal is written; the connection then
  // fails with this reason.
  std::optional<std::string> refusal_;
  bool established_ = false;
  bool closed_ = false;
  const char* stage_ = "connect";
};

} // namespace troupe::cluster
