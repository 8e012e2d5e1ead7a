#include "troupe/downing/decision.hpp"

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"

namespace troupe::downing {

const char* to_string(decision_kind x) noexcept {
  switch (x) {
    case decision_kind::down_unreachable:
      return "down_unreachable";
    case decision_kind::down_reachable:
      return "down_reachable";
    case decision_kind::down_all:
      return "down_all";
    case decision_kind::down_indirectly_connected:
      return "down_indirectly_connected";
    case decision_kind::reverse_down_indirectly_connected:
      return "reverse_down_indirectly_connected";
    case decision_kind::down_self_quarantined_by_remote:
      return "down_self_quarantined_by_remote";
    case decision_kind::acquire_lease_and_down_unreachable:
      return "acquire_lease_and_down_unreachable";
    case decision_kind::acquire_lease_and_down_indirectly_connected:
      return "acquire_lease_and_down_indirectly_connected";
  }
  return "unknown";
}

bool decision::is_indirectly_connected() const noexcept {
  return kind == decision_kind::down_indirectly_connected
         || kind == decision_kind::reverse_down_indirectly_connected
         || kind == decision_kind::acquire_lease_and_down_indirectly_connected;
}

bool decision::is_acquire_lease() const noexcept {
  return kind == decision_kind::acquire_lease_and_down_unreachable
         || kind == decision_kind::acquire_lease_and_down_indirectly_connected;
}

std::string to_string(const decision& x) {
  std::string result = to_string(x.kind);
  if (x.is_acquire_lease())
    result
      += fmt::format(" (delay {})", runtime::render_duration(x.acquire_delay));
  if (!x.error.empty())
    result += fmt::format(" ({})", x.error);
  return result;
}

} // namespace troupe::downing
