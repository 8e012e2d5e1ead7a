#pragma once

#include <cstdint>

/// @file
/// The operating errors of the membership cores (member, gossip,
/// membership_state).

namespace troupe::cluster {

/// Errors of the membership data cores. Registered with CAF as the error
/// category "membership" (by the cluster shell's glue). Zero is reserved
/// for "no error". Every message names the member and the statuses or the
/// text concerned.
enum class membership_errc : uint8_t {
  none = 0,
  /// A member status change that Akka's `MemberStatus.allowedTransitions`
  /// forbids (e.g. up -> joining); the message names both statuses.
  invalid_transition,
  /// A member status name that is not one of joining, weakly_up, up,
  /// leaving, exiting, down, removed.
  unknown_status,
  /// An operation on a node that is not a member of the gossip.
  unknown_member,
};

/// The enumerator's name, e.g. "invalid_transition".
const char* to_string(membership_errc x) noexcept;

/// The CAF error category of this enum: "membership".
inline const char* category_name(membership_errc) noexcept {
  return "membership";
}

} // namespace troupe::cluster
