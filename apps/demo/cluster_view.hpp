#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// What the demo launcher shows of the cluster, read only from the nodes'
/// management endpoints (docs/design/management.md): the JSON answers
/// parsed into one snapshot (console_view.hpp renders it). Pure
/// (RapidJSON); thread-safe as plain values and functions.

namespace troupe::demo {

/// One member as `GET /cluster/members` lists it.
struct member_row {
  /// `host:port#uid`.
  std::string address;
  /// "up", "joining", "leaving", "exiting", "down", "removed", ...
  std::string status;
  bool reachable = true;
  /// 0 for a member that was never Up.
  int32_t up_number = 0;
};

/// The cluster as one poll saw it; unset fields were not known (the
/// endpoint did not answer, or nobody holds or runs it).
struct cluster_snapshot {
  /// Whether a node answered `GET /cluster/members` (else the poll failed
  /// and the fields below are unset or empty).
  bool members_answered = false;
  /// Whether a node answered `GET /cluster/shards/account`.
  bool shards_answered = false;
  /// From one node's `GET /cluster/members`.
  std::vector<member_row> members;
  std::optional<std::string> leader;
  std::optional<std::string> oldest;
  /// From `GET /singletons`: the host of the `scheduler` instance and its
  /// fencing token.
  std::optional<std::string> singleton_host;
  std::optional<uint64_t> singleton_token;
  /// From `GET /leases` of the node that holds it (`held_here`): the
  /// scheduler's lease holder and token.
  std::optional<std::string> lease_holder;
  std::optional<uint64_t> lease_token;
  /// From `GET /cluster/shards/account`: the shard ids of each region,
  /// by region address.
  std::vector<std::pair<std::string, std::vector<std::string>>> shards;

  /// Members with status "up" that are reachable.
  int up_count() const;
};

/// Reads a `GET /cluster/members` answer into `snap` (members, leader,
/// oldest; members_answered set); false if the body is not that shape.
bool read_members(std::string_view body, cluster_snapshot& snap);

/// Reads a `GET /singletons` answer: the entry of `type` sets
/// singleton_host and singleton_token (when it names a host); false if the
/// body is not a JSON array.
bool read_singletons(std::string_view body, std::string_view type,
                     cluster_snapshot& snap);

/// Reads a `GET /leases` answer: the first lease whose name contains
/// `name_part` and that is `held_here` sets lease_holder and lease_token;
/// false if the body is not a JSON array.
bool read_leases(std::string_view body, std::string_view name_part,
                 cluster_snapshot& snap);

/// Reads a `GET /cluster/shards/{type}` answer into `snap.shards`
/// (shards_answered set); false if the body is not that shape.
bool read_shards(std::string_view body, cluster_snapshot& snap);

/// Names an address for people (e.g. `127.0.0.1:4101#77` -> "node-2");
/// returns the address itself when it knows none.
using namer = std::function<std::string(std::string_view address)>;

} // namespace troupe::demo
