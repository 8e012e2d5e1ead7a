#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "troupe/management/router.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The management API's HTTP/1.1 server (Boost.Beast): parses requests,
/// hands each to a handler (normally `management::handle` over the node's
/// sources) on a pool of worker threads and writes the answer. One slow
/// request (a query that waits for a peer) holds one worker, not the
/// server: other connections are still answered. Requests on one
/// connection are answered in order. Keep-alive, HEAD without a body, a body
/// limit (413), a connection limit (503), an idle timeout; malformed HTTP
/// gets a 400 and the connection closes. Nothing a client sends crashes the
/// node, and the `Authorization` header never reaches a log.

namespace troupe::management {

/// The server's settings (`management.bind`, `management.port`, ...).
struct http_server_settings {
  /// The address to bind: loopback by default (DESIGN.md §8).
  std::string bind = "127.0.0.1";
  /// Akka Management's default port; 0 picks a free one (tests).
  uint16_t port = 8558;
  /// More open connections than this get a 503 and are closed.
  size_t max_connections = 64;
  /// Larger bodies get a 413 and the connection is closed.
  size_t max_body = 64 * 1024;
  /// A connection without a complete request for this long is closed.
  std::chrono::milliseconds idle_timeout{30000};
  /// Threads that run the handler. 1 (the default) runs one request at a
  /// time, for a handler that is not thread-safe or whose order matters
  /// (the demo's store); more let requests that wait (for peers, for an
  /// entity) overlap. Requests beyond the free workers queue in arrival
  /// order. At least 1.
  size_t workers = 1;
  /// Requests for which this returns true are answered on the io thread,
  /// without the hop to a worker and back (about 40 us on a loaded 2-core
  /// machine, bench/management_bench.cpp): only for answers that never
  /// wait, such as the probes. Null: every request goes to a worker.
  std::function<bool(const http_request&)> answer_inline;
};

/// A running server with its own io thread. Thread-safe: `stop` and the
/// destructor may run on any thread (not on the handler's).
class http_server {
public:
  /// Called on a worker thread; with `workers > 1` concurrently for
  /// requests on different connections (so it must be thread-safe then).
  /// It may block (it holds only its worker), but should bound its waits:
  /// the sources bound their queries. An exception answers 500.
  using handler = std::function<http_response(const http_request&)>;

  /// Binds and starts serving. Errors (errc::invalid_settings): an address
  /// that does not parse, a port in use or not permitted (names the
  /// address, the port and the OS's reason).
  static runtime::expected<std::unique_ptr<http_server>>
  start(http_server_settings settings, handler h);

  ~http_server();

  http_server(const http_server&) = delete;
  http_server& operator=(const http_server&) = delete;

  /// The bound port (the chosen one when the settings said 0).
  uint16_t port() const noexcept;

  /// Stops accepting, closes every connection, waits for the handlers that
  /// are running to return (their answers are dropped) and joins the
  /// threads. Idempotent.
  void stop();

  struct impl;

private:
  explicit http_server(std::shared_ptr<impl> x);
  std::shared_ptr<impl> impl_;
};

} // namespace troupe::management
