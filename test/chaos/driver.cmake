# troupe-chaos (docs/design/chaos.md): the driver, its network mechanisms
# and the nemesis log; and the runs.

# The nemesis log's and the membership views' lines (pure), tested against
# the checker's parser.
add_library(troupe_chaos_driver_core STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/nemesis_log.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/view_log.cpp)
target_include_directories(troupe_chaos_driver_core PUBLIC
  ${CMAKE_CURRENT_SOURCE_DIR}/driver)
target_include_directories(troupe_chaos_driver_core SYSTEM PRIVATE
  ${RAPIDJSON_INCLUDE_DIRS})
target_link_libraries(troupe_chaos_driver_core PUBLIC fmt::fmt)
troupe_warnings(troupe_chaos_driver_core)

# views.jsonl from a node's real `GET /cluster/members` answer (the
# management router's own rendering) to the checker's reading of it.
troupe_test(NAME chaos_driver_unit_tests LABEL unit
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/driver/nemesis_log_test.cpp
          ${CMAKE_CURRENT_SOURCE_DIR}/driver/view_log_test.cpp
  LINK troupe_chaos_driver_core troupe_chaos_checker troupe_management_core)

add_executable(troupe-chaos
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/chaos_main.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/chaos_run.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/chaos_probe.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/view_sampler.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/transport_network.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/driver/netns_network.cpp)
target_include_directories(troupe-chaos PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/driver)
target_include_directories(troupe-chaos SYSTEM PRIVATE ${RAPIDJSON_INCLUDE_DIRS})
target_link_libraries(troupe-chaos PRIVATE troupe_chaos_driver_core
  troupe_chaos_checker
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

# troupe-chaos's command line: bad flags (exit 2, one line naming the flag),
# --check of a missing directory, --plan's schedule (the same twice).
foreach(case no_dir bad_seed short_duration bad_duration_unit
        duration_over_a_day empty_check nan_rate unknown_fault too_few_nodes
        dir_not_empty check_missing plan)
  add_test(NAME "integration:chaos_cli_${case}"
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/chaos_cli_test.sh ${case}
            $<TARGET_FILE:troupe-chaos>)
  set_tests_properties("integration:chaos_cli_${case}"
    PROPERTIES LABELS integration TIMEOUT 60)
endforeach()
