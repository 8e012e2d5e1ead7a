#pragma once

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tcp_fixture.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/runtime/node.hpp"

/// @file
/// A node started from configuration, as an application's main() would:
/// cluster "it" on loopback (ephemeral port), DESIGN.md §10's short
/// membership settings, the integration tests' secret.

namespace troupe::test {

/// Starts a node with `modules` (the runtime's is always added) and the
/// flags `args` plus the loopback cluster flags; fails the test if the
/// configuration is refused.
inline std::unique_ptr<runtime::node>
configured_node(std::vector<std::string> args,
                std::vector<runtime::module> modules
                = {cluster::cluster_module()}) {
  runtime::node_options opts;
  opts.modules = std::move(modules);
  for (auto x : {"--cluster.name=it", "--cluster.host=127.0.0.1",
                 "--cluster.port=0", "--cluster.gossip_interval=200ms",
                 "--cluster.leader_actions_interval=200ms",
                 "--cluster.seed_node_timeout=1s",
                 "--cluster.failure_detector.heartbeat_interval=100ms",
                 "--cluster.failure_detector.acceptable_heartbeat_pause=1s"})
    args.emplace_back(x);
  args.push_back("--cluster.secret=" + test_secret);
  opts.sources.args = std::move(args);
  auto node = runtime::node::start(std::move(opts));
  if (!node)
    FAIL(node.error().message);
  return std::move(*node);
}

} // namespace troupe::test
