#include "troupe/singleton/errc.hpp"

namespace troupe::singleton {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::invalid_settings:
      return "invalid_settings";
    case errc::invalid_name:
      return "invalid_name";
    case errc::start_failed:
      return "start_failed";
  }
  return "unknown";
}

} // namespace troupe::singleton
