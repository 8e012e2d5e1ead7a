#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "troupe/runtime/error.hpp"

/// @file
/// A TCP proxy that delays traffic, put in front of etcd by the chaos test
/// to make it slow (the nemesis's etcd_slow / etcd_fast).

namespace troupe::chaos {

/// The delay proxy's operating errors. Zero is reserved for "no error".
enum class delay_proxy_errc : uint8_t {
  none = 0,
  /// The listen address does not parse or cannot be bound.
  listen_failed,
  /// The upstream host does not resolve.
  bad_upstream,
};

/// The enumerator's name, e.g. "listen_failed".
const char* to_string(delay_proxy_errc x) noexcept;

/// The error category of this enum: "chaos.delay_proxy".
inline const char* category_name(delay_proxy_errc) noexcept {
  return "chaos.delay_proxy";
}

/// Where the proxy listens and where it forwards to.
struct delay_proxy_config {
  /// An IPv4 or IPv6 address to listen on, e.g. "10.77.0.254".
  std::string listen_host = "127.0.0.1";
  /// 0 picks a free port (see `delay_proxy::port`).
  uint16_t listen_port = 0;
  /// The upstream's host (a name resolves once, at start) and port.
  std::string upstream_host = "127.0.0.1";
  uint16_t upstream_port = 0;
  /// The delay at start.
  std::chrono::milliseconds delay{0};
};

/// A TCP proxy with a settable latency. For every accepted connection it
/// opens one to the upstream and forwards bytes both ways; each chunk read
/// from one side is written to the other `delay` after it was read (the
/// delay read at that moment), in order: a latency, not a throughput limit
/// (chunks in flight overlap their delays; at most 1 MiB per direction is
/// held, beyond which reading pauses). 0 passes chunks through at once.
///
/// Closing: when one side closes (EOF or an error), the chunks already read
/// from it are still delivered (with their delay), then both connections
/// are closed. No half-close. When the upstream refuses or cannot be
/// reached, the accepted connection is closed at once (the client sees the
/// connection close rather than "refused": the listener stays up while
/// etcd is stopped).
///
/// Threads: Boost.Asio on one io thread of its own, started by `start` and
/// joined by the destructor. Sockets are opened in the network namespace of
/// the thread that calls `start` (the io thread inherits it), e.g. the hub
/// of a netns_network. `set_delay`, `delay`, `port`, `accepted` and
/// `open_connections` are thread-safe; construct and destroy from one
/// thread.
class delay_proxy {
public:
  /// Binds the listener, resolves the upstream and starts the io thread.
  /// Errors: listen_failed (bad address, port in use), bad_upstream
  /// (does not resolve), each message naming the address.
  static runtime::expected<std::unique_ptr<delay_proxy>>
  start(const delay_proxy_config& cfg);

  /// Closes the listener and every connection, joins the io thread.
  ~delay_proxy();

  delay_proxy(const delay_proxy&) = delete;
  delay_proxy& operator=(const delay_proxy&) = delete;

  /// The port it listens on (the chosen one if the config said 0).
  uint16_t port() const noexcept;

  /// Sets the delay of chunks read from now on (negative counts as 0).
  void set_delay(std::chrono::milliseconds d) noexcept;

  /// The current delay.
  std::chrono::milliseconds delay() const noexcept;

  /// Connections accepted so far.
  uint64_t accepted() const noexcept;

  /// Accepted connections not closed yet.
  uint64_t open_connections() const noexcept;

private:
  struct impl;
  explicit delay_proxy(std::unique_ptr<impl> p);
  std::unique_ptr<impl> impl_;
};

} // namespace troupe::chaos
