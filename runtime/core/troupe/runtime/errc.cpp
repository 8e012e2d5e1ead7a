#include "troupe/runtime/errc.hpp"

namespace troupe::runtime {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::unknown_config_key:
      return "unknown_config_key";
    case errc::bad_config_value:
      return "bad_config_value";
    case errc::bad_config_file:
      return "bad_config_file";
    case errc::bad_command_line:
      return "bad_command_line";
    case errc::bad_address:
      return "bad_address";
    case errc::http_connect_failed:
      return "http_connect_failed";
    case errc::http_timeout:
      return "http_timeout";
    case errc::http_tls_failed:
      return "http_tls_failed";
    case errc::http_response_too_large:
      return "http_response_too_large";
    case errc::http_malformed_response:
      return "http_malformed_response";
    case errc::http_bad_request:
      return "http_bad_request";
    case errc::http_shutdown:
      return "http_shutdown";
    case errc::shutdown_phase_passed:
      return "shutdown_phase_passed";
    case errc::credentials_unreadable:
      return "credentials_unreadable";
  }
  return "unknown";
}

} // namespace troupe::runtime
