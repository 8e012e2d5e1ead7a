#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"

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
  return f(x.method, x.url, x.headers, x.body, x.timeout, x.max_response_bytes);
}

/// A complete HTTP response (any status code, including 4xx/5xx: a status
/// is not an error at this layer).
struct http_response {
  uint16_t status = 0;
  std::vector<http_header> headers;
  std::string body;

  /// The first header named `name` (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;

  /// The wait a `Retry-After: <delta-seconds>` header asks for (RFC 9110
  /// §10.2.3; surrounding whitespace allowed), capped at one hour; 0 when
  /// the header is absent, an HTTP date, negative or not a number. Used by
  /// the etcd and Kubernetes lease backends for 429/503 answers.
  timespan retry_after() const;
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

/// An absolute http(s) URL split into the parts a client needs.
///
/// - `scheme`: "http" or "https" (lower case).
/// - `host`: a DNS name or an IP literal, without brackets (`::1`).
/// - `port`: explicit, or the scheme's default (80 / 443).
/// - `target`: path and query as sent in the request line; "/" when the URL
///   has no path. A fragment (`#...`) is dropped: it is never sent.
///
/// A plain value; thread-safe as any value.
struct parsed_url {
  std::string scheme;
  std::string host;
  uint16_t port = 0;
  std::string target;

  friend bool operator==(const parsed_url&, const parsed_url&) = default;

  /// True for "https".
  bool is_tls() const noexcept {
    return scheme == "https";
  }

  /// True if `host` is an IPv4 or IPv6 literal (no DNS, no SNI).
  bool is_ip_literal() const;

  /// The `Host` header value: `host` (IPv6 bracketed), plus `:port` unless
  /// it is the scheme's default.
  std::string authority() const;

  /// The canonical URL `scheme://authority target`, as error messages name
  /// it.
  std::string to_string() const;
};

/// Parses an absolute `http://` or `https://` URL (RFC 3986 subset: scheme
/// case-insensitive, host a reg-name, IPv4 or bracketed IPv6 literal,
/// optional port 1..65535, optional path and query).
///
/// Errors (errc::http_bad_request) name the URL and what is wrong with it:
/// an unsupported scheme, an empty or invalid host, a bad port, user info
/// (any `@`, rejected so that credentials never end up in URLs, logs or
/// messages; the message shows everything up to the last `@` as
/// `<redacted>@`, so a password with an unencoded `/` does not leak), or
/// control characters and spaces.
expected<parsed_url> parse_url(std::string_view url);

/// Checks a request before any I/O: method a token, URL per `parse_url`,
/// header names tokens, header values free of CR, LF and NUL, `timeout`
/// positive, `max_response_bytes` positive. Returns a default (empty) error
/// when the request is valid, else errc::http_bad_request with a message
/// that names the method, URL and the offending part (never a header value:
/// values may be secrets).
error validate_request(const http_request& req);

} // namespace troupe::runtime
