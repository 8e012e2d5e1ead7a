#include "troupe/cluster/peer_backoff.hpp"

#include <algorithm>

#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

peer_backoff::peer_backoff(runtime::timespan min_delay,
                           runtime::timespan max_delay)
  : min_(min_delay), max_(max_delay) {
  TROUPE_ASSERT(min_delay.count() > 0);
  TROUPE_ASSERT(min_delay <= max_delay);
}

runtime::timespan peer_backoff::current(std::mt19937_64& rng) const {
  if (failures_ == 0)
    return runtime::timespan{0};
  // Doubling stops at max: past 2^62 ns the shift would overflow anyway.
  auto base = min_;
  for (uint32_t i = 1; i < failures_ && base < max_; ++i)
    base *= 2;
  base = std::min(base, max_);
  std::uniform_real_distribution<double> unit{0.0, 1.0};
  auto factor = 1.0 - jitter * unit(rng);
  return runtime::timespan{
    static_cast<int64_t>(static_cast<double>(base.count()) * factor)};
}

runtime::timespan peer_backoff::on_failure(std::mt19937_64& rng) {
  ++failures_;
  return current(rng);
}

} // namespace troupe::cluster
