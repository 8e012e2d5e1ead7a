#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "troupe/runtime/clock.hpp"

/// @file
/// The seeded simulator's kernel: one random source, simulated global time
/// with a queue of timed actions, and per-node clocks with drift. Nothing
/// here reads a real clock or an unseeded random source, so a seed replays
/// a run exactly.
///
/// Not thread-safe: a simulation runs on one thread.

namespace troupe::sim {

using runtime::timespan;
using runtime::timestamp;

/// The one random source of a run.
class rng {
public:
  explicit rng(uint64_t seed) : gen_(seed) {}

  /// Uniform in [0, n) (0 when n is 0).
  uint64_t below(uint64_t n) {
    if (n == 0)
      return 0;
    return std::uniform_int_distribution<uint64_t>{0, n - 1}(gen_);
  }

  /// Uniform in [lo, hi].
  timespan between(timespan lo, timespan hi) {
    if (hi <= lo)
      return lo;
    return timespan{
      std::uniform_int_distribution<int64_t>{lo.count(), hi.count()}(gen_)};
  }

  /// True with probability p.
  bool chance(double p) {
    if (p <= 0.0)
      return false;
    if (p >= 1.0)
      return true;
    return std::uniform_real_distribution<double>{0.0, 1.0}(gen_) < p;
  }

  /// A random non-zero 64-bit value (uids).
  uint64_t nonzero() {
    uint64_t x = 0;
    while (x == 0)
      x = gen_();
    return x;
  }

  std::mt19937_64& engine() {
    return gen_;
  }

private:
  std::mt19937_64 gen_;
};

/// Simulated global time and the actions due at given times. Actions at the
/// same time run in the order they were scheduled.
class scheduler {
public:
  using action = std::function<void()>;

  /// Global time since the start of the run.
  timespan now() const noexcept {
    return now_;
  }

  /// Runs `a` at global time `t` (now, if `t` is in the past).
  void at(timespan t, action a) {
    queue_.push(item{std::max(t, now_), seq_++, std::move(a)});
  }

  void after(timespan d, action a) {
    at(now_ + d, std::move(a));
  }

  bool empty() const noexcept {
    return queue_.empty();
  }

  /// The time of the next action (only when not empty).
  timespan next_time() const {
    return queue_.top().t;
  }

  /// Runs the next action; false if there is none.
  bool step() {
    if (queue_.empty())
      return false;
    // Moved out, not copied: an action may hold a whole gossip. pop()
    // compares only `t` and `seq`, which a move leaves intact.
    auto it = std::move(const_cast<item&>(queue_.top()));
    queue_.pop();
    now_ = it.t;
    it.a();
    return true;
  }

  /// Runs every action due up to `t`, then sets the time to `t`.
  void run_until(timespan t) {
    while (!queue_.empty() && queue_.top().t <= t)
      step();
    now_ = std::max(now_, t);
  }

private:
  struct item {
    timespan t;
    uint64_t seq;
    action a;
    bool operator>(const item& other) const {
      return t != other.t ? t > other.t : seq > other.seq;
    }
  };

  timespan now_{0};
  uint64_t seq_ = 0;
  std::priority_queue<item, std::vector<item>, std::greater<>> queue_;
};

/// A node's monotonic clock: starts at its own origin and runs at its own
/// rate (drift: 1.001 = 0.1% fast). Local time never goes backwards.
struct drifting_clock {
  timestamp origin{std::chrono::hours{1}};
  double rate = 1.0;
  timespan started{0}; // global time at which the node started

  timestamp local(timespan global) const {
    auto elapsed = static_cast<double>((global - started).count()) * rate;
    return origin + timespan{static_cast<int64_t>(elapsed)};
  }
};

/// The last lines of a run, printed with the seed when a check fails.
class trace {
public:
  explicit trace(size_t keep = 400) : keep_(keep) {}

  void add(timespan t, std::string line) {
    if (lines_.size() == keep_) {
      lines_.erase(lines_.begin(), lines_.begin() + keep_ / 4);
      ++trimmed_;
    }
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t).count();
    lines_.push_back(std::to_string(ms) + "ms " + std::move(line));
  }

  std::string render() const {
    std::string out;
    if (trimmed_ > 0)
      out += "  ... (earlier lines dropped)\n";
    for (auto& l : lines_)
      out += "  " + l + "\n";
    return out;
  }

private:
  size_t keep_;
  size_t trimmed_ = 0;
  std::vector<std::string> lines_;
};

} // namespace troupe::sim
