# Failure detection and joining (pure, in troupe_cluster_core): the phi
# accrual failure detector and its registry, the heartbeat ring and the
# heartbeat sender's state, the seed-node join process with the join
# configuration check, and the membership settings with their keys.
target_sources(troupe_cluster_core PRIVATE
  ${dir}/core/troupe/cluster/failure_detector_registry.cpp
  ${dir}/core/troupe/cluster/heartbeat_ring.cpp
  ${dir}/core/troupe/cluster/heartbeat_sender_state.cpp
  ${dir}/core/troupe/cluster/join_config_checker.cpp
  ${dir}/core/troupe/cluster/join_protocol.cpp
  ${dir}/core/troupe/cluster/membership_settings.cpp
  ${dir}/core/troupe/cluster/phi_accrual_detector.cpp)
