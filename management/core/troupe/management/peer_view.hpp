#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/management/router.hpp"

/// @file
/// What one node reports about itself to another node's management API,
/// and the cluster-wide views merged from those reports (pure).
///
/// A node knows for sure only what runs on it: whether its singleton
/// manager runs the instance and with which fencing token, whether it holds
/// a lease, how many entities its regions run. `GET /singletons` and
/// `GET /leases` on any node ask every member for its `peer_view` (over
/// remoting, bounded by `management.query_timeout`) and merge the answers
/// here, so the dashboard of any node shows the singleton host, the lease
/// holder and the token as the holders themselves report them, never as a
/// guess from the membership (the oldest is where a singleton should run,
/// not proof that it does). A member that did not answer is left out.

namespace troupe::management {

/// One singleton manager on the reporting node.
struct peer_singleton {
  std::string type;
  /// The manager runs the instance now.
  bool running = false;
  /// The fencing token of its lease acquisition (0: no lease or none).
  uint64_t fencing_token = 0;
  friend bool operator==(const peer_singleton&, const peer_singleton&)
    = default;
};

/// One lease actor on the reporting node.
struct peer_lease {
  std::string name;
  /// Its owner (holder identity when held).
  std::string owner;
  /// `check_alive()` was true.
  bool held = false;
  /// The current (or last) acquisition's fencing token (0: never).
  uint64_t fencing_token = 0;
  int64_t ttl_ms = 0;
  friend bool operator==(const peer_lease&, const peer_lease&) = default;
};

/// One shard region on the reporting node.
struct peer_region {
  std::string type;
  uint64_t entities = 0;
  friend bool operator==(const peer_region&, const peer_region&) = default;
};

/// A node's report (`host:port#uid` in `node`).
struct peer_view {
  std::string node;
  std::vector<peer_singleton> singletons;
  std::vector<peer_lease> leases;
  std::vector<peer_region> regions;
  friend bool operator==(const peer_view&, const peer_view&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, peer_singleton& x) {
  return f(x.type, x.running, x.fencing_token);
}

template <class Inspector>
auto inspect(Inspector& f, peer_lease& x) {
  return f(x.name, x.owner, x.held, x.fencing_token, x.ttl_ms);
}

template <class Inspector>
auto inspect(Inspector& f, peer_region& x) {
  return f(x.type, x.entities);
}

template <class Inspector>
auto inspect(Inspector& f, peer_view& x) {
  return f(x.node, x.singletons, x.leases, x.regions);
}

/// Every singleton type any peer runs a manager for, sorted by type. The
/// host is the peer that runs the instance; when two report running (a
/// hand-over in flight, or a partition), the one with the higher fencing
/// token (the newer acquisition), then the lower address. `running_here`:
/// the host is `self`. `fencing_token` only when the host has one.
std::vector<singleton_view>
merge_singletons(const std::vector<peer_view>& peers, std::string_view self);

/// Every lease any peer has, sorted by name. The holder is the owner of a
/// held copy (the highest token if several claim it: the others' local
/// deadlines have not passed yet, their backend records have), "" when no
/// answering peer holds it. `held_here`: `self` holds it. `fencing_token`:
/// the holder's.
std::vector<lease_view> merge_leases(const std::vector<peer_view>& peers,
                                     std::string_view self);

/// Entities per node for `type` from the peers' reports.
uint64_t entities_of(const std::vector<peer_view>& peers, std::string_view node,
                     std::string_view type);

} // namespace troupe::management
