#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "troupe/runtime/error.hpp"

/// @file
/// A network of Linux network namespaces for multi-process tests and the
/// chaos test: one namespace per node, each wired by a veth pair to a bridge
/// in a hub namespace that has an address on the bridge too, and partitions
/// made with iptables inside the node namespaces. The host's own namespace
/// is never touched. Needs root and the programs `ip` (iproute2) and
/// `iptables`.

namespace troupe::test {

/// The network's operating errors. Zero is reserved for "no error".
enum class netns_errc : uint8_t {
  none = 0,
  /// A command (ip, iptables) or a system call failed; the message has the
  /// command and its output.
  command_failed,
  /// A node index out of range, an empty or overlapping partition side, an
  /// unknown partition id.
  bad_argument,
};

/// The enumerator's name, e.g. "command_failed".
const char* to_string(netns_errc x) noexcept;

/// The error category of this enum: "test.netns".
inline const char* category_name(netns_errc) noexcept {
  return "test.netns";
}

/// The marker a test prints when its environment cannot run it; CTest's
/// SKIP_REGULAR_EXPRESSION matches it (e.g. test/cluster/cluster_processes.
/// cmake) and reports the test skipped.
inline constexpr const char* skip_marker = "troupe-test-skipped:";

/// True if this run is CI's (environment CI=true), where a test that cannot
/// run its real mode fails instead of skipping (DESIGN.md §10).
bool in_ci();

/// How a partition cuts the links between its sides A and B.
enum class partition_shape : uint8_t {
  /// Nothing passes between A and B in either direction.
  symmetric,
  /// A cannot reach B, B still reaches A: A's packets to B on connections
  /// (and datagram flows) that A starts are dropped, also on connections
  /// opened before the partition; B's connections to A work both ways, A's
  /// replies on them included. Dropping every packet
  /// from A to B instead would also stall B's TCP connections to A (A's
  /// acknowledgements are lost), which is a symmetric cut in effect; with
  /// one connection per direction (docs/design/transport.md §3) this shape
  /// means "messages from A to B are lost, from B to A delivered".
  asymmetric,
};

/// The namespaces and their wiring. Node i (from 1) lives in its own
/// namespace with address 10.77.0.i/24 on `eth0`; its veth peer `v<i>` is
/// a port of bridge `br0` in the hub namespace, which has 10.77.0.254/24 on
/// the bridge, so processes in the hub (etcd, a store, the driver itself
/// after `enter_hub`) reach every node and every node reaches them.
/// Partitions are iptables rules in the node namespaces' filter table
/// (INPUT; `isolate` also OUTPUT); they never name the hub's address, so
/// every node keeps reaching the hub (except under `isolate`). Every node
/// namespace tracks connections from its creation on (a conntrack rule in
/// FORWARD), which the asymmetric shape needs.
///
/// Names: `trns<pid>-<k>-hub` and `trns<pid>-<k>-n<i>` (pid: this process,
/// k: the network's number in it). `unsupported` first deletes the `trns*`
/// namespaces of processes that no longer exist (killed before their
/// destructors ran). The destructor deletes every namespace this object
/// created, and with them their interfaces and rules.
///
/// Errors are values (netns_errc, category "test.netns") whose message
/// names the command and its output.
///
/// Thread-safety: not thread-safe; drive it from one thread.
class netns_network {
public:
  /// Creates nothing yet: `unsupported` and `create` do, so that a failure
  /// can be told apart from the environment's lack of support. `nodes`
  /// must be 1..253 (asserts).
  explicit netns_network(size_t nodes);

  /// Deletes the namespaces created here.
  ~netns_network();

  netns_network(const netns_network&) = delete;
  netns_network& operator=(const netns_network&) = delete;

  /// Why this environment cannot run the network (not root, no `ip` or
  /// `iptables`, `ip netns add` refused), or nothing; on success the hub
  /// namespace exists.
  std::optional<std::string> unsupported();

  /// Wires the hub and the nodes (after `unsupported` returned nothing).
  runtime::error create();

  /// The number of nodes.
  size_t size() const noexcept {
    return nodes_.size();
  }

