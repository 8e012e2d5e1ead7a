#include "troupe/cluster/gossip.hpp"

#include <algorithm>

namespace troupe::cluster {

namespace {

bool address_less(const member& m, const unique_address& node) {
  return m.address < node;
}

std::set<unique_address> addresses(const std::vector<member>& members) {
  std::set<unique_address> result;
  for (const auto& m : members)
    result.insert(result.end(), m.address);
  return result;
}

std::string node_list(const std::set<unique_address>& nodes) {
  std::string result = "{";
  for (const auto& node : nodes) {
    if (result.size() > 1)
      result += ", ";
    result += runtime::to_string(node);
  }
  result += '}';
  return result;
}

} // namespace

gossip::gossip(std::vector<member> members) : members_(std::move(members)) {
  std::sort(members_.begin(), members_.end(), by_address{});
}

const member* gossip::find(const unique_address& node) const noexcept {
  auto i
    = std::lower_bound(members_.begin(), members_.end(), node, address_less);
  return i != members_.end() && i->address == node ? &*i : nullptr;
}

bool gossip::add(member m) {
  if (tombstones_.count(m.address) > 0)
    return false;
  auto i = std::lower_bound(members_.begin(), members_.end(), m.address,
                            address_less);
  if (i != members_.end() && i->address == m.address)
    return false;
  members_.insert(i, std::move(m));
  return true;
}

void gossip::update(std::span<const member> changed) {
  for (const auto& m : changed) {
    auto i = std::lower_bound(members_.begin(), members_.end(), m.address,
                              address_less);
    if (i != members_.end() && i->address == m.address)
      *i = m;
    else
      members_.insert(i, m);
  }
}

void gossip::increment(const unique_address& node) {
  version_.increment(node);
}

void gossip::seen(const unique_address& node) {
  overview_.seen.insert(node);
}

void gossip::only_seen(const unique_address& node) {
  overview_.seen = {node};
}

void gossip::clear_seen() {
  overview_.seen.clear();
}

void gossip::merge_seen(const gossip& other) {
  overview_.seen.insert(other.overview_.seen.begin(),
                        other.overview_.seen.end());
}

bool gossip::mark_as_down(const unique_address& node) {
  auto i
    = std::lower_bound(members_.begin(), members_.end(), node, address_less);
  if (i == members_.end() || i->address != node
      || i->status == member_status::down)
    return false;
  // Every live status may move to down (members are never removed).
  i->status = member_status::down;
  overview_.seen.erase(node);
  return true;
}

void gossip::remove(const unique_address& node, wall_time at) {
  std::erase_if(members_, [&](const member& m) { return m.address == node; });
  overview_.seen.erase(node);
  overview_.reachability.remove({node});
  // The leader stamps its change afterwards; concurrent changes elsewhere
  // are pruned when their gossip merges with this tombstone.
  version_.prune(node);
  auto& time = tombstones_[node];
  time = std::max(time, at);
}

void gossip::prune(const unique_address& node) {
  version_.prune(node);
}

void gossip::prune_tombstones(wall_time remove_earlier_than) {
  std::erase_if(tombstones_, [&](const auto& entry) {
    return entry.second <= remove_earlier_than;
  });
}

reachability gossip::reachability_excluding_downed_observers() const {
  std::set<unique_address> downed;
  for (const auto& m : members_)
    if (m.status == member_status::down)
      downed.insert(m.address);
  auto result = overview_.reachability;
  if (!downed.empty())
    result.remove_observers(downed);
  return result;
}

bool gossip::is_reachable(const unique_address& from,
                          const unique_address& to) const {
  return has_member(to) && overview_.reachability.is_reachable(from, to);
}

std::set<std::string> gossip::all_roles() const {
  std::set<std::string> result;
  for (const auto& m : members_)
    result.insert(m.roles.begin(), m.roles.end());
  return result;
}

namespace {

// Of two incarnations, the one that is set; of two set ones, the older
// (commutative, associative, idempotent: the minimum of a total order in
// which "none" comes last).
cluster_incarnation older_set(const cluster_incarnation& x,
                              const cluster_incarnation& y) {
  if (!x.is_set())
    return y;
  if (!y.is_set())
    return x;
  return is_older(y, x) ? y : x;
}

} // namespace

gossip merge(const gossip& x, const gossip& y) {
  gossip result;
  result.tombstones_ = x.tombstones_;
  for (const auto& [node, at] : y.tombstones_) {
    auto& time = result.tombstones_[node];
    time = std::max(time, at);
  }
  auto tombstoned = [&](const unique_address& node) {
    return result.tombstones_.count(node) > 0;
  };
  result.version_ = merge(x.version_, y.version_);
  for (const auto& entry : result.tombstones_)
    result.version_.prune(entry.first);
  // Both member lists are sorted by address: one merge pass.
  auto i = x.members_.begin();
  auto j = y.members_.begin();
  while (i != x.members_.end() || j != y.members_.end()) {
    const member* next;
    if (j == y.members_.end()
        || (i != x.members_.end() && i->address < j->address))
      next = &*i++;
    else if (i == x.members_.end() || j->address < i->address)
      next = &*j++;
    else
      next = &highest_priority_of(*i++, *j++);
    if (!tombstoned(next->address))
      result.members_.push_back(*next);
  }
  result.overview_.reachability
    = merge(addresses(result.members_), x.overview_.reachability,
            y.overview_.reachability);
  result.incarnation_ = older_set(x.incarnation_, y.incarnation_);
  result.merging_into_ = older_set(x.merging_into_, y.merging_into_);
  return result;
}

bool gossip::mark_merging_into(const cluster_incarnation& winner) noexcept {
  if (!winner.is_set() || winner == incarnation_)
    return false;
  auto next = older_set(merging_into_, winner);
  if (next == merging_into_)
    return false;
  merging_into_ = next;
  return true;
}

bool same_convergent_state(const gossip& x, const gossip& y) {
  return x.members() == y.members() && x.reachability() == y.reachability()
         && x.version() == y.version() && x.tombstones() == y.tombstones()
         && x.incarnation() == y.incarnation()
         && x.merging_into() == y.merging_into();
}

std::optional<std::string> check_invariants(const gossip& x) {
  const auto& members = x.members();
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    if (i > 0 && !(members[i - 1].address < m.address))
      return "members not sorted and unique by address at "
             + runtime::to_string(m.address);
    if (static_cast<uint8_t>(m.status)
        > static_cast<uint8_t>(member_status::removed))
      return "member " + runtime::to_string(m.address) + " has status "
             + std::to_string(static_cast<int>(m.status))
             + ", which is no member status";
    if (m.status == member_status::removed)
      return "member " + runtime::to_string(m.address) + " has status removed";
    if (!std::is_sorted(m.roles.begin(), m.roles.end())
        || std::adjacent_find(m.roles.begin(), m.roles.end()) != m.roles.end())
      return "member " + runtime::to_string(m.address)
             + " has roles that are not sorted and unique";
    if (x.tombstones().count(m.address) > 0)
      return "member " + runtime::to_string(m.address) + " is tombstoned";
  }
  auto in_members = addresses(members);
  auto outside = [&](const std::set<unique_address>& nodes) {
    std::set<unique_address> result;
    std::set_difference(nodes.begin(), nodes.end(), in_members.begin(),
                        in_members.end(), std::inserter(result, result.end()));
    return result;
  };
  if (auto bad = outside(x.seen_by()); !bad.empty())
    return "non-members in the seen set: " + node_list(bad);
  std::set<unique_address> in_reachability;
  for (const auto& r : x.reachability().records()) {
    if (static_cast<uint8_t>(r.status)
        > static_cast<uint8_t>(reachability_status::terminated))
      return "reachability record " + runtime::to_string(r.observer) + " -> "
             + runtime::to_string(r.subject) + " has status "
             + std::to_string(static_cast<int>(r.status))
             + ", which is no reachability status";
    in_reachability.insert(r.observer);
    in_reachability.insert(r.subject);
  }
  for (const auto& entry : x.reachability().versions())
    in_reachability.insert(entry.first);
  if (auto bad = outside(in_reachability); !bad.empty())
    return "non-members in the reachability table: " + node_list(bad);
  for (const auto& entry : x.version().entries())
    if (x.tombstones().count(entry.first) > 0)
      return "version has an entry for tombstoned "
             + runtime::to_string(entry.first);
  if (x.merging_into().is_set() && !x.incarnation().is_set())
    return "a merge mark (" + to_string(x.merging_into())
           + ") without an incarnation";
  if (x.merging_into().is_set() && x.merging_into() == x.incarnation())
    return "the merge mark names the gossip's own incarnation "
           + to_string(x.incarnation());
  return std::nullopt;
}

