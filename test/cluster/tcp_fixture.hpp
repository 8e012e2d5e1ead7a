#pragma once

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "recording_listener.hpp"
#include "troupe/cluster/tcp_transport.hpp"

// Nodes on real loopback sockets for the TCP transport's integration tests:
// short timeouts, generous deadlines (eventually()).

namespace troupe::test {

inline const std::string test_secret = "integration-test-secret-0123456789";

/// Settings for a loopback node: ephemeral port unless given, short
/// handshake timeout and backoff.
inline cluster::tcp_transport_settings loopback(uint16_t port = 0,
                                                uint64_t uid = 0) {
  cluster::tcp_transport_settings s;
  s.cluster_name = "it";
  s.local = {"127.0.0.1", port, uid};
  s.secret = runtime::secret{test_secret};
  s.handshake_timeout = std::chrono::seconds{2};
  s.reconnect_backoff_min = std::chrono::milliseconds{20};
  s.reconnect_backoff_max = std::chrono::milliseconds{200};
  return s;
}

/// One node: a transport and the listener recording its events.
struct tcp_node {
  std::shared_ptr<recording_listener> events
    = std::make_shared<recording_listener>();
  std::unique_ptr<cluster::tcp_transport> transport;

  explicit tcp_node(cluster::tcp_transport_settings s) {
    auto t = cluster::tcp_transport::make(std::move(s), events);
    if (!t)
      FAIL(t.error().message);
    transport = std::move(*t);
  }

  const cluster::unique_address& addr() const {
    return transport->local_address();
  }

  cluster::endpoint ep() const {
    return cluster::endpoint_of(addr());
  }

  /// `addr()` with uid 0 ("whoever lives there").
  cluster::unique_address any() const {
    return {addr().host, addr().port, 0};
  }

  const cluster::peer_counters& counters_of(const cluster::endpoint& peer) {
    metrics_ = transport->metrics();
    static const cluster::peer_counters none;
    auto* m = metrics_.find(peer);
    return m ? m->counters : none;
  }

  cluster::peer_counters total() const {
    return transport->metrics().total;
  }

  void send(const cluster::unique_address& to, cluster::lane ln,
            const std::string& payload) {
    auto err = transport->send(to, ln, bytes_of(payload));
    REQUIRE(err.message == "");
  }

private:
  cluster::transport_metrics metrics_;
};

inline std::vector<std::string> numbered(const std::string& prefix, int from,
                                         int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i)
    out.push_back(prefix + std::to_string(i));
  return out;
}

} // namespace troupe::test
