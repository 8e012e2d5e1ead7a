#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/load_counters.hpp"
#include "cluster_view.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// The launcher's console: an event line when the cluster changes (its
/// members, the singleton's host and lease) and one compact status line per
/// interval (up members, shards per node, the client's figures). Pure: the
/// snapshots, the client's counters and the time come in as arguments.

namespace troupe::demo {

/// The members sorted by up number (the oldest first; members never Up
/// last, by address), e.g. `members (by up number): node-1 up (oldest),
/// node-2 up (leader), node-3 up unreachable`.
std::string members_line(const cluster_snapshot& snap, const namer& name);

/// `singleton scheduler: node-1 token 1 | its lease: node-1 token 1`, or
/// `not running` / `not held` when no node reports one.
std::string singleton_line(const cluster_snapshot& snap, const namer& name);

/// `shards node-1 10, node-2 10` per region; `shards none allocated yet`
/// when the coordinator answered with no regions; `shards: no answer` when
/// no node answered the shards query.
std::string shards_text(const cluster_snapshot& snap, const namer& name);

/// The client's figures of `now`, its rate from `before` (the previous
/// status line's counters; zero counters at the load's start for the
/// first): `client 2208 acked (+200 in 1.00s: 200/s), 0 failed, 0 in
/// flight, p99 11ms (last 5s)`: the count, its delta and the rate come
/// from the same two samples, so consecutive lines agree. `, 1200 behind
/// schedule` when deposits wait for a free worker; `no ack in the last 5s`
/// instead of the p99 when there was none.
std::string client_text(const client::load_counters& before,
                        const client::load_counters& now);

/// Acks per second between two counters (0 when no time passed).
double acks_per_second(const client::load_counters& before,
                       const client::load_counters& now);

/// The console's memory between polls. Not thread-safe.
class console_view {
public:
  /// A status line at most every `status_interval` (less 10%, so that a
  /// poll loop of that period does not skip every other one).
  explicit console_view(runtime::timespan status_interval);

  /// The lines to print after a poll at `now` (time since any fixed start):
  /// first an event line per change since the last poll that answered (the
  /// members, the singleton; none when no node answered), then the status
  /// line when one is due. `client`: the load's counters, once it runs.
  std::vector<std::string>
  on_poll(const cluster_snapshot& snap,
          const std::optional<client::load_counters>& client,
          runtime::timespan now, const namer& name);

  /// The best acks/s of the status lines so far (0 before the client).
  double best_rate() const noexcept {
    return best_rate_;
  }

private:
  runtime::timespan interval_;
  std::optional<runtime::timespan> last_status_;
  std::string members_;
  std::string singleton_;
  client::load_counters client_before_{};
  double best_rate_ = 0;
};

} // namespace troupe::demo
