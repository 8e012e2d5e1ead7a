#include "troupe/downing/stability_tracker.hpp"

#include <algorithm>

namespace troupe::downing {

namespace {

std::set<unique_address> up_or_leaving(const downing_view& view) {
  std::set<unique_address> result;
  for (const auto& m : view.all_members())
    if (m.status == member_status::up || m.status == member_status::leaving)
      result.insert(m.address);
  return result;
}

bool is_downed(const downing_view& view, const unique_address& node) {
  auto m = view.find(node);
  return m == nullptr || m->status == member_status::down
         || m->status == member_status::exiting;
}

} // namespace

const char* to_string(stability_verdict x) noexcept {
  switch (x) {
    case stability_verdict::idle:
      return "idle";
    case stability_verdict::unstable:
      return "unstable";
    case stability_verdict::not_responsible:
      return "not_responsible";
    case stability_verdict::downing_in_progress:
      return "downing_in_progress";
    case stability_verdict::decide:
      return "decide";
    case stability_verdict::down_all_when_unstable:
      return "down_all_when_unstable";
  }
  return "unknown";
}

stability_tracker::stability_tracker(stability_settings settings, timestamp now)
  : settings_(settings), stable_deadline_(now + settings.stable_after) {
  // nop
}

bool stability_tracker::observe(const downing_view& view, timestamp now) {
  responsible_ = view.is_responsible();
  std::erase_if(pending_downs_, [&view](const unique_address& node) {
    return is_downed(view, node);
  });
  auto members = up_or_leaving(view);
  auto indirectly_connected = view.indirectly_connected();
  bool reachability_changed = view.unreachable() != unreachable_;
  bool changed = reachability_changed || members != up_or_leaving_
                 || indirectly_connected != indirectly_connected_;
  unreachable_ = view.unreachable();
  up_or_leaving_ = std::move(members);
  indirectly_connected_ = std::move(indirectly_connected);
  if (reachability_changed) {
    if (change_count_ == 0)
      first_change_ = now;
    latest_change_ = now;
    ++change_count_;
  }
  if (unreachable_.empty())
    reset_measurement(); // all healed, downed or removed
  if (changed)
    stable_deadline_ = now + settings_.stable_after;
  return changed;
}

stability_verdict stability_tracker::evaluate(timestamp now) {
  if (change_count_ > 0) {
    if (auto deadline = unstable_deadline(); deadline && now >= *deadline)
      return stability_verdict::down_all_when_unstable;
    if (now - latest_change_ >= 2 * settings_.stable_after)
      reset_measurement();
  }
  if (unreachable_.empty())
    return stability_verdict::idle;
  if (!pending_downs_.empty())
    return stability_verdict::downing_in_progress;
  if (now < stable_deadline_)
    return stability_verdict::unstable;
  return responsible_ ? stability_verdict::decide
                      : stability_verdict::not_responsible;
}

void stability_tracker::acted(const std::set<unique_address>& downed,
                              timestamp now) {
  pending_downs_ = downed;
  reset_measurement();
  stable_deadline_ = now + settings_.stable_after;
}

std::optional<timestamp> stability_tracker::unstable_deadline() const noexcept {
  if (change_count_ == 0 || settings_.down_all_when_unstable == timespan{0})
    return std::nullopt;
  return first_change_ + settings_.stable_after
         + settings_.down_all_when_unstable;
}

std::optional<timestamp> stability_tracker::next_deadline() const noexcept {
  std::optional<timestamp> result;
  if (!unreachable_.empty())
    result = stable_deadline_;
  if (auto deadline = unstable_deadline())
    result = result ? std::min(*result, *deadline) : *deadline;
  if (change_count_ > 0) {
    auto reset = latest_change_ + 2 * settings_.stable_after;
    result = result ? std::min(*result, reset) : reset;
  }
  return result;
}

} // namespace troupe::downing
