#include "troupe/downing/strategy.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::downing {

namespace {

decision make(decision_kind kind) {
  return decision{kind, timespan{0}, {}};
}

// ---- keep_majority --------------------------------------------------------

decision majority_decision(const downing_view& view, size_t this_side,
                           size_t other_side, const member& lowest) {
  if (this_side == other_side)
    // Equal halves: the side with the lowest address survives.
    return make(view.is_unreachable(lowest.address)
                  ? decision_kind::down_reachable
                  : decision_kind::down_unreachable);
  return make(this_side > other_side ? decision_kind::down_unreachable
                                     : decision_kind::down_reachable);
}

decision decide_keep_majority(const keep_majority& s,
                              const downing_view& view) {
  auto ms = view.members(s.role);
  if (ms.empty())
    return make(decision_kind::down_all); // no member with the role
  auto first
    = majority_decision(view, view.reachable_members(s.role).size(),
                        view.unreachable_members(s.role).size(), ms.front());
  if (first.kind != decision_kind::down_unreachable)
    return first;
  // A membership change at the same time as the partition: count as few
  // as possible here (no leaving: it may be exiting over there) and as
  // many as possible there (joining and weakly_up may be up over there).
  // A different conclusion means either side could think it is the
  // majority: down all (Akka's edge case).
  count_options here{false, true};
  count_options there{true, false};
  auto ms2 = view.members(s.role, here);
  if (ms2.empty())
    return make(decision_kind::down_all);
  auto second = majority_decision(
    view, view.reachable_members(s.role, here).size(),
    view.unreachable_members(s.role, there).size(), ms2.front());
  return make(second.kind == decision_kind::down_unreachable
                ? decision_kind::down_unreachable
                : decision_kind::down_all);
}

// ---- static_quorum --------------------------------------------------------

decision decide_static_quorum(const static_quorum& s, const downing_view& view,
                              bool has_indirectly_connected) {
  auto counted = view.members(s.role).size();
  auto limit = s.quorum_size > 0 ? 2 * s.quorum_size - 1 : 0;
  if (counted > limit) {
    auto d = make(decision_kind::down_all);
    d.error = fmt::format(
      "static_quorum: {} members{} exceed 2 * quorum_size - 1 = {} "
      "(quorum_size {}): both sides could reach the quorum, so all are "
      "downed; add no more than {} members",
      counted, s.role.empty() ? "" : fmt::format(" with role {:?}", s.role),
      limit, s.quorum_size, limit);
    return d;
  }
  if (has_indirectly_connected)
    return make(decision_kind::down_indirectly_connected);
  return make(view.reachable_members(s.role).size() >= s.quorum_size
                ? decision_kind::down_unreachable
                : decision_kind::down_reachable);
}

// ---- keep_oldest ----------------------------------------------------------

decision oldest_decision(bool down_if_alone, bool oldest_here, size_t this_side,
                         size_t other_side) {
  if (oldest_here)
    // Two nodes: keep the oldest even when alone (the other one is no
    // better); three or more: an oldest alone goes.
    return make(down_if_alone && this_side == 1 && other_side >= 2
                  ? decision_kind::down_reachable
                  : decision_kind::down_unreachable);
  return make(down_if_alone && other_side == 1 && this_side >= 2
                ? decision_kind::down_unreachable
                : decision_kind::down_reachable);
}

const member& oldest_of(const std::vector<member>& ms) {
  return *std::min_element(ms.begin(), ms.end(), cluster::by_age{});
}

decision decide_keep_oldest(const keep_oldest& s, const downing_view& view) {
  auto ms = view.members(s.role);
  if (ms.empty())
    return make(decision_kind::down_all);
  const auto& oldest = oldest_of(ms);
  auto first
    = oldest_decision(s.down_if_alone, !view.is_unreachable(oldest.address),
                      view.reachable_members(s.role).size(),
                      view.unreachable_members(s.role).size());
  if (first.kind != decision_kind::down_unreachable)
    return first;
  // Edge case as keep_majority: leaving members may be exiting on the
  // other side (and the oldest with them); joining and weakly_up ones only
  // matter for the "alone" test.
  count_options opts{s.down_if_alone, true};
  auto ms2 = view.members(s.role, count_options{false, true});
  if (ms2.empty())
    return make(decision_kind::down_all);
  const auto& oldest2 = oldest_of(ms2);
  auto second
    = oldest_decision(s.down_if_alone, !view.is_unreachable(oldest2.address),
                      view.reachable_members(s.role, opts).size(),
                      view.unreachable_members(s.role, opts).size());
  return make(second.kind == decision_kind::down_unreachable
                ? decision_kind::down_unreachable
                : decision_kind::down_all);
}

// ---- lease_majority -------------------------------------------------------

bool is_in_minority(const std::string& role, const downing_view& view) {
  auto ms = view.members(role);
  if (ms.empty())
    return false;
  auto unreachable = view.unreachable_members(role).size();
  if (unreachable * 2 == ms.size())
    return view.is_unreachable(ms.front().address);
  return unreachable * 2 > ms.size();
}

decision decide_lease_majority(const lease_majority& s,
                               const downing_view& view,
                               bool has_indirectly_connected) {
  if (has_indirectly_connected)
    return make(decision_kind::acquire_lease_and_down_indirectly_connected);
  auto d = make(decision_kind::acquire_lease_and_down_unreachable);
  if (is_in_minority(s.role, view))
    d.acquire_delay = s.acquire_lease_delay_for_minority;
  return d;
}

// ---- keep_referee ---------------------------------------------------------

decision decide_keep_referee(const keep_referee& s, const downing_view& view) {
  auto downable = view.downable();
  auto is_referee = [&](const member& m) {
    return cluster::endpoint_of(m.address) == s.referee
           && downable.count(m.address) > 0 && !view.is_unreachable(m.address);
  };
  const auto& all = view.all_members();
  if (std::none_of(all.begin(), all.end(), is_referee))
    return make(decision_kind::down_reachable);
  if (view.reachable_members().size() < s.down_all_if_less_than_nodes)
    return make(decision_kind::down_all);
  return make(decision_kind::down_unreachable);
}

std::set<unique_address> intersection(const std::set<unique_address>& x,
                                      const std::set<unique_address>& y) {
  std::set<unique_address> result;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(),
                        std::inserter(result, result.end()));
  return result;
}

