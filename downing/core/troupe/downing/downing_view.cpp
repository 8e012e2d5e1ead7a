#include "troupe/downing/downing_view.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/cluster/role_filter.hpp"

namespace troupe::downing {

namespace {

bool is_down_or_exiting(member_status x) noexcept {
  return x == member_status::down || x == member_status::exiting;
}

} // namespace

bool is_counted(member_status status, count_options opts) noexcept {
  switch (status) {
    case member_status::joining:
    case member_status::weakly_up:
      return opts.including_possibly_up;
    case member_status::up:
      return true;
    case member_status::leaving:
      return !opts.excluding_possibly_exiting;
    default:
      return false;
  }
}

downing_view::downing_view(
  unique_address self, std::vector<member> members,
  const std::vector<cluster::reachability_record>& records,
  std::set<unique_address> seen_by)
  : self_(std::move(self)), members_(std::move(members)),
    seen_by_(std::move(seen_by)) {
  std::sort(members_.begin(), members_.end(), cluster::by_address{});
  auto is_downable = [this](const unique_address& node) {
    auto m = find(node);
    return m != nullptr && !is_down_or_exiting(m->status);
  };
  std::vector<cluster::reachability_record> kept;
  for (const auto& r : records)
    if (r.status != cluster::reachability_status::reachable
        && is_downable(r.observer) && is_downable(r.subject))
      kept.push_back(r);
  std::sort(kept.begin(), kept.end(), [](const auto& x, const auto& y) {
    return std::tie(x.observer, x.subject) < std::tie(y.observer, y.subject);
  });
  auto cut_off = cut_off_observers(kept);
  for (auto& r : kept) {
    if (cut_off.count(r.observer) > 0)
      continue;
    if (r.subject != self_)
      unreachable_.insert(r.subject);
    records_.push_back(std::move(r));
  }
}

std::set<unique_address> downing_view::cut_off_observers(
  const std::vector<cluster::reachability_record>& records) const {
  std::set<std::pair<unique_address, unique_address>> edges;
  std::set<unique_address> observers;
  for (const auto& r : records) {
    edges.emplace(r.observer, r.subject);
    observers.insert(r.observer);
  }
  std::set<unique_address> result;
  for (const auto& o : observers) {
    if (o == self_)
      continue; // self's own observations are current
    bool seen_by_all = false;
    for (const auto& m : members_) {
      // A member self itself finds unreachable (crashed, or cut off too)
      // cannot be asked: its silence says nothing about o.
      if (m.address == o || !is_counted(m.status)
          || (m.address != self_ && edges.count({self_, m.address}) > 0))
        continue;
      seen_by_all = edges.count({m.address, o}) > 0;
      if (!seen_by_all)
        break;
    }
    if (seen_by_all)
      result.insert(o);
  }
  return result;
}

downing_view downing_view::of(const cluster::membership_state& state) {
  const auto& g = state.latest_gossip();
  return downing_view{state.self(), g.members(), g.reachability().records(),
                      g.overview().seen};
}

const member* downing_view::find(const unique_address& node) const noexcept {
  auto i = std::lower_bound(
    members_.begin(), members_.end(), node,
    [](const member& m, const unique_address& x) { return m.address < x; });
  if (i == members_.end() || i->address != node)
    return nullptr;
  return &*i;
}

std::vector<member> downing_view::members(const std::string& role,
                                          count_options opts) const {
  std::vector<member> result;
  for (const auto& m : members_)
    if (is_counted(m.status, opts) && cluster::in_role(m, role))
      result.push_back(m);
  return result;
}

std::vector<member> downing_view::reachable_members(const std::string& role,
                                                    count_options opts) const {
  auto result = members(role, opts);
  std::erase_if(result,
                [this](const member& m) { return is_unreachable(m.address); });
  return result;
}

std::vector<member>
downing_view::unreachable_members(const std::string& role,
                                  count_options opts) const {
  auto result = members(role, opts);
  std::erase_if(result,
                [this](const member& m) { return !is_unreachable(m.address); });
  return result;
}

std::set<unique_address> downing_view::downable() const {
  std::set<unique_address> result;
  for (const auto& m : members_)
    if (!is_down_or_exiting(m.status))
      result.insert(m.address);
  return result;
}

std::set<unique_address> downing_view::observers_that_are_subjects() const {
  std::set<unique_address> observers;
  std::set<unique_address> subjects;
  for (const auto& r : records_) {
    observers.insert(r.observer);
    subjects.insert(r.subject);
  }
  std::set<unique_address> result;
  std::set_intersection(observers.begin(), observers.end(), subjects.begin(),
                        subjects.end(), std::inserter(result, result.end()));
  return result;
}

std::set<unique_address> downing_view::indirectly_connected() const {
  auto result = observers_that_are_subjects();
  // A subject that has seen the current gossip is still connected through
  // some other node, and so is its observer (Akka's
  // indirectlyConnectedFromSeenCurrentGossip).
  for (const auto& r : records_)
    if (seen_by_.count(r.subject) > 0) {
      result.insert(r.observer);
      result.insert(r.subject);
    }
  return result;
}

downing_view downing_view::without_observations_of(
  const std::set<unique_address>& observers) const {
  std::vector<cluster::reachability_record> kept;
  for (const auto& r : records_)
    if (observers.count(r.observer) == 0)
      kept.push_back(r);
  return downing_view{self_, members_, kept, seen_by_};
}

std::optional<unique_address> downing_view::side_leader() const {
  std::vector<member> side;
  for (const auto& m : members_)
    if (!is_unreachable(m.address))
      side.push_back(m);
  return cluster::leader_by_status(side);
}

bool downing_view::is_responsible() const {
  auto self_member = find(self_);
  if (self_member == nullptr || self_member->status == member_status::joining
      || self_member->status == member_status::down)
    return false;
  auto leader = side_leader();
  return leader && *leader == self_;
}

std::string to_string(const std::set<unique_address>& nodes) {
  std::vector<std::string> texts;
  for (const auto& node : nodes)
    texts.push_back(runtime::to_string(node));
  return fmt::format("{{{}}}", fmt::join(texts, ", "));
}

} // namespace troupe::downing
