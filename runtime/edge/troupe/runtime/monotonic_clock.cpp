#include "troupe/runtime/monotonic_clock.hpp"

#include <time.h>

namespace troupe::runtime {

coarse_monotonic_clock::coarse_monotonic_clock() noexcept
  : resolution_(timespan{4'000'000}) {
  struct timespec res {};
  if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0)
    resolution_ = timespan{res.tv_sec * 1'000'000'000LL + res.tv_nsec};
}

timestamp coarse_monotonic_clock::now() const noexcept {
  struct timespec ts {};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  // steady_clock is CLOCK_MONOTONIC on Linux; the coarse variant shares its
  // epoch, so both yield comparable timestamps.
  return timestamp{timespan{ts.tv_sec * 1'000'000'000LL + ts.tv_nsec}};
}

timespan coarse_monotonic_clock::resolution() const noexcept {
  return resolution_;
}

const clock_source& default_coarse_clock() noexcept {
  static const auto* instance = new coarse_monotonic_clock;
  return *instance;
}

} // namespace troupe::runtime
