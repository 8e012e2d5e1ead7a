#include "troupe/cluster/errc.hpp"

namespace troupe::cluster {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::frame_too_large:
      return "frame_too_large";
    case errc::invalid_destination:
      return "invalid_destination";
    case errc::quarantined:
      return "quarantined";
    case errc::incarnation_mismatch:
      return "incarnation_mismatch";
    case errc::shutting_down:
      return "shutting_down";
    case errc::invalid_settings:
      return "invalid_settings";
    case errc::tls_setup_failed:
      return "tls_setup_failed";
    case errc::bind_failed:
      return "bind_failed";
  }
  return "unknown";
}

} // namespace troupe::cluster
