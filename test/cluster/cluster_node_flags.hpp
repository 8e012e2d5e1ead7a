#pragma once

#include <cstdint>
#include <string>
#include <vector>

/// @file
/// The flags of the multi-process tests' and benchmarks' cluster_node
/// processes (test/cluster/cluster_node.cpp): DESIGN.md §10's shortened
/// settings. Free of any test framework (the benchmarks use it too).

namespace troupe::test {

/// The flags of a node of cluster "mp" at `host:port` joining through
/// `seed` ("host:port"): heartbeat 100 ms, acceptable pause 1 s, gossip,
/// leader actions and reaper 200 ms, seed node timeout and join retry 1 s
/// (the same as cluster_daemon_support.hpp's short_settings), fast
/// reconnects. No downing key exists, so nothing downs an unreachable node.
inline std::vector<std::string> cluster_node_flags(const std::string& host,
                                                   uint16_t port,
                                                   const std::string& seed) {
  return {"--cluster.name=mp",
          "--cluster.secret=multi-process-test-secret-0123456789",
          "--cluster.host=" + host,
          "--cluster.port=" + std::to_string(port),
          "--cluster.seed_nodes=" + seed,
          "--cluster.failure_detector.heartbeat_interval=100ms",
          "--cluster.failure_detector.acceptable_heartbeat_pause=1s",
          "--cluster.failure_detector.expected_response_after=500ms",
          "--cluster.gossip_interval=200ms",
          "--cluster.leader_actions_interval=200ms",
          "--cluster.unreachable_nodes_reaper_interval=200ms",
          "--cluster.seed_node_timeout=1s",
          "--cluster.retry_unsuccessful_join_after=1s",
          "--cluster.transport.reconnect_backoff_min=20ms",
          "--cluster.transport.reconnect_backoff_max=200ms",
          "--cluster.transport.handshake_timeout=2s",
          "--log.level=info"};
}

} // namespace troupe::test
