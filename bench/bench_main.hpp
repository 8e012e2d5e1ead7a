#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

/// @file
/// A benchmark main that prints, after Google Benchmark's own table, the
/// ratio of each subject to its baseline measured in the same run
/// (STYLE/brief: ratios, never absolute targets).

namespace troupe::bench {

/// Console output plus a record of each benchmark's mean real time (ns).
class ratio_reporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (auto& run : runs)
      if (run.run_type == Run::RT_Iteration && !run.error_occurred)
        times_[run.benchmark_name()]
          = run.GetAdjustedRealTime() * unit_ns(run.time_unit);
  }

  /// Prints "subject / baseline = ratio" for every pair whose both sides
  /// ran; returns false if a pair is missing.
  bool print_ratios(
    const std::vector<std::pair<std::string, std::string>>& pairs) const {
    std::printf("\nratios (subject / baseline, same run):\n");
    bool complete = true;
    for (auto& [subject, baseline] : pairs) {
      auto s = times_.find(subject);
      auto b = times_.find(baseline);
      if (s == times_.end() || b == times_.end()) {
        complete = false;
        continue;
      }
      std::printf("  %-44s %10.1f ns / %10.1f ns = %6.2fx  (baseline: %s)\n",
                  subject.c_str(), s->second, b->second, s->second / b->second,
                  baseline.c_str());
    }
    return complete;
  }

  /// The time recorded for `name` in ns (the mean real time, or the manual
  /// time a benchmark set), if it ran.
  std::optional<double> time_ns(const std::string& name) const {
    auto i = times_.find(name);
    if (i == times_.end())
      return std::nullopt;
    return i->second;
  }

private:
  static double unit_ns(benchmark::TimeUnit unit) {
    switch (unit) {
      case benchmark::kNanosecond:
        return 1;
      case benchmark::kMicrosecond:
        return 1e3;
      case benchmark::kMillisecond:
        return 1e6;
      case benchmark::kSecond:
        return 1e9;
    }
    return 1;
  }

  std::map<std::string, double> times_;
};

} // namespace troupe::bench