  /// The IPv4 address of node `i` (from 1): "10.77.0.<i>".
  static std::string address(size_t i);

  /// The hub's address on the bridge: "10.77.0.254".
  static std::string hub_address();

  /// The name of node `i`'s namespace (from 1; asserts the range).
  const std::string& node_namespace(size_t i) const;

  /// The name of the hub's namespace.
  const std::string& hub_namespace() const noexcept {
    return hub_;
  }

  /// `ip netns exec <node i's namespace>`: prefix of a command line that
  /// runs a program in node i's namespace.
  std::vector<std::string> launcher(size_t i) const;

  /// Likewise for the hub's namespace.
  std::vector<std::string> hub_launcher() const;

  /// Moves the calling thread into the hub's network namespace (setns on
  /// /var/run/netns/<hub>); threads it creates afterwards, and processes it
  /// starts, are in the hub too. To put a whole process there, call it
  /// before the process starts other threads. There is no way back but a
  /// saved descriptor of the old namespace: a test that needs the host
  /// namespace again should enter the hub from a dedicated thread.
  runtime::error enter_hub() const;

  /// Likewise for node `i`'s namespace.
  runtime::error enter_node(size_t i) const;

  /// Cuts A from B as `shape` says (A and B: node indices from 1, both
  /// non-empty and disjoint; nodes in neither side are untouched). Returns
  /// the partition's id (from 1) for `heal`. Rules go into the INPUT chain
  /// of the receivers, so packets vanish silently as on a real network:
  /// symmetric drops A's addresses in B's namespaces and B's in A's;
  /// asymmetric drops, in B's namespaces, packets from A in conntrack's
  /// original direction (flows A started).
  runtime::expected<uint32_t> partition(const std::vector<size_t>& a,
                                        const std::vector<size_t>& b,
                                        partition_shape shape);

  /// Cuts node `i` from everything but its loopback, the hub included
  /// (both directions). Returns an id for `heal`.
  runtime::expected<uint32_t> isolate(size_t i);

  /// Sends the TCP connections that node `i` opens to `address:port` to
  /// `to_address:to_port` instead (e.g. a delay proxy in the hub): a DNAT
  /// rule in the nat table's OUTPUT chain of node i's namespace.
  /// Connections opened before keep their path (NAT applies to a flow's
  /// first packet); the target sees the connection come from node i's
  /// address. Returns an id for `heal`, which removes the rule (new
  /// connections then go to `address:port` again). Errors: bad_argument
  /// for a node out of range, command_failed.
  runtime::expected<uint32_t> redirect(size_t i, const std::string& address,
                                       uint16_t port,
                                       const std::string& to_address,
                                       uint16_t to_port);

  /// Removes the rules of partition (or redirect) `id` (an unknown or
  /// healed id is bad_argument). Other partitions stay.
  runtime::error heal(uint32_t id);

  /// Removes every partition and redirect: flushes INPUT and OUTPUT, and
  /// the nat table's OUTPUT, in every node namespace. Tries every node
  /// and reports the first failure.
  runtime::error heal_all();

  /// The ids of the partitions and redirects in force.
  std::vector<uint32_t> partitions() const;

private:
  /// One iptables rule: the node whose namespace holds it, its chain and
  /// its match and target (as after `-A <chain>`), and its table.
  struct rule {
    size_t node;
    std::string chain;
    std::vector<std::string> spec;
    std::string table = "filter";
  };

  runtime::error ip(std::vector<std::string> args);
  runtime::error iptables(size_t node, std::vector<std::string> args);
  runtime::error add_namespace(const std::string& name);
  runtime::error add_rules(uint32_t id, std::vector<rule> rules);
  runtime::error check_node(size_t i) const;
  runtime::error enter(const std::string& name) const;
  void remove_stale();

  std::string ip_;
  std::string iptables_;
  std::string hub_;
  std::vector<std::string> nodes_;
  std::vector<std::string> created_;
  std::map<uint32_t, std::vector<rule>> partitions_;
  uint32_t next_id_ = 1;
};

} // namespace troupe::test
