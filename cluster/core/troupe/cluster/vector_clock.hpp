#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "troupe/runtime/unique_address.hpp"

/// @file
/// The version of a gossip: a vector clock, as Akka Cluster's
/// `VectorClock`.

namespace troupe::cluster {

using runtime::unique_address;

/// How one vector clock relates to another (Akka's `VectorClock.Ordering`).
enum class clock_order : uint8_t {
  /// Every counter is equal.
  same = 0,
  /// Every counter is lower or equal, at least one lower: happened before.
  before,
  /// Every counter is higher or equal, at least one higher.
  after,
  /// Some counter is higher and another lower: neither saw the other.
  concurrent,
};

/// "same", "before", "after" or "concurrent".
const char* to_string(clock_order x) noexcept;

/// A vector clock: node -> counter.
///
/// The key is the node's `unique_address` itself (Akka uses the string
/// `host:port-uid`); a node restarted with a new uid is a new key. A missing
/// key counts as 0 and zero counters are never stored, so `==` and
/// `compare(...) == clock_order::same` agree. Counters start at 1 and only
/// grow. A plain value; thread-safe as any value.
class vector_clock {
public:
  using counter_type = uint64_t;

  /// Bumps the counter of `node` by one (Akka's `:+`).
  void increment(const unique_address& node);

  /// Removes the entry of `node` (Akka's `prune`): done when a member is
  /// removed, so that the clock does not grow with every incarnation ever
  /// seen. Comparisons then treat it as 0.
  void prune(const unique_address& node);

  /// The counter of `node` (0 when absent).
  counter_type counter(const unique_address& node) const noexcept;

  /// All entries, ordered by address.
  const std::map<unique_address, counter_type>& entries() const noexcept {
    return entries_;
  }

  bool empty() const noexcept {
    return entries_.empty();
  }

  friend bool operator==(const vector_clock&, const vector_clock&) = default;

  friend vector_clock merge(const vector_clock& x, const vector_clock& y);

  template <class Inspector>
  friend auto inspect(Inspector& f, vector_clock& x) {
    return f(x.entries_);
  }

private:
  std::map<unique_address, counter_type> entries_;
};

/// How `x` relates to `y`: `before` means `x` happened before `y`.
clock_order compare(const vector_clock& x, const vector_clock& y);

/// The pointwise maximum (Akka's `merge`): commutative, associative and
/// idempotent.
vector_clock merge(const vector_clock& x, const vector_clock& y);

/// Renders e.g. `{10.0.0.1:2552#7: 3, 10.0.0.2:2552#9: 1}`.
std::string to_string(const vector_clock& x);

} // namespace troupe::cluster
