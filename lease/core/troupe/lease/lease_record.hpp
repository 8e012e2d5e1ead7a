#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/lease/backend_types.hpp"

/// @file
/// The record rules shared by every store that keeps the record itself
/// (in-memory and file backends): one pure function per operation.

namespace troupe::lease {

/// The stored state of one lease name.
///
/// - `holder` empty = nobody holds it.
/// - `expires_at`: on the monotonic clock of the store's host, shared by all
///   processes of that host. Contenders never compare another host's clock.
/// - `token`: the fencing token of the current (or last) acquisition.
/// - `last_token`: the highest token ever issued for this name; it survives
///   release and expiry so tokens strictly increase.
struct lease_record {
  std::string holder;
  uint64_t acquisition = 0;
  uint64_t token = 0;
  timestamp expires_at{};
  uint64_t last_token = 0;

  /// True if a holder exists and the record has not expired at `now`.
  bool is_held(timestamp now) const noexcept {
    return !holder.empty() && now < expires_at;
  }

  friend bool operator==(const lease_record&, const lease_record&) = default;
};

/// Applies `op` for `req` to `rec` at `now` and returns the reply:
/// - acquire: free or expired -> new acquisition (`token = ++last_token`);
///   held by (owner, acquisition) -> extend, same token (an idempotent
///   retry whose first reply was lost); any other live record -> `held`,
///   also one naming the same owner under another acquisition: a delayed
///   request of an older acquisition must never replace the current one.
///   So an owner that lost the lease acquires again only after its old
///   record expired or was released, and then gets a new, larger token.
/// - renew: held by (owner, acquisition) -> extend by ttl; held by another
///   (or by another acquisition) -> `held`; otherwise `not_found` (never
///   resurrects an expired record).
/// - release: held by (owner, acquisition) -> cleared (`last_token` kept);
///   otherwise `not_found` or `held` (the caller no longer holds it).
backend_reply apply(backend_op op, lease_record& rec,
                    const backend_request& req, timestamp now);

/// Why `rec` has no current holder at `now`, for the detail of a
/// `not_found` reply: `the record has no holder (released, or cleared by
/// hand)` or `the record expired`; `the record is held` when it is.
std::string_view absence_of(const lease_record& rec, timestamp now) noexcept;

} // namespace troupe::lease
