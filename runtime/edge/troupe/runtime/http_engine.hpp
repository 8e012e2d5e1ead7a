#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_types.hpp"

/// @file
/// The CAF-free engine under troupe's HTTP(S) client: Boost.Beast on one
/// Asio io thread. The actor in runtime/shell http_client.hpp owns one; edges
/// that are not actors may use it directly.

namespace troupe::runtime {

/// Runs HTTP/1.1 exchanges asynchronously on one io thread that it owns.
///
/// Each exchange opens its own connection (`Connection: close`; no pooling),
/// resolves, connects, performs the TLS handshake for https:// URLs, writes
/// the request and reads the response, all under one deadline
/// (`http_request::timeout`, measured from `start`). TLS always verifies the
/// server: the chain against `http_tls_settings::ca_file` (or the system
/// default paths when empty) and the URL's host against the certificate's
/// subjectAltName (DNS name or IP address, RFC 6125 via OpenSSL). SNI is sent
/// for DNS names. TLS 1.2 is the minimum version.
///
/// Errors (runtime::errc, category "runtime"); each message names the method,
/// the URL and the stage, e.g. `GET https://127.0.0.1:2379/v3/kv/range: TLS
/// handshake failed: certificate verify failed (hostname mismatch)`:
/// - `http_bad_request`: the request failed `validate_request`.
/// - `http_connect_failed`: resolve or connect failed, or the connection
///   broke (reset, broken pipe) while writing or reading.
/// - `http_timeout`: the deadline passed, in any stage.
/// - `http_tls_failed`: TLS setup (unreadable CA file or client key), the
///   handshake, certificate or host name verification, or a TLS alert from
///   the server (e.g. a required client certificate was missing).
/// - `http_response_too_large`: header plus body exceed
///   `http_request::max_response_bytes`, or the header alone exceeds
///   `max_header_bytes`.
/// - `http_malformed_response`: the bytes are not an HTTP/1.1 response, or
///   the server closed the connection before the response was complete.
/// - `http_shutdown`: the engine shut down before the exchange completed.
/// A response with any status code (including 4xx and 5xx) is a success.
///
/// Header values are never logged (they may hold credentials).
///
/// Thread-safety: `start` and `shutdown` may be called from any thread,
/// concurrently. Callbacks run on the io thread and must not block. They
/// should not shut down or destroy the engine; if that happens anyway (e.g.
/// the owner's last reference drops on the io thread), `shutdown` detaches
/// the io thread instead of joining it, which lets it finish on its own.
class http_engine {
public:
  /// Receives the outcome of one exchange: called exactly once.
  using callback = std::function<void(expected<http_response>)>;

  /// Bound on a response's header (status line and fields), bytes. Beast
  /// cannot store a field of 64 KiB or more; real servers send a few KiB.
  static constexpr uint64_t max_header_bytes = 32 * 1024;

  /// Starts the io thread. TLS settings apply to every https:// exchange;
  /// if they cannot be loaded (unreadable CA file, client certificate
  /// without key, key not matching), the engine still starts and every
  /// https:// exchange fails with `http_tls_failed` naming the file.
  explicit http_engine(http_tls_settings tls = {});

  /// Calls `shutdown()`.
  ~http_engine();

  http_engine(const http_engine&) = delete;
  http_engine& operator=(const http_engine&) = delete;

  /// Starts one exchange; returns at once. `done` is called exactly once:
  /// from the io thread with the response or an error, or, if the engine
  /// has already shut down, synchronously on the caller's thread with
  /// `http_shutdown`.
  void start(http_request req, callback done);

  /// Completes every pending exchange with `http_shutdown`, stops the io
  /// thread and joins it. Idempotent; later `start` calls fail with
  /// `http_shutdown`. Blocks until the io thread exits: milliseconds, unless
  /// a DNS lookup is in flight (getaddrinfo cannot be interrupted; Asio
  /// waits for it). Does not block when called from the io thread itself.
  void shutdown();

  /// The TLS setup error, or a default (empty) error when the TLS settings
  /// loaded fine. Thread-safe (immutable after construction).
  const error& tls_setup_error() const noexcept;

  /// Implementation detail (io_context, sessions), defined in the .cpp.
  class impl;

private:
  std::shared_ptr<impl> impl_;
};

} // namespace troupe::runtime