namespace {

/// Names the first part in which two gossips differ, or "".
std::string first_difference(const gossip& x, const gossip& y) {
  if (x.members() != y.members())
    return "members";
  if (x.reachability() != y.reachability())
    return "reachability";
  if (x.version() != y.version())
    return "version";
  if (x.tombstones() != y.tombstones())
    return "tombstones";
  if (x.incarnation() != y.incarnation())
    return "incarnation";
  if (x.merging_into() != y.merging_into())
    return "merge mark";
  if (x.seen_by() != y.seen_by())
    return "seen set";
  return "";
}

std::string violation(std::string_view law, std::string_view part,
                      const gossip& lhs, const gossip& rhs) {
  std::string msg{law};
  msg += " violated in the ";
  msg += part;
  msg += ":\n--- left:\n";
  msg += to_string(lhs);
  msg += "\n--- right:\n";
  msg += to_string(rhs);
  return msg;
}

} // namespace

std::optional<std::string> check_merge_laws(const gossip& a, const gossip& b,
                                            const gossip& c) {
  const gossip* inputs[] = {&a, &b, &c};
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < 3; ++i) {
    auto twice = merge(*inputs[i], *inputs[i]);
    if (!same_convergent_state(twice, *inputs[i]))
      return violation(std::string{"idempotence merge("} + names[i] + ", "
                         + names[i] + ") == " + names[i],
                       first_difference(twice, *inputs[i]), twice, *inputs[i]);
    for (int j = i + 1; j < 3; ++j) {
      auto xy = merge(*inputs[i], *inputs[j]);
      auto yx = merge(*inputs[j], *inputs[i]);
      if (xy != yx)
        return violation(std::string{"commutativity merge("} + names[i] + ", "
                           + names[j] + ") == merge(" + names[j] + ", "
                           + names[i] + ")",
                         first_difference(xy, yx), xy, yx);
    }
  }
  auto left = merge(merge(a, b), c);
  auto right = merge(a, merge(b, c));
  if (left != right)
    return violation("associativity merge(merge(a, b), c) == "
                     "merge(a, merge(b, c))",
                     first_difference(left, right), left, right);
  return std::nullopt;
}

std::string to_string(const gossip& x) {
  std::string result = "members:";
  for (const auto& m : x.members()) {
    result += "\n  ";
    result += to_string(m);
  }
  result += "\nseen: ";
  result += node_list(x.seen_by());
  result += "\nreachability: ";
  result += to_string(x.reachability());
  result += "\nversion: ";
  result += to_string(x.version());
  result += "\ntombstones:";
  for (const auto& [node, at] : x.tombstones()) {
    result += ' ';
    result += runtime::to_string(node);
    result += '@';
    result += std::to_string(at.time_since_epoch().count());
    result += "ms";
  }
  result += "\nincarnation: ";
  result += to_string(x.incarnation());
  if (x.merging_into().is_set()) {
    result += " (merging into ";
    result += to_string(x.merging_into());
    result += ')';
  }
  return result;
}

} // namespace troupe::cluster
