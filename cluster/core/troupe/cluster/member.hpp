#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/cluster/app_version.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// A cluster member and its status, as Akka Cluster's `Member` and
/// `MemberStatus` (akka.cluster.Member, Akka 2.6).
///
/// Differences from Akka:
/// - Akka's `Member` compares equal by address only; here `==` compares
///   every field (a plain value), and the address order is the function
///   object `by_address`.
/// - `highest_priority_of` breaks ties between records of the same status
///   by lower up_number (as Akka) and then by the roles and the app
///   version (Akka returns its second argument), so that it is commutative
///   for any input.
/// - `by_singleton_preference` (the app version first, then age) is
///   troupe's: Akka places singletons on the oldest member only.
/// - No data centers, and none of Akka 2.6.20's PreparingForShutdown /
///   ReadyForShutdown statuses.

namespace troupe::cluster {

using runtime::unique_address;

/// The status of a member, in its life-cycle order (see
/// docs/design/cluster.md for the state diagram). The numeric values are
/// part of the wire format (`inspect`).
enum class member_status : uint8_t {
  /// Asked to join; not yet moved up by the leader.
  joining = 0,
  /// Moved up by the leader while convergence is blocked by unreachable
  /// members (`allow_weakly_up_members`); becomes up at convergence.
  weakly_up,
  /// A full member.
  up,
  /// Asked to leave (graceful); becomes exiting at convergence.
  leaving,
  /// Moved by the leader from leaving; removed at convergence.
  exiting,
  /// Marked down (forced; by an operator or the split brain resolver).
  down,
  /// No longer a member. Never stored in a gossip's member list: a
  /// removed member is gone and its unique address tombstoned.
  removed,
};

/// Every status, in declaration order.
inline constexpr std::array<member_status, 7> all_member_statuses{
  member_status::joining, member_status::weakly_up, member_status::up,
  member_status::leaving, member_status::exiting,   member_status::down,
  member_status::removed,
};

/// The status's name: "joining", "weakly_up", "up", "leaving", "exiting",
/// "down" or "removed".
const char* to_string(member_status x) noexcept;

/// Parses a name that `to_string` writes (exact, lower case). Errors:
/// `membership_errc::unknown_status`, naming the text.
runtime::expected<member_status> parse_member_status(std::string_view text);

/// Whether a member may move from `from` to `to`: Akka's
/// `MemberStatus.allowedTransitions`:
///
/// | from      | to                                         |
/// |-----------|--------------------------------------------|
/// | joining   | weakly_up, up, leaving, down, removed      |
/// | weakly_up | up, leaving, down, removed                 |
/// | up        | leaving, down, removed                     |
/// | leaving   | exiting, down, removed                     |
/// | exiting   | removed, down                              |
/// | down      | removed                                    |
/// | removed   | (none)                                     |
///
/// Staying in the same status is not a transition (false here);
/// `member::with_status` accepts it as a no-op, as Akka's `copy` does.
bool is_allowed_transition(member_status from, member_status to) noexcept;

/// The merge priority of a status, Akka's `highestPriorityOf` order:
/// removed (6) > down (5) > exiting (4) > leaving (3) > up (2) >
/// weakly_up (1) > joining (0).
int status_priority(member_status x) noexcept;

/// One member of the cluster: a plain value, as Akka's `Member`.
///
/// Invariants: `roles` is sorted and free of duplicates (`joining` and
/// `normalize_roles` make it so); `up_number` is `no_up_number` until the
/// leader moves the member up (Akka's `Int.MaxValue`); `app_version` is
/// the node's `cluster.app_version`, fixed for the incarnation (Akka's
/// `Member.appVersion`).
struct member {
  /// The up_number of a member that was never up.
  static constexpr int32_t no_up_number = std::numeric_limits<int32_t>::max();

  unique_address address;
  member_status status = member_status::joining;
  /// Sorted, unique.
  std::vector<std::string> roles;
  /// Assigned by the leader when it moves the member to up: one more than
  /// the highest up_number among the members at that time (Akka's
  /// `upNumber`). Lower means older.
  int32_t up_number = no_up_number;
  /// The application version the node runs (`cluster.app_version`; 0.0.0
  /// by default). Carried in every gossip, so every member knows every
  /// member's version; read by singleton placement and shard allocation.
  cluster::app_version app_version;

