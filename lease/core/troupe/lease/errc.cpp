#include "troupe/lease/errc.hpp"

namespace troupe::lease {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::invalid_settings:
      return "invalid_settings";
    case errc::backend_unavailable:
      return "backend_unavailable";
    case errc::backend_rejected:
      return "backend_rejected";
    case errc::conflict_unresolved:
      return "conflict_unresolved";
    case errc::backend_protocol_violation:
      return "backend_protocol_violation";
    case errc::shutting_down:
      return "shutting_down";
    case errc::acquire_timeout:
      return "acquire_timeout";
  }
  return "unknown";
}

} // namespace troupe::lease
