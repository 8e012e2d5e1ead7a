#include "troupe/cluster/cluster_events.hpp"

namespace troupe::cluster {

namespace {

/// The event for a member that is new or changed, by its new status; none
/// for removed (reported separately).
std::optional<cluster_event> status_event(const member& m) {
  switch (m.status) {
    case member_status::joining:
      return member_joined{m};
    case member_status::weakly_up:
      return member_weakly_up{m};
    case member_status::up:
      return member_up{m};
    case member_status::leaving:
      return member_left{m};
    case member_status::exiting:
      return member_exited{m};
    case member_status::down:
      return member_downed{m};
    case member_status::removed:
      break;
  }
  return std::nullopt;
}

void diff_members(const gossip& before, const gossip& after,
                  std::vector<cluster_event>& out) {
  for (const auto& m : before.members()) {
    if (!after.has_member(m.address)) {
      auto gone = m;
      gone.status = member_status::removed;
      out.emplace_back(member_removed{std::move(gone), m.status});
    }
  }
  for (const auto& m : after.members()) {
    auto old = before.find(m.address);
    bool changed = old == nullptr || old->status != m.status
                   || old->up_number != m.up_number;
    if (!changed)
      continue;
    if (auto event = status_event(m))
      out.push_back(std::move(*event));
  }
}

void diff_reachability(const membership_state& before,
                       const membership_state& after,
                       std::vector<cluster_event>& out) {
  const auto& g = after.latest_gossip();
  auto old_unreachable
    = before.latest_gossip().reachability().all_unreachable_or_terminated();
  auto now_unreachable = g.reachability().all_unreachable_or_terminated();
  for (const auto& node : now_unreachable) {
    if (node == after.self() || old_unreachable.count(node) > 0)
      continue;
    if (auto m = g.find(node))
      out.emplace_back(unreachable_member{*m});
  }
  for (const auto& node :
       before.latest_gossip().reachability().all_unreachable()) {
    if (node == after.self())
      continue;
    auto m = g.find(node);
    if (m != nullptr && g.reachability().is_reachable(node))
      out.emplace_back(reachable_member{*m});
  }
}

std::string optional_address(const std::optional<unique_address>& x) {
  return x ? runtime::to_string(*x) : std::string{"none"};
}

} // namespace

std::vector<cluster_event> diff(const membership_state& before,
                                const membership_state& after) {
  std::vector<cluster_event> result;
  diff_members(before.latest_gossip(), after.latest_gossip(), result);
  diff_reachability(before, after, result);
  if (auto leader = after.leader(); leader != before.leader())
    result.emplace_back(leader_changed{leader});
  auto roles = before.latest_gossip().all_roles();
  roles.merge(after.latest_gossip().all_roles());
  for (const auto& role : roles)
    if (auto leader = after.role_leader(role);
        leader != before.role_leader(role))
      result.emplace_back(role_leader_changed{role, leader});
  return result;
}

current_cluster_state snapshot(const membership_state& state) {
  const auto& g = state.latest_gossip();
  current_cluster_state result;
  result.members = g.members();
  for (const auto& node : g.reachability().all_unreachable_or_terminated())
    if (auto m = g.find(node); m != nullptr && node != state.self())
      result.unreachable.push_back(*m);
  result.seen_by = g.seen_by();
  result.leader = state.leader();
  for (const auto& role : g.all_roles())
    result.role_leaders.emplace(role, state.role_leader(role));
  return result;
}

std::string to_string(const cluster_event& x) {
  struct visitor {
    std::string operator()(const member_joined& e) {
      return "member_joined " + to_string(e.member);
    }
    std::string operator()(const member_weakly_up& e) {
      return "member_weakly_up " + to_string(e.member);
    }
    std::string operator()(const member_up& e) {
      return "member_up " + to_string(e.member);
    }
    std::string operator()(const member_left& e) {
      return "member_left " + to_string(e.member);
    }
    std::string operator()(const member_exited& e) {
      return "member_exited " + to_string(e.member);
    }
    std::string operator()(const member_downed& e) {
      return "member_downed " + to_string(e.member);
    }
    std::string operator()(const member_removed& e) {
      return "member_removed " + to_string(e.member) + " (was "
             + to_string(e.previous_status) + ")";
    }
    std::string operator()(const unreachable_member& e) {
      return "unreachable_member " + to_string(e.member);
    }
    std::string operator()(const reachable_member& e) {
      return "reachable_member " + to_string(e.member);
    }
    std::string operator()(const leader_changed& e) {
      return "leader_changed " + optional_address(e.leader);
    }
    std::string operator()(const role_leader_changed& e) {
      return "role_leader_changed " + e.role + " " + optional_address(e.leader);
    }
  };
  return std::visit(visitor{}, x);
}

} // namespace troupe::cluster
