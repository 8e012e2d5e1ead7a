#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

/// @file
/// How the chaos driver places the nodes on the network and cuts it
/// (docs/design/chaos.md). Two mechanisms, and every run says which one
/// it used (`run_start`'s `mechanism`):
/// - `netns` (root): each node in its own network namespace on a bridge;
///   the store, etcd's proxy and the driver itself in the hub namespace;
///   partitions are iptables DROP rules in the nodes' namespaces, so the
///   kernel drops the packets (TCP sees a real partition); slow links are
///   delay proxies in the hub that the nodes' cluster connections to and
///   from the slow node are redirected through (iptables DNAT in the
///   senders' namespaces; this kernel has no netem);
/// - `transport` (anyone): every process on loopback; partitions are the
///   transport's own blackhole and slow links its delay, set through each
///   node's management `/faults` (management.fault_injection=true,
///   loopback only). A node keeps its faults in memory, so a restarted
///   node is told again.
/// Not thread-safe (the driver's main thread).

namespace troupe::chaos {

/// Where one node listens.
struct node_place {
  /// "node-1", ...
  std::string name;
  /// cluster.host (also the app API's and management's bind address).
  std::string host;
  uint16_t cluster_port = 0;
  uint16_t management_port = 0;
  uint16_t api_port = 0;

  /// `host:cluster_port`.
  std::string cluster_endpoint() const;
  /// `http://host:management_port`.
  std::string management_url() const;
};

/// A partition in force: packets from each of `from` to each of `to` are
/// dropped, and back too when `symmetric`. Node indexes are 0-based.
struct partition_spec {
  uint64_t id = 0;
  bool symmetric = true;
  std::vector<size_t> from;
  std::vector<size_t> to;
};

class fault_network {
public:
  virtual ~fault_network() = default;

  /// "netns" or "transport".
  virtual std::string mechanism() const = 0;

  /// The nodes' places (fixed for the run: a restarted node keeps its
  /// host and ports, and gets a new uid).
  virtual const std::vector<node_place>& nodes() const = 0;

  /// The host the hub's servers (store, etcd proxy) bind to and the nodes
  /// reach them at.
  virtual std::string hub_host() const = 0;

  /// The argv prefix that runs a program as node `i` (empty: none).
  virtual std::vector<std::string> launcher(size_t i) const = 0;

  /// Puts `p` in force. Errors: text naming what failed (a command and
  /// its output, a node's HTTP answer); empty on success.
  virtual std::string partition(const partition_spec& p) = 0;

  /// Lifts partition `id` (0: every one, and every slow link). Errors as
  /// `partition`.
  virtual std::string heal(uint64_t id) = 0;

  /// Delays every link between node `i` and each other node by `delay`,
  /// in both directions, from now until `fast_links(i)` (across restarts
  /// of any node); its links to the hub (etcd, the store, the driver) stay
  /// fast. In netns mode the connections opened before keep their path
  /// (the slow node's own are new: it is restarted behind the slow
  /// links). Never together with a partition (the schedule keeps them
  /// apart: netns' proxies would carry traffic around the partition).
  /// Errors as `partition`.
  virtual std::string slow_links(size_t i, std::chrono::milliseconds delay) = 0;

  /// Ends node `i`'s slow links (none: nothing to do). In netns mode the
  /// connections through the proxies are closed (the transport reconnects
  /// directly). Errors as `partition`.
  virtual std::string fast_links(size_t i) = 0;

  /// Node `i` (re)started and answers on its management port: a
  /// mechanism whose faults live in the nodes re-applies them. Errors as
  /// `partition`.
  virtual std::string node_started(size_t i) = 0;
};

/// The loopback network: `nodes` nodes with free loopback ports;
/// partitions through `/faults`. Errors throw std::runtime_error (no free
/// port).
std::unique_ptr<fault_network> make_transport_network(size_t nodes);

/// Why the netns network cannot be used here (not root, no `ip` or
/// `iptables`), or empty.
std::string netns_unsupported();

/// The namespace network (see the file comment): creates the namespaces
/// and moves the calling thread (call it from the main thread before any
/// other thread starts: new threads and children inherit it) into the hub
/// namespace. Removed on destruction. Errors throw std::runtime_error
/// naming the command that failed and its output.
std::unique_ptr<fault_network> make_netns_network(size_t nodes);

} // namespace troupe::chaos
