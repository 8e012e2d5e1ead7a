#include "troupe/cluster/phi_accrual_detector.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "troupe/cluster/errc.hpp"
#include "troupe/runtime/config.hpp"

namespace troupe::cluster {

namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;

runtime::error invalid(std::string what) {
  return runtime::make_error(errc::invalid_settings, std::move(what));
}

// The history every monitored node starts with (Akka's firstHeartbeat): two
// intervals around the estimate with a rather high deviation, because
// nothing is known about the link yet.
heartbeat_history bootstrap_history(const phi_accrual_settings& s) {
  heartbeat_history result{s.max_sample_size};
  auto mean = duration_cast<microseconds>(s.first_heartbeat_estimate);
  auto deviation = mean / 4;
  result.add(mean - deviation);
  result.add(mean + deviation);
  return result;
}

} // namespace

runtime::error validate(const phi_accrual_settings& s) {
  using runtime::render_duration;
  if (!(s.threshold > 0.0))
    return invalid(
      fmt::format("failure detector threshold {} must be > 0", s.threshold));
  if (s.max_sample_size < 1)
    return invalid("failure detector max_sample_size 0 must be >= 1");
  if (s.min_std_deviation <= timespan{0})
    return invalid(
      fmt::format("failure detector min_std_deviation {} must be > 0",
                  render_duration(s.min_std_deviation)));
  if (s.acceptable_heartbeat_pause < timespan{0})
    return invalid(
      fmt::format("failure detector acceptable_heartbeat_pause {} must be "
                  ">= 0",
                  render_duration(s.acceptable_heartbeat_pause)));
  if (s.first_heartbeat_estimate <= timespan{0})
    return invalid(
      fmt::format("failure detector first_heartbeat_estimate {} must be > 0",
                  render_duration(s.first_heartbeat_estimate)));
  return {};
}

// -- heartbeat_history --------------------------------------------------------

heartbeat_history::heartbeat_history(size_t max_sample_size)
  : max_sample_size_(max_sample_size) {
  TROUPE_ASSERT(max_sample_size >= 1);
}

void heartbeat_history::add(timespan interval) {
  auto us = std::max<int64_t>(0, duration_cast<microseconds>(interval).count());
  if (intervals_.size() == max_sample_size_) {
    auto oldest = intervals_.front();
    intervals_.pop_front();
    sum_ -= oldest;
    squared_sum_ -= static_cast<double>(oldest) * static_cast<double>(oldest);
  }
  intervals_.push_back(us);
  sum_ += us;
  squared_sum_ += static_cast<double>(us) * static_cast<double>(us);
}

fractional_ms heartbeat_history::mean() const {
  TROUPE_ASSERT(!intervals_.empty());
  auto n = static_cast<double>(intervals_.size());
  return fractional_ms{static_cast<double>(sum_) / n / 1000.0};
}

double heartbeat_history::variance_ms2() const {
  TROUPE_ASSERT(!intervals_.empty());
  auto n = static_cast<double>(intervals_.size());
  auto mean_us = static_cast<double>(sum_) / n;
  // Rounding can make a zero variance slightly negative.
  auto variance_us2 = std::max(0.0, squared_sum_ / n - mean_us * mean_us);
  return variance_us2 / 1e6;
}

fractional_ms heartbeat_history::std_deviation() const {
  return fractional_ms{std::sqrt(variance_ms2())};
}

// -- phi ----------------------------------------------------------------------

double phi_of(fractional_ms time_diff, fractional_ms mean,
              fractional_ms std_deviation) {
  auto y = (time_diff - mean) / std_deviation;
  auto e = std::exp(-y * (1.5976 + 0.070566 * y * y));
  // Two forms of the same value, each precise on its side of the mean.
  auto phi = time_diff > mean ? -std::log10(e / (1.0 + e))
                              : -std::log10(1.0 - 1.0 / (1.0 + e));
  return std::max(0.0, phi);
}

timespan detection_time(const phi_accrual_settings& s, fractional_ms mean,
                        fractional_ms std_deviation) {
  auto expected = mean + fractional_ms{s.acceptable_heartbeat_pause};
  auto deviation = std::max(std_deviation, fractional_ms{s.min_std_deviation});
  auto reached = [&](int64_t us) {
    return phi_of(fractional_ms{microseconds{us}}, expected, deviation)
           >= s.threshold;
  };
  // phi is +infinity long before y = 40 (exp underflows near y = 21.6).
  int64_t lo = 0;
  auto hi = static_cast<int64_t>(std::ceil(
              duration_cast<std::chrono::duration<double, std::micro>>(
                expected + 40.0 * deviation)
                .count()))
            + 1;
  if (reached(lo))
    return timespan{0};
  while (hi - lo > 1) {
    auto mid = lo + (hi - lo) / 2;
    if (reached(mid))
      hi = mid;
    else
      lo = mid;
  }
  return microseconds{hi};
}

// -- phi_accrual_detector -----------------------------------------------------

phi_accrual_detector::phi_accrual_detector(phi_accrual_settings s)
  : settings_(s), history_(bootstrap_history(s)) {
  TROUPE_ASSERT(!validate(s));
}

void phi_accrual_detector::heartbeat(timestamp now) {
  if (!last_heartbeat_) {
    history_ = bootstrap_history(settings_);
  } else if (is_available(now)) {
    // The first heartbeat after a failure is not added: the long pause
    // would skew the statistics.
    history_.add(now - *last_heartbeat_);
  }
  last_heartbeat_ = now;
}

double phi_accrual_detector::phi(timestamp now) const {
  if (!last_heartbeat_)
    return 0.0;
  auto mean
    = history_.mean() + fractional_ms{settings_.acceptable_heartbeat_pause};
  auto deviation = std::max(history_.std_deviation(),
                            fractional_ms{settings_.min_std_deviation});
  return phi_of(fractional_ms{now - *last_heartbeat_}, mean, deviation);
}

bool phi_accrual_detector::is_available(timestamp now) const {
  return phi(now) < settings_.threshold;
}

timespan phi_accrual_detector::detection_time() const {
  if (!last_heartbeat_)
    return timespan{0};
  return cluster::detection_time(settings_, history_.mean(),
                                 history_.std_deviation());
}

} // namespace troupe::cluster
