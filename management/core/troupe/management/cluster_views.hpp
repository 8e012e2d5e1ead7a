#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "troupe/cluster/cluster_merge.hpp"
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
/// with `oldest_role` (every member when none, `membership_state::oldest`),
/// and `singleton_target` where the singleton manager runs singletons of
/// that role: the oldest member among those of the highest app_version
/// (`membership_state::singleton_target`; the oldest when the cluster runs
/// one app_version). Each member shows its `app_version`. `unreachable`
/// lists each such subject with its observers, sorted. `incarnation` and
/// `merging_into` are the view's (the gossip's); `foreign_clusters` are
/// added by `add_foreign_clusters`.
members_view members_of(const cluster::membership_state& state,
                        std::optional<std::string_view> oldest_role
                        = std::nullopt);

/// Adds `report`'s foreign clusters (oldest first) to `v`.
void add_foreign_clusters(members_view& v,
                          const cluster::incarnation_report& report);

/// The member that `address` names in `state`: `host:port#uid` exactly, or
/// `host:port` for the member at that endpoint (the newest incarnation, if
/// the view still holds an older one). Errors: errc::invalid_address (the
/// text does not parse; names it), errc::unknown_member (no such member in
/// this view).
runtime::expected<runtime::unique_address>
find_member(const cluster::membership_state& state, std::string_view address);

/// Counts of members by status ("up", "leaving", ... every status, 0 for
/// none) and the number some member observes unreachable, for metrics.
struct member_counts {
  std::vector<std::pair<std::string, uint64_t>> by_status;
  uint64_t unreachable = 0;
};

member_counts count_members(const cluster::membership_state& state);

} // namespace troupe::management
