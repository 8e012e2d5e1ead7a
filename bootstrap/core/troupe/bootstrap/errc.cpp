#include "troupe/bootstrap/errc.hpp"

namespace troupe::bootstrap {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::invalid_settings:
      return "invalid_settings";
    case errc::discovery_unavailable:
      return "discovery_unavailable";
    case errc::discovery_refused:
      return "discovery_refused";
    case errc::bad_discovery_answer:
      return "bad_discovery_answer";
    case errc::probe_failed:
      return "probe_failed";
    case errc::bad_probe_answer:
      return "bad_probe_answer";
  }
  return "unknown";
}

} // namespace troupe::bootstrap
