#include "troupe/lease/lease_fsm.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"
#include "troupe/runtime/assert.hpp"
#include "troupe/runtime/config.hpp"

namespace troupe::lease {

using runtime::make_error;
using runtime::render_duration;

std::string_view to_string(lease_state x) noexcept {
  switch (x) {
    case lease_state::idle:
      return "idle";
    case lease_state::acquiring:
      return "acquiring";
    case lease_state::held:
      return "held";
    case lease_state::renewing:
      return "renewing";
    case lease_state::releasing:
      return "releasing";
    case lease_state::lost:
      return "lost";
  }
  return "unknown";
}

std::string_view to_string(timer_kind x) noexcept {
  switch (x) {
    case timer_kind::attempt_timeout:
      return "attempt_timeout";
    case timer_kind::retry:
      return "retry";
    case timer_kind::renew:
      return "renew";
    case timer_kind::deadline:
      return "deadline";
    case timer_kind::caller_deadline:
      return "caller_deadline";
  }
  return "unknown";
}

lease_fsm::lease_fsm(lease_settings settings, uint64_t seed)
  : settings_(settings.with_defaults()), rng_(seed) {
  TROUPE_ASSERT(!validate(settings_));
  // Acquisition ids are random so that a restarted process with the same
  // owner name never reuses one.
  acquisition_ = rng_() | 1;
}

std::optional<timestamp> lease_fsm::deadline() const noexcept {
  return deadline_;
}

lease_effects lease_fsm::step(const lease_input& in, timestamp now) {
  out_.clear();
  std::visit(
    [&](const auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, acquire_requested>)
        on_acquire_requested(x, now);
      else if constexpr (std::is_same_v<T, release_requested>)
        on_release_requested(x, now);
      else if constexpr (std::is_same_v<T, backend_replied>)
        on_reply(x, now);
      else if constexpr (std::is_same_v<T, timer_fired>)
        on_timer(x, now);
      else
        on_shutdown(now);
    },
    in);
  return std::move(out_);
}

// -- helpers ------------------------------------------------------------------

void lease_fsm::become(lease_state next, std::string why) {
  if (next == state_)
    return;
  out_.emplace_back(state_changed{state_, next, std::move(why)});
  state_ = next;
}

backend_request lease_fsm::make_request(backend_op op) const {
  return backend_request{settings_.name, settings_.owner, settings_.ttl,
                         acquisition_,
                         op == backend_op::acquire ? uint64_t{0} : token_};
}

void lease_fsm::start_attempt(backend_op op, timestamp now) {
  auto id = ++next_attempt_id_;
  current_attempt_ = id;
  ++attempt_number_;
  outstanding_[id] = attempt_info{op, now, acquisition_, token_};
  // Bound the bookkeeping of attempts whose replies never came.
  while (outstanding_.size() > 64)
    outstanding_.erase(outstanding_.begin());
  out_.emplace_back(call_backend{op, id, make_request(op)});
  schedule(timer_kind::attempt_timeout, now + settings_.operation_timeout);
}

void lease_fsm::schedule(timer_kind kind, timestamp at) {
  auto id = ++next_timer_id_;
  timers_[kind] = id;
  out_.emplace_back(start_timer{kind, id, at});
}

timespan lease_fsm::next_backoff() {
  // Exponential from acquire_retry_delay, capped at half the renewal
  // interval, with +-20% jitter so that contenders do not retry in lockstep
  // (scenario L13).
  auto base = settings_.acquire_retry_delay;
  auto cap = settings_.renewal_interval / 2;
  auto delay = base;
  for (uint32_t i = 1; i < attempt_number_ && delay < cap; ++i)
    delay *= 2;
  delay = std::min(delay, std::max(cap, base));
  if (delay <= timespan{0})
    return timespan{0};
  std::uniform_int_distribution<int64_t> jitter{-delay.count() / 5,
                                                delay.count() / 5};
  return delay + timespan{jitter(rng_)};
}

timespan lease_fsm::backoff_for(const backend_reply& reply) {
  return std::max(next_backoff(), reply.retry_after);
}

void lease_fsm::set_deadline(std::optional<timestamp> deadline) {
  deadline_ = deadline;
  out_.emplace_back(deadline_changed{deadline});
  if (deadline)
    schedule(timer_kind::deadline, *deadline);
}

