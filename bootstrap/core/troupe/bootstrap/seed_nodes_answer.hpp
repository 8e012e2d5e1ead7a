#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// The answer of `GET /bootstrap/seed-nodes`, Akka Management's
/// `SeedNodes` (`selfNode`, `seedNodes`): what one contact point tells a
/// bootstrapping node about the cluster it belongs to.
///
/// JSON (snake_case, as every troupe answer):
/// ```
/// {"self_node": "10.0.0.1:2552#4711",
///  "seed_nodes": [{"node": "10.0.0.1:2552#4711", "status": "up",
///                  "roles": ["backend"]}, ...]}
/// ```
/// `self_node` is the contact point's cluster address (host, cluster port,
/// uid): the bootstrapping node orders contact points by it and recognises
/// itself by it. `seed_nodes` is empty while the node is not a member (not
/// joined yet, or down, leaving, exiting or removed): "not in a cluster".
///
/// Pure functions over values; thread-safe.

namespace troupe::bootstrap {

/// One member a contact point offers as a seed node.
struct seed_node {
  runtime::unique_address node;
  /// "up" or "weakly_up" (the only statuses offered).
  std::string status;
  std::vector<std::string> roles;

  friend bool operator==(const seed_node&, const seed_node&) = default;
};

/// What a contact point answered.
struct seed_nodes_answer {
  runtime::unique_address self_node;
  /// Oldest first; empty: the contact point is not in a cluster.
  std::vector<seed_node> seed_nodes;

  /// True when the contact point reports a cluster.
  bool in_cluster() const noexcept {
    return !seed_nodes.empty();
  }

  friend bool operator==(const seed_nodes_answer&, const seed_nodes_answer&)
    = default;
};

/// At most this many seed nodes are offered (Akka Management's
/// `http-max-seed-nodes-to-expose`, 5).
inline constexpr size_t max_seed_nodes_offered = 5;

/// The answer a node gives from its own membership view: `self` and, when
/// `self` is an up or weakly_up member of `view`, the members that are up
/// or weakly_up and reachable (observed unreachable by nobody), oldest
/// first (up number, then address), at most max_seed_nodes_offered, with
/// `self` among them. A node that is joining, leaving, exiting, down or
/// removed, or not in `view` at all, offers none: a bootstrapping node
/// must not join through a member that cannot welcome it (Akka offers the
/// members a node sees; troupe offers only those that answer `init_join`
/// with an ack, the up and weakly_up ones).
seed_nodes_answer seed_nodes_of(const runtime::unique_address& self,
                                const cluster::membership_state* view);

/// The JSON text of `x` (see the file comment).
std::string to_json(const seed_nodes_answer& x);

/// Parses an answer. Errors (errc::bad_probe_answer) name what was wrong:
/// not JSON (with the offset), a missing or mistyped field, an address
/// that is not `host:port#uid`, a status other than up/weakly_up, more
/// than max_seed_nodes_offered seed nodes.
runtime::expected<seed_nodes_answer>
parse_seed_nodes_answer(std::string_view json);

} // namespace troupe::bootstrap
