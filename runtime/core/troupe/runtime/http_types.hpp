#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "troupe/runtime/clock.hpp"

/// @file
/// Value types of troupe's asynchronous HTTP(S) client (runtime/shell
/// http_client.hpp, runtime/edge http_engine.hpp). CAF-free; inspectable.

namespace troupe::runtime {

/// One header field.
struct http_header {
  std::string name;
  std::string value;

  friend bool operator==(const http_header&, const http_header&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, http_header& x) {
  return f(x.name, x.value);
}

/// An HTTP/1.1 request.
///
/// - `url`: absolute, `http://host:port/target` or `https://host:port/target`
///   (port optional: 80 / 443). IPv6 hosts bracketed.
/// - `timeout`: the deadline of the whole exchange (resolve, connect, TLS
///   handshake, write, read). Must be positive.
/// - `max_response_bytes`: bound on the response (header + body); a larger
///   response fails with errc::http_response_too_large.
struct http_request {
  std::string method = "GET";
  std::string url;
  std::vector<http_header> headers;
  std::string body;
  timespan timeout = std::chrono::seconds{5};
  uint64_t max_response_bytes = 4 * 1024 * 1024;
};

template <class Inspector>
auto inspect(Inspector& f, http_request& x) {
  return f(x.method, x.url, x.headers, x.body, x.timeout,
           x.max_response_bytes);
}

/// A complete HTTP response (any status code, including 4xx/5xx: a status
/// is not an error at this layer).
struct http_response {
  uint16_t status = 0;
  std::vector<http_header> headers;
  std::string body;

  /// The first header named `name` (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

template <class Inspector>
auto inspect(Inspector& f, http_response& x) {
  return f(x.status, x.headers, x.body);
}

/// TLS settings for https:// URLs. The server certificate is always
/// verified against `ca_file` (or the system store when empty) and the
/// URL's host name (RFC 6125 via OpenSSL); `client_cert_file` and
/// `client_key_file` (PEM) enable a client certificate.
struct http_tls_settings {
  std::string ca_file;
  std::string client_cert_file;
  std::string client_key_file;
};

} // namespace troupe::runtime
