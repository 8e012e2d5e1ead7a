# Helpers shared by every module's CMakeLists.

include(GNUInstallDirs)

# Warnings for troupe's own targets (dependencies are SYSTEM includes).
function(troupe_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic
                         -Wno-missing-field-initializers)
endfunction()

# troupe_library(NAME <target> DIR <include root> SOURCES ... LINK ...)
# Builds a static library whose headers live next to its sources under DIR
# (DIR/troupe/<module>/*.hpp), so includes read "troupe/<module>/x.hpp".
#
# A library defined outside test/ and bench/ is part of the installed
# package (docs/guides/using-troupe-as-a-library.md): `cmake --install`
# copies it to lib/ and every header under DIR/troupe to include/troupe
# (the same layout), and exports it as troupe::<target> in the troupe
# package (troupeTargets.cmake) and lists it in troupe.pc. The libraries of
# test/ (fixtures, emulators, the chaos driver) are not installed.
function(troupe_library)
  cmake_parse_arguments(arg "" "NAME;DIR" "SOURCES;LINK" ${ARGN})
  add_library(${arg_NAME} STATIC ${arg_SOURCES})
  add_library(troupe::${arg_NAME} ALIAS ${arg_NAME})
  target_include_directories(${arg_NAME} PUBLIC
    $<BUILD_INTERFACE:${arg_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${arg_NAME} PUBLIC ${arg_LINK})
  # The headers need C++20 (designated initializers, <=>): a usage
  # requirement, so that a project linking troupe::... compiles as C++20.
  target_compile_features(${arg_NAME} PUBLIC cxx_std_20)
  set_target_properties(${arg_NAME} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  troupe_warnings(${arg_NAME})
  set(test_dir "${PROJECT_SOURCE_DIR}/test")
  set(bench_dir "${PROJECT_SOURCE_DIR}/bench")
  cmake_path(IS_PREFIX test_dir "${CMAKE_CURRENT_SOURCE_DIR}" in_test)
  cmake_path(IS_PREFIX bench_dir "${CMAKE_CURRENT_SOURCE_DIR}" in_bench)
  if(NOT in_test AND NOT in_bench)
    troupe_install_library(${arg_NAME} ${arg_DIR})
  endif()
endfunction()

# Install rules of one library of the package (troupe_library calls it).
# The libraries are recorded in definition order (TROUPE_INSTALLED_LIBRARIES)
# for troupe.pc, which lists them the other way round: a library is defined
# after the ones it links (cmake/TroupePackage.cmake checks that).
function(troupe_install_library target dir)
  install(TARGETS ${target} EXPORT troupeTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  # Several libraries share one include root (runtime/edge holds the edge
  # and the HTTP engine): copy each root once.
  get_property(roots GLOBAL PROPERTY TROUPE_INSTALLED_INCLUDE_ROOTS)
  if(NOT dir IN_LIST roots)
    set_property(GLOBAL APPEND PROPERTY TROUPE_INSTALLED_INCLUDE_ROOTS ${dir})
    install(DIRECTORY ${dir}/troupe DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
            FILES_MATCHING PATTERN "*.hpp")
  endif()
  set_property(GLOBAL APPEND PROPERTY TROUPE_INSTALLED_LIBRARIES ${target})
endfunction()