void lease_fsm::finish_acquire(acquire_answer answer) {
  if (acquire_waiters_.empty())
    return;
  acquire_completed done;
  for (auto& w : acquire_waiters_)
    done.request_ids.push_back(w.request_id);
  done.answer = std::move(answer);
  acquire_waiters_.clear();
  out_.emplace_back(std::move(done));
}

void lease_fsm::finish_release(runtime::error err) {
  if (release_waiters_.empty())
    return;
  out_.emplace_back(release_completed{std::move(release_waiters_), err});
  release_waiters_.clear();
}

void lease_fsm::lose(std::string reason) {
  set_deadline(std::nullopt);
  current_attempt_ = 0;
  become(lease_state::lost, reason);
  out_.emplace_back(ownership_lost{std::move(reason), token_});
}

void lease_fsm::begin_release(timestamp now, std::string why) {
  // From here on we no longer act as holder, whatever the backend says.
  if (deadline_)
    set_deadline(std::nullopt);
  become(lease_state::releasing, std::move(why));
  attempt_number_ = 0;
  start_attempt(backend_op::release, now);
}

void lease_fsm::release_orphan(const attempt_info& info,
                               const backend_reply& reply, std::string why) {
  auto req = make_request(backend_op::release);
  req.acquisition = info.acquisition;
  req.token = reply.token;
  out_.emplace_back(
    notice{fmt::format("lease \"{}\": releasing an orphan grant (token {}): {}",
                       settings_.name, reply.token, why)});
  // Fire and forget: the reply of attempt 0 matches nothing.
  out_.emplace_back(call_backend{backend_op::release, 0, std::move(req)});
}

void lease_fsm::after_idle(timestamp now) {
  if (acquire_after_release_ && !acquire_waiters_.empty()) {
    acquire_after_release_ = false;
    acquisition_ = rng_() | 1;
    attempt_number_ = 0;
    become(lease_state::acquiring, "acquire requested during release");
    start_attempt(backend_op::acquire, now);
    return;
  }
  acquire_after_release_ = false;
}

void lease_fsm::add_waiter(const acquire_requested& x) {
  acquire_waiters_.push_back({x.request_id, x.caller_deadline});
  auto i = timers_.find(timer_kind::caller_deadline);
  // One timer serves all waiters: it always points at the earliest wait.
  bool earliest = std::all_of(
    acquire_waiters_.begin(), acquire_waiters_.end(),
    [&](const waiter& w) { return w.caller_deadline >= x.caller_deadline; });
  if (i == timers_.end() || earliest)
    schedule(timer_kind::caller_deadline, x.caller_deadline);
}

void lease_fsm::expire_waiters(timestamp now) {
  acquire_completed done;
  std::optional<timestamp> next;
  std::erase_if(acquire_waiters_, [&](const waiter& w) {
    if (w.caller_deadline <= now) {
      done.request_ids.push_back(w.request_id);
      return true;
    }
    if (!next || w.caller_deadline < *next)
      next = w.caller_deadline;
    return false;
  });
  if (next)
    schedule(timer_kind::caller_deadline, *next);
  if (done.request_ids.empty())
    return;
  done.answer.err = make_error(
    errc::acquire_timeout,
    fmt::format("lease \"{}\": not acquired within the caller's wait ({}); "
                "still trying, a late grant is released",
                settings_.name, to_string(state_)));
  out_.emplace_back(std::move(done));
}

// -- requests -----------------------------------------------------------------

void lease_fsm::on_acquire_requested(const acquire_requested& x,
                                     timestamp now) {
  switch (state_) {
    case lease_state::acquiring:
      add_waiter(x);
      return;
    case lease_state::releasing:
      add_waiter(x);
      acquire_after_release_ = true;
      return;
    case lease_state::held:
    case lease_state::renewing:
      if (deadline_ && now < *deadline_) {
        acquire_waiters_.push_back({x.request_id, x.caller_deadline});
        finish_acquire({true, token_, settings_.owner, {}, token_scope_});
        return;
      }
      // The deadline passed but its timer has not been processed yet: the
      // lease is lost; this request starts a new acquisition.
      lose(fmt::format("lease \"{}\": local deadline passed", settings_.name));
      [[fallthrough]];
    case lease_state::idle:
    case lease_state::lost:
      add_waiter(x);
      // Every acquisition gets a fresh id: the backend then issues a new,
      // larger token even when this owner held the lease before.
      acquisition_ = rng_() | 1;
      attempt_number_ = 0;
      become(lease_state::acquiring, "acquire requested");
      start_attempt(backend_op::acquire, now);
      return;
  }
}

