# Compares `troupe-config doc` with the committed reference.
execute_process(COMMAND ${TOOL} doc OUTPUT_VARIABLE actual
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "troupe-config doc failed (${rc})")
endif()
file(READ ${EXPECTED} expected)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "docs/reference/configuration.md is out of date; "
                      "regenerate it: build/apps/config/troupe-config doc > "
                      "docs/reference/configuration.md")
endif()
message(STATUS "configuration reference is up to date")
