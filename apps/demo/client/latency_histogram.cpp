#include "client/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace troupe::demo::client {

size_t latency_histogram::bucket_of(uint64_t us) noexcept {
  constexpr uint64_t linear = 1 << sub_bits;
  if (us < linear)
    return static_cast<size_t>(us);
  us = std::min<uint64_t>(us, (uint64_t{1} << max_exp) - 1);
  // The exponent (>= sub_bits) and the sub_bits bits below the leading one.
  auto exp = static_cast<uint64_t>(std::bit_width(us) - 1);
  auto sub = (us >> (exp - sub_bits)) & (linear - 1);
  return static_cast<size_t>(linear + (exp - sub_bits) * linear + sub);
}

uint64_t latency_histogram::upper_bound_of(size_t bucket) noexcept {
  constexpr uint64_t linear = 1 << sub_bits;
  if (bucket < linear)
    return bucket;
  auto exp = (bucket - linear) / linear + sub_bits;
  auto sub = (bucket - linear) % linear;
  return ((linear + sub + 1) << (exp - sub_bits)) - 1;
}

void latency_histogram::add(std::chrono::microseconds d) noexcept {
  auto us = static_cast<uint64_t>(std::max<int64_t>(d.count(), 0));
  ++counts_[bucket_of(us)];
  ++count_;
  max_ = std::max(max_, std::chrono::microseconds{static_cast<int64_t>(us)});
}

void latency_histogram::merge(const latency_histogram& other) noexcept {
  for (size_t i = 0; i < buckets; ++i)
    counts_[i] += other.counts_[i];
  count_ += other.count_;
  max_ = std::max(max_, other.max_);
}

std::chrono::microseconds latency_histogram::quantile(double q) const noexcept {
  if (count_ == 0)
    return std::chrono::microseconds{0};
  auto rank = static_cast<uint64_t>(
    std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_)));
  rank = std::max<uint64_t>(rank, 1);
  uint64_t seen = 0;
  for (size_t i = 0; i < buckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      // Never above the largest value seen.
      auto bound = static_cast<int64_t>(upper_bound_of(i));
      return std::min(std::chrono::microseconds{bound}, max_);
    }
  }
  return max_;
}

} // namespace troupe::demo::client
