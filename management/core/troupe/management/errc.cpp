#include "troupe/management/errc.hpp"

namespace troupe::management {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::unknown_member:
      return "unknown_member";
    case errc::invalid_address:
      return "invalid_address";
    case errc::unavailable:
      return "unavailable";
    case errc::invalid_settings:
      return "invalid_settings";
    case errc::invalid_request:
      return "invalid_request";
  }
  return "unknown";
}

} // namespace troupe::management
