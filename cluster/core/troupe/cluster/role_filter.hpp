#pragma once

#include <string_view>

#include "troupe/cluster/member.hpp"

/// @file
/// The role filter of Akka's role-scoped extensions (a singleton's or a
/// shard region's `role` setting): an empty role means every member.

namespace troupe::cluster {

/// Whether `m` is in scope of `role`: `role` is empty (no filter) or `m`
/// has it (Akka's `ClusterSingletonManagerSettings.role` and
/// `ClusterShardingSettings.role`). Pure; thread-safe.
inline bool in_role(const member& m, std::string_view role) noexcept {
  return role.empty() || m.has_role(role);
}

} // namespace troupe::cluster
