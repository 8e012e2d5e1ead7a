// The lease state machine, part 2: backend replies (current and stale),
// grants and the outcome of each operation. Part 1 (lease_fsm.cpp) holds the
// helpers, requests and timers.

#include "troupe/lease/lease_fsm.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"

namespace troupe::lease {

using runtime::make_error;

// -- replies ------------------------------------------------------------------

void lease_fsm::on_reply(const backend_replied& x, timestamp now) {
  auto i = outstanding_.find(x.attempt);
  if (i == outstanding_.end())
    return; // fire-and-forget release, or bookkeeping dropped
  auto info = i->second;
  outstanding_.erase(i);
  if (x.attempt == current_attempt_)
    on_current_reply(info, x.reply, now);
  else
    on_stale_reply(info, x.reply, now);
}

void lease_fsm::on_stale_reply(const attempt_info& info,
                               const backend_reply& reply, timestamp now) {
  if (info.op == backend_op::release)
    return;
  auto o = classify(info.op, reply, settings_.owner, info.acquisition);
  if (o.kind != outcome_kind::success)
    return;
  // A timed-out acquire/renew did take effect: the store names us.
  bool same_acquisition = info.acquisition == acquisition_;
  if (state_ == lease_state::acquiring && same_acquisition
      && info.op == backend_op::acquire) {
    // Adopt it: the deadline counts from that (older) request's start.
    current_attempt_ = 0;
    on_acquire_outcome(info, o, reply, now);
    return;
  }
  if ((state_ == lease_state::held || state_ == lease_state::renewing
       || state_ == lease_state::releasing)
      && same_acquisition)
    return; // ours anyway; the current attempt (or the release) decides
  release_orphan(info, reply,
                 fmt::format("a timed-out {} took effect after the lease was "
                             "{}",
                             to_string(info.op), to_string(state_)));
}

void lease_fsm::on_current_reply(const attempt_info& info,
                                 const backend_reply& reply, timestamp now) {
  current_attempt_ = 0;
  auto o = classify(info.op, reply, settings_.owner, info.acquisition);
  switch (info.op) {
    case backend_op::acquire:
      on_acquire_outcome(info, o, reply, now);
      return;
    case backend_op::renew:
      on_renew_outcome(info, o, reply, now);
      return;
    case backend_op::release:
      on_release_outcome(o, reply, now);
      return;
  }
}

void lease_fsm::grant(const attempt_info& info, const backend_reply& reply,
                      timestamp now) {
  auto token = reply.token;
  token_ = token;
  token_scope_ = reply.token_scope;
  highest_token_ = token;
  last_success_start_ = info.started;
  failures_ = 0;
  become(lease_state::held, fmt::format("acquired with token {}", token));
  set_deadline(info.started + settings_.ttl - settings_.safety_margin);
  schedule(timer_kind::renew,
           std::max(now, info.started + settings_.renewal_interval));
}

void lease_fsm::on_acquire_outcome(const attempt_info& info, const outcome& o,
                                   const backend_reply& reply, timestamp now) {
  switch (o.kind) {
    case outcome_kind::success: {
      if (reply.token <= highest_token_) {
        auto err = make_error(
          errc::backend_protocol_violation,
          fmt::format("lease \"{}\": backend granted token {} but token {} "
                      "was already issued",
                      settings_.name, reply.token, highest_token_));
        release_orphan(info, reply, "the grant broke token monotonicity");
        become(lease_state::idle, err.message);
        finish_acquire({false, 0, {}, err});
        break;
      }
      // Callers whose wait ended before their timer ran get their
      // acquire_timeout answer now: every request is answered exactly once.
      expire_waiters(now);
      bool anyone_waiting = !acquire_waiters_.empty();
      if (!anyone_waiting && !release_after_acquire_) {
        // Every caller gave up: keeping the grant would make an orphan
        // holder that blocks others until the ttl ends (scenario L4).
        token_ = reply.token;
        highest_token_ = reply.token;
        out_.emplace_back(notice{fmt::format(
          "lease \"{}\": grant (token {}) arrived after every caller's "
          "acquire timed out; releasing it",
          settings_.name, reply.token)});
        become(lease_state::releasing, "grant arrived too late");
        attempt_number_ = 0;
        start_attempt(backend_op::release, now);
        return;
      }
      grant(info, reply, now);
      finish_acquire({true, token_, settings_.owner, {}, token_scope_});
      if (release_after_acquire_) {
        release_after_acquire_ = false;
        begin_release(now, "release requested during acquire");
      }
      return;
    }
    case outcome_kind::held_by_other:
      become(lease_state::idle, o.why);
      finish_acquire({false, 0, reply.holder, {}});
      break;
    case outcome_kind::retry:
    case outcome_kind::lost:
      last_failure_ = o.why;
      last_failure_status_ = reply.status;
      if (attempt_number_ < settings_.acquire_retries) {
        schedule(timer_kind::retry, now + backoff_for(reply));
        return;
      } else {
        auto code = reply.status == backend_status::conflict
                      ? errc::conflict_unresolved
                      : errc::backend_unavailable;
        auto err = make_error(code, fmt::format("lease \"{}\": acquire failed "
                                                "after {} attempts: {}",
                                                settings_.name, attempt_number_,
                                                o.why));
        become(lease_state::idle, err.message);
        finish_acquire({false, 0, {}, err});
      }
      break;
    case outcome_kind::refused: {
      auto err = make_error(
        errc::backend_rejected,
        fmt::format("lease \"{}\": acquire {}", settings_.name, o.why));
      become(lease_state::idle, err.message);
      finish_acquire({false, 0, {}, err});
      break;
    }
  }
  if (release_after_acquire_) {
    release_after_acquire_ = false;
    finish_release({});
  }
}

void lease_fsm::on_renew_outcome(const attempt_info& info, const outcome& o,
                                 const backend_reply& reply, timestamp now) {
  if (state_ != lease_state::renewing)
    return;
  switch (o.kind) {
    case outcome_kind::success: {
      last_success_start_ = std::max(last_success_start_, info.started);
      failures_ = 0;
      auto candidate = info.started + settings_.ttl - settings_.safety_margin;
      become(lease_state::held, "renewed");
      set_deadline(std::max(*deadline_, candidate));
      schedule(timer_kind::renew,
               std::max(now, info.started + settings_.renewal_interval));
      return;
    }
    case outcome_kind::lost:
      lose(fmt::format("lease \"{}\": {}", settings_.name, o.why));
      return;
    default:
      ++failures_;
      last_failure_ = o.why;
      // One failed renewal is not a lost lease (scenario L2): retry until
      // the local deadline; the deadline timer decides.
      auto at = now + backoff_for(reply);
      schedule(timer_kind::retry, std::min(at, *deadline_));
      return;
  }
}

void lease_fsm::on_release_outcome(const outcome& o, const backend_reply& reply,
                                   timestamp now) {
  if (state_ != lease_state::releasing)
    return;
  if (o.kind == outcome_kind::success) {
    become(lease_state::idle, "released");
    finish_release({});
    after_idle(now);
    return;
  }
  if (o.kind != outcome_kind::refused
      && attempt_number_ < settings_.acquire_retries) {
    last_failure_ = o.why;
    schedule(timer_kind::retry, now + backoff_for(reply));
    return;
  }
  auto code = o.kind == outcome_kind::refused ? errc::backend_rejected
                                              : errc::backend_unavailable;
  auto err
    = make_error(code, fmt::format("lease \"{}\": release failed after {} "
                                   "attempts (the record expires after the "
                                   "ttl): {}",
                                   settings_.name, attempt_number_, o.why));
  become(lease_state::idle, err.message);
  finish_release(err);
  after_idle(now);
}

} // namespace troupe::lease
