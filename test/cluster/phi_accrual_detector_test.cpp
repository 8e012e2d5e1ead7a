#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/failure_detector_registry.hpp"
#include "troupe/cluster/phi_accrual_detector.hpp"

using namespace std::chrono_literals;
using namespace troupe::cluster;
using troupe::runtime::unique_address;

namespace {

const timestamp t0 = timestamp{1h};

fractional_ms ms(double x) {
  return fractional_ms{x};
}

// A detector that has received `count` heartbeats `interval` apart; the
// last one at the returned time.
timestamp beat(phi_accrual_detector& d, timestamp start, timespan interval,
               int count) {
  auto t = start;
  for (int i = 0; i < count; ++i) {
    d.heartbeat(t);
    t += interval;
  }
  return t - interval;
}

} // namespace

// Hand computation of the rows below (the logistic approximation of the
// normal CDF Akka uses): y = (t - mean) / std, a = y (1.5976 + 0.070566 y^2),
// e = exp(-a); phi = -log10(e / (1 + e)) for t > mean, else
// -log10(1 - 1 / (1 + e)) (the same number, computed on the precise side).
//   y = 0:   e = 1,                      phi = -log10(1/2)       = 0.30103
//   y = 0.5: a = 0.807621, e = 0.445918, phi = -log10(0.308398)  = 0.51089
//   y = 1:   a = 1.668166, e = 0.188593, phi = -log10(0.158669)  = 0.79951
//   y = 2:   a = 3.759728, e = 0.023290, phi = -log10(0.022760)  = 1.64283
//   y = 3:   a = 6.698082, e = 0.001233, phi = -log10(0.0012318) = 2.90948
//   y = 4:   a = 10.906624, e = 1.83364e-5, phi = -log10(1.83360e-5)
//                                                                = 4.73669
//   y = -1:  a = -1.668166, e = 5.302434, phi = -log10(1 - 0.158669)
//                                                                = 0.07503
TEST_CASE("phi_of: Akka's logistic approximation, values computed by hand") {
  using row = std::tuple<double, double, double, double>;
  auto [time_diff, mean, std_dev, expected]
    = GENERATE(table<double, double, double, double>({
      row{0, 0, 10, 0.30103},        // y = 0
      row{5, 0, 10, 0.51089},        // y = 0.5
      row{10, 0, 10, 0.79951},       // y = 1
      row{20, 0, 10, 1.64283},       // y = 2
      row{30, 0, 10, 2.90948},       // y = 3
      row{-10, 0, 10, 0.07503},      // y = -1
      row{4000, 4000, 250, 0.30103}, // one heartbeat, defaults, y = 0
      row{4250, 4000, 250, 0.79951}, // y = 1
      row{5000, 4000, 250, 4.73669}, // y = 4
    }));
  INFO("time_diff " << time_diff << " mean " << mean << " std " << std_dev);
  CHECK(phi_of(ms(time_diff), ms(mean), ms(std_dev))
        == Approx(expected).margin(0.00001));
}

TEST_CASE("phi_of: grows monotonically across the mean and never falls "
          "below zero") {
  auto [mean, std_dev] = GENERATE(table<double, double>({
    {0, 10},
    {4000, 100},
    {4000, 250},
    {1100, 100},
  }));
  double previous = 0;
  for (double t = mean - 30 * std_dev; t <= mean + 30 * std_dev;
       t += std_dev / 20) {
    auto phi = phi_of(ms(t), ms(mean), ms(std_dev));
    INFO("t = " << t << " phi = " << phi);
    CHECK(phi >= previous);
    CHECK(phi >= 0.0);
    previous = phi;
  }
  CHECK(previous > 100); // far beyond any threshold
}

TEST_CASE("heartbeat_history: mean, variance and the oldest dropped first") {
  heartbeat_history h{3};
  h.add(100ms);
  h.add(200ms);
  h.add(300ms);
  CHECK(h.size() == 3);
  CHECK(h.mean() == ms(200));
  // ((100-200)^2 + 0 + (300-200)^2) / 3 = 20000 / 3 ms^2
  CHECK(h.variance_ms2() == Approx(20000.0 / 3));
  CHECK(h.std_deviation().count() == Approx(81.6497));
  h.add(400ms); // drops 100ms
  CHECK(h.size() == 3);
  CHECK(h.mean() == ms(300));
  h.add(300ms);
  h.add(300ms);
  h.add(300ms); // [300, 300, 300]
  CHECK(h.variance_ms2() == 0.0);
  // Microsecond resolution: 1.5ms and 2.5ms keep their fraction.
  heartbeat_history fine{2};
  fine.add(1500us);
  fine.add(2500us);
  CHECK(fine.mean() == ms(2.0));
  CHECK(fine.std_deviation() == ms(0.5));
}

