#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "troupe/cluster/failure_detector_registry.hpp"
#include "troupe/cluster/heartbeat_ring.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// The cluster heartbeat messages and the state of a node's heartbeat
/// sender: Akka's `ClusterHeartbeatSender` (2.6 message shapes) and
/// `ClusterHeartbeatSenderState`.
///
/// Each node sends a `heartbeat` every `heartbeat_interval` to its
/// receivers on the heartbeat ring; a receiver answers with a
/// `heartbeat_response` and the sender feeds the response into the failure
/// detector of that receiver. So a node's failure detectors judge the
/// round trip to the nodes it monitors, and the failure detector of a node
/// lives with its monitors, not with itself.
///
/// Differences from Akka, and why:
/// - `heartbeat::from` is the sender's unique address, not its address
///   without uid: troupe's nodes always know it, and a receiver can tell an
///   old incarnation's late heartbeat from the new one's.
/// - The state is a mutable value that also owns the failure detector
///   registry (Akka shares the registry with other readers); the cluster
///   daemon reads it through `failure_detector()`.
/// - `tick` returns the heartbeat and its receivers instead of sending, and
///   the receivers not yet monitored, for which the shell schedules
///   `expected_first_heartbeat` after `expected_response_after` (Akka's
///   `ExpectedFirstHeartbeat` timer).

namespace troupe::cluster {

using runtime::timespan;
using runtime::timestamp;

/// Sent every heartbeat interval to each receiver on the heartbeat ring.
/// `creation_time` is the sender's monotonic time at sending (its clock's
/// time since epoch; only meaningful to the sender), echoed in the response
/// so that the sender can measure the round trip.
struct heartbeat {
  unique_address from;
  /// Counts the sender's heartbeat rounds from 1.
  int64_t sequence_nr = 0;
  timespan creation_time{0};

  friend bool operator==(const heartbeat&, const heartbeat&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, heartbeat& x) {
  return f(x.from, x.sequence_nr, x.creation_time);
}

/// The answer to a `heartbeat`: the responder's unique address and the
/// heartbeat's `sequence_nr` and `creation_time`.
struct heartbeat_response {
  unique_address from;
  int64_t sequence_nr = 0;
  timespan creation_time{0};

  friend bool operator==(const heartbeat_response&, const heartbeat_response&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, heartbeat_response& x) {
  return f(x.from, x.sequence_nr, x.creation_time);
}

/// The response of `self` to `hb` (Akka's `ClusterHeartbeatReceiver`): it
/// always answers, member or not; the sender decides what counts.
heartbeat_response respond_to(const heartbeat& hb, const unique_address& self);

/// What one heartbeat tick sends.
struct heartbeat_round {
  /// The message, the same for every receiver.
  cluster::heartbeat heartbeat;
  /// Every active receiver (send `heartbeat` to each).
  std::vector<unique_address> receivers;
  /// The receivers not monitored yet: call `expected_first_heartbeat` for
  /// each after `expected_response_after`.
  std::vector<unique_address> first_heartbeat_to;
};

/// The heartbeat sender of one node: whom to heartbeat and the failure
/// detectors of those nodes.
///
/// Active receivers are the ring's receivers of `self` plus the old
/// receivers that were unreachable when they stopped being receivers: such
/// a node stays monitored until it responds (becomes reachable) or is
/// removed, so that its unreachability can still be judged and healed. A
/// node dropped from the receivers while available is forgotten by the
/// failure detector at once.
///
/// Invariant: `self` is never an active receiver. A plain value; not
/// thread-safe.
class heartbeat_sender_state {
public:
  /// The state of `self` before any member is known.
  /// `monitored_by_nr_of_members` >= 1 and valid `fd` settings (asserts).
  heartbeat_sender_state(unique_address self, size_t monitored_by_nr_of_members,
                         phi_accrual_settings fd);

  /// Takes the members and unreachable members of a state snapshot (Akka's
  /// `init`, on the first CurrentClusterState); failure detectors are kept.
  void init(std::set<unique_address> nodes,
            std::set<unique_address> unreachable);

  /// A member joined or changed status: adds it to the ring (ignored for
  /// `self` and known nodes).
  void add_member(const unique_address& node, timestamp now);

  /// A member was removed: drops it from the ring, the old receivers and
  /// the failure detector.
  void remove_member(const unique_address& node, timestamp now);

  /// The reachability table marked `node` unreachable.
  void unreachable_member(const unique_address& node, timestamp now);

  /// The reachability table marked `node` reachable again.
  void reachable_member(const unique_address& node, timestamp now);

  /// A response arrived at `now`. Counts as a heartbeat of `rsp.from` only
  /// when it is an active receiver; an old receiver that responds is
  /// dropped (and forgotten by the failure detector unless it became a
  /// receiver again).
  void heartbeat_response(const cluster::heartbeat_response& rsp,
                          timestamp now);

  /// Sends the next round: increments the sequence number and stamps
  /// `now`.
  heartbeat_round tick(timestamp now);

  /// The expected-first-heartbeat timer of `node` fired: when `node` is an
  /// active receiver that never responded, records one heartbeat for it,
  /// which starts its failure detector (so a receiver that never answers
  /// still becomes unreachable).
  void expected_first_heartbeat(const unique_address& node, timestamp now);

  /// The ring's receivers of `self` plus the old receivers now unreachable.
  std::set<unique_address> active_receivers() const;

  /// True when `node` is on the ring.
  bool contains(const unique_address& node) const {
    return ring_.contains(node);
  }

  const heartbeat_node_ring& ring() const noexcept {
    return ring_;
  }

  const std::set<unique_address>& old_receivers_now_unreachable() const {
    return old_receivers_now_unreachable_;
  }

  /// The failure detectors of the active receivers (for the unreachable
  /// nodes reaper).
  const failure_detector_registry& failure_detector() const noexcept {
    return failure_detector_;
  }

  /// The sequence number of the last `tick` (0 before the first).
  int64_t sequence_nr() const noexcept {
    return sequence_nr_;
  }

  /// The send time (`heartbeat::creation_time`: this node's clock since its
  /// epoch) of the newest heartbeat that an active receiver answered,
  /// capped at the time the answer arrived (a peer cannot vouch for the
  /// future); nullopt before the first answer. A node frozen (SIGSTOP, a
  /// long GC) or cut off from every receiver sees it stop moving, while
  /// the others' failure detectors and downing run on: the sharding guard
  /// (entity_context::member_confirmed) reads it. troupe's; Akka has no
  /// such reading.
  std::optional<timespan> latest_answered() const noexcept {
    return latest_answered_;
  }

  /// True when some node is an active receiver (this node is not alone).
  bool has_receivers() const noexcept {
    return !ring_.my_receivers().empty()
           || !old_receivers_now_unreachable_.empty();
  }

private:
  void membership_change(heartbeat_node_ring new_ring, timestamp now);

  heartbeat_node_ring ring_;
  std::set<unique_address> old_receivers_now_unreachable_;
  failure_detector_registry failure_detector_;
  int64_t sequence_nr_ = 0;
  std::optional<timespan> latest_answered_;
};

} // namespace troupe::cluster
