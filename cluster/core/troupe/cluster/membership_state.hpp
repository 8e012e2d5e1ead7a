#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/cluster/gossip.hpp"

/// @file
/// One node's view of the membership: convergence, leader, oldest, and the
/// leader actions (Akka's `MembershipState` and the leader parts of
/// `ClusterCoreDaemon`, Akka 2.6, single data center).

namespace troupe::cluster {

/// Whether a member with status `x` must have seen a gossip version
/// before there is convergence on it: up and leaving (Akka's
/// `convergenceMemberStatus`); joining, weakly_up, exiting and down
/// members need not.
bool must_see_for_convergence(member_status x) noexcept;

/// The membership settings that leader actions read (the cluster daemon
/// fills them from its configuration).
struct leader_actions_settings {
  /// Joining members stay joining until the cluster has at least this many
  /// members (Akka's `min-nr-of-members`, default 1).
  size_t min_nr_of_members = 1;
  /// The same per role (Akka's `role.<name>.min-nr-of-members`).
  std::map<std::string, size_t> min_nr_of_members_of_role;
  /// Tombstones older than this are dropped by the leader (Akka's
  /// `prune-gossip-tombstones-after`, default 24 h).
  std::chrono::milliseconds prune_gossip_tombstones_after
    = std::chrono::hours{24};
};

/// The latest gossip as seen by the node `self`. Queries only; a plain
/// value, thread-safe as any value.
///
/// Reachability for the leader is judged on the whole table; for
/// convergence and weakly_up on the table without the observations of
/// down members (as Akka). `self` always counts as reachable for itself.
class membership_state {
public:
  membership_state(gossip latest, unique_address self);

  const gossip& latest_gossip() const noexcept {
    return latest_;
  }

  const unique_address& self() const noexcept {
    return self_;
  }

  /// This node's member record, or null when it is not (or no longer) a
  /// member.
  const member* self_member() const noexcept {
    return latest_.find(self_);
  }

  /// Akka's `MembershipState.convergence`: true when
  /// - every member with status up or leaving has seen this version or is
  ///   in `exiting_confirmed` (joining, weakly_up, exiting and down members
  ///   need not have seen it), and
  /// - every node that some non-down observer sees as unreachable or
  ///   terminated (other than self and `exiting_confirmed`) is down or
  ///   exiting.
  /// `exiting_confirmed`: exiting members that confirmed their exit to
  /// this node (Akka's `ExitingConfirmed`).
  bool convergence(const std::set<unique_address>& exiting_confirmed) const;

  /// The leader (Akka's `leader`): among members that are not down and that
  /// no observer that is not down finds unreachable, the first in address
  /// order with status up or
  /// leaving; when there is none, the first weakly_up, else the first
  /// joining, else the first exiting member; none when there are no such
  /// members. Never elected: every node computes it from its gossip.
  /// Differs from Akka, which counts self as reachable whatever the table
  /// says: then a node that the others see as unreachable (an asymmetric
  /// partition) may lead in its own view while another node leads in the
  /// same view (ADR 0006).
  std::optional<unique_address> leader() const;

  /// The leader among the members with `role` (same rules).
  std::optional<unique_address> role_leader(std::string_view role) const;

  /// The leader among `candidates` (same rules; e.g. the members other
  /// than self, to find who to send an exiting confirmation to).
  std::optional<unique_address>
  leader_of(const std::vector<member>& candidates) const;

  /// Whether `node` is the leader.
  bool is_leader(const unique_address& node) const;

  /// The oldest member with status up or leaving (lowest up_number, ties by
  /// address), optionally only among members with `role`; reachability
  /// does not matter (Akka's oldest). Not the leader, and not necessarily
  /// where singletons run: that is `singleton_target`, which prefers the
  /// highest app_version first.
  std::optional<member> oldest(std::optional<std::string_view> role
                               = std::nullopt) const;

  /// Where the singletons (with `role`) belong in this view: the first of
  /// `singleton_candidates`, i.e. the oldest member among the up or
  /// leaving members (with `role`) that run the highest app_version;
  /// reachability does not matter. With one app_version in the cluster it
  /// is `oldest(role)`. A function of the member records alone: two nodes
  /// with the same members compute the same target (scenario S4).
  std::optional<member> singleton_target(std::optional<std::string_view> role
                                         = std::nullopt) const;

  /// Whether this node may gossip to `node`: not self, and self does not
  /// see it as unreachable (Akka's `validNodeForGossip`; nodes others see
  /// as unreachable are still valid targets).
  bool valid_node_for_gossip(const unique_address& node) const;

  /// Whether `node` is a member and no non-down observer sees it as
  /// unreachable or terminated.
  bool
  is_reachable_excluding_downed_observers(const unique_address& node) const;

