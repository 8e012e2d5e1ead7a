#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>

#include "troupe/downing/downing_view.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// When the split brain resolver may decide: Akka's stable-after deadline
/// and down-all-when-unstable measurement (SplitBrainResolver.scala) as a
/// pure state machine. Time comes in as `runtime::timestamp` (the
/// monotonic clock the shell reads); nothing here reads a clock.

namespace troupe::downing {

using runtime::timespan;
using runtime::timestamp;

/// The timing settings (field: default; meaning).
///
/// - stable_after: 20s; decide only after the view has not changed for
///   this long.
/// - down_all_when_unstable: 15s (Akka's "on" = max(3/4 of stable_after,
///   4s)); zero = off. When no decision was made within stable_after +
///   down_all_when_unstable of the first reachability change, down all.
struct stability_settings {
  timespan stable_after = std::chrono::seconds{20};
  timespan down_all_when_unstable = std::chrono::seconds{15};
};

/// What the tracker says at a point in time.
enum class stability_verdict : uint8_t {
  /// No member is unreachable: nothing to decide.
  idle = 0,
  /// Unreachable members, but the view changed less than stable_after ago.
  unstable,
  /// Stable, but another member decides for this side (or self is not
  /// yet up).
  not_responsible,
  /// A previous decision's downs are not yet visible in the view.
  downing_in_progress,
  /// Stable and self decides: call `decide` now.
  decide,
  /// Unstable for stable_after + down_all_when_unstable: down all. Every
  /// node reaches this verdict, responsible or not (as Akka: quickest and
  /// most aggressive when the time is out).
  down_all_when_unstable,
};

/// "idle", "unstable", "not_responsible", "downing_in_progress", "decide"
/// or "down_all_when_unstable".
const char* to_string(stability_verdict x) noexcept;

/// Tracks how long the resolver's view has been stable.
///
/// Rules (Akka's, with the differences noted):
/// - The stable deadline is now + stable_after at start and whenever the
///   view changes in what a decision depends on: the unreachable set, or
///   the set of up and leaving members (a member moving up, down, exiting
///   or becoming unreachable resets it; joining, weakly_up, leaving and
///   the removal of a down member do not, as Akka), or the set of
///   indirectly connected nodes. Akka resets it only on unreachable and
///   reachable member events; troupe also waits until the indirectly
///   connected nodes are stable, because right after a partition heals
///   the healed node has seen the gossip while its observers have not yet
///   marked it reachable again: for a moment every one of them is
///   indirectly connected (Akka's seen-current-gossip rule), and a
///   decision in that moment downs a fully connected majority (found by
///   the downing simulator, seed 44).
/// - Every change of the unreachable set is a reachability change. The
///   first one starts the instability measurement; it is reset when the
///   unreachable set becomes empty (all healed, downed or removed), when
///   there was no change for 2 * stable_after (Akka's documented rule;
///   Akka's code applies it only when down_all_when_unstable is off), and
///   by `acted`. While it runs, `evaluate` at or after first change +
///   stable_after + down_all_when_unstable says down_all_when_unstable
///   (Akka: strictly after; at a 1 s tick the difference is nil).
/// - Members that are already down or exiting are never unreachable in a
///   `downing_view`, so they never trigger a decision (akka/akka#29950).
/// - After `acted`, evaluation waits until every node that decision
///   downed is down, exiting or gone in the observed view
///   (downing_in_progress), and for a new stable_after.
///
/// Not thread-safe; owned by one actor.
class stability_tracker {
public:
  stability_tracker(stability_settings settings, timestamp now);

  const stability_settings& settings() const noexcept {
    return settings_;
  }

  /// Takes the latest view (call on every membership or reachability
  /// change). Returns true when it reset the stable deadline.
  bool observe(const downing_view& view, timestamp now);

  /// The verdict at `now` for the last observed view. May reset the
  /// instability measurement (2 * stable_after without change).
  stability_verdict evaluate(timestamp now);

  /// The shell acted on a decision that downed `downed` (not empty):
  /// resets the stable deadline and the instability measurement (Akka's
  /// `actOnDecision`).
  void acted(const std::set<unique_address>& downed, timestamp now);

  /// When the view will have been stable for stable_after.
  timestamp stable_deadline() const noexcept {
    return stable_deadline_;
  }

  /// When down_all_when_unstable fires, if the measurement runs and the
  /// feature is on.
  std::optional<timestamp> unstable_deadline() const noexcept;

  /// The earliest time at which `evaluate` may say something new without a
  /// new view (the shell's timer), or none.
  std::optional<timestamp> next_deadline() const noexcept;

  /// Reachability changes counted since the measurement started.
  size_t change_count() const noexcept {
    return change_count_;
  }

private:
  void reset_measurement() noexcept {
    change_count_ = 0;
  }

  stability_settings settings_;
  timestamp stable_deadline_;
  std::set<unique_address> unreachable_;
  std::set<unique_address> up_or_leaving_;
  std::set<unique_address> indirectly_connected_;
  bool responsible_ = false;
  size_t change_count_ = 0;
  timestamp first_change_{};
  timestamp latest_change_{};
  std::set<unique_address> pending_downs_;
};

} // namespace troupe::downing
