# Membership cores (Akka Cluster's model): member, vector_clock,
# reachability, gossip, membership_state and the cluster events. Pure, in
# troupe_cluster_core. Included at the end of cluster/CMakeLists.txt (it
# extends the targets defined there).
target_sources(troupe_cluster_core PRIVATE
  ${dir}/core/troupe/cluster/app_version.cpp
  ${dir}/core/troupe/cluster/cluster_events.cpp
  ${dir}/core/troupe/cluster/cluster_incarnation.cpp
  ${dir}/core/troupe/cluster/cluster_merge.cpp
  ${dir}/core/troupe/cluster/gossip.cpp
  ${dir}/core/troupe/cluster/leave_progress.cpp
  ${dir}/core/troupe/cluster/member.cpp
  ${dir}/core/troupe/cluster/membership_state.cpp
  ${dir}/core/troupe/cluster/reachability.cpp
  ${dir}/core/troupe/cluster/vector_clock.cpp)
target_sources(troupe_cluster_core PRIVATE
  ${dir}/core/troupe/cluster/membership_engine.cpp
  ${dir}/core/troupe/cluster/membership_engine_merge.cpp)
# The cluster daemon (CAF shell over the membership engine) and the
# application's cluster_handle, in troupe_cluster.
target_sources(troupe_cluster PRIVATE
  ${dir}/shell/troupe/cluster/cluster_daemon.cpp
  ${dir}/shell/troupe/cluster/cluster_handle.cpp)
