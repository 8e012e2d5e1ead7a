#include "troupe/cluster/membership_state.hpp"

#include <algorithm>

namespace troupe::cluster {

namespace {

bool is_up_or_leaving(member_status x) noexcept {
  return x == member_status::up || x == member_status::leaving;
}

bool is_down_or_exiting(member_status x) noexcept {
  return x == member_status::down || x == member_status::exiting;
}

/// The fallback order when no candidate is up or leaving (Akka's
/// `leaderStatusOrdering`): weakly_up, then joining, then exiting.
int fallback_rank(member_status x) noexcept {
  switch (x) {
    case member_status::weakly_up:
      return 0;
    case member_status::joining:
      return 1;
    default:
      return 2;
  }
}

} // namespace

bool must_see_for_convergence(member_status x) noexcept {
  return is_up_or_leaving(x);
}

membership_state::membership_state(gossip latest, unique_address self)
  : latest_(std::move(latest)), self_(std::move(self)) {
  // nop
}

bool membership_state::convergence(
  const std::set<unique_address>& exiting_confirmed) const {
  auto confirmed = [&](const unique_address& node) {
    return exiting_confirmed.count(node) > 0;
  };
  for (const auto& m : latest_.members())
    if (must_see_for_convergence(m.status) && !latest_.is_seen_by(m.address)
        && !confirmed(m.address))
      return false;
  auto unreachable = latest_.reachability_excluding_downed_observers()
                       .all_unreachable_or_terminated();
  for (const auto& node : unreachable) {
    if (node == self_ || confirmed(node))
      continue;
    // A node that is not a member blocks convergence, as in Akka (whose
    // placeholder for it has status removed).
    auto m = latest_.find(node);
    if (m == nullptr || !is_down_or_exiting(m->status))
      return false;
  }
  return true;
}

std::optional<unique_address>
leader_by_status(const std::vector<member>& candidates) {
  const member* best = nullptr;
  const member* fallback = nullptr;
  for (const auto& m : candidates) {
    if (m.status == member_status::down)
      continue;
    if (is_up_or_leaving(m.status)) {
      if (best == nullptr || m.address < best->address)
        best = &m;
    } else if (fallback == nullptr
               || std::make_pair(fallback_rank(m.status), m.address)
                    < std::make_pair(fallback_rank(fallback->status),
                                     fallback->address)) {
      fallback = &m;
    }
  }
  if (best == nullptr)
    best = fallback;
  if (best == nullptr)
    return std::nullopt;
  return best->address;
}

std::optional<unique_address>
membership_state::leader_of(const std::vector<member>& candidates) const {
  auto unreachable = latest_.reachability_excluding_downed_observers()
                       .all_unreachable_or_terminated();
  // Unlike Akka, self is no exception (ADR 0006): a node that others (not
  // down) find unreachable does not lead, even in its own view.
  std::vector<member> reachable;
  for (const auto& m : candidates)
    if (unreachable.count(m.address) == 0)
      reachable.push_back(m);
  return leader_by_status(reachable);
}

std::optional<unique_address> membership_state::leader() const {
  return leader_of(latest_.members());
}

std::optional<unique_address>
membership_state::role_leader(std::string_view role) const {
  std::vector<member> with_role;
  for (const auto& m : latest_.members())
    if (m.has_role(role))
      with_role.push_back(m);
  return leader_of(with_role);
}

bool membership_state::is_leader(const unique_address& node) const {
  auto current = leader();
  return current && *current == node;
}

std::optional<member>
membership_state::oldest(std::optional<std::string_view> role) const {
  const member* result = nullptr;
  for (const auto& m : latest_.members()) {
    if (!is_up_or_leaving(m.status) || (role && !m.has_role(*role)))
      continue;
    if (result == nullptr || m.is_older_than(*result))
      result = &m;
  }
  if (result == nullptr)
    return std::nullopt;
  return *result;
}

std::optional<member>
membership_state::singleton_target(std::optional<std::string_view> role) const {
  const member* result = nullptr;
  for (const auto& m : latest_.members()) {
    if (!is_up_or_leaving(m.status) || (role && !m.has_role(*role)))
      continue;
    if (result == nullptr || precedes_as_singleton_host(m, *result))
      result = &m;
  }
  if (result == nullptr)
    return std::nullopt;
  return *result;
}

std::vector<member> singleton_candidates(const gossip& g,
                                         std::optional<std::string_view> role) {
  std::vector<member> out;
  for (const auto& m : g.members())
    if ((m.status == member_status::up || m.status == member_status::leaving)
        && (!role || m.has_role(*role)))
      out.push_back(m);
  std::sort(out.begin(), out.end(), by_singleton_preference{});
  return out;
}

bool membership_state::valid_node_for_gossip(const unique_address& node) const {
  return node != self_ && latest_.reachability().is_reachable(self_, node);
}

bool membership_state::is_reachable_excluding_downed_observers(
  const unique_address& node) const {
  return latest_.has_member(node)
         && latest_.reachability_excluding_downed_observers().is_reachable(
           node);
}

bool membership_state::is_min_nr_of_members_fulfilled(
  const leader_actions_settings& settings) const {
  const auto& members = latest_.members();
  if (members.size() < settings.min_nr_of_members)
    return false;
  for (const auto& entry : settings.min_nr_of_members_of_role) {
    const auto& role = entry.first; // a named variable: lambdas capture it
    auto n = std::count_if(members.begin(), members.end(),
                           [&](const member& m) { return m.has_role(role); });
    if (static_cast<size_t>(n) < entry.second)
      return false;
  }
  return true;
}

const char* to_string(leader_actions_verdict x) noexcept {
  switch (x) {
    case leader_actions_verdict::not_leader:
      return "not_leader";
    case leader_actions_verdict::no_convergence:
      return "no_convergence";
    case leader_actions_verdict::has_convergence:
      return "has_convergence";
    case leader_actions_verdict::unchanged:
      return "unchanged";
    case leader_actions_verdict::changed:
      return "changed";
  }
  return "unknown";
}

std::string to_string(const leader_action& x) {
  std::string result = runtime::to_string(x.address);
  result += ' ';
  result += to_string(x.from);
  result += " -> ";
  result += to_string(x.to);
  if (x.up_number != member::no_up_number) {
    result += " (up_number ";
    result += std::to_string(x.up_number);
    result += ')';
  }
  return result;
}

namespace {

/// One more than the highest up_number of any member (members never up
/// count as 0): Akka's `youngestMember.upNumber + 1`.
int32_t next_up_number(const std::vector<member>& members) {
  int32_t highest = 0;
  for (const auto& m : members)
    if (m.up_number != member::no_up_number)
      highest = std::max(highest, m.up_number);
  return highest + 1;
}

leader_actions_result unchanged(const membership_state& state,
                                leader_actions_verdict verdict) {
  return leader_actions_result{verdict, state.latest_gossip(), {}, false};
}

/// Applies `moved` (new records) to `g` and records the actions.
void apply_moves(gossip& g, const std::vector<member>& moved,
                 leader_actions_result& result) {
  for (const auto& m : moved) {
    auto old = g.find(m.address);
    result.actions.push_back(
      leader_action{m.address, old->status, m.status, m.up_number});
  }
  g.update(moved);
}

} // namespace

leader_actions_result
leader_actions(const membership_state& state,
               const std::set<unique_address>& exiting_confirmed, wall_time now,
               const leader_actions_settings& settings) {
  if (!state.is_leader(state.self()))
    return unchanged(state, leader_actions_verdict::not_leader);
  if (!state.convergence(exiting_confirmed))
    return unchanged(state, leader_actions_verdict::no_convergence);
  const auto& latest = state.latest_gossip();
  bool enough = state.is_min_nr_of_members_fulfilled(settings);
  std::vector<member> moved;
  int32_t up_number = next_up_number(latest.members());
  for (const auto& m : latest.members()) {
    bool joining = m.status == member_status::joining
                   || m.status == member_status::weakly_up;
    if (joining && enough)
      moved.push_back(*m.with_up(up_number++));
    else if (m.status == member_status::leaving)
      moved.push_back(*m.with_status(member_status::exiting));
  }
  std::vector<member> removed;
  auto unreachable = latest.reachability().all_unreachable_or_terminated();
  for (const auto& m : latest.members()) {
    bool gone = is_down_or_exiting(m.status) && unreachable.count(m.address);
    bool confirmed = m.status == member_status::exiting
                     && exiting_confirmed.count(m.address);
    // The leader never removes itself: its own gossip would no longer
    // contain it (the next leader removes it).
    if ((gone || confirmed) && m.address != state.self())
      removed.push_back(m);
  }
  leader_actions_result result{
    leader_actions_verdict::unchanged, latest, {}, false};
  apply_moves(result.next, moved, result);
  for (const auto& m : removed) {
    result.actions.push_back(
      leader_action{m.address, m.status, member_status::removed, m.up_number});
    result.next.remove(m.address, now);
  }
  auto before = result.next.tombstones().size();
  result.next.prune_tombstones(now - settings.prune_gossip_tombstones_after);
  result.tombstones_pruned = result.next.tombstones().size() != before;
  if (!result.actions.empty() || result.tombstones_pruned)
    result.verdict = leader_actions_verdict::changed;
  return result;
}

leader_actions_result
move_joining_to_weakly_up(const membership_state& state,
                          const std::set<unique_address>& exiting_confirmed,
                          const leader_actions_settings& settings) {
  if (!state.is_leader(state.self()))
    return unchanged(state, leader_actions_verdict::not_leader);
  if (state.convergence(exiting_confirmed))
    return unchanged(state, leader_actions_verdict::has_convergence);
  if (!state.is_min_nr_of_members_fulfilled(settings))
    return unchanged(state, leader_actions_verdict::unchanged);
  const auto& latest = state.latest_gossip();
  auto table = latest.reachability_excluding_downed_observers();
  std::vector<member> moved;
  for (const auto& m : latest.members())
    if (m.status == member_status::joining && table.is_reachable(m.address))
      moved.push_back(*m.with_status(member_status::weakly_up));
  leader_actions_result result{
    leader_actions_verdict::unchanged, latest, {}, false};
  apply_moves(result.next, moved, result);
  if (!result.actions.empty())
    result.verdict = leader_actions_verdict::changed;
  return result;
}

} // namespace troupe::cluster
