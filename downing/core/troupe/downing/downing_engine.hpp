#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/downing/downing_settings.hpp"
#include "troupe/downing/downing_view.hpp"
#include "troupe/downing/stability_tracker.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// The whole per-node split brain resolver protocol as a pure state
/// machine: Akka's `SplitBrainResolverBase` actor (akka.cluster.sbr,
/// SplitBrainResolver.scala) without the actor. Inputs carry `now` (the
/// monotonic clock the owner reads); outputs are `downing_effects` the
/// owner carries out (the downing actor, or the simulator). No clock reads,
/// no I/O, no logging here.

namespace troupe::downing {

/// The severity of a log line the owner writes.
enum class log_level : uint8_t { info = 0, warning, error };

/// "info", "warning" or "error".
const char* to_string(log_level x) noexcept;

/// One line for the owner's logger (component "downing").
struct log_line {
  log_level level = log_level::info;
  std::string text;
  friend bool operator==(const log_line&, const log_line&) = default;
};

/// What the owner must do after one call, in this order:
/// 1. `release_lease`: release the resolver's lease (its answer is not
///    needed; a failure is only logged, the lease's ttl ends it anyway).
/// 2. `down`: down these nodes through the membership (`cluster::down`),
///    in this order: every other node first, self last (Akka's
///    `actOnDecision`).
/// 3. `acquire_lease`: start acquiring the resolver's lease (any backend,
///    through the lease handle) and report its outcome with
///    `on_lease_acquired`. The owner may bound the attempt itself; the
///    engine gives up after `lease_answer_timeout` anyway.
/// 4. `log`: write every line at its level.
struct downing_effects {
  std::vector<unique_address> down;
  bool acquire_lease = false;
  bool release_lease = false;
  std::vector<log_line> log;

  bool empty() const noexcept {
    return down.empty() && !acquire_lease && !release_lease && log.empty();
  }
};

/// Bugs the simulator's tests plant to show that its downing checkers catch
/// them (test/sim). `none` everywhere else; no configuration key reaches
/// this.
enum class downing_bug : uint8_t {
  none = 0,
  /// Every decision downs the unreachable side (a minority survives too,
  /// so both sides of a partition down each other).
  always_down_unreachable,
  /// Every decision is reversed: down_unreachable downs the reachable side
  /// and down_reachable the unreachable one (the majority goes).
  reversed_decision,
};

/// The engine's own settings besides `downing_settings`.
///
/// - lease_answer_timeout: 5s (Akka's `lease-operation-timeout`); how long
///   the engine waits for `on_lease_acquired` after it emitted
///   `acquire_lease`. When the answer never comes the engine acts as if the
///   lease was refused (Akka: a failed or timed-out `acquire` future is
///   `false`): this side downs itself. A late answer is ignored; a late
///   `true` makes the engine release the lease at once (nobody uses it).
struct downing_engine_settings {
  downing_settings downing;
  timespan lease_answer_timeout = std::chrono::seconds{5};
};

/// One node's split brain resolver.
///
/// Inputs (time never goes backwards between calls):
/// - `on_membership(state, now)` / `on_view(view, now)`: the node's
///   membership view changed (call on every membership or reachability
///   change; calling it with an unchanged view is harmless).
/// - `tick(now)`: whenever `next_tick()` is due (calling it more often is
///   harmless).
/// - `on_lease_acquired(acquired, now)`: the outcome of the acquire the
///   engine asked for; a failure or timeout of the backend is `false`. A
///   backend's benign "already exists" for a lease this owner now holds
///   must arrive as `true` (scenario D3).
/// - `on_quarantined_by_remote(now)`: the transport says another node
///   quarantined this one (Akka's `ThisActorSystemQuarantinedEvent`).
///
/// Rules (Akka's `SplitBrainResolverBase`, with the core's rules from
/// stability_tracker.hpp and strategy.hpp; docs/design/downing.md):
/// - Without a strategy (`downing.active_strategy = off`) every call
///   returns nothing.
/// - Every view change and tick evaluates the stability tracker. Only the
///   responsible node (the side leader, `downing_view::is_responsible`)
///   decides, once the view was stable for stable_after; every node downs
///   all on down_all_when_unstable (WARNING line with the change count).
/// - A decision logs one INFO line with its inputs (strategy, decision,
///   nodes downed, unreachable of members, indirectly connected, stable
///   for) and, when it carries an error text, an ERROR line; then downs
///   `nodes_to_down` (self last) and tells the tracker (`acted`).
/// - An acquire_lease_* decision waits its `acquire_delay` (the engine's
///   own deadline, in `next_tick`), emits `acquire_lease`, then waits for
///   the answer (at most lease_answer_timeout). Meanwhile views are
///   stashed (only the latest is kept) and ticks do nothing but fire the
///   engine's own deadlines, as Akka's `waitingForLease` stashes every
///   message but the lease result. With the answer it acts on
///   `after_lease(decision, acquired)` over the view of the decision, then
///   takes the stashed view. A quarantine report while waiting is stashed
///   too and acted on after the answer.
/// - Lease release (Akka's `releaseLeaseCondition`): after acting on an
///   acquired lease, hold it until every downed node is gone from the view
///   (removed), then for `lease_majority::release_after`, then emit
///   `release_lease`. A new decision that acquires again restarts this.
/// - `on_quarantined_by_remote`: down self at once (decision
///   down_self_quarantined_by_remote), responsible or not.
///
/// Not thread-safe; owned by one actor (or one simulated node).
class downing_engine {
public:
  /// The engine's phase (for tests and traces).
  enum class phase : uint8_t {
    /// Watching the view; deciding when the tracker says so.
    watching = 0,
    /// A lease decision waits its acquire_delay.
    waiting_to_acquire,
    /// `acquire_lease` was emitted; waiting for `on_lease_acquired`.
    acquiring,
  };

