#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/config.hpp"

/// @file
/// The configuration compatibility check on join: Akka's
/// `JoinConfigCompatChecker` with its `fullMatch` helper and the "property
/// does not exist in previous versions" pattern for rolling upgrades.
///
/// A joining node sends its `join_config` (the values of every registered
/// key) in `init_join`; the seed checks it against its own and answers with
/// the `compat_result` and its own values of those keys; the joining node
/// checks those against its own rules too, so a key that only the newer
/// side knows is still checked (Akka checks on both sides the same way).
///
/// Differences from Akka, and why:
/// - Keys and values are plain strings chosen by the modules (e.g.
///   "sharding.number_of_shards" = "100"), not a HOCON subtree: troupe has
///   no shared config tree on the wire, and a string compare is what every
///   Akka checker in practice does.
/// - A rule is one of two closed kinds instead of arbitrary code, so both
///   sides evaluate the same rule and the result can travel as a value.
/// - The result lists every mismatch with both values instead of stopping
///   at messages, so the refusal reason names key and values on both nodes.
///
/// Secrets must never be registered: the values travel in clear text and
/// appear in refusal reasons and logs (Akka strips "sensitive" paths; troupe
/// simply never registers them).

namespace troupe::cluster {

/// The values of the registered keys on one node, sorted by key.
using join_config = std::map<std::string, std::string>;

/// How a key is compared.
enum class join_config_rule : uint8_t {
  /// Both nodes must have the key with equal values (Akka's fullMatch).
  must_equal = 0,
  /// Equal when both have the key; a node without it (an older version in
  /// a rolling upgrade) is compatible.
  ignore_if_missing,
};

/// "must_equal" or "ignore_if_missing".
const char* to_string(join_config_rule x) noexcept;

/// What is wrong with one key.
enum class mismatch_kind : uint8_t {
  /// Both have the key with different values.
  different = 0,
  /// The local node (the one that checked) lacks the key.
  missing_locally,
  /// The remote node lacks the key.
  missing_remotely,
};

/// One incompatible key, with both values ("" when missing).
struct config_mismatch {
  std::string key;
  mismatch_kind kind = mismatch_kind::different;
  std::string local_value;
  std::string remote_value;

  friend bool operator==(const config_mismatch&, const config_mismatch&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, config_mismatch& x) {
  return f(x.key, x.kind, x.local_value, x.remote_value);
}

/// The outcome of a compatibility check: every mismatching key, sorted by
/// key; compatible when there is none. Travels in `init_join_ack`.
struct compat_result {
  std::vector<config_mismatch> mismatches;

  bool compatible() const noexcept {
    return mismatches.empty();
  }

  /// The mismatches as one line, as seen from the node that checked, e.g.
  /// `cluster.name is "a" here but "b" on the other node;
  /// sharding.number_of_shards is missing on the other node (here "100")`.
  /// Empty when compatible.
  std::string describe(std::string_view here = "here",
                       std::string_view there = "on the other node") const;

  friend bool operator==(const compat_result&, const compat_result&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, compat_result& x) {
  return f(x.mismatches);
}

/// The keys checked on join, each with its rule. Modules register their
/// keys when the node is assembled (the transport's protocol version and
/// cluster name by default, later e.g. sharding's number of shards).
/// A plain value; not thread-safe while being built.
class join_config_checker {
public:
  /// Registers `key` with `rule`; registering a key twice is a programmer
  /// error (asserts), as two modules would disagree on its meaning.
  void add(std::string key, join_config_rule rule);

  /// The registered keys and rules, sorted by key.
  const std::map<std::string, join_config_rule>& rules() const noexcept {
    return rules_;
  }

  /// Checks `remote` against `local` for every registered key. Keys that
  /// are not registered are not compared.
  compat_result check(const join_config& local,
                      const join_config& remote) const;

private:
  std::map<std::string, join_config_rule> rules_;
};

/// The key of the wire protocol's major (protocol_version.hpp), checked
/// with must_equal: only the major must match, nodes of different minors
/// join each other. (The handshake already refuses another major; this
/// check names the key as well, and covers transports without the
/// handshake, e.g. the simulator's.)
inline constexpr std::string_view protocol_major_key = "troupe.protocol_major";

/// The key of the cluster name, checked with must_equal.
inline constexpr std::string_view cluster_name_key = "cluster.name";

/// A checker with troupe's own keys: `troupe.protocol_major` and
/// `cluster.name`, both must_equal.
join_config_checker default_join_config_checker();

/// A node's join configuration from its configuration: `cluster.name`,
/// `troupe.protocol_major` (protocol_major, protocol_version.hpp), and the
/// value of every key a
/// module marked with `config_schema::check_on_join` (e.g.
/// `sharding.number_of_shards`), as `config::join_checked_values` renders
/// it. `cfg` must declare `cluster.name` (the cluster module's keys).
join_config join_config_of(const runtime::config& cfg);

/// The checker of a node with configuration `cfg`: the default checker
/// plus every key marked with `config_schema::check_on_join`, with
/// ignore_if_missing (a node that does not declare the key, e.g. runs
/// without the module, still joins; two nodes with different values are
/// refused with the key and both values named).
join_config_checker join_config_checker_of(const runtime::config& cfg);

/// `checker.check(local, remote)`.
compat_result check_join_compatibility(const join_config_checker& checker,
                                       const join_config& local,
                                       const join_config& remote);

/// The values of `config` for the keys of `request` that `config` has: what
/// a seed sends back in `init_join_ack` (Akka returns the cluster's values
/// of the keys the joining node sent).
join_config values_for_keys_of(const join_config& config,
                               const join_config& request);

} // namespace troupe::cluster