void lease_fsm::on_release_requested(const release_requested& x,
                                     timestamp now) {
  switch (state_) {
    case lease_state::idle:
    case lease_state::lost:
      out_.emplace_back(release_completed{{x.request_id}, {}});
      return;
    case lease_state::acquiring:
      release_waiters_.push_back(x.request_id);
      release_after_acquire_ = true;
      return;
    case lease_state::releasing:
      release_waiters_.push_back(x.request_id);
      return;
    case lease_state::held:
    case lease_state::renewing:
      release_waiters_.push_back(x.request_id);
      begin_release(now, "release requested");
      return;
  }
}

void lease_fsm::on_shutdown(timestamp now) {
  finish_acquire(
    {false,
     0,
     {},
     make_error(errc::shutting_down,
                fmt::format("lease \"{}\": shutting down", settings_.name))});
  if (state_ == lease_state::held || state_ == lease_state::renewing
      || state_ == lease_state::releasing) {
    set_deadline(std::nullopt);
    auto req = make_request(backend_op::release);
    out_.emplace_back(call_backend{backend_op::release, 0, std::move(req)});
  } else if (state_ == lease_state::acquiring) {
    // An acquire in flight may still apply: release that acquisition too
    // (releasing a record we do not hold changes nothing), so no orphan
    // record outlives us.
    auto req = make_request(backend_op::release);
    out_.emplace_back(call_backend{backend_op::release, 0, std::move(req)});
  }
  finish_release(make_error(
    errc::shutting_down,
    fmt::format("lease \"{}\": shutting down; release sent without waiting",
                settings_.name)));
  current_attempt_ = 0;
  acquire_after_release_ = false;
  release_after_acquire_ = false;
  become(lease_state::idle, "shutdown");
  (void)now;
}

// -- timers -------------------------------------------------------------------

void lease_fsm::on_timer(const timer_fired& x, timestamp now) {
  auto i = timers_.find(x.kind);
  if (i == timers_.end() || i->second != x.timer_id)
    return; // superseded
  timers_.erase(i);
  switch (x.kind) {
    case timer_kind::attempt_timeout: {
      if (current_attempt_ == 0)
        return;
      auto j = outstanding_.find(current_attempt_);
      if (j == outstanding_.end())
        return;
      // Keep the attempt in `outstanding_`: a late reply is handled as stale.
      auto info = j->second;
      backend_reply timeout;
      timeout.status = backend_status::unavailable;
      timeout.detail
        = fmt::format("no reply within operation_timeout {}",
                      render_duration(settings_.operation_timeout));
      on_current_reply(info, timeout, now);
      return;
    }
    case timer_kind::retry:
      if (current_attempt_ != 0)
        return;
      if (state_ == lease_state::acquiring)
        start_attempt(backend_op::acquire, now);
      else if (state_ == lease_state::renewing)
        start_attempt(backend_op::renew, now);
      else if (state_ == lease_state::releasing)
        start_attempt(backend_op::release, now);
      return;
    case timer_kind::renew:
      if (state_ != lease_state::held)
        return;
      become(lease_state::renewing, "renewal due");
      attempt_number_ = 0;
      start_attempt(backend_op::renew, now);
      return;
    case timer_kind::caller_deadline:
      expire_waiters(now);
      return;
    case timer_kind::deadline:
      if (state_ != lease_state::held && state_ != lease_state::renewing)
        return;
      if (deadline_ && now < *deadline_) {
        schedule(timer_kind::deadline, *deadline_);
        return;
      }
      lose(fmt::format(
        "lease \"{}\": local deadline passed: no successful renewal for "
        "{:.3f}s ({} failed attempts; last: {})",
        settings_.name,
        std::chrono::duration<double>(now - last_success_start_).count(),
        failures_, last_failure_.empty() ? "none" : last_failure_));
      return;
  }
}

} // namespace troupe::lease
