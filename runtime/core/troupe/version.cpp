#include "troupe/version.hpp"

namespace troupe {

// Compiled into the library: the version of the headers the library was
// built with, whatever headers the program that links it includes.
version_info library_version() noexcept {
  return version;
}

} // namespace troupe
