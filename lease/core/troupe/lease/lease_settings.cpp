#include "troupe/lease/lease_settings.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"
#include "troupe/runtime/config.hpp"

namespace troupe::lease {

using namespace std::chrono_literals;
using runtime::render_duration;

lease_settings lease_settings::with_defaults() const {
  auto result = *this;
  if (result.renewal_interval == timespan{0})
    result.renewal_interval = result.ttl / 3;
  if (result.operation_timeout == timespan{0})
    result.operation_timeout
      = std::min<timespan>(5s, result.renewal_interval / 2);
  if (result.safety_margin == timespan{0})
    result.safety_margin = std::max<timespan>(result.ttl / 10, 200ms);
  return result;
}

namespace {

bool has_control_chars(const std::string& x) {
  return std::any_of(x.begin(), x.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
}

runtime::error invalid(const lease_settings& s, std::string what) {
  return runtime::make_error(errc::invalid_settings,
                             fmt::format("lease \"{}\": {}", s.name, what));
}

} // namespace

runtime::error validate(const lease_settings& s) {
  if (s.name.empty())
    return invalid(s, "name must not be empty");
  if (s.name.size() > 253)
    return invalid(
      s, fmt::format("name is {} bytes long (at most 253)", s.name.size()));
  if (has_control_chars(s.name))
    return invalid(s, "name contains a control character");
  if (s.owner.empty())
    return invalid(s, "owner must not be empty");
  if (s.owner.size() > 253)
    return invalid(
      s, fmt::format("owner is {} bytes long (at most 253)", s.owner.size()));
  if (has_control_chars(s.owner))
    return invalid(s, "owner contains a control character");
  if (s.ttl <= timespan{0})
    return invalid(
      s, fmt::format("ttl {} must be positive", render_duration(s.ttl)));
  if (s.ttl > max_lease_duration)
    return invalid(s, fmt::format("ttl {} is longer than {}",
                                  render_duration(s.ttl),
                                  render_duration(max_lease_duration)));
  if (s.renewal_interval <= timespan{0})
    return invalid(s, fmt::format("renewal_interval {} must be positive",
                                  render_duration(s.renewal_interval)));
  if (s.safety_margin < timespan{0})
    return invalid(s, fmt::format("safety_margin {} must not be negative",
                                  render_duration(s.safety_margin)));
  if (s.renewal_interval >= s.ttl)
    return invalid(s, fmt::format("renewal_interval {} must be shorter than "
                                  "ttl {}",
                                  render_duration(s.renewal_interval),
                                  render_duration(s.ttl)));
  if (s.renewal_interval + s.safety_margin >= s.ttl)
    return invalid(s, fmt::format("renewal_interval {} plus safety_margin {} "
                                  "must be shorter than ttl {}",
                                  render_duration(s.renewal_interval),
                                  render_duration(s.safety_margin),
                                  render_duration(s.ttl)));
  if (s.acquire_retries < 1)
    return invalid(s, "acquire_retries must be at least 1");
  if (s.acquire_retry_delay > max_lease_duration)
    return invalid(s, fmt::format("acquire_retry_delay {} is longer than {}",
                                  render_duration(s.acquire_retry_delay),
                                  render_duration(max_lease_duration)));
  if (s.acquire_retry_delay < timespan{0})
    return invalid(s, fmt::format("acquire_retry_delay {} must not be negative",
                                  render_duration(s.acquire_retry_delay)));
  if (s.operation_timeout <= timespan{0})
    return invalid(s, fmt::format("operation_timeout {} must be positive",
                                  render_duration(s.operation_timeout)));
  if (s.operation_timeout > s.renewal_interval)
    return invalid(s, fmt::format("operation_timeout {} must not exceed "
                                  "renewal_interval {}",
                                  render_duration(s.operation_timeout),
                                  render_duration(s.renewal_interval)));
  // One renewal may time out and a retry must still fit before the local
  // deadline: a single failed renewal is not a lost lease (scenario L2).
  if (s.renewal_interval + 2 * s.operation_timeout + s.safety_margin > s.ttl)
    return invalid(
      s, fmt::format("renewal_interval {} + 2 x operation_timeout {} + "
                     "safety_margin {} exceeds ttl {}: a timed-out renewal "
                     "would leave no time for a retry",
                     render_duration(s.renewal_interval),
                     render_duration(s.operation_timeout),
                     render_duration(s.safety_margin), render_duration(s.ttl)));
  return {};
}

} // namespace troupe::lease
