# FindCAF: locates Debian's libcaf-dev 0.17.x, which ships no CMake config.
#
# Result variables: CAF_FOUND, CAF_VERSION, CAF_INCLUDE_DIR.
# Imported targets: CAF::core, CAF::io and (when libcaf_openssl is present)
# CAF::openssl. CAF::io links CAF::core; CAF::openssl links CAF::io and
# OpenSSL.
find_path(CAF_INCLUDE_DIR caf/config.hpp)
find_library(CAF_CORE_LIBRARY NAMES caf_core)
find_library(CAF_IO_LIBRARY NAMES caf_io)
find_library(CAF_OPENSSL_LIBRARY NAMES caf_openssl)

if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE ".* ([0-9]+)" "\\1" _caf_version "${_caf_version_line}")
  math(EXPR _caf_major "${_caf_version} / 10000")
  math(EXPR _caf_minor "(${_caf_version} / 100) % 100")
  math(EXPR _caf_patch "${_caf_version} % 100")
  set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(
  CAF REQUIRED_VARS CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY
  VERSION_VAR CAF_VERSION)

if(CAF_FOUND AND NOT TARGET CAF::core)
  find_package(Threads REQUIRED)
  add_library(CAF::core UNKNOWN IMPORTED)
  set_target_properties(CAF::core PROPERTIES
    IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES Threads::Threads)
  add_library(CAF::io UNKNOWN IMPORTED)
  set_target_properties(CAF::io PROPERTIES
    IMPORTED_LOCATION "${CAF_IO_LIBRARY}"
    INTERFACE_LINK_LIBRARIES CAF::core)
  if(CAF_OPENSSL_LIBRARY)
    find_package(OpenSSL REQUIRED)
    add_library(CAF::openssl UNKNOWN IMPORTED)
    set_target_properties(CAF::openssl PROPERTIES
      IMPORTED_LOCATION "${CAF_OPENSSL_LIBRARY}"
      INTERFACE_LINK_LIBRARIES "CAF::io;OpenSSL::SSL;OpenSSL::Crypto")
  endif()
endif()

mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY
                 CAF_OPENSSL_LIBRARY)
