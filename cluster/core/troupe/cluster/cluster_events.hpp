#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "troupe/cluster/membership_state.hpp"

/// @file
/// The membership events subscribers receive, the diff that produces them
/// from two membership states, and the snapshot a subscriber gets first
/// (Akka's `ClusterEvent`, Akka 2.6, single data center).
///
/// Differences from Akka: no data-center events, and the internal
/// `SeenChanged`/`ReachabilityChanged` events are not produced. Events of
/// one kind come in address order (Akka's come in set order).

namespace troupe::cluster {

/// A member became joining (or was first seen joining).
struct member_joined {
  cluster::member member;
  friend bool operator==(const member_joined&, const member_joined&) = default;
};

/// A joining member was moved to weakly_up.
struct member_weakly_up {
  cluster::member member;
  friend bool operator==(const member_weakly_up&, const member_weakly_up&)
    = default;
};

/// A member was moved to up (or its up_number changed while up).
struct member_up {
  cluster::member member;
  friend bool operator==(const member_up&, const member_up&) = default;
};

/// A member asked to leave (status leaving).
struct member_left {
  cluster::member member;
  friend bool operator==(const member_left&, const member_left&) = default;
};

/// A leaving member was moved to exiting; it is removed at convergence.
struct member_exited {
  cluster::member member;
  friend bool operator==(const member_exited&, const member_exited&) = default;
};

/// A member was marked down; it is removed once it is unreachable and the
/// leader has convergence.
struct member_downed {
  cluster::member member;
  friend bool operator==(const member_downed&, const member_downed&) = default;
};

/// A member is gone. `member.status` is removed; `previous_status` tells
/// how: down (downed after a failure) or exiting (left gracefully).
struct member_removed {
  cluster::member member;
  member_status previous_status = member_status::removed;
  friend bool operator==(const member_removed&, const member_removed&)
    = default;
};

/// Some observer now sees `member` as unreachable (or terminated).
struct unreachable_member {
  cluster::member member;
  friend bool operator==(const unreachable_member&, const unreachable_member&)
    = default;
};

/// `member` was unreachable and no observer sees it so any more.
struct reachable_member {
  cluster::member member;
  friend bool operator==(const reachable_member&, const reachable_member&)
    = default;
};

/// The leader changed; none when there is no leader.
struct leader_changed {
  std::optional<unique_address> leader;
  friend bool operator==(const leader_changed&, const leader_changed&)
    = default;
};

/// The leader among the members with `role` changed.
struct role_leader_changed {
  std::string role;
  std::optional<unique_address> leader;
  friend bool operator==(const role_leader_changed&, const role_leader_changed&)
    = default;
};

/// Every membership event. The publisher sends the alternative itself
/// (each struct is a registered message type), not the variant.
using cluster_event
  = std::variant<member_joined, member_weakly_up, member_up, member_left,
                 member_exited, member_downed, member_removed,
                 unreachable_member, reachable_member, leader_changed,
                 role_leader_changed>;

/// The events that lead from `before` to `after`, in Akka's order:
/// 1. member_removed for members gone from `after`;
/// 2. one member event per member that is new in `after` or whose status
///    or up_number changed (joined, weakly_up, up, left, exited, downed by
///    the new status);
/// 3. unreachable_member for nodes newly unreachable or terminated;
/// 4. reachable_member for nodes that were unreachable and are reachable
///    again (still members);
/// 5. leader_changed;
/// 6. role_leader_changed per role of either state, in role order.
/// Within each group, address order. Self is never reported unreachable
/// or reachable. Reachability here is the whole table (down observers
/// included), as Akka's publisher.
std::vector<cluster_event> diff(const membership_state& before,
                                const membership_state& after);

/// What a new subscriber receives first (Akka's `CurrentClusterState`).
struct current_cluster_state {
  /// Sorted by address.
  std::vector<member> members;
  /// Members some observer sees as unreachable or terminated (not self),
  /// sorted by address.
  std::vector<member> unreachable;
  std::set<unique_address> seen_by;
  std::optional<unique_address> leader;
  /// The leader per role, for every role of every member.
  std::map<std::string, std::optional<unique_address>> role_leaders;

  friend bool operator==(const current_cluster_state&,
                         const current_cluster_state&)
    = default;
};

/// The snapshot of `state`.
current_cluster_state snapshot(const membership_state& state);

/// Renders one event, e.g. `member_up 10.0.0.1:2552#7 (up_number 1)` or
/// `leader_changed 10.0.0.1:2552#7` (`leader_changed none`).
std::string to_string(const cluster_event& x);

// -- inspection (CAF-free; registered by the cluster shell) -------------------

/// Inspects `xs...` followed by `opt` as (engaged flag, value): CAF 0.17's
/// inspectors know no std::optional. Works for saving, loading and
/// printing alike: the inspector runs at once and the value is written
/// back afterwards (a no-op unless loading).
template <class Inspector, class T, class... Ts>
auto inspect_with_optional(Inspector& f, std::optional<T>& opt, Ts&... xs) {
  bool engaged = opt.has_value();
  T value = opt.value_or(T{});
  auto write_back = [&] {
    if (engaged)
      opt = std::move(value);
    else
      opt.reset();
  };
  if constexpr (std::is_void_v<decltype(f(xs..., engaged, value))>) {
    f(xs..., engaged, value);
    write_back();
  } else {
    auto result = f(xs..., engaged, value);
    write_back();
    return result;
  }
}

/// True if `T` is one of `Ts...`.
template <class T, class... Ts>
inline constexpr bool is_one_of = (std::is_same_v<T, Ts> || ...);

/// The events that carry a member and nothing else.
template <class T>
concept member_only_event
  = is_one_of<T, member_joined, member_weakly_up, member_up, member_left,
              member_exited, member_downed, unreachable_member,
              reachable_member>;

template <class Inspector, member_only_event Event>
auto inspect(Inspector& f, Event& x) {
  return f(x.member);
}

template <class Inspector>
auto inspect(Inspector& f, member_removed& x) {
  return f(x.member, x.previous_status);
}

template <class Inspector>
auto inspect(Inspector& f, leader_changed& x) {
  return inspect_with_optional(f, x.leader);
}

template <class Inspector>
auto inspect(Inspector& f, role_leader_changed& x) {
  return inspect_with_optional(f, x.leader, x.role);
}

/// Inspects a snapshot. The optional leaders travel as (flag, value) and
/// the role leaders as role -> zero or one address (CAF 0.17 knows no
/// std::optional); like `inspect_with_optional`, values are written back
/// after the inspector ran (a no-op unless loading).
template <class Inspector>
auto inspect(Inspector& f, current_cluster_state& x) {
  std::map<std::string, std::vector<unique_address>> roles;
  for (auto& [role, leader] : x.role_leaders)
    roles[role] = leader ? std::vector{*leader} : std::vector<unique_address>{};
  auto write_back = [&] {
    x.role_leaders.clear();
    for (auto& [role, leader] : roles)
      x.role_leaders[role] = leader.empty()
                               ? std::nullopt
                               : std::optional<unique_address>{leader.front()};
  };
  if constexpr (std::is_void_v<decltype(inspect_with_optional(
                  f, x.leader, x.members, x.unreachable, x.seen_by, roles))>) {
    inspect_with_optional(f, x.leader, x.members, x.unreachable, x.seen_by,
                          roles);
    write_back();
  } else {
    auto result = inspect_with_optional(f, x.leader, x.members, x.unreachable,
                                        x.seen_by, roles);
    write_back();
    return result;
  }
}

} // namespace troupe::cluster
