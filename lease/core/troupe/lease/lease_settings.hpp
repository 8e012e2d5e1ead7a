#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The settings of one lease (the seed's LeaseSettings plus troupe's
/// operation timeout and safety margin).

namespace troupe::lease {

using runtime::timespan;

/// The longest ttl and retry delay accepted (24h): longer values would only
/// hide mistakes, and bounding them keeps deadline arithmetic far from
/// overflow.
inline constexpr timespan max_lease_duration = std::chrono::hours{24};

/// Settings of one lease (field: default; meaning).
///
/// - name: required; the unique lease id in the backend.
/// - owner: required; this holder's identity (pod name, uuid), unique per
///   live process.
/// - ttl: 15s; expiry without renewal.
/// - renewal_interval: ttl / 3; time between renewals.
/// - acquire_retries: 3; maximum attempts per acquire() (the seed's
///   acquireRetries), at least 1; also bounds the attempts of one release.
/// - acquire_retry_delay: 200ms; first delay between attempts (doubles,
///   capped at renewal_interval / 2, with 20% jitter).
/// - operation_timeout: min(5s, renewal_interval / 2); deadline of one
///   backend call.
/// - safety_margin: max(ttl / 10, 200ms); subtracted from the local
///   deadline.
///
/// A zero `renewal_interval`, `operation_timeout` or `safety_margin` means
/// "use the default"; `with_defaults()` fills them in. The safety margin
/// covers clock-rate drift below 1% and the coarse clock's resolution
/// (DESIGN.md §10).
struct lease_settings {
  std::string name;
  std::string owner;
  timespan ttl = std::chrono::seconds{15};
  timespan renewal_interval{0};
  uint32_t acquire_retries = 3;
  timespan acquire_retry_delay = std::chrono::milliseconds{200};
  timespan operation_timeout{0};
  timespan safety_margin{0};

  /// A copy with every "use the default" field filled in.
  lease_settings with_defaults() const;
};

/// Checks `s` (after `with_defaults()`): the first violated rule, as an
/// errc::invalid_settings error naming the field and the value, e.g.
/// `lease "jobs": renewal_interval 20s must be shorter than ttl 15s`.
/// Rules: non-empty name (<= 253 bytes, no control characters), non-empty
/// owner (<= 253 bytes, no control characters), 0 < ttl <= 24h,
/// renewal_interval > 0, renewal_interval + safety_margin < ttl,
/// acquire_retries >= 1, 0 <= acquire_retry_delay <= 24h,
/// 0 < operation_timeout <= renewal_interval, safety_margin >= 0, and
/// renewal_interval + 2 * operation_timeout + safety_margin <= ttl (a
/// timed-out renewal leaves time for one retry before the local deadline).
runtime::error validate(const lease_settings& s);

} // namespace troupe::lease
