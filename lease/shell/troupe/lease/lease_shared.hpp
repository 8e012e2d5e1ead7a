#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "troupe/lease/lease_messages.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// State shared between one lease actor and its handles (internal).

namespace troupe::lease::detail {

/// The lock-free part (deadline, token) and the on_lost listeners.
struct lease_shared {
  static constexpr int64_t not_held = std::numeric_limits<int64_t>::min();

  explicit lease_shared(const runtime::clock_source& c) : clock(&c) {}

  /// The clock check_alive() reads (coarse monotonic, or the simulated one).
  const runtime::clock_source* clock;

  /// The local deadline minus the clock's resolution, in ns since the
  /// clock's epoch; `not_held` when not held.
  std::atomic<int64_t> deadline_ns{not_held};

  /// The token of the current (or last) acquisition.
  std::atomic<uint64_t> token{0};

  /// Acquisitions (new tokens) and losses (lease_lost published), for
  /// metrics.
  std::atomic<uint64_t> acquisitions{0};
  std::atomic<uint64_t> losses{0};

  bool check_alive() const noexcept {
    auto d = deadline_ns.load(std::memory_order_acquire);
    return d != not_held && clock->now().time_since_epoch().count() < d;
  }

  void publish_deadline(std::optional<runtime::timestamp> deadline) noexcept {
    if (!deadline) {
      deadline_ns.store(not_held, std::memory_order_release);
      return;
    }
    auto d = *deadline - clock->resolution();
    deadline_ns.store(d.time_since_epoch().count(), std::memory_order_release);
  }

  // Listeners: called on the lease actor's thread under `mtx`; the
  // recursive mutex lets a handler unsubscribe itself or others.
  std::recursive_mutex mtx;
  uint64_t next_listener = 0;
  std::map<uint64_t, std::function<void(const lease_lost&)>> listeners;

  void notify(const lease_lost& msg) {
    std::lock_guard guard{mtx};
    std::vector<uint64_t> ids;
    for (auto& kvp : listeners)
      ids.push_back(kvp.first);
    for (auto id : ids) {
      auto i = listeners.find(id);
      if (i == listeners.end())
        continue;
      auto fn = i->second; // a handler may erase itself while running
      fn(msg);
    }
  }
};

} // namespace troupe::lease::detail
