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

# Multi-process: this test is one node, remoting_node processes the others
# (kill -9 and restart on the same port, freeze, blackhole, removal).
add_executable(remoting_node remoting_node.cpp)
target_link_libraries(remoting_node PRIVATE troupe_cluster)
troupe_warnings(remoting_node)
troupe_test(NAME remoting_multiprocess_tests LABEL integration
  SOURCES
    remoting_multiprocess_test.cpp
  LINK troupe_cluster troupe_test_support)
target_compile_definitions(remoting_multiprocess_tests PRIVATE
  TROUPE_REMOTING_NODE="$<TARGET_FILE:remoting_node>")
add_dependencies(remoting_multiprocess_tests remoting_node)
