#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "troupe/cluster/member.hpp"
#include "troupe/cluster/membership_state.hpp"
#include "troupe/cluster/reachability.hpp"

/// @file
/// What the split brain resolver of one node sees: Akka's
/// `DowningStrategy` state (akka.cluster.sbr, Akka 2.6/2.10) as a value.

namespace troupe::downing {

using cluster::member;
using cluster::member_status;
using runtime::unique_address;

/// Which members a count includes besides up and leaving ones (Akka's
/// `includingPossiblyUp` / `excludingPossiblyExiting`, used for the edge
/// case of a membership change at the same time as the partition).
struct count_options {
  /// Also count joining and weakly_up members (they may be up on the other
  /// side of the partition).
  bool including_possibly_up = false;
  /// Do not count leaving members (they may be exiting on the other side).
  bool excluding_possibly_exiting = false;
};

/// One node's view for the split brain resolver: self, the members (every
/// status) and the unreachability records it counts, plus the gossip's
/// seen set. A plain value; thread-safe as any value.
///
/// Derived sets, as Akka's `DowningStrategy`:
/// - *counted members* (`members`): not joining, not weakly_up, not down,
///   not exiting (joining and weakly_up members may be up on one side
///   only; down and exiting ones are going away). With a role, only the
///   members with that role.
/// - *unreachable*: the subjects of the counted records, never self. The
///   *reachable side* is every other member, self included.
/// - *downable*: members that are not down or exiting (joining and
///   weakly_up included): the only nodes a decision may down.
/// - *indirectly connected*: nodes that are both observer and subject of
///   counted records (a cycle in the unreachability graph), plus both ends
///   of every record whose subject has seen the current gossip (it is
///   unreachable on one link, yet it got the gossip through another).
///
/// Counted records: only unreachable or terminated records whose observer
/// and subject are both downable members. Akka filters this way only for
/// its second decision after an indirectly connected one (PR #30425); here
/// it applies to the whole view, so that the stale observations of a
/// member that is already down or exiting (a node being restarted in a
/// rolling update) never make a live member look indirectly connected
/// (scenario D1, akka/akka#30391). For the same reason the observations
/// of a *cut-off* observer are dropped: a node other than self that every
/// other up or leaving member records as unreachable (a crashed node, a
/// node being restarted), not counting the members self itself records as
/// unreachable (a crashed member records nothing, so it must not keep
/// another cut-off node's records alive: found by the downing simulator,
/// where a node partitioned away from everyone kept its stale records of
/// the majority, every member of the majority looked indirectly connected
/// and was downed). Whatever it recorded before it went away is
/// stale, so it neither makes the nodes it observed unreachable nor makes
/// anyone indirectly connected. Akka keeps such records (Akka.NET prunes
/// them in its second decision, akka.net PR #7141). In clusters larger than
/// the heartbeat ring's `monitored_by_nr_of_members` + 1 not every member
/// observes every other, so the rule rarely applies there.
class downing_view {
public:
  /// The view of `self` over `members` (any order; sorted here),
  /// `records` (all of the gossip's records: reachable ones and those
  /// naming non-members or down/exiting members are dropped here) and the
  /// gossip's seen set.
  downing_view(unique_address self, std::vector<member> members,
               const std::vector<cluster::reachability_record>& records,
               std::set<unique_address> seen_by = {});

  /// The view of `state.self()` over the latest gossip of `state`.
  static downing_view of(const cluster::membership_state& state);

  const unique_address& self() const noexcept {
    return self_;
  }

  /// Every member, any status, sorted by address.
  const std::vector<member>& all_members() const noexcept {
    return members_;
  }

  /// The member with `node`'s address, or null.
  const member* find(const unique_address& node) const noexcept;

  /// The counted records, ordered by (observer, subject).
  const std::vector<cluster::reachability_record>& records() const noexcept {
    return records_;
  }

  const std::set<unique_address>& seen_by() const noexcept {
    return seen_by_;
  }

  /// The subjects of the counted records, without self.
  const std::set<unique_address>& unreachable() const noexcept {
    return unreachable_;
  }

  bool is_unreachable(const unique_address& node) const {
    return unreachable_.count(node) > 0;
  }

  /// Counted members (see the class comment), with `role` when it is not
  /// empty, sorted by address.
  std::vector<member> members(const std::string& role = {},
                              count_options opts = {}) const;

  /// `members(role, opts)` that are not unreachable.
  std::vector<member> reachable_members(const std::string& role = {},
                                        count_options opts = {}) const;

  /// `members(role, opts)` that are unreachable.
  std::vector<member> unreachable_members(const std::string& role = {},
                                          count_options opts = {}) const;

  /// Members that are not down or exiting.
  std::set<unique_address> downable() const;

  /// See the class comment; empty for a clean partition or crashed nodes.
  std::set<unique_address> indirectly_connected() const;

  /// The nodes that are indirectly connected because they are both
  /// observer and subject (the first half of `indirectly_connected`).
  std::set<unique_address> observers_that_are_subjects() const;

  /// This view without the records observed by `observers` (for the
  /// decision that follows "down the indirectly connected").
  downing_view
  without_observations_of(const std::set<unique_address>& observers) const;

  /// The member that acts for this side: the cluster's leader rule
  /// (`cluster::leader_by_status`) applied to the reachable side of this
  /// view (every member that is not unreachable, self included), or none.
  /// Differs from `membership_state::leader` (ADR 0006), which skips a
  /// node that someone finds unreachable even in its own view: the
  /// resolver must act on a side whose every member is seen unreachable by
  /// the other side, as Akka's resolver does. Several nodes may then
  /// consider themselves responsible (Akka: "more leaders may exist");
  /// their decisions are the same or downing is idempotent.
  std::optional<unique_address> side_leader() const;

  /// Whether self decides for its side: self is the side leader and self
  /// is a member that has been (weakly) up: not joining, not down (Akka's
  /// `leader && selfMemberAdded`).
  bool is_responsible() const;

private:
  std::set<unique_address> cut_off_observers(
    const std::vector<cluster::reachability_record>& records) const;

  unique_address self_;
  std::vector<member> members_;
  std::vector<cluster::reachability_record> records_;
  std::set<unique_address> seen_by_;
  std::set<unique_address> unreachable_;
};

/// Whether `status` is counted by the resolver under `opts`.
bool is_counted(member_status status, count_options opts = {}) noexcept;

/// Renders the addresses as `{a:1#1, b:1#2}` (for decision log lines).
std::string to_string(const std::set<unique_address>& nodes);

} // namespace troupe::downing
