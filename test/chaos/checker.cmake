# The chaos test's history checker (test/chaos/checker): pure parsing and
# checking of a run directory's files (chaos_checker.hpp) and the one edge
# that reads them (chaos_run_dir.cpp). Built on the demo's verdict, store
# core and client log (troupe_demo_core).

set(chaos_checker_dir ${CMAKE_CURRENT_SOURCE_DIR}/checker)

add_library(troupe_chaos_checker STATIC
  ${chaos_checker_dir}/chaos_json_line.cpp
  ${chaos_checker_dir}/chaos_history.cpp
  ${chaos_checker_dir}/chaos_check_result.cpp
  ${chaos_checker_dir}/chaos_intervals.cpp
  ${chaos_checker_dir}/chaos_checks.cpp
  ${chaos_checker_dir}/chaos_views.cpp
  ${chaos_checker_dir}/chaos_membership.cpp
  ${chaos_checker_dir}/chaos_final_view.cpp
  ${chaos_checker_dir}/chaos_checker.cpp
  ${chaos_checker_dir}/chaos_render.cpp
  ${chaos_checker_dir}/chaos_run_dir.cpp)
target_include_directories(troupe_chaos_checker PUBLIC ${chaos_checker_dir})
target_include_directories(troupe_chaos_checker SYSTEM PRIVATE
  ${RAPIDJSON_INCLUDE_DIRS})
target_link_libraries(troupe_chaos_checker PUBLIC troupe_demo_core fmt::fmt)
troupe_warnings(troupe_chaos_checker)

# Planted-bug tests: a clean synthetic run passes; each planted violation
# fails exactly its check; the allowed overlaps (a pause, a kill) and a cut
# last line pass; I4's membership views (two clusters at the end or while
# quiet, a live node left out). views.jsonl lines are written with the
# driver's own writer (troupe_chaos_driver_core, driver.cmake).
troupe_test(NAME chaos_checker_tests LABEL unit
  SOURCES ${chaos_checker_dir}/chaos_checker_test.cpp
          ${chaos_checker_dir}/chaos_membership_test.cpp
  LINK troupe_chaos_checker troupe_chaos_driver_core)
