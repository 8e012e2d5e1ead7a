#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_types.hpp"

/// @file
/// A scriptable HTTP/1.1 server on 127.0.0.1 for real-socket tests of the
/// HTTP client, and a throwaway PKI for its TLS mode.

namespace troupe::test {

/// What the server does with one connection. Build with the factories.
struct http_behaviour {
  enum class kind {
    respond,           ///< Read the request, answer, close.
    never_respond,     ///< Read the request, then stay silent (and open).
    close_immediately, ///< Close right after accept, before any read.
    send_raw,          ///< Read the request, send `raw` verbatim, close.
    oversized,         ///< Respond 200 with a body of `size` bytes.
  };

  kind what = kind::respond;
  uint16_t status = 200;
  std::vector<runtime::http_header> headers;
  std::string body;
  std::string raw;
  uint64_t size = 0;
  /// Wait this long after reading the request before acting.
  std::chrono::milliseconds delay{0};

  /// Answers `status` with `headers` (Content-Length and Connection: close
  /// are added) and `body`.
  static http_behaviour respond(uint16_t status,
                                std::vector<runtime::http_header> headers = {},
                                std::string body = {});

  /// Accepts and reads the request but never answers.
  static http_behaviour never_respond();

  /// Closes the connection right after accepting it.
  static http_behaviour close_immediately();

  /// Sends `bytes` verbatim (e.g. a malformed response), then closes.
  static http_behaviour send_raw(std::string bytes);

  /// Responds 200 with a body of `n` bytes ('x') and a matching
  /// Content-Length.
  static http_behaviour oversized(uint64_t n);

  /// Waits `d` after reading the request, then behaves as `then`.
  static http_behaviour delay_then(std::chrono::milliseconds d,
                                   http_behaviour then);
};

/// One request as the server received it.
struct recorded_request {
  std::string method;
  std::string target;
  std::vector<runtime::http_header> headers;
  std::string body;

  /// The first header named `name` (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

/// TLS mode of the server (PEM files).
struct http_test_server_tls {
  std::string cert_file;
  std::string key_file;
  /// When set, a client certificate signed by this CA is required.
  std::string client_ca_file;
};

/// A scriptable HTTP/1.1 server on 127.0.0.1 with a free port (bound to port
/// 0), running plain Asio on its own thread. Every connection takes the next
/// queued behaviour (`push`), or the default one (`set_default`; initially
/// `respond(200, {}, "ok")`). Requests are parsed minimally (request line,
/// headers, Content-Length body) and recorded for assertions.
///
/// Thread-safety: every member function may be called from any thread.
/// The destructor stops the server thread and closes every connection,
/// including silent ones.
class http_test_server {
public:
  /// Starts a plain-HTTP server, or an HTTPS one when `tls` is given.
  /// Throws std::runtime_error if the listener or TLS setup fails (test
  /// setup, not a code path under test).
  explicit http_test_server(std::optional<http_test_server_tls> tls = {});

  ~http_test_server();

  http_test_server(const http_test_server&) = delete;
  http_test_server& operator=(const http_test_server&) = delete;

  /// The listening port.
  uint16_t port() const noexcept;

  /// `http://127.0.0.1:<port><target>` (https:// in TLS mode).
  std::string url(std::string_view target = "/") const;

  /// Like `url`, with another host name (e.g. "localhost") in the URL.
  std::string url_with_host(std::string_view host,
                            std::string_view target = "/") const;

  /// Queues a behaviour for the next connection not yet assigned one.
  void push(http_behaviour b);

  /// The behaviour for connections when the queue is empty.
  void set_default(http_behaviour b);

  /// All requests received so far, in arrival order.
  std::vector<recorded_request> requests() const;

  /// Connections accepted so far.
  size_t connections() const;

  /// The largest number of connections that were open at the same time.
  size_t max_concurrent_connections() const;

  /// TLS handshakes that failed on the server side.
  size_t tls_failures() const;

  class impl;

private:
  std::shared_ptr<impl> impl_;
};

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
uint16_t closed_port();

/// A throwaway PKI in a fresh temporary directory, removed by the
/// destructor. Made with the `openssl` command-line tool (EC P-256 keys,
/// valid for one day):
/// - `ca_file`: the CA that signs the certificates below;
/// - `server_cert`/`server_key`: CN "localhost", SAN DNS:localhost and
///   IP:127.0.0.1, serverAuth;
/// - `localhost_only_cert`/`localhost_only_key`: SAN DNS:localhost only;
/// - `wrong_name_cert`/`wrong_name_key`: SAN DNS:wrong-name.example only;
/// - `client_cert`/`client_key`: CN "troupe-test-client", clientAuth;
/// - `other_ca_file`: an unrelated CA (signs only `node_untrusted_*`);
/// - cluster node certificates, each with both serverAuth and clientAuth
///   (a node dials and accepts): `node_cert`/`node_key` (SAN DNS:localhost
///   and IP:127.0.0.1), `node_localhost_only_*` (SAN DNS:localhost only),
///   `node_wrong_name_*` (SAN DNS:wrong-name.example), and
///   `node_untrusted_*` (SAN as `node_cert`, signed by the other CA).
struct test_pki {
  std::string dir;
  std::string ca_file;
  std::string server_cert;
  std::string server_key;
  std::string localhost_only_cert;
  std::string localhost_only_key;
  std::string wrong_name_cert;
  std::string wrong_name_key;
  std::string client_cert;
  std::string client_key;
  std::string other_ca_file;
  std::string node_cert;
  std::string node_key;
  std::string node_localhost_only_cert;
  std::string node_localhost_only_key;
  std::string node_wrong_name_cert;
  std::string node_wrong_name_key;
  std::string node_untrusted_cert;
  std::string node_untrusted_key;

  test_pki() = default;
  test_pki(const test_pki&) = delete;
  test_pki& operator=(const test_pki&) = delete;
  ~test_pki();
};

/// Creates a `test_pki`. Errors name the failed openssl command and its
/// output.
runtime::expected<std::unique_ptr<test_pki>> make_test_pki();

} // namespace troupe::test
