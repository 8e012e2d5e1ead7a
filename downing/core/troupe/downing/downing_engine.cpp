#include "troupe/downing/downing_engine.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"

namespace troupe::downing {

namespace {

decision make(decision_kind kind) {
  decision result;
  result.kind = kind;
  return result;
}

/// The planted bug's version of `d` (simulator tests only).
decision planted(downing_bug bug, decision d) {
  using k = decision_kind;
  if (bug == downing_bug::always_down_unreachable
      && d.kind == k::down_reachable)
    d.kind = k::down_unreachable;
  else if (bug == downing_bug::reversed_decision) {
    if (d.kind == k::down_unreachable
        || d.kind == k::acquire_lease_and_down_unreachable)
      d.kind = k::down_reachable;
    else if (d.kind == k::down_reachable)
      d.kind = k::down_unreachable;
  }
  return d;
}

bool all_removed(const downing_view& view,
                 const std::set<unique_address>& nodes) {
  return std::all_of(nodes.begin(), nodes.end(), [&view](const auto& node) {
    return view.find(node) == nullptr;
  });
}

} // namespace

const char* to_string(log_level x) noexcept {
  switch (x) {
    case log_level::info:
      return "info";
    case log_level::warning:
      return "warning";
    case log_level::error:
      return "error";
  }
  return "unknown";
}

downing_engine::downing_engine(unique_address self,
                               downing_engine_settings settings, timestamp now,
                               downing_bug bug)
  : self_(std::move(self)), settings_(std::move(settings)), bug_(bug),
    tracker_(settings_.downing.stability, now), last_now_(now) {
  // nop
}

downing_effects
downing_engine::on_membership(const cluster::membership_state& state,
                              timestamp now) {
  return on_view(downing_view::of(state), now);
}

downing_effects downing_engine::on_view(downing_view view, timestamp now) {
  downing_effects out;
  last_now_ = now;
  if (!settings_.downing.active_strategy)
    return out;
  if (phase_ != phase::watching) {
    stashed_view_ = std::move(view); // Akka's waitingForLease: stash
    return out;
  }
  observe(std::move(view), now, out);
  return out;
}

downing_effects downing_engine::tick(timestamp now) {
  downing_effects out;
  last_now_ = now;
  if (!settings_.downing.active_strategy)
    return out;
  switch (phase_) {
    case phase::waiting_to_acquire:
      if (now >= lease_deadline_) {
        phase_ = phase::acquiring;
        lease_deadline_ = now + settings_.lease_answer_timeout;
        out.acquire_lease = true;
      }
      break;
    case phase::acquiring:
      if (now >= lease_deadline_) {
        out.log.push_back(
          {log_level::warning,
           fmt::format(
             "SBR got no answer from the lease within {}: acting "
             "as if it was refused",
             runtime::render_duration(settings_.lease_answer_timeout))});
        lease_answer(false, now, out);
      }
      break;
    case phase::watching:
      evaluate(now, out);
      break;
  }
  return out;
}

downing_effects downing_engine::on_lease_acquired(bool acquired,
                                                  timestamp now) {
  downing_effects out;
  last_now_ = now;
  if (!settings_.downing.active_strategy)
    return out;
  if (phase_ != phase::acquiring) {
    // a late answer (after lease_answer_timeout) or one nobody asked for
    if (acquired && !holds_lease_) {
      out.release_lease = true;
      out.log.push_back({log_level::info, "SBR got the lease after it had "
                                          "given up on it: releasing it"});
    }
    return out;
  }
  lease_answer(acquired, now, out);
  return out;
}

downing_effects downing_engine::on_quarantined_by_remote(timestamp now) {
  downing_effects out;
  last_now_ = now;
  if (!settings_.downing.active_strategy)
    return out;
  if (phase_ != phase::watching) {
    stashed_quarantine_ = true;
    return out;
  }
  if (view_)
    act(make(decision_kind::down_self_quarantined_by_remote), *view_, now, out);
  else
    out.down.push_back(self_);
  return out;
}

std::optional<timestamp> downing_engine::next_tick() const {
  if (!settings_.downing.active_strategy)
    return std::nullopt;
  if (phase_ != phase::watching)
    return lease_deadline_;
  std::optional<timestamp> result;
  auto consider = [&](std::optional<timestamp> t) {
    if (t && *t > last_now_ && (!result || *t < *result))
      result = t;
  };
  consider(tracker_.next_deadline());
  consider(tracker_.unstable_deadline());
  consider(tracker_.stable_deadline());
  consider(release_at_);
  return result;
}

void downing_engine::observe(downing_view view, timestamp now,
                             downing_effects& out) {
  tracker_.observe(view, now);
  view_ = std::move(view);
  evaluate(now, out);
}

void downing_engine::evaluate(timestamp now, downing_effects& out) {
  check_release(now, out);
  if (!view_)
    return;
  switch (tracker_.evaluate(now)) {
    case stability_verdict::down_all_when_unstable:
      out.log.push_back(
        {log_level::warning,
         fmt::format("SBR detected instability and will down all nodes: {} "
                     "reachability changes within {}",
                     tracker_.change_count(),
                     runtime::render_duration(
                       settings_.downing.stability.stable_after
                       + settings_.downing.stability.down_all_when_unstable))});
      act(make(decision_kind::down_all), *view_, now, out);
      break;
    case stability_verdict::decide:
      decide_now(now, out);
      break;
    default:
      break;
  }
}

void downing_engine::decide_now(timestamp now, downing_effects& out) {
  auto d = decide(*settings_.downing.active_strategy, *view_);
  if (!d.is_acquire_lease()) {
    act(d, *view_, now, out);
    return;
  }
  out.log.push_back(
    {log_level::info,
     fmt::format("SBR decided {}: waiting for the lease, {} unreachable of {} "
                 "members",
                 to_string(d), view_->unreachable().size(),
                 view_->all_members().size())});
  pending_view_ = *view_;
  if (d.acquire_delay > timespan{0}) {
    phase_ = phase::waiting_to_acquire;
    lease_deadline_ = now + d.acquire_delay;
  } else {
    phase_ = phase::acquiring;
    lease_deadline_ = now + settings_.lease_answer_timeout;
    out.acquire_lease = true;
  }
  pending_ = std::move(d);
}

void downing_engine::lease_answer(bool acquired, timestamp now,
                                  downing_effects& out) {
  auto d = after_lease(*pending_, acquired);
  auto view = std::move(*pending_view_);
  pending_.reset();
  pending_view_.reset();
  phase_ = phase::watching;
  out.log.push_back({log_level::info, acquired ? "SBR acquired the lease"
                                               : "SBR did not acquire the "
                                                 "lease: this side goes"});
  holds_lease_ = false;
  release_at_.reset();
  release_when_removed_.clear();
  act(d, view, now, out);
  if (acquired) {
    holds_lease_ = true;
    release_when_removed_ = nodes_to_down(*settings_.downing.active_strategy,
                                          planted(bug_, d), view);
  }
  if (std::exchange(stashed_quarantine_, false))
    act(make(decision_kind::down_self_quarantined_by_remote), view, now, out);
  if (stashed_view_) {
    auto next = std::move(*stashed_view_);
    stashed_view_.reset();
    observe(std::move(next), now, out);
  } else {
    evaluate(now, out);
  }
}

void downing_engine::act(const decision& original, const downing_view& view,
                         timestamp now, downing_effects& out) {
  auto d = planted(bug_, original);
  const auto& s = *settings_.downing.active_strategy;
  auto nodes = nodes_to_down(s, d, view);
  auto stable_since
    = tracker_.stable_deadline() - settings_.downing.stability.stable_after;
  auto stable_for = std::chrono::duration_cast<std::chrono::milliseconds>(
    std::max(timespan{0}, now - stable_since));
  out.log.push_back(
    {log_level::info,
     fmt::format("SBR took decision {} ({}) and is downing {}; {} unreachable "
                 "of {} members {}, indirectly connected {}, stable for {}",
                 to_string(d), name_of(s), to_string(nodes),
                 view.unreachable().size(), view.all_members().size(),
                 to_string(view.unreachable()),
                 to_string(view.indirectly_connected()),
                 runtime::render_duration(stable_for))});
  if (!d.error.empty())
    out.log.push_back({log_level::error, d.error});
  for (const auto& node : nodes)
    if (node != self_)
      out.down.push_back(node);
  if (nodes.count(self_) > 0)
    out.down.push_back(self_);
  tracker_.acted(nodes, now);
}

void downing_engine::check_release(timestamp now, downing_effects& out) {
  if (!holds_lease_ || !view_)
    return;
  if (!release_at_ && all_removed(*view_, release_when_removed_)) {
    auto* lm = std::get_if<lease_majority>(&*settings_.downing.active_strategy);
    release_at_ = now + (lm ? lm->release_after : timespan{0});
  }
  if (release_at_ && now >= *release_at_) {
    out.release_lease = true;
    out.log.push_back({log_level::info, "SBR releases the lease: the downed "
                                        "nodes were removed"});
    holds_lease_ = false;
    release_at_.reset();
    release_when_removed_.clear();
  }
}

} // namespace troupe::downing