  /// A new joining member (roles are sorted and de-duplicated).
  static member joining(unique_address address,
                        std::vector<std::string> roles = {},
                        cluster::app_version version = {});

  /// Whether the member has `role`.
  bool has_role(std::string_view role) const noexcept;

  /// Whether this member has been up longer than `other`: lower up_number,
  /// ties by address (Akka's `isOlderThan`). Only meaningful between
  /// current members: a member that joined after another was removed can
  /// reuse its up_number.
  bool is_older_than(const member& other) const noexcept;

  /// This member with status `to`. The same status returns an unchanged
  /// copy. Errors: `membership_errc::invalid_transition` when
  /// `is_allowed_transition(status, to)` is false; the message names the
  /// member and both statuses.
  runtime::expected<member> with_status(member_status to) const;

  /// This member moved up with `up_number` (Akka's `copyUp`). Errors as
  /// `with_status(member_status::up)`.
  runtime::expected<member> with_up(int32_t up_number) const;

  friend bool operator==(const member&, const member&) = default;
};

/// Sorts `roles` and removes duplicates.
std::vector<std::string> normalize_roles(std::vector<std::string> roles);

/// Orders members by unique address (`unique_address`'s `<=>`, the one
/// address order of DESIGN.md §10).
struct by_address {
  bool operator()(const member& x, const member& y) const noexcept {
    return x.address < y.address;
  }
};

/// Orders members by age, oldest first (`member::is_older_than`).
struct by_age {
  bool operator()(const member& x, const member& y) const noexcept {
    return x.is_older_than(y);
  }
};

/// Whether `x` comes before `y` as the host of cluster singletons: the
/// higher app_version first, then the older member (lower up_number),
/// then the lower address. A strict total order over members with distinct
/// addresses that reads nothing but the two member records (each of whose
/// fields it reads is fixed once the member is up), so every node computes
/// the same order from the same members, whatever else its view holds.
/// With one app_version in the cluster it is the age order (`by_age`).
///
/// Why (troupe's extension of Akka's app-version preference, which Akka
/// applies to shard allocation only): during a rolling update the first
/// member of the new version to be up becomes the singletons' host at
/// once, so a singleton moves once, to a new node, instead of once per
/// restarted old node, as it does with the age order when the oldest nodes
/// are replaced first. Never the meaning of "oldest": see
/// `membership_state::oldest`.
bool precedes_as_singleton_host(const member& x, const member& y) noexcept;

/// Orders members by `precedes_as_singleton_host`, the preferred host of
/// singletons first.
struct by_singleton_preference {
  bool operator()(const member& x, const member& y) const noexcept {
    return precedes_as_singleton_host(x, y);
  }
};

/// Of two records of the same member, the one a gossip merge keeps
/// (Akka's `Member.highestPriorityOf`): the higher `status_priority`; for
/// equal statuses the lower up_number (the older record), then the
/// lexicographically smaller roles, then the lower app_version (the last
/// two only differ between records of correct nodes never). Commutative,
/// associative and
/// idempotent (it is the maximum of a total order). Precondition: both
/// records have the same address.
const member& highest_priority_of(const member& x, const member& y) noexcept;

/// True if a member of `members` other than `self` is joining, weakly up,
/// up or leaving: one that is or can become the leader that removes
/// `self`. When none is (the last member, or every member leaving at once),
/// an exiting `self` is as far as its leave gets.
bool someone_stays(const std::vector<member>& members,
                   const unique_address& self) noexcept;

/// Renders e.g. `10.0.0.1:2552#7 up (up_number 3, roles [a,b])`, with
/// `, app_version 1.2.0` before the parenthesis closes when it is not the
/// default 0.0.0.
std::string to_string(const member& x);

/// CAF-free inspection (STYLE.md §4); registered by the cluster shell.
template <class Inspector>
auto inspect(Inspector& f, member& x) {
  return f(x.address, x.status, x.roles, x.up_number, x.app_version);
}

} // namespace troupe::cluster
