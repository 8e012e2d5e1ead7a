#pragma once

#include <array>
#include <chrono>
#include <cstdint>

/// @file
/// A log-linear latency histogram for the load driver's percentiles.

namespace troupe::demo::client {

/// Counts durations in microsecond buckets: exact below 32 us, then 32
/// buckets per power of two (a bucket spans at most 1/32, about 3%, of its
/// values), up to 2^40 us (about 12 days; longer ones count as that).
/// Constant memory (about 9 KiB). Pure; not thread-safe.
class latency_histogram {
public:
  void add(std::chrono::microseconds d) noexcept;

  /// Adds every value of `other` (the histogram of both sets of values).
  void merge(const latency_histogram& other) noexcept;

  /// Values added.
  uint64_t count() const noexcept {
    return count_;
  }

  /// The largest value added (exact); 0 when empty.
  std::chrono::microseconds max() const noexcept {
    return max_;
  }

  /// The smallest bucket bound at or above the `q` quantile (0 < q <= 1):
  /// at least a fraction `q` of the values are <= it, and it overstates the
  /// true quantile by at most 1/32. 0 when empty.
  std::chrono::microseconds quantile(double q) const noexcept;

private:
  static constexpr int sub_bits = 5;
  static constexpr int max_exp = 40;
  static constexpr size_t buckets
    = (1 << sub_bits) + (max_exp - sub_bits) * (1 << sub_bits);

  static size_t bucket_of(uint64_t us) noexcept;
  static uint64_t upper_bound_of(size_t bucket) noexcept;

  std::array<uint64_t, buckets> counts_{};
  uint64_t count_ = 0;
  std::chrono::microseconds max_{0};
};

} // namespace troupe::demo::client