  downing_engine(unique_address self, downing_engine_settings settings,
                 timestamp now, downing_bug bug = downing_bug::none);

  /// `on_view(downing_view::of(state), now)`.
  downing_effects on_membership(const cluster::membership_state& state,
                                timestamp now);

  /// Takes the latest view of this node (its `self()` must be this node).
  downing_effects on_view(downing_view view, timestamp now);

  /// Fires whatever deadline is due.
  downing_effects tick(timestamp now);

  /// The lease's answer to the last `acquire_lease`.
  downing_effects on_lease_acquired(bool acquired, timestamp now);

  /// Another node quarantined this one: down self.
  downing_effects on_quarantined_by_remote(timestamp now);

  /// When `tick` must be called next (strictly after the last call's
  /// `now`), or none when only a new view can change anything.
  std::optional<timestamp> next_tick() const;

  phase current_phase() const noexcept {
    return phase_;
  }

  /// Whether this node holds (or may hold) the resolver's lease: acquired
  /// and not yet released.
  bool holds_lease() const noexcept {
    return holds_lease_;
  }

  const unique_address& self() const noexcept {
    return self_;
  }

private:
  void evaluate(timestamp now, downing_effects& out);
  void decide_now(timestamp now, downing_effects& out);
  void act(const decision& d, const downing_view& view, timestamp now,
           downing_effects& out);
  void observe(downing_view view, timestamp now, downing_effects& out);
  void lease_answer(bool acquired, timestamp now, downing_effects& out);
  void check_release(timestamp now, downing_effects& out);

  unique_address self_;
  downing_engine_settings settings_;
  downing_bug bug_;
  stability_tracker tracker_;
  std::optional<downing_view> view_;
  timestamp last_now_;
  phase phase_ = phase::watching;
  // the lease decision in flight, the view it was taken on, its deadline
  std::optional<decision> pending_;
  std::optional<downing_view> pending_view_;
  timestamp lease_deadline_{};
  std::optional<downing_view> stashed_view_;
  bool stashed_quarantine_ = false;
  // lease release (Akka's releaseLeaseCondition)
  bool holds_lease_ = false;
  std::set<unique_address> release_when_removed_;
  std::optional<timestamp> release_at_;
};

} // namespace troupe::downing
