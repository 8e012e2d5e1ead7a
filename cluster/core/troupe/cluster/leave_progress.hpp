#pragma once

#include <vector>

#include "troupe/cluster/member.hpp"

/// @file
/// How far this node's graceful leave has come, as its coordinated
/// shutdown's cluster phases wait for it (Akka's cluster-leave,
/// cluster-exiting and cluster-exiting-done). Pure: a function of this
/// node's own member record and the members of its view. Thread-safe as
/// any free function.

namespace troupe::cluster {

/// The point a coordinated-shutdown phase waits for.
enum class leave_stage {
  /// `cluster_leave`: the node is leaving (or further).
  leaving,
  /// `cluster_exiting`: the leader moved it to exiting (its singletons
  /// were handed over: the exit gate held it until then), or further.
  exiting,
  /// `cluster_exiting_done`: it is removed, or exiting while no other
  /// member is joining, up or leaving (the last member, or all leaving at
  /// once): no leader is left to remove it.
  removed,
};

/// Whether the leave reached `stage`. `self` is none when this node is no
/// longer a member (removed, or its daemon stopped): every stage is
/// reached. A down member has nothing left to wait for either. `members`
/// is the view's member list (only read for `removed` while exiting).
bool leave_reached(leave_stage stage, const member* self,
                   const std::vector<member>& members) noexcept;

} // namespace troupe::cluster
