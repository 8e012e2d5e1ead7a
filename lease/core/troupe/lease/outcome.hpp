#pragma once

#include <string>
#include <string_view>

#include "troupe/lease/backend_types.hpp"

/// @file
/// Classification of raw backend replies into what they mean for the holder.

namespace troupe::lease {

/// What a backend reply means for the caller.
enum class outcome_kind : uint8_t {
  /// acquire: granted (also a self-conflict: our earlier write applied and
  /// its reply was lost); renew: extended (also a self-conflict, scenario
  /// L3); release: the record no longer names us.
  success,
  /// acquire: another owner holds the lease (contention; `false`).
  held_by_other,
  /// renew: ownership is gone (another holder, or no record any more).
  lost,
  /// Transient or unknown: unreachable, timeout, 5xx, concurrent
  /// modification. Retry within the budget; never treat as `false`.
  retry,
  /// The backend refused the call; retrying does not help (acquire and
  /// release). A refused renewal is retried until the local deadline.
  refused,
};

std::string_view to_string(outcome_kind x) noexcept;

/// A classified reply.
struct outcome {
  outcome_kind kind = outcome_kind::retry;
  /// Human-readable reason (for `lost`, `retry`, `refused`).
  std::string why;
};

/// Classifies `reply` to `op` issued by (`owner`, `acquisition`).
///
/// A reply whose record names `owner` counts as ours when its acquisition
/// matches or the backend does not store acquisitions (0); a record naming
/// the same owner under a different acquisition belongs to another process
/// using the same identity and counts as someone else's.
outcome classify(backend_op op, const backend_reply& reply,
                 std::string_view owner, uint64_t acquisition);

} // namespace troupe::lease
