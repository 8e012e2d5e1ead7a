#include "troupe/singleton/manager_engine.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/cluster/role_filter.hpp"
#include "troupe/runtime/clock.hpp"

namespace troupe::singleton {

using cluster::member;
using cluster::member_status;

const char* to_string(manager_state x) noexcept {
  switch (x) {
    case manager_state::start:
      return "start";
    case manager_state::younger:
      return "younger";
    case manager_state::becoming_oldest:
      return "becoming_oldest";
    case manager_state::taking_over:
      return "taking_over";
    case manager_state::acquiring_lease:
      return "acquiring_lease";
    case manager_state::oldest:
      return "oldest";
    case manager_state::was_oldest:
      return "was_oldest";
    case manager_state::handing_over:
      return "handing_over";
    case manager_state::stopping:
      return "stopping";
    case manager_state::end:
      return "end";
  }
  return "unknown";
}

const char* name_of(const hand_over_message& x) noexcept {
  switch (x.index()) {
    case 0:
      return "hand_over_to_me";
    case 1:
      return "hand_over_in_progress";
    case 2:
      return "hand_over_done";
    default:
      return "take_over_from_me";
  }
}

namespace {

std::string names(const std::vector<unique_address>& xs) {
  std::string out;
  for (auto& x : xs) {
    if (!out.empty())
      out += ", ";
    out += to_string(x);
  }
  return out;
}

} // namespace

manager_engine::manager_engine(unique_address self, manager_settings settings,
                               manager_bug bug)
  : self_(std::move(self)), settings_(std::move(settings)), bug_(bug) {
  // nop
}

// -- predicates ---------------------------------------------------------------

bool manager_engine::cleared(const ahead_member& m, timestamp now) const {
  if (m.done)
    return true;
  if (!m.removed)
    return false;
  return !m.needs_margin || now >= m.removed_at + removal_margin(m);
}

timespan manager_engine::removal_margin(const ahead_member& m) const {
  if (!m.unreachable || !m.seen_leaving)
    return settings_.down_removal_margin;
  // A leaving or exiting member removed while unreachable: if it is
  // exiting in its own view, its split brain resolver ignores it, so only
  // its own manager stops its instance, after max_take_over_retries
  // unanswered take_over_from_me (begun before the removal), one more
  // interval for the stop.
  auto bound = settings_.hand_over_retry_interval
               * (max_take_over_retries(settings_) + 1);
  return std::max(settings_.down_removal_margin, bound);
}

bool manager_engine::self_gone() const {
  return self_removed_
         || (self_member_ && (self_member_->status == member_status::down));
}

bool manager_engine::will_never_run() const {
  if (stopping_for_good_ || self_gone() || state_ == manager_state::end)
    return true;
  return self_member_
         && (self_member_->status == member_status::leaving
             || self_member_->status == member_status::exiting);
}

bool manager_engine::entitled() const {
  return have_view_ && !stopping_for_good_ && self_member_
         && self_member_->status == member_status::up
         && cluster::in_role(*self_member_, settings_.role)
         && !candidates_.empty() && candidates_.front().address == self_;
}

// The target keeps its position while leaving (Akka: a leaving member stays
// in membersByAge until it is exiting); it hands over when exiting, or when
// a member of a higher app_version is up and so comes first.
static bool keeps_oldest(const std::optional<member>& me,
                         const std::vector<member>& candidates,
                         const unique_address& self) {
  return me
         && (me->status == member_status::up
             || me->status == member_status::leaving)
         && !candidates.empty() && candidates.front().address == self;
}

std::optional<unique_address> manager_engine::expected_successor() const {
  for (auto& m : candidates_)
    if (m.address != self_ && m.status == member_status::up)
      return m.address;
  return std::nullopt;
}

// Whether this node may answer `hand_over_to_me` from `from` while up and
// able to run the instance later: `from` has a higher app_version, so it
// precedes this node in the singleton order and this node cannot start an
// instance before it has cleared `from` (see the rules in the header).
bool manager_engine::yields_to(const unique_address& from) const {
  if (!self_member_ || self_member_->up_number == member::no_up_number)
    return false;
  auto i = ahead_.find(from);
  if (i == ahead_.end() || i->second.removed || i->second.done)
    return false;
  auto c = std::find_if(candidates_.begin(), candidates_.end(),
                        [&](const member& m) { return m.address == from; });
  return c != candidates_.end() && c->app_version > self_member_->app_version;
}

std::vector<unique_address> manager_engine::uncleared(timestamp now,
                                                      bool only_present) const {
  std::vector<unique_address> out;
  for (auto& [address, m] : ahead_)
    if (!cleared(m, now) && !(only_present && m.removed))
      out.push_back(address);
  return out;
}

// -- inputs -------------------------------------------------------------------

manager_effects
manager_engine::on_membership(const cluster::membership_state& state,
                              timestamp now) {
  manager_effects out;
  auto& g = state.latest_gossip();
  auto* me = state.self_member();
  if (me != nullptr)
    self_member_ = *me;
  else if (self_member_ || g.tombstones().count(self_) > 0)
    self_removed_ = true;
  have_view_ = true;
  candidates_ = cluster::singleton_candidates(
    g, settings_.role.empty()
         ? std::nullopt
         : std::optional<std::string_view>{settings_.role});
  track_ahead(g);
  for (auto i = ahead_.begin(); i != ahead_.end();) {
    auto& [address, m] = *i;
    if (!m.removed && !g.has_member(address)) {
      m.removed = true;
      m.removed_at = now;
      // An exiting member removed while unreachable did not confirm its
      // exit (the leader removes it as crashed): as if downed.
      m.needs_margin = m.status != member_status::exiting || m.unreachable;
      if (m.needs_margin && removal_margin(m) > timespan::zero())
        log(out, log_level::info,
            fmt::format("{} was removed from status {}: counting it as gone "
                        "after the down removal margin of {}",
                        to_string(address),
                        m.unreachable ? cluster::to_string(m.status)
                                          + std::string{" (unreachable)"}
                                      : cluster::to_string(m.status),
                        runtime::render_duration(removal_margin(m))));
    }
    if (m.removed && cleared(m, now))
      i = ahead_.erase(i);
    else
      ++i;
  }
  evaluate(now, out);
  update_exit_hold(out);
  return out;
}

// Every member that was ever up and ahead of this node (it precedes this
// node in the singleton order, or it is older) must be cleared before this
// node may run the instance. Before this node is up, every member is.
void manager_engine::track_ahead(const cluster::gossip& g) {
  bool self_up
    = self_member_ && self_member_->up_number != member::no_up_number;
  for (auto& m : g.members()) {
    if (m.address == self_ || !cluster::in_role(m, settings_.role)
        || m.up_number == member::no_up_number)
      continue;
    auto i = ahead_.find(m.address);
    if (i == ahead_.end()) {
      if (self_up && !m.is_older_than(*self_member_)
          && !cluster::precedes_as_singleton_host(m, *self_member_))
        continue;
      i = ahead_.emplace(m.address, ahead_member{}).first;
    }
    i->second.status = m.status;
    i->second.unreachable = !g.reachability().is_reachable(m.address);
    if (m.status == member_status::leaving
        || m.status == member_status::exiting)
      i->second.seen_leaving = true;
  }
}

manager_effects manager_engine::on_message(const unique_address& from,
                                           const hand_over_message& message,
                                           timestamp now) {
  manager_effects out;
  auto ignore = [&](const char* why) {
    ++counters_.ignored_messages;
    log(out, log_level::debug,
        fmt::format("ignored {} from {} in state {}: {}", name_of(message),
                    to_string(from), to_string(state_), why));
  };
  if (std::holds_alternative<hand_over_to_me>(message)) {
    switch (state_) {
      case manager_state::oldest:
        ignore("this node is still the singleton target in its view");
        break;
      case manager_state::was_oldest:
        if (from != expected_successor()) {
          ignore("the sender is not the first up candidate after this node");
          break;
        }
        hand_over_to_ = from;
        out.send.push_back({from, hand_over_in_progress{}});
        log(out, log_level::info,
            fmt::format("handing over to {}", to_string(from)));
        begin_stop(manager_state::handing_over,
                   will_never_run() ? manager_state::end
                                    : manager_state::younger,
                   "hand-over", now, out);
        break;
      case manager_state::handing_over:
        if (hand_over_to_ == from)
          out.send.push_back({from, hand_over_in_progress{}});
        else
          ignore("handing over to another member");
        break;
      default:
        if (will_never_run() && !instance_ && lease_ == lease_phase::none)
          out.send.push_back({from, hand_over_done{}});
        else if (state_ == manager_state::younger && !instance_
                 && lease_ == lease_phase::none && yields_to(from))
          out.send.push_back({from, hand_over_done{}});
        else
          ignore("this node runs no instance but may still run one");
        break;
    }
  } else if (std::holds_alternative<hand_over_done>(message)) {
    auto i = ahead_.find(from);
    if (i == ahead_.end()) {
      ignore("the sender is not a member ahead of this node");
    } else {
      if (bug_ == manager_bug::trust_any_done)
        for (auto& entry : ahead_)
          entry.second.done = true;
      i->second.done = true;
      evaluate(now, out);
    }
  } else if (std::holds_alternative<hand_over_in_progress>(message)) {
    if (state_ == manager_state::becoming_oldest && ahead_.count(from) > 0)
      go(manager_state::taking_over, out);
    else if (state_ != manager_state::taking_over)
      ignore("no hand-over to this node is under way");
  } else { // take_over_from_me
    auto i = ahead_.find(from);
    if ((state_ == manager_state::becoming_oldest
         || state_ == manager_state::taking_over)
        && i != ahead_.end() && !cleared(i->second, now)) {
      out.send.push_back({from, hand_over_to_me{}});
      go(manager_state::taking_over, out);
    } else {
      ignore("this node is not becoming the target, or the sender is not a "
             "member ahead of it that it waits for");
    }
  }
  update_exit_hold(out);
  return out;
}

manager_effects manager_engine::on_instance_terminated(uint64_t incarnation,
                                                       timestamp now) {
  manager_effects out;
  if (instance_ != incarnation) {
    log(out, log_level::debug,
        fmt::format("ignored the termination of instance {} (not running)",
                    incarnation));
    return out;
  }
  instance_.reset();
  kill_at_.reset();
  ++counters_.terminated;
  if (stop_requested_) {
    stop_requested_ = false;
    finish_stop(now, out);
    evaluate(now, out);
  } else {
    log(out, log_level::warning,
        fmt::format("instance {} stopped by itself", incarnation));
    if (lease_ == lease_phase::held) {
      lease_ = lease_phase::releasing;
      out.release_lease = true;
    }
    if (state_ == manager_state::oldest && settings_.restart_on_stop) {
      if (now - started_at_ >= settings_.restart_max_backoff)
        backoff_ = timespan::zero();
      backoff_ = backoff_ == timespan::zero()
                   ? settings_.restart_min_backoff
                   : std::min(backoff_ * 2, settings_.restart_max_backoff);
      restart_at_ = now + backoff_;
      log(out, log_level::info,
          fmt::format("restarting the instance in {}",
                      runtime::render_duration(backoff_)));
    }
    evaluate(now, out);
  }
  update_exit_hold(out);
  return out;
}

manager_effects manager_engine::on_lease_acquired(bool acquired, uint64_t token,
                                                  timestamp now) {
  manager_effects out;
  if (lease_ != lease_phase::acquiring) {
    log(out, log_level::debug, "ignored a lease answer nobody waits for");
    return out;
  }
  if (acquired) {
    lease_ = lease_phase::held;
    if (bug_ != manager_bug::reuse_token || token_ == 0)
      token_ = token;
    if (release_when_acquired_ || state_ != manager_state::acquiring_lease
        || !entitled()) {
      release_when_acquired_ = false;
      lease_ = lease_phase::releasing;
      out.release_lease = true;
      log(out, log_level::info,
          "acquired the lease after this node stopped needing it: releasing");
    } else {
      log(out, log_level::info,
          fmt::format("acquired the lease (fencing token {})", token_));
      go(manager_state::oldest, out);
      instance_ = ++incarnations_;
      started_at_ = now;
      ++counters_.started;
      out.start = start_instance{*instance_, token_};
    }
  } else {
    lease_ = lease_phase::none;
    release_when_acquired_ = false;
    finish_stop(now, out);
    if (state_ == manager_state::acquiring_lease) {
      lease_retry_at_ = now + settings_.lease_retry_interval;
      log(
        out, log_level::info,
        fmt::format("the lease was refused; asking again in {}",
                    runtime::render_duration(settings_.lease_retry_interval)));
    }
    evaluate(now, out);
  }
  update_exit_hold(out);
  return out;
}

manager_effects manager_engine::on_lease_lost(uint64_t token, timestamp now) {
  manager_effects out;
  // The loss of an earlier acquisition is old news.
  if (lease_ != lease_phase::held || (token != 0 && token != token_))
    return out;
  lease_ = lease_phase::none;
  ++counters_.leases_lost;
  log(out, log_level::warning,
      instance_
        ? fmt::format("lease lost: stopping instance {} at once", *instance_)
        : std::string{"lease lost"});
  if (instance_ && bug_ != manager_bug::ignore_lease_lost) {
    switch (state_) {
      case manager_state::oldest:
        begin_stop(manager_state::stopping, manager_state::younger,
                   "lease lost", now, out);
        break;
      default:
        // handing_over or stopping already stop the instance; was_oldest
        // stops it now and goes on handing over (to nobody if no one asks).
        request_stop(now, out);
        break;
    }
  }
  evaluate(now, out);
  update_exit_hold(out);
  return out;
}

manager_effects manager_engine::on_lease_released(timestamp now) {
  manager_effects out;
  if (lease_ != lease_phase::releasing)
    return out;
  lease_ = lease_phase::none;
  finish_stop(now, out);
  if (state_ == manager_state::acquiring_lease && !lease_retry_at_)
    start_or_acquire(now, out);
  else if (state_ == manager_state::oldest && !instance_ && restart_at_
           && *restart_at_ <= now)
    start_or_acquire(now, out);
  evaluate(now, out);
  update_exit_hold(out);
  return out;
}

manager_effects manager_engine::tick(timestamp now) {
  manager_effects out;
  auto due = [&](std::optional<timestamp>& at) {
    if (at && *at <= now) {
      at.reset();
      return true;
    }
    return false;
  };
  if (instance_ && stop_requested_ && due(kill_at_)) {
    out.kill_instance = true;
    log(out, log_level::error,
        fmt::format("instance {} did not terminate within {} of its stop "
                    "message (singleton.instance_stop_timeout): killing it",
                    *instance_,
                    runtime::render_duration(settings_.instance_stop_timeout)));
  }
  switch (state_) {
    case manager_state::becoming_oldest:
    case manager_state::taking_over:
      if (due(retry_at_)) {
        if (uncleared(now, false).empty()) {
          evaluate(now, out);
          break;
        }
        if (++retries_ > max_hand_over_retries(settings_)) {
          ++counters_.stuck;
          log(out, log_level::error,
              fmt::format("hand-over stuck: {} did not answer after {} "
                          "retries and {} not removed; restarting the "
                          "manager's protocol (the application is not "
                          "touched)",
                          names(uncleared(now, false)), retries_ - 1,
                          uncleared(now, true).empty() ? "were" : "are"));
          retries_ = 0;
          go(manager_state::becoming_oldest, out);
        }
        ask_ahead(now, out);
      }
      break;
    case manager_state::was_oldest:
      if (due(retry_at_)) {
        if (++retries_ > max_take_over_retries(settings_)) {
          if (will_never_run()) {
            log(out, log_level::warning,
                "no member asked for the hand-over: stopping the instance");
            hand_over_to_.reset();
            begin_stop(manager_state::handing_over, manager_state::end,
                       "nobody took over", now, out);
            break;
          }
          retries_ = 0;
        }
        if (auto next = expected_successor())
          out.send.push_back({*next, take_over_from_me{}});
        retry_at_ = now + settings_.hand_over_retry_interval;
      }
      break;
    case manager_state::acquiring_lease:
      if (due(lease_retry_at_) && lease_ == lease_phase::none && entitled())
        start_or_acquire(now, out);
      break;
    case manager_state::oldest:
      if (!instance_ && lease_ == lease_phase::none && due(restart_at_))
        start_or_acquire(now, out);
      break;
    default:
      break;
  }
  // removal margins that ran out
  evaluate(now, out);
  update_exit_hold(out);
  return out;
}

manager_effects manager_engine::stop(timestamp now) {
  manager_effects out;
  if (stopping_for_good_)
    return out;
  stopping_for_good_ = true;
  restart_at_.reset();
  if (instance_ || lease_ != lease_phase::none) {
    if (state_ == manager_state::handing_over
        || state_ == manager_state::stopping) {
      after_stop_ = manager_state::end;
    } else {
      begin_stop(manager_state::stopping, manager_state::end,
                 "the manager stops", now, out);
    }
  } else {
    go(manager_state::end, out);
    stopped_ = true;
    out.stopped = true;
  }
  static_cast<void>(now);
  update_exit_hold(out);
  return out;
}

std::optional<timestamp> manager_engine::next_tick() const {
  std::optional<timestamp> out;
  auto consider = [&](std::optional<timestamp> t) {
    if (t && (!out || *t < *out))
      out = t;
  };
  switch (state_) {
    case manager_state::becoming_oldest:
    case manager_state::taking_over:
    case manager_state::was_oldest:
      consider(retry_at_);
      break;
    case manager_state::acquiring_lease:
      consider(lease_retry_at_);
      break;
    case manager_state::oldest:
      if (lease_ == lease_phase::none)
        consider(restart_at_);
      break;
    default:
      break;
  }
  if (instance_ && stop_requested_)
    consider(kill_at_);
  for (auto& [address, m] : ahead_)
    if (m.removed && m.needs_margin && !m.done)
      consider(m.removed_at + removal_margin(m));
  return out;
}

// -- the protocol -------------------------------------------------------------

void manager_engine::evaluate(timestamp now, manager_effects& out) {
  if (!have_view_ || stopped_)
    return;
  if (state_ == manager_state::start)
    go(manager_state::younger, out);
  // margins that ran out: forget cleared removed members
  std::erase_if(ahead_, [&](auto& entry) {
    return entry.second.removed && cleared(entry.second, now);
  });
  if (self_gone() && state_ != manager_state::end
      && state_ != manager_state::stopping
      && state_ != manager_state::handing_over) {
    if (instance_ || lease_ != lease_phase::none) {
      begin_stop(manager_state::stopping, manager_state::end,
                 self_removed_ ? "this node was removed"
                               : "this node was downed",
                 now, out);
    } else {
      go(manager_state::end, out);
    }
    return;
  }
  switch (state_) {
    case manager_state::younger:
    case manager_state::becoming_oldest:
    case manager_state::taking_over:
      if (entitled()) {
        if (bug_ == manager_bug::skip_hand_over
            || uncleared(now, false).empty()) {
          become_oldest(now, out);
        } else if (state_ == manager_state::younger) {
          log(out, log_level::info,
              fmt::format("this node is the singleton target; waiting for {} "
                          "to hand over or be removed",
                          names(uncleared(now, false))));
          go(manager_state::becoming_oldest, out);
          retries_ = 0;
          ask_ahead(now, out);
        }
      } else if (state_ != manager_state::younger || will_never_run()) {
        retry_at_.reset();
        go(will_never_run() ? manager_state::end : manager_state::younger, out);
      }
      break;
    case manager_state::acquiring_lease:
      if (!entitled()) {
        lease_retry_at_.reset();
        if (lease_ == lease_phase::acquiring)
          release_when_acquired_ = true;
        go(will_never_run() && lease_ == lease_phase::none
             ? manager_state::end
             : manager_state::younger,
           out);
      }
      break;
    case manager_state::oldest:
      if (keeps_oldest(self_member_, candidates_, self_))
        break;
      restart_at_.reset();
      if (!instance_ && lease_ == lease_phase::none) {
        go(will_never_run() ? manager_state::end : manager_state::younger, out);
        break;
      }
      if (!expected_successor() && will_never_run()) {
        // Leaving with nobody up to take over (the whole cluster stopping
        // at once): waiting for a hand-over request would only hold this
        // node's exit (Akka does not hold it either in WasOldest).
        log(out, log_level::info,
            "this node is leaving and no member is up to take over: "
            "stopping the instance now");
        hand_over_to_.reset();
        begin_stop(manager_state::handing_over, manager_state::end,
                   "leaving, nobody to take over", now, out);
        break;
      }
      if (auto next = expected_successor())
        log(out, log_level::info,
            fmt::format("this node is no longer the singleton target; waiting "
                        "for {} to take over",
                        to_string(*next)));
      else
        log(out, log_level::info,
            "this node is no longer the singleton target and no member is up "
            "to take over: the instance runs until one is, or until this "
            "node exits");
      go(manager_state::was_oldest, out);
      retries_ = 0;
      if (auto next = expected_successor())
        out.send.push_back({*next, take_over_from_me{}});
      retry_at_ = now + settings_.hand_over_retry_interval;
      break;
    case manager_state::was_oldest:
      if (keeps_oldest(self_member_, candidates_, self_)) {
        retry_at_.reset();
        go(manager_state::oldest, out);
      }
      break;
    case manager_state::end:
      // An instance never runs here; a lease acquired too late is released
      // when its answer comes.
      break;
    default:
      break;
  }
}

void manager_engine::ask_ahead(timestamp now, manager_effects& out) {
  for (auto& node : uncleared(now, true))
    out.send.push_back({node, hand_over_to_me{}});
  retry_at_ = now + settings_.hand_over_retry_interval;
}

void manager_engine::become_oldest(timestamp now, manager_effects& out) {
  retry_at_.reset();
  retries_ = 0;
  start_or_acquire(now, out);
}

void manager_engine::start_or_acquire(timestamp now, manager_effects& out) {
  restart_at_.reset();
  lease_retry_at_.reset();
  if (settings_.use_lease) {
    go(manager_state::acquiring_lease, out);
    if (lease_ == lease_phase::none) {
      lease_ = lease_phase::acquiring;
      release_when_acquired_ = false;
      out.acquire_lease = true;
    }
    // else: a release is under way; on_lease_released acquires again
    return;
  }
  go(manager_state::oldest, out);
  instance_ = ++incarnations_;
  started_at_ = now;
  ++counters_.started;
  out.start = start_instance{*instance_, 0};
}

void manager_engine::begin_stop(manager_state during, manager_state next_after,
                                std::string why, timestamp now,
                                manager_effects& out) {
  after_stop_ = next_after;
  retry_at_.reset();
  restart_at_.reset();
  lease_retry_at_.reset();
  go(during, out);
  if (instance_) {
    if (!stop_requested_) {
      log(out, log_level::info,
          fmt::format("stopping instance {} ({})", *instance_, why));
      request_stop(now, out);
    }
    return;
  }
  // Nothing runs: only the lease may be left.
  finish_stop(timestamp{}, out);
}

void manager_engine::request_stop(timestamp now, manager_effects& out) {
  if (!instance_ || stop_requested_)
    return;
  stop_requested_ = true;
  out.stop_instance = true;
  kill_at_ = now + settings_.instance_stop_timeout;
}

// Called when the instance terminated on request, or the lease was released:
// completes a stop once nothing runs and the lease is free.
void manager_engine::finish_stop(timestamp now, manager_effects& out) {
  static_cast<void>(now);
  if (state_ != manager_state::stopping
      && state_ != manager_state::handing_over)
    return;
  if (instance_)
    return;
  if (lease_ == lease_phase::held) {
    lease_ = lease_phase::releasing;
    out.release_lease = true;
    return;
  }
  if (lease_ == lease_phase::acquiring) {
    release_when_acquired_ = true;
    return;
  }
  if (lease_ == lease_phase::releasing)
    return;
  if (state_ == manager_state::handing_over) {
    ++counters_.handed_over;
    if (hand_over_to_) {
      out.send.push_back({*hand_over_to_, hand_over_done{}});
      log(out, log_level::info,
          fmt::format("handed over to {}", to_string(*hand_over_to_)));
    }
    hand_over_to_.reset();
  }
  auto next = stopping_for_good_ ? manager_state::end : after_stop_;
  go(next, out);
  if (stopping_for_good_ && !stopped_) {
    stopped_ = true;
    out.stopped = true;
  }
}

void manager_engine::update_exit_hold(manager_effects& out) {
  bool hold = instance_.has_value() || lease_ != lease_phase::none
              || state_ == manager_state::oldest
              || state_ == manager_state::was_oldest
              || state_ == manager_state::handing_over
              || state_ == manager_state::stopping
              || state_ == manager_state::acquiring_lease;
  if (hold != exit_held_) {
    exit_held_ = hold;
    out.hold_exit = hold;
  }
}

void manager_engine::go(manager_state next, manager_effects& out) {
  if (next == state_)
    return;
  log(out, log_level::debug,
      fmt::format("{} -> {}", to_string(state_), to_string(next)));
  state_ = next;
}

void manager_engine::log(manager_effects& out, log_level level,
                         std::string text) const {
  out.log.push_back({level, std::move(text)});
}

} // namespace troupe::singleton
