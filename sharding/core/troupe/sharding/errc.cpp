#include "troupe/sharding/errc.hpp"

namespace troupe::sharding {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::invalid_settings:
      return "invalid_settings";
    case errc::unknown_type:
      return "unknown_type";
    case errc::unmappable_message:
      return "unmappable_message";
    case errc::registration_refused:
      return "registration_refused";
    case errc::start_failed:
      return "start_failed";
    case errc::invalid_name:
      return "invalid_name";
    case errc::not_running:
      return "not_running";
    case errc::no_coordinator:
      return "no_coordinator";
    case errc::stop_failed:
      return "stop_failed";
  }
  return "unknown";
}

} // namespace troupe::sharding
