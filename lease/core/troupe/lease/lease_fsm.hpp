#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "troupe/lease/backend_types.hpp"
#include "troupe/lease/lease_settings.hpp"
#include "troupe/lease/outcome.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The pure state machine of one lease as seen by one owner.

namespace troupe::lease {

/// The lease states (docs/design/lease.md has the diagram).
enum class lease_state : uint8_t {
  idle,      ///< not held, nothing in progress
  acquiring, ///< an acquire sequence runs (attempts, retry delays)
  held,      ///< held; the renewal timer runs
  renewing,  ///< held; a renewal (or its retries) is in progress
  releasing, ///< a release is in progress; no longer acting as holder
  lost,      ///< ownership was lost unexpectedly; like idle otherwise
};

std::string_view to_string(lease_state x) noexcept;

/// The timers the state machine asks for.
enum class timer_kind : uint8_t {
  attempt_timeout, ///< one backend call took longer than operation_timeout
  retry,           ///< the delay before the next attempt ended
  renew,           ///< the next renewal is due
  deadline,        ///< the local deadline is reached
  caller_deadline, ///< the earliest waiting acquire's wait ended
};

std::string_view to_string(timer_kind x) noexcept;

// -- inputs -------------------------------------------------------------------

/// A caller asks to acquire; it waits until `caller_deadline` at most.
struct acquire_requested {
  uint64_t request_id = 0;
  timestamp caller_deadline{};
};

/// A caller asks to release.
struct release_requested {
  uint64_t request_id = 0;
};

/// A backend answered call `attempt`.
struct backend_replied {
  uint64_t attempt = 0;
  backend_reply reply;
};

/// Timer `timer_id` of `kind` fired.
struct timer_fired {
  timer_kind kind = timer_kind::retry;
  uint64_t timer_id = 0;
};

/// The owner stops (actor exit): answer waiters, give the lease up without
/// waiting for the backend.
struct shutdown_requested {};

using lease_input
  = std::variant<acquire_requested, release_requested, backend_replied,
                 timer_fired, shutdown_requested>;

// -- effects ------------------------------------------------------------------

/// Call the backend; report the answer as `backend_replied{attempt, ...}`.
struct call_backend {
  backend_op op = backend_op::acquire;
  uint64_t attempt = 0;
  backend_request request;
};

/// Fire `timer_fired{kind, timer_id}` at `at` (absolute monotonic time).
/// A newer timer of the same kind supersedes older ones: stale ids are
/// ignored, so the shell never needs to cancel.
struct start_timer {
  timer_kind kind = timer_kind::retry;
  uint64_t timer_id = 0;
  timestamp at{};
};

/// The answer to acquire requests: granted (`acquired`, `token`), held by
/// another (`!acquired`, `holder`), or an error.
struct acquire_answer {
  bool acquired = false;
  uint64_t token = 0;
  std::string holder;
  runtime::error err;
  /// What `token` is counted within (backend_reply::token_scope).
  std::string token_scope;
};

struct acquire_completed {
  std::vector<uint64_t> request_ids;
  acquire_answer answer;
};

/// The answer to release requests (`err` empty on success).
struct release_completed {
  std::vector<uint64_t> request_ids;
  runtime::error err;
};

/// Ownership was lost unexpectedly (publish `lease_lost`, fire on_lost).
struct ownership_lost {
  std::string reason;
  uint64_t token = 0;
};

/// The local deadline changed; `nullopt` means "not held" (check_alive()
/// false from now on).
struct deadline_changed {
  std::optional<timestamp> deadline;
};

/// A state transition, for the shell's one INFO line.
struct state_changed {
  lease_state from = lease_state::idle;
  lease_state to = lease_state::idle;
  std::string why;
};

/// Something worth a WARNING line that changes no state (an orphan grant
/// released, a stale reply).
struct notice {
  std::string text;
};

using lease_effect = std::variant<call_backend, start_timer, acquire_completed,
                                  release_completed, ownership_lost,
                                  deadline_changed, state_changed, notice>;

using lease_effects = std::vector<lease_effect>;

/// The state machine of one lease held by one owner (DESIGN.md §5).
///
/// Models: acquire with bounded, jittered, backed-off attempts; renewal every
/// renewal_interval with retries until the local deadline; loss detection;
/// release; orphan grants. The local deadline is `start of the last
/// successful acquire/renew request + ttl - safety_margin`: it ends before
/// the store's expiry, which counts from when the store applied the write.
///
/// Invariants (checked by tests and asserted where cheap):
/// - check_alive is true only in held/renewing and before the deadline;
/// - a new acquisition's token is greater than every earlier one this
///   machine saw (a backend that breaks this is refused);
/// - every acquire/release request is answered exactly once;
/// - ownership_lost is emitted at most once per acquisition, and never
///   after a release was requested;
/// - a grant that nobody waits for any more is released, never kept.
///
/// Does not: read clocks (`now` comes in), do I/O, log, or know CAF.
/// Not thread-safe: one owner (the lease actor) drives it.
class lease_fsm {
public:
  /// `settings` must be valid (validate()); `seed` seeds acquisition ids
  /// and retry jitter.
  lease_fsm(lease_settings settings, uint64_t seed);

