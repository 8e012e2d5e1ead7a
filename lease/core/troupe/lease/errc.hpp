#pragma once

#include <cstdint>

/// @file
/// The lease module's operating errors.

namespace troupe::lease {

/// Operating errors of leases. Registered with CAF as the error category
/// "lease". Zero is reserved for "no error".
///
/// Note what is *not* an error: contention. `acquire()` answering "someone
/// else holds it" is the value `false` (acquire_result::acquired == false).
enum class errc : uint8_t {
  none = 0,
  /// lease_settings failed validation; the message names the field.
  invalid_settings,
  /// The backend could not be reached or gave no usable answer within the
  /// attempts (timeouts, refused connections, HTTP 5xx): the outcome is
  /// unknown, which is different from "held by another".
  backend_unavailable,
  /// The backend refused the operation (permissions, bad request): retrying
  /// will not help; the message carries the backend's answer.
  backend_rejected,
  /// The backend kept reporting concurrent modification until the attempts
  /// ran out, without naming a holder.
  conflict_unresolved,
  /// The backend broke the lease contract (e.g. a fencing token that did not
  /// increase); the lease refuses to trust it.
  backend_protocol_violation,
  /// The lease actor is gone or shutting down.
  shutting_down,
  /// acquire() did not complete within the caller's wait; the attempt goes
  /// on, and a late grant is released at once.
  acquire_timeout,
};

/// The enumerator's name, e.g. "backend_unavailable".
const char* to_string(errc x) noexcept;

/// The CAF error category of this enum: "lease".
inline const char* category_name(errc) noexcept {
  return "lease";
}

} // namespace troupe::lease
