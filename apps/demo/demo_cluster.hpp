#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "demo_nodes.hpp"
#include "demo_options.hpp"
#include "demo_timing.hpp"

/// @file
/// The demo's processes on loopback: the store, the Kubernetes Lease API
/// emulator (`--lease kubernetes`) and the cluster nodes, with their ports
/// and flags. Not thread-safe (the launcher's main thread).

namespace troupe::demo {

/// The loopback ports of one node.
struct node_ports {
  /// "node-1", ...
  std::string name;
  uint16_t cluster = 0;
  uint16_t management = 0;
  uint16_t api = 0;
};

/// A free TCP port on 127.0.0.1 (bound and released at once; another
/// process may take it before the caller does, which the caller then sees
/// as a bind error); 0 with `error` set when none could be bound.
uint16_t free_loopback_port(std::string& error);

/// The processes of one demo run. Every process it starts dies with the
/// launcher (node_group).
class demo_cluster {
public:
  demo_cluster(const options& opts, const demo_timing& timing);

  /// Writes DIR/cluster.secret (32 random bytes, hex, mode 0600) and, for
  /// --lease kubernetes, DIR/k8s.token; creates DIR/leases. False after
  /// printing why (`troupe-demo: DIR/leases is a regular file, not a
  /// directory`).
  bool prepare();

  /// Starts troupe-demo-store on a free port (`--dir DIR`) and waits (at
  /// most `bound`) for its `listening on HOST:PORT` line; false after
  /// printing why (the store's stderr tail from DIR/store.log).
  bool start_store(std::chrono::milliseconds bound);

  /// Starts troupe-k8s-emulator likewise (--lease kubernetes only).
  bool start_emulator(std::chrono::milliseconds bound);

  /// Starts the N nodes (node-1 and node-2 are the seed nodes); false after
  /// printing why.
  bool start_nodes();

  /// The node whose cluster address is `address` (`host:port#uid` or
  /// `host:port`), or nullptr.
  const node_ports* node_at(std::string_view address) const;

  /// `address` as people read it: the node's name, else the address.
  std::string name_of(std::string_view address) const;

  /// `http://127.0.0.1:<management port>` of each node, in order.
  std::string management_url(const node_ports& n) const;

  /// The store's base URL (after start_store).
  std::string store_url() const;

  const std::vector<node_ports>& nodes() const noexcept {
    return ports_;
  }

  node_group& procs() noexcept {
    return procs_;
  }

  /// The flags of node `i` (0-based), for the docs and tests.
  std::vector<std::string> node_argv(size_t i) const;
  /// Every node's cluster endpoint, comma-separated (`cluster.seed_nodes`).
  std::string seed_nodes() const;

private:
  bool start_server(const std::string& name, std::vector<std::string> argv,
                    std::chrono::milliseconds bound, uint16_t& port);

  const options& opts_;
  const demo_timing& timing_;
  std::filesystem::path dir_;
  std::vector<node_ports> ports_;
  uint16_t store_port_ = 0;
  uint16_t k8s_port_ = 0;
  // The `listening on` line of the process being started.
  std::optional<std::string> listening_;
  node_group procs_;
};

} // namespace troupe::demo
