# ---- Remote references (remoting) -------------------------------------------
troupe_test(NAME remoting_unit_tests LABEL unit
  SOURCES
    remote_ref_test.cpp
    remoting_wire_test.cpp
    watch_table_test.cpp
  LINK troupe_cluster_core)

# The CAF side of remoting: payload codec, and the remoting actor over the
# simulated transport on CAF's deterministic coordinator.
troupe_test(NAME remoting_actor_tests LABEL actor
  SOURCES
    message_codec_test.cpp
  LINK troupe_cluster)
target_include_directories(remoting_actor_tests PRIVATE
  ${PROJECT_SOURCE_DIR}/test/support)
target_sources(remoting_actor_tests PRIVATE remoting_sim_test.cpp)

# Remoting between nodes in one process on real loopback sockets.
troupe_test(NAME remoting_tcp_tests LABEL integration
  SOURCES
    remoting_tcp_test.cpp
  LINK troupe_cluster troupe_test_support)
