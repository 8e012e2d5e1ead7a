#pragma once

#include <optional>
#include <string_view>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/management/router.hpp"

/// @file
/// The management API's views of the cluster core's values (pure).

namespace troupe::management {

/// `GET /cluster/members` for this node's `state`. Members in address
/// order with Akka's status names in lower case (member_status's
/// `to_string`); `up_number` 0 for a member that was never up; `reachable`
/// false when some observer records it unreachable or terminated.
/// `leader` is membership's leader (Akka's), `oldest` the oldest member
/// with `oldest_role` (every member when none), as the singleton manager
/// chooses it (`membership_state::oldest`). `unreachable` lists each such
/// subject with its observers, sorted.
members_view members_of(const cluster::membership_state& state,
                        std::optional<std::string_view> oldest_role
                        = std::nullopt);

} // namespace troupe::management
