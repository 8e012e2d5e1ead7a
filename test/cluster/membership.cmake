# ---- Membership cores (member, vector_clock, reachability, gossip,
# membership_state, events): table tests and seeded property tests. ------
troupe_test(NAME membership_unit_tests LABEL unit
  SOURCES
    app_version_test.cpp
    cluster_events_test.cpp
    cluster_merge_test.cpp
    gossip_generator.cpp
    gossip_merge_laws_test.cpp
    gossip_test.cpp
    leader_actions_test.cpp
    leave_progress_test.cpp
    member_test.cpp
    membership_engine_merge_test.cpp
    membership_engine_test.cpp
    membership_state_test.cpp
    reachability_test.cpp
    vector_clock_test.cpp
  LINK troupe_cluster_core)

# ---- The cluster daemon (CAF shell) on the deterministic coordinator and
# the simulated transport. ------------------------------------------------
troupe_test(NAME cluster_daemon_actor_tests LABEL actor
  SOURCES
    cluster_daemon_sim_test.cpp
  LINK troupe_cluster)
target_include_directories(cluster_daemon_actor_tests PRIVATE
  ${PROJECT_SOURCE_DIR}/test/support)

# The cluster daemon on the real TCP transport on loopback (real time).
troupe_test(NAME cluster_daemon_tcp_tests LABEL integration
  SOURCES
    cluster_daemon_tcp_test.cpp
  LINK troupe_cluster troupe_test_support
  TIMEOUT 180)
