#include "troupe/cluster/reachability.hpp"

#include <algorithm>
#include <tuple>

namespace troupe::cluster {

namespace {

using record = reachability_record;

bool by_observer(const record& x, const unique_address& observer) {
  return x.observer < observer;
}

bool observer_before(const unique_address& observer, const record& x) {
  return observer < x.observer;
}

auto row_key(const record& x) {
  return std::tie(x.subject, x.status, x.version);
}

bool rows_less(std::span<const record> xs, std::span<const record> ys) {
  return std::lexicographical_compare(
    xs.begin(), xs.end(), ys.begin(), ys.end(),
    [](const record& x, const record& y) { return row_key(x) < row_key(y); });
}

uint64_t version_of(const std::map<unique_address, uint64_t>& versions,
                    const unique_address& observer) {
  auto i = versions.find(observer);
  return i == versions.end() ? 0 : i->second;
}

} // namespace

const char* to_string(reachability_status x) noexcept {
  switch (x) {
    case reachability_status::reachable:
      return "reachable";
    case reachability_status::unreachable:
      return "unreachable";
    case reachability_status::terminated:
      return "terminated";
  }
  return "unknown";
}

std::span<const record>
reachability::records_from(const unique_address& observer) const {
  auto first
    = std::lower_bound(records_.begin(), records_.end(), observer, by_observer);
  auto last
    = std::upper_bound(first, records_.end(), observer, observer_before);
  return {first, last};
}

void reachability::unreachable(const unique_address& observer,
                               const unique_address& subject) {
  change(observer, subject, reachability_status::unreachable);
}

void reachability::reachable(const unique_address& observer,
                             const unique_address& subject) {
  change(observer, subject, reachability_status::reachable);
}

void reachability::terminated(const unique_address& observer,
                              const unique_address& subject) {
  change(observer, subject, reachability_status::terminated);
}

void reachability::change(const unique_address& observer,
                          const unique_address& subject,
                          reachability_status status) {
  // As Akka's Reachability.change: a no-op keeps the version; otherwise
  // the observer's version goes up by one and the record carries it.
  auto rows = records_from(observer);
  auto first = records_.begin() + (rows.data() - records_.data());
  auto last = first + static_cast<std::ptrdiff_t>(rows.size());
  auto old = std::find_if(
    first, last, [&](const record& r) { return r.subject == subject; });
  bool found = old != last;
  if (found
      && (old->status == reachability_status::terminated
          || old->status == status))
    return;
  if (rows.empty() && status == reachability_status::reachable)
    return; // reachable is the default; nothing to record
  auto version = version_of(versions_, observer) + 1;
  versions_[observer] = version;
  bool others_reachable = std::all_of(first, last, [&](const record& r) {
    return r.status == reachability_status::reachable || r.subject == subject;
  });
  if (status == reachability_status::reachable && others_reachable) {
    // All of the observer's rows now say reachable: drop them all.
    records_.erase(first, last);
    return;
  }
  record fresh{observer, subject, status, version};
  if (found) {
    *old = std::move(fresh);
    return;
  }
  auto pos = std::find_if(first, last,
                          [&](const record& r) { return subject < r.subject; });
  records_.insert(pos, std::move(fresh));
}

reachability_status reachability::status(const unique_address& observer,
                                         const unique_address& subject) const {
  for (const auto& r : records_from(observer))
    if (r.subject == subject)
      return r.status;
  return reachability_status::reachable;
}

reachability_status reachability::status(const unique_address& subject) const {
  auto result = reachability_status::reachable;
  for (const auto& r : records_) {
    if (r.subject != subject)
      continue;
    if (r.status == reachability_status::terminated)
      return r.status;
    if (r.status == reachability_status::unreachable)
      result = r.status;
  }
  return result;
}

bool reachability::is_reachable(const unique_address& subject) const {
  return status(subject) == reachability_status::reachable;
}

bool reachability::is_reachable(const unique_address& observer,
                                const unique_address& subject) const {
  return status(observer, subject) == reachability_status::reachable;
}

std::set<unique_address> reachability::all_unreachable() const {
  std::set<unique_address> unreachable;
  std::set<unique_address> terminated;
  for (const auto& r : records_) {
    if (r.status == reachability_status::unreachable)
      unreachable.insert(r.subject);
    else if (r.status == reachability_status::terminated)
      terminated.insert(r.subject);
  }
  for (const auto& node : terminated)
    unreachable.erase(node);
  return unreachable;
}

std::set<unique_address> reachability::all_unreachable_or_terminated() const {
  std::set<unique_address> result;
  for (const auto& r : records_)
    if (r.status != reachability_status::reachable)
      result.insert(r.subject);
  return result;
}

std::set<unique_address>
reachability::all_unreachable_from(const unique_address& observer) const {
  std::set<unique_address> result;
  for (const auto& r : records_from(observer))
    if (r.status == reachability_status::unreachable)
      result.insert(r.subject);
  return result;
}

std::map<unique_address, std::set<unique_address>>
reachability::observers_grouped_by_unreachable() const {
  std::map<unique_address, std::set<unique_address>> result;
  for (const auto& r : records_)
    if (r.status == reachability_status::unreachable)
      result[r.subject].insert(r.observer);
  return result;
}

std::set<unique_address> reachability::all_observers() const {
  std::set<unique_address> result;
  for (const auto& r : records_)
    result.insert(r.observer);
  return result;
}

void reachability::remove(const std::set<unique_address>& nodes) {
  std::erase_if(records_, [&](const record& r) {
    return nodes.count(r.observer) > 0 || nodes.count(r.subject) > 0;
  });
  for (const auto& node : nodes)
    versions_.erase(node);
}

void reachability::remove_observers(const std::set<unique_address>& nodes) {
  std::erase_if(records_,
                [&](const record& r) { return nodes.count(r.observer) > 0; });
  for (const auto& node : nodes)
    versions_.erase(node);
}

reachability merge(const std::set<unique_address>& allowed,
                   const reachability& x, const reachability& y) {
  reachability result;
  for (const auto& observer : allowed) {
    auto vx = version_of(x.versions_, observer);
    auto vy = version_of(y.versions_, observer);
    if (vx == 0 && vy == 0)
      continue;
    result.versions_[observer] = std::max(vx, vy);
    auto rx = x.records_from(observer);
    auto ry = y.records_from(observer);
    // The newer rows win whole: an observer always gossips all its rows.
    auto rows = vx > vy ? rx : vy > vx ? ry : rows_less(rx, ry) ? ry : rx;
    for (const auto& r : rows)
      if (allowed.count(r.subject) > 0)
        result.records_.push_back(r);
  }
  // `allowed` is sorted and each observer's rows are, so records are too.
  return result;
}

std::string to_string(const reachability& x) {
  std::string result;
  for (const auto& r : x.records()) {
    if (!result.empty())
      result += "; ";
    result += runtime::to_string(r.observer);
    result += " -> ";
    result += runtime::to_string(r.subject);
    result += ": ";
    result += to_string(r.status);
    result += " (";
    result += std::to_string(r.version);
    result += ')';
  }
  return result;
}

} // namespace troupe::cluster
