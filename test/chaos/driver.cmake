# troupe-chaos (docs/design/chaos.md): the driver, its network mechanisms
# and the nemesis log; and the runs.

add_executable(troupe-chaos
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/chaos_main.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/chaos_run.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/chaos_probe.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/nemesis_log.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/transport_network.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/netns_network.cpp)
target_include_directories(troupe-chaos PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/driver)
target_include_directories(troupe-chaos SYSTEM PRIVATE ${RAPIDJSON_INCLUDE_DIRS})
target_link_libraries(troupe-chaos PRIVATE troupe_chaos_checker
  troupe_chaos_nemesis troupe_demo_processes troupe_demo_launcher_core
  troupe_demo_client troupe_test_support troupe_singleton_core
  troupe_lease_core CLI11::CLI11 fmt::fmt)
troupe_warnings(troupe-chaos)
add_dependencies(troupe-chaos troupe-demo-node troupe-demo-store)

# The short fixed-seed run in .ci/run (about 3.5 minutes in all: start, 2
# minutes of faults, settle, probe, stop). Alone on the machine: five nodes
# and etcd on 2 cores are timing enough.
add_test(NAME "integration:chaos_short"
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/chaos_short.sh
          $<TARGET_FILE:troupe-chaos> ${CMAKE_CURRENT_BINARY_DIR}/chaos_short)
set_tests_properties("integration:chaos_short"
  PROPERTIES LABELS integration TIMEOUT 420 RUN_SERIAL TRUE)
