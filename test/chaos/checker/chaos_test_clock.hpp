#pragma once

#include <cmath>
#include <cstdint>

/// @file
/// The clock of the checker's planted-bug tests: times are seconds from
/// run_start, whose stamp is 100 s of CLOCK_MONOTONIC.

namespace troupe::chaos::test_clock {

/// run_start's stamp, in seconds of CLOCK_MONOTONIC.
inline constexpr double run_start_s = 100.0;

/// The stamp `s` seconds after run_start, in nanoseconds.
inline int64_t ns(double s) {
  return std::llround((run_start_s + s) * 1e9);
}

} // namespace troupe::chaos::test_clock