  /// Whether the cluster has `min_nr_of_members` members and, per role,
  /// the role's minimum.
  bool
  is_min_nr_of_members_fulfilled(const leader_actions_settings& settings) const;

private:
  gossip latest_;
  unique_address self_;
};

/// The members of `g` that may host singletons (with `role`, when given):
/// status up or leaving, ordered by `by_singleton_preference` (the highest
/// app_version first, then the oldest, then the lowest address). The
/// singleton manager and proxy and the shard regions (the coordinator's
/// location) all read this order.
std::vector<member> singleton_candidates(const gossip& g,
                                         std::optional<std::string_view> role
                                         = std::nullopt);

/// The leader among `candidates` by status and address alone, without
/// looking at reachability (the caller has already chosen the reachable
/// candidates): the first up or leaving member in address order; when
/// there is none, the first weakly_up, else the first joining, else the
/// first exiting member; down members never lead. `membership_state::
/// leader_of` applies it to the members no (non-down) observer finds
/// unreachable; the split brain resolver to the reachable side of its own
/// view (docs/design/downing.md).
std::optional<unique_address>
leader_by_status(const std::vector<member>& candidates);

/// What a call of `leader_actions` or `move_joining_to_weakly_up` found.
enum class leader_actions_verdict : uint8_t {
  /// Self is not the leader: nothing done.
  not_leader = 0,
  /// `leader_actions`: no convergence: nothing done.
  no_convergence,
  /// `move_joining_to_weakly_up`: there is convergence, so the regular
  /// leader actions apply instead: nothing done.
  has_convergence,
  /// Nothing to change.
  unchanged,
  /// `next` differs from the input gossip.
  changed,
};

/// "not_leader", "no_convergence", "has_convergence", "unchanged" or
/// "changed".
const char* to_string(leader_actions_verdict x) noexcept;

/// One member moved by the leader. `to == member_status::removed` for a
/// removal; `up_number` is the member's (new) up_number.
struct leader_action {
  unique_address address;
  member_status from = member_status::joining;
  member_status to = member_status::joining;
  int32_t up_number = member::no_up_number;

  friend bool operator==(const leader_action&, const leader_action&) = default;
};

/// Renders e.g. `10.0.0.1:2552#7 joining -> up (up_number 3)`.
std::string to_string(const leader_action& x);

/// The result of a leader action step.
///
/// `next` is the new gossip, *not yet versioned*: when `verdict ==
/// changed` the caller stamps it as every local change (Akka's
/// `updateLatestGossip`): `next.increment(self)` and then
/// `next.only_seen(self)`, or `next.clear_seen()` while this node runs its
/// exiting tasks. Otherwise `next` equals the input gossip.
struct leader_actions_result {
  leader_actions_verdict verdict = leader_actions_verdict::not_leader;
  gossip next;
  /// In address order: moves first, then removals.
  std::vector<leader_action> actions;
  /// Whether old tombstones were dropped.
  bool tombstones_pruned = false;
};

/// The leader's periodic duties (Akka's `leaderActions` and
/// `leaderActionsOnConvergence`). Only when `state.self()` is the leader
/// and there is convergence:
/// 1. joining and weakly_up members move to up, if
///    `is_min_nr_of_members_fulfilled`; up_numbers are assigned in address
///    order starting at one more than the highest up_number of any member
///    (Akka's `youngestMember.upNumber + 1`);
/// 2. leaving members move to exiting;
/// 3. members that are down or exiting and seen as unreachable or
///    terminated by anyone, and exiting members in `exiting_confirmed`,
///    are removed and tombstoned with `now`;
/// 4. tombstones older than `now - prune_gossip_tombstones_after` are
///    dropped.
/// A reachable down member is not removed: it shuts itself down first
/// (Akka), and is removed once the others see it unreachable. Unlike
/// Akka, the leader never removes itself (an exiting leader seen as
/// unreachable): the gossip it stamps must contain it; the next leader
/// removes it.
/// `now` is wall-clock time (see `wall_time`).
leader_actions_result
leader_actions(const membership_state& state,
               const std::set<unique_address>& exiting_confirmed, wall_time now,
               const leader_actions_settings& settings);

/// The leader's move of joining members to weakly_up while convergence is
/// blocked (Akka's `moveJoiningToWeaklyUp`). Only when `state.self()` is
/// the leader and there is no convergence: every joining member that no
/// non-down observer sees as unreachable moves to weakly_up, if
/// `is_min_nr_of_members_fulfilled`. When to call it is the caller's
/// rule (Akka: `allow-weakly-up-members`, 7 s after convergence was lost).
leader_actions_result
move_joining_to_weakly_up(const membership_state& state,
                          const std::set<unique_address>& exiting_confirmed,
                          const leader_actions_settings& settings);

} // namespace troupe::cluster