std::set<unique_address> difference(const std::set<unique_address>& x,
                                    const std::set<unique_address>& y) {
  std::set<unique_address> result;
  std::set_difference(x.begin(), x.end(), y.begin(), y.end(),
                      std::inserter(result, result.end()));
  return result;
}

std::set<unique_address>
indirectly_connected_to_down(const strategy& s, const downing_view& view,
                             const std::set<unique_address>& downable) {
  auto ic = view.indirectly_connected();
  auto result = intersection(downable, ic);
  if (difference(view.unreachable(), ic).empty())
    return result;
  // The others, decided without the observations of the indirectly
  // connected (they are being downed).
  auto rest = view.without_observations_of(ic);
  auto second = decide(s, rest);
  if (second.is_indirectly_connected())
    return downable; // cannot happen (see the header); Akka's fallback
  for (const auto& node : nodes_to_down(s, second, rest))
    result.insert(node);
  return result;
}

} // namespace

const char* name_of(const strategy& x) noexcept {
  static constexpr const char* names[] = {
    "keep_majority", "static_quorum",  "keep_oldest",
    "down_all",      "lease_majority", "keep_referee",
  };
  return names[x.index()];
}

decision decide(const strategy& s, const downing_view& view) {
  bool has_ic = !view.indirectly_connected().empty();
  if (auto* x = std::get_if<static_quorum>(&s))
    return decide_static_quorum(*x, view, has_ic);
  if (auto* x = std::get_if<lease_majority>(&s))
    return decide_lease_majority(*x, view, has_ic);
  if (std::holds_alternative<down_all_nodes>(s))
    return make(decision_kind::down_all);
  if (has_ic)
    return make(decision_kind::down_indirectly_connected);
  if (auto* x = std::get_if<keep_majority>(&s))
    return decide_keep_majority(*x, view);
  if (auto* x = std::get_if<keep_oldest>(&s))
    return decide_keep_oldest(*x, view);
  return decide_keep_referee(std::get<keep_referee>(s), view);
}

std::set<unique_address> nodes_to_down(const strategy& s, const decision& d,
                                       const downing_view& view) {
  auto downable = view.downable();
  switch (d.kind) {
    case decision_kind::down_unreachable:
    case decision_kind::acquire_lease_and_down_unreachable:
      return intersection(downable, view.unreachable());
    case decision_kind::down_reachable:
      return difference(downable, view.unreachable());
    case decision_kind::down_all:
      return downable;
    case decision_kind::down_indirectly_connected:
    case decision_kind::acquire_lease_and_down_indirectly_connected:
      return indirectly_connected_to_down(s, view, downable);
    case decision_kind::reverse_down_indirectly_connected: {
      auto result = intersection(downable, view.indirectly_connected());
      for (const auto& node : difference(downable, view.unreachable()))
        result.insert(node);
      return result;
    }
    case decision_kind::down_self_quarantined_by_remote:
      if (downable.count(view.self()) > 0)
        return {view.self()};
      return {};
  }
  return {};
}

decision after_lease(const decision& d, bool acquired) {
  if (acquired || !d.is_acquire_lease())
    return d;
  return make(d.kind == decision_kind::acquire_lease_and_down_unreachable
                ? decision_kind::down_reachable
                : decision_kind::reverse_down_indirectly_connected);
}

} // namespace troupe::downing
