# Findc-ares: locates Debian's libc-ares-dev (1.18), which ships a pkg-config
# file (libcares.pc) but no CMake config. The imported target has the name
# upstream's c-ares-config.cmake gives it, so a c-ares that does ship a
# config is used the same way.
#
# Result variables: c-ares_FOUND, c-ares_VERSION, c-ares_INCLUDE_DIR.
# Imported target: c-ares::cares.
find_path(c-ares_INCLUDE_DIR ares.h)
find_library(c-ares_LIBRARY NAMES cares)

if(c-ares_INCLUDE_DIR AND EXISTS "${c-ares_INCLUDE_DIR}/ares_version.h")
  file(STRINGS "${c-ares_INCLUDE_DIR}/ares_version.h" _cares_version_line
       REGEX "^#define ARES_VERSION_STR \"[0-9.]+\"")
  string(REGEX REPLACE ".*\"([0-9.]+)\".*" "\\1" c-ares_VERSION
         "${_cares_version_line}")
  unset(_cares_version_line)
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(
  c-ares REQUIRED_VARS c-ares_LIBRARY c-ares_INCLUDE_DIR
  VERSION_VAR c-ares_VERSION)

if(c-ares_FOUND AND NOT TARGET c-ares::cares)
  add_library(c-ares::cares UNKNOWN IMPORTED)
  set_target_properties(c-ares::cares PROPERTIES
    IMPORTED_LOCATION "${c-ares_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${c-ares_INCLUDE_DIR}")
endif()

mark_as_advanced(c-ares_INCLUDE_DIR c-ares_LIBRARY)