TEST_CASE("phi_accrual_detector: not monitoring before the first heartbeat") {
  phi_accrual_detector d{phi_accrual_settings{}};
  CHECK_FALSE(d.is_monitoring());
  CHECK(d.phi(t0 + 1h) == 0.0);
  CHECK(d.is_available(t0 + 1h));
  CHECK(d.detection_time() == 0s);
  d.heartbeat(t0);
  CHECK(d.is_monitoring());
  CHECK(d.last_heartbeat() == t0);
}

// After one heartbeat the history is the bootstrap [750ms, 1250ms]: mean
// 1000ms, std 250ms; with the 3s pause the expected arrival is 4000ms.
TEST_CASE("phi_accrual_detector: one heartbeat with the defaults") {
  using row = std::tuple<timespan, double>;
  auto [elapsed, expected] = GENERATE(table<timespan, double>({
    row{0ms, 0.0},         // y = -16: phi rounds to 0
    row{3000ms, 0.000008}, // y = -4
    row{4000ms, 0.30103},  // y = 0
    row{4250ms, 0.79951},  // y = 1
    row{5000ms, 4.73669},  // y = 4
  }));
  phi_accrual_detector d{phi_accrual_settings{}};
  d.heartbeat(t0);
  CHECK(d.history().mean() == ms(1000));
  CHECK(d.history().std_deviation() == ms(250));
  CHECK(d.phi(t0 + elapsed) == Approx(expected).margin(0.000005));
}

TEST_CASE("phi_accrual_detector: the min std deviation bounds a regular "
          "history") {
  phi_accrual_detector d{phi_accrual_settings{}};
  // 11 heartbeats 1s apart: bootstrap plus ten 1000ms intervals, variance
  // 2 * 250^2 / 12 = 10416.7 ms^2, std 102.06ms (just above the bound).
  auto last = beat(d, t0, 1s, 11);
  CHECK(d.history().size() == 12);
  CHECK(d.history().std_deviation().count() == Approx(102.0621));
  // At 4000ms + 1 std: y = 1.
  CHECK(d.phi(last + 4000ms + std::chrono::microseconds{102062})
        == Approx(0.79951).margin(0.0001));
  // Many more: std 35ms < 100ms, so 100ms is used; y = 1 at 4100ms.
  last = beat(d, last + 1s, 1s, 90);
  CHECK(d.history().std_deviation() < ms(100));
  CHECK(d.phi(last + 4100ms) == Approx(0.79951).margin(0.00001));
}

TEST_CASE("phi_accrual_detector: a heartbeat after a failure is not added "
          "to the history") {
  phi_accrual_detector d{phi_accrual_settings{}};
  auto last = beat(d, t0, 1s, 5);
  auto size = d.history().size();
  auto mean = d.history().mean();
  CHECK_FALSE(d.is_available(last + 10s));
  d.heartbeat(last + 10s); // unavailable at arrival: not counted
  CHECK(d.history().size() == size);
  CHECK(d.history().mean() == mean);
  CHECK(d.is_available(last + 10s)); // but the node is back
  d.heartbeat(last + 11s);
  CHECK(d.history().size() == size + 1);
}

TEST_CASE("phi_accrual_detector: phi grows monotonically while heartbeats "
          "stay away") {
  auto pause = GENERATE(0ms, 1s, 3s);
  phi_accrual_settings s;
  s.acceptable_heartbeat_pause = pause;
  phi_accrual_detector d{s};
  auto last = beat(d, t0, 1s, 20);
  double previous = 0;
  for (auto t = last; t < last + 30s; t += 10ms) {
    auto phi = d.phi(t);
    CHECK(phi >= previous);
    previous = phi;
  }
  CHECK_FALSE(d.is_available(last + 30s));
}

