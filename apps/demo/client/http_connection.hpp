#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// A blocking HTTP/1.1 client on one kept-alive connection (Boost.Beast),
/// for the demo's load driver and tests: no CAF, no thread of its own.

namespace troupe::demo::client {

/// A `host:port` to connect to.
struct endpoint {
  std::string host;
  uint16_t port = 0;

  friend bool operator==(const endpoint&, const endpoint&) = default;
};

/// Parses `host:port` (port 1-65535; an IPv6 host in brackets: `[::1]:80`).
/// Nullopt if malformed.
std::optional<endpoint> parse_endpoint(std::string_view text);

/// `host:port` (IPv6 hosts in brackets).
std::string to_string(const endpoint& ep);

/// An HTTP answer of any status.
struct http_result {
  unsigned status = 0;
  std::string body;
};

/// One connection to one endpoint, opened on the first request and again
/// after the server closed it (or after an error). Each request waits at
/// most `timeout` for connect + write + read; on a timeout the connection
/// is closed. A request that fails on a reused connection before any byte
/// of the answer arrived (the server closed it while idle) is sent once
/// more on a new connection: the demo's requests are idempotent by
/// deposit id. Answers larger than 1 MiB are an error.
///
/// Errors (runtime::errc): http_connect_failed (names the endpoint and the
/// OS's reason), http_timeout, http_malformed_response (also for a
/// connection closed mid-answer). Not thread-safe: one per thread.
class http_connection {
public:
  http_connection(endpoint ep, std::chrono::milliseconds timeout);
  ~http_connection();

  http_connection(const http_connection&) = delete;
  http_connection& operator=(const http_connection&) = delete;

  /// Sends `method target` with `body` (Content-Type application/json when
  /// not empty) and reads the answer.
  runtime::expected<http_result> request(std::string_view method,
                                         std::string_view target,
                                         std::string_view body = {});

  /// Closes the connection (the next request opens a new one).
  void close();

  const endpoint& peer() const noexcept;

  struct impl;

private:
  std::unique_ptr<impl> impl_;
};

} // namespace troupe::demo::client