  /// Processes one input at `now`.
  lease_effects step(const lease_input& in, timestamp now);

  lease_state state() const noexcept {
    return state_;
  }

  /// The local deadline while held/renewing.
  std::optional<timestamp> deadline() const noexcept;

  /// The fencing token of the current (or last) acquisition.
  uint64_t token() const noexcept {
    return token_;
  }

  /// What token() is counted within (backend_reply::token_scope; empty
  /// for stores whose counter never restarts).
  const std::string& token_scope() const noexcept {
    return token_scope_;
  }

  const lease_settings& settings() const noexcept {
    return settings_;
  }

private:
  struct attempt_info {
    backend_op op = backend_op::acquire;
    timestamp started{};
    uint64_t acquisition = 0;
    uint64_t token = 0;
  };

  struct waiter {
    uint64_t request_id = 0;
    timestamp caller_deadline{};
  };

  void become(lease_state next, std::string why);
  void start_attempt(backend_op op, timestamp now);
  void schedule(timer_kind kind, timestamp at);
  timespan next_backoff();
  /// next_backoff(), but at least the `retry_after` the store asked for.
  timespan backoff_for(const backend_reply& reply);
  backend_request make_request(backend_op op) const;

  void on_acquire_requested(const acquire_requested& x, timestamp now);
  void on_release_requested(const release_requested& x, timestamp now);
  void on_reply(const backend_replied& x, timestamp now);
  void on_timer(const timer_fired& x, timestamp now);
  void on_shutdown(timestamp now);

  void on_current_reply(const attempt_info& info, const backend_reply& reply,
                        timestamp now);
  void on_stale_reply(const attempt_info& info, const backend_reply& reply,
                      timestamp now);
  void on_acquire_outcome(const attempt_info& info, const outcome& o,
                          const backend_reply& reply, timestamp now);
  void on_renew_outcome(const attempt_info& info, const outcome& o,
                        const backend_reply& reply, timestamp now);
  void on_release_outcome(const outcome& o, const backend_reply& reply,
                          timestamp now);

  void grant(const attempt_info& info, const backend_reply& reply,
             timestamp now);
  void set_deadline(std::optional<timestamp> deadline);
  void lose(std::string reason);
  void finish_acquire(acquire_answer answer);
  void finish_release(runtime::error err);
  void begin_release(timestamp now, std::string why);
  void release_orphan(const attempt_info& info, const backend_reply& reply,
                      std::string why);
  void after_idle(timestamp now);
  void add_waiter(const acquire_requested& x);
  void expire_waiters(timestamp now);

  lease_settings settings_;
  std::mt19937_64 rng_;
  lease_state state_ = lease_state::idle;
  lease_effects out_;

  uint64_t acquisition_ = 0;
  uint64_t token_ = 0;
  std::string token_scope_;
  uint64_t highest_token_ = 0;
  std::optional<timestamp> deadline_;
  timestamp last_success_start_{};

  uint64_t next_attempt_id_ = 0;
  uint64_t current_attempt_ = 0;
  uint32_t attempt_number_ = 0;
  uint32_t failures_ = 0;
  std::string last_failure_;
  backend_status last_failure_status_ = backend_status::unavailable;
  std::map<uint64_t, attempt_info> outstanding_;

  uint64_t next_timer_id_ = 0;
  std::map<timer_kind, uint64_t> timers_;

  std::vector<waiter> acquire_waiters_;
  std::vector<uint64_t> release_waiters_;
  bool release_after_acquire_ = false;
  bool acquire_after_release_ = false;
};

} // namespace troupe::lease
