#include "client/recent_latency.hpp"

namespace troupe::demo::client {

void recent_latency::add(int64_t second, std::chrono::microseconds d) noexcept {
  auto& s = slots_[static_cast<size_t>(second % window_seconds)];
  if (s.second != second) {
    s.second = second;
    s.values = latency_histogram{};
  }
  s.values.add(d);
}

latency_histogram recent_latency::window(int64_t now) const noexcept {
  latency_histogram out;
  for (auto& s : slots_)
    if (s.second >= 0 && s.second <= now && s.second > now - window_seconds)
      out.merge(s.values);
  return out;
}

} // namespace troupe::demo::client