// Detection time: how long after the last heartbeat phi reaches the
// threshold, in steady state (1100 heartbeats exactly `interval` apart, so
// the bootstrap intervals are gone, the std is 0 and min_std_deviation is
// used). Expected = interval + pause + y(threshold) * min_std, where
// y(threshold) solves -log10(1 - F(y)) = threshold: y(4) = 3.63811,
// y(8) = 5.22599, y(10) = 5.79902, y(12) = 6.29212, y(16) = 7.11968. This
// table is in docs/design/cluster.md.
TEST_CASE("phi_accrual_detector: detection time against the settings") {
  using row = std::tuple<double, timespan, timespan, timespan, timespan>;
  auto [threshold, interval, pause, min_std, expected]
    = GENERATE(table<double, timespan, timespan, timespan, timespan>({
      // threshold, heartbeat interval, acceptable pause, min std, detection
      row{8, 1s, 3s, 100ms, 4522599us}, // the defaults
      row{4, 1s, 3s, 100ms, 4363811us},
      row{10, 1s, 3s, 100ms, 4579903us},
      row{12, 1s, 3s, 100ms, 4629213us},
      row{16, 1s, 3s, 100ms, 4711969us},
      row{8, 1s, 1s, 100ms, 2522599us},
      row{8, 1s, 10s, 100ms, 11522599us},
      row{8, 1s, 3s, 500ms, 6612994us},
      row{8, 5s, 3s, 100ms, 8522599us},
      row{8, 100ms, 1s, 100ms, 1622599us}, // real-time test settings
      row{8, 100ms, 300ms, 50ms, 661300us},
    }));
  phi_accrual_settings s;
  s.threshold = threshold;
  s.first_heartbeat_estimate = interval;
  s.acceptable_heartbeat_pause = pause;
  s.min_std_deviation = min_std;
  phi_accrual_detector d{s};
  auto last = beat(d, t0, interval, 1100);
  INFO("threshold " << threshold);
  CHECK(d.history().std_deviation() < ms(1));
  CHECK(d.detection_time() == expected);
  CHECK(d.is_available(last + expected - 1us));
  CHECK_FALSE(d.is_available(last + expected));
  CHECK(detection_time(s, fractional_ms{interval}, ms(0)) == expected);
}

TEST_CASE("phi_accrual_detector: detection after a single heartbeat uses "
          "the bootstrap std") {
  // mean 1000ms + 3000ms pause, std 250ms: 4000 + 5.22599 * 250 = 5306.497ms
  phi_accrual_detector d{phi_accrual_settings{}};
  d.heartbeat(t0);
  CHECK(d.detection_time() == 5306497us);
}

TEST_CASE("phi_accrual_settings: validate names the field and the value") {
  using mutate = void (*)(phi_accrual_settings&);
  using row = std::tuple<mutate, std::string>;
  auto [change, message] = GENERATE(table<mutate, std::string>({
    row{[](phi_accrual_settings& s) { s.threshold = 0; },
        "failure detector threshold 0 must be > 0"},
    row{[](phi_accrual_settings& s) { s.threshold = -1.5; },
        "failure detector threshold -1.5 must be > 0"},
    row{[](phi_accrual_settings& s) { s.max_sample_size = 0; },
        "failure detector max_sample_size 0 must be >= 1"},
    row{[](phi_accrual_settings& s) { s.min_std_deviation = 0ms; },
        "failure detector min_std_deviation 0s must be > 0"},
    row{[](phi_accrual_settings& s) { s.acceptable_heartbeat_pause = -1ms; },
        "failure detector acceptable_heartbeat_pause -1ms must be >= 0"},
    row{[](phi_accrual_settings& s) { s.first_heartbeat_estimate = 0s; },
        "failure detector first_heartbeat_estimate 0s must be > 0"},
  }));
  phi_accrual_settings s;
  CHECK_FALSE(validate(s));
  change(s);
  auto err = validate(s);
  CHECK(err.category == "cluster");
  CHECK(err.code == static_cast<uint8_t>(errc::invalid_settings));
  CHECK(err.message == message);
}

TEST_CASE("failure_detector_registry: one detector per unique address") {
  failure_detector_registry r{phi_accrual_settings{}};
  unique_address a{"10.0.0.1", 2552, 1};
  unique_address a2{"10.0.0.1", 2552, 2}; // a restarted: a new incarnation
  unique_address b{"10.0.0.2", 2552, 1};
  // Unknown nodes are available and not monitored (Akka).
  CHECK(r.is_available(a, t0));
  CHECK_FALSE(r.is_monitoring(a));
  CHECK(r.phi(a, t0) == 0.0);
  r.heartbeat(a, t0);
  r.heartbeat(b, t0);
  CHECK(r.size() == 2);
  CHECK(r.is_monitoring(a));
  CHECK_FALSE(r.is_monitoring(a2));
  CHECK(r.phi(a, t0 + 4250ms) == Approx(0.79951).margin(0.00001));
  CHECK_FALSE(r.is_available(a, t0 + 10s));
  CHECK(r.is_available(a2, t0 + 10s));
  r.heartbeat(b, t0 + 9s); // only b keeps beating
  CHECK(r.is_available(b, t0 + 10s));
  r.remove(a);
  CHECK(r.find(a) == nullptr);
  CHECK(r.is_available(a, t0 + 10s));
  r.heartbeat(a, t0 + 10s); // starts a new history
  CHECK(r.find(a)->history().size() == 2);
  r.reset();
  CHECK(r.size() == 0);
  CHECK_FALSE(r.is_monitoring(b));
}
