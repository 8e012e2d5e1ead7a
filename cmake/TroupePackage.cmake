# The installed package (docs/guides/using-troupe-as-a-library.md), included
# by the top-level CMakeLists.txt after every library is defined:
#   lib/cmake/troupe/  troupeConfig.cmake, troupeConfigVersion.cmake,
#                      troupeTargets*.cmake (troupe::<library>), FindCAF.cmake
#   lib/pkgconfig/     troupe.pc
# troupe_library installs the libraries and the headers.
include(CMakePackageConfigHelpers)

set(TROUPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/troupe)

install(EXPORT troupeTargets NAMESPACE troupe::
        DESTINATION ${TROUPE_INSTALL_CMAKEDIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/troupeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/troupeConfig.cmake
  INSTALL_DESTINATION ${TROUPE_INSTALL_CMAKEDIR})

# The compatibility promise of docs/reference/api-stability.md: before 1.0 a
# minor release may break the API, so find_package(troupe 0.1) accepts
# 0.1.x (x >= the patch asked for) only; from 1.0 on, any 1.y.z >= the
# version asked for.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(compatibility SameMinorVersion)
else()
  set(compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/troupeConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY ${compatibility})

# FindCAF.cmake and Findc-ares.cmake go with the package: Debian's
# libcaf-dev and libc-ares-dev ship no CMake config, and troupeConfig.cmake
# finds CAF and c-ares through them.
install(FILES
  ${PROJECT_BINARY_DIR}/troupeConfig.cmake
  ${PROJECT_BINARY_DIR}/troupeConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/FindCAF.cmake
  ${CMAKE_CURRENT_LIST_DIR}/Findc-ares.cmake
  DESTINATION ${TROUPE_INSTALL_CMAKEDIR})

# troupe.pc: every installed library, each before the libraries it links
# (static linking reads left to right). They are defined after the ones they
# link, so the list reversed is that order; a library that links one defined
# after it would break this, and fails the configuration here.
get_property(libraries GLOBAL PROPERTY TROUPE_INSTALLED_LIBRARIES)
set(defined "")
foreach(library IN LISTS libraries)
  get_target_property(links ${library} LINK_LIBRARIES)
  foreach(link IN LISTS links)
    if(link IN_LIST libraries AND NOT link IN_LIST defined)
      message(FATAL_ERROR "troupe.pc: ${library} links ${link}, which is "
                          "defined after it; define ${link} first")
    endif()
  endforeach()
  list(APPEND defined ${library})
endforeach()
list(REVERSE libraries)
list(TRANSFORM libraries PREPEND "-l")
string(JOIN " " TROUPE_PC_LIBS ${libraries})
# The prefix relative to the .pc file, so that the file is right wherever
# `cmake --install --prefix` (or DESTDIR) puts it.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  message(FATAL_ERROR "troupe.pc: CMAKE_INSTALL_LIBDIR must be relative to "
                      "the prefix, not ${CMAKE_INSTALL_LIBDIR}")
endif()
file(RELATIVE_PATH TROUPE_PC_PREFIX
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" TROUPE_PC_PREFIX "${TROUPE_PC_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/troupe.pc.in
               ${PROJECT_BINARY_DIR}/troupe.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/troupe.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
