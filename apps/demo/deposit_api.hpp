#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "node_settings.hpp"
#include "troupe/cluster/remoting.hpp"
#include "troupe/management/router.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/sharding/sharding.hpp"

/// @file
/// The demo node's app API: `POST /deposit?account=ID&deposit=DID&amount=A`
/// over HTTP/1.1 (management::http_server with the demo's own handler).

namespace troupe::demo {

/// The app API of one node: an HTTP server on `demo.api_bind`:
/// `demo.api_port` whose handler sends each deposit to the account's entity
/// through the shard region (wherever in the cluster it lives) and blocks
/// until the entity answered (it persisted the deposit: 200
/// `{"seq":K,"balance":B}`; it could not: 503 `{"error":...}`) or
/// `demo.deposit_timeout` passed (504: the deposit may still be persisted
/// later). Other answers: 400 for a bad query, 404 for another path, 405
/// for another method, 503 when the region refuses the message (the node
/// is stopping). The server runs up to 32 requests at once (each waits on
/// its own worker thread), so a deposit for a shard that is moving does
/// not hold deposits for other shards.
///
/// Thread-safety: `port` from any thread; `stop` and the destructor from any
/// thread but the server's.
class deposit_api {
public:
  /// Starts the server. Errors: the server's (errc::invalid_settings naming
  /// the address and port, e.g. a port in use), or remoting's when the
  /// reply actor cannot be made addressable.
  static runtime::expected<std::unique_ptr<deposit_api>>
  start(caf::actor_system& sys, cluster::remoting_handle remoting,
        sharding::shard_region accounts, const node_settings& settings);

  ~deposit_api();

  deposit_api(const deposit_api&) = delete;
  deposit_api& operator=(const deposit_api&) = delete;

  /// The bound port.
  uint16_t port() const noexcept;

  /// Stops the server (idempotent); waiting requests end within
  /// `deposit_timeout`.
  void stop();

  struct impl;

private:
  explicit deposit_api(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace troupe::demo
