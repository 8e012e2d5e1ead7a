#include "troupe/downing/errc.hpp"

namespace troupe::downing {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::invalid_settings:
      return "invalid_settings";
  }
  return "unknown";
}

} // namespace troupe::downing
