# Helpers shared by every module's CMakeLists.

# Warnings for troupe's own targets (dependencies are SYSTEM includes).
function(troupe_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
                         -Wno-missing-field-initializers)
endfunction()

# troupe_library(NAME <target> DIR <include root> SOURCES ... LINK ...)
# Builds a static library whose headers live next to its sources under DIR
# (DIR/troupe/<module>/*.hpp), so includes read "troupe/<module>/x.hpp".
function(troupe_library)
  cmake_parse_arguments(arg "" "NAME;DIR" "SOURCES;LINK" ${ARGN})
  add_library(${arg_NAME} STATIC ${arg_SOURCES})
  add_library(troupe::${arg_NAME} ALIAS ${arg_NAME})
  target_include_directories(${arg_NAME} PUBLIC
    $<BUILD_INTERFACE:${arg_DIR}>)
  target_link_libraries(${arg_NAME} PUBLIC ${arg_LINK})
  set_target_properties(${arg_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  troupe_warnings(${arg_NAME})
endfunction()
