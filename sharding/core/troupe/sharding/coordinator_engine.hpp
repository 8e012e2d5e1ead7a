#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/unique_address.hpp"
#include "troupe/sharding/allocation_strategy.hpp"
#include "troupe/sharding/coordinator_protocol.hpp"
#include "troupe/sharding/log_line.hpp"
#include "troupe/sharding/removal_tracker.hpp"
#include "troupe/sharding/sharding_settings.hpp"

/// @file
/// The shard coordinator of one entity type as a pure state machine:
/// Akka's ShardCoordinator (akka.cluster.sharding, ShardCoordinator.scala)
/// with its RebalanceWorker, without the actor and without a replicated
/// state store, plus the fixes of scenarios H1, H2, H5 and the partition
/// window of DESIGN.md §7. Inputs carry `now` (the owner's monotonic
/// clock); outputs are `coordinator_effects` the owner carries out (the
/// coordinator actor, which runs as a cluster singleton, or the
/// simulator). No clock reads, no I/O, no logging here.
///
/// Why the state survives failover without a shard ever getting two homes
/// (docs/design/sharding.md, "Failover", has the whole argument):
/// 1. A region hosts a shard only when the coordinator it accepts told it
///    to (`host_shard` or `shard_home` naming itself), and it accepts
///    coordinator messages only from the singleton target (with the role;
///    the oldest member of the highest app_version) in its own view. A new
///    coordinator is started only on the new target, after the previous
///    instance terminated (singleton hand-over) or its node was removed; a
///    region that moved on to the new target never again takes a message
///    from the previous one.
/// 2. A new coordinator starts in `recovering`: it allocates nothing until
///    it has heard from every member with the role that is still in its
///    view, whatever the member's status (joining included: a member is
///    moved to up, and so may get shards, only at convergence, when every
///    member has seen it joining): a `register_region` listing the shards
///    that region hosts, or the region's absence (nothing published under
///    its name: it hosts nothing, and can get shards only from this
///    coordinator), or the member's removal plus the removal margin.
/// 3. A member removed from down, or while unreachable, may still run its
///    entities until it learns it is down itself. Its shards keep their
///    home for `down_removal_margin` after the removal (default the
///    resolver's decision bound, stable_after + down_all_when_unstable,
///    ADR 0007); requests for them wait that long. A member removed from
///    leaving or exiting while unreachable may still be handing off in its
///    own view: at least hand_off_timeout + entity_stop_timeout (its
///    region's bound for a silent coordinator).
/// 4. A shard leaves its home only by the owner's `shard_stopped` (sent
///    after every entity terminated), the owner region's termination (its
///    actor stopped after its entities), or the rule in 3.
///
/// Not thread-safe; owned by one actor (or one simulated node).
namespace troupe::sharding {

/// The coordinator's phases.
enum class coordinator_phase : uint8_t {
  /// Waiting for every member's region to report (rule 2); no
  /// allocation, no rebalance, requests queued.
  recovering = 0,
  /// Serving.
  active,
};

/// "recovering" or "active".
const char* to_string(coordinator_phase x) noexcept;

/// A message to the region on node `to`.
struct region_send {
  unique_address to;
  to_region message;
  friend bool operator==(const region_send&, const region_send&) = default;
};

/// What the owner must do after one call, in this order:
/// 1. `watch`: watch the region published on each node (its
///    `region_name(type)`) and report `on_region_terminated(node, ...)`
///    when the watch fires (the region actor stopped, or nothing was
///    published under the name; a node's removal is reported through
///    `on_membership`, not here).
/// 2. `send`: the messages, in order.
/// 3. `log`: every line at its level.
struct coordinator_effects {
  std::vector<unique_address> watch;
  std::vector<region_send> send;
  std::vector<log_line> log;
  bool empty() const noexcept {
    return watch.empty() && send.empty() && log.empty();
  }
};

/// Why a watched region is gone (the owner's reading of remote_down).
enum class region_gone : uint8_t {
  /// Nothing was published under the region's name when the watch arrived:
  /// no region there (yet). Ignored for a region that registered.
  not_published = 0,
  /// The region actor stopped (after its entities).
  stopped,
};

/// Bugs the simulator's tests plant to show that its checkers catch them
/// (test/sim). `none` everywhere else; no configuration key reaches this.
enum class coordinator_bug : uint8_t {
  none = 0,
  /// Start active at once, without waiting for the regions' reports.
  skip_recovery,
  /// Move the shards of a removed member at once, without the removal
  /// margin, also when it was downed.
  no_removal_margin,
  /// Take `shard_stopped` from any region, not only from the owner
  /// (scenario H1's root cause (a)).
  trust_any_shard_stopped,
  /// Allocate although the lease is not alive.
  ignore_lease,
};

/// Counters for metrics and tests.
struct coordinator_counters {
  uint64_t allocations = 0;
  uint64_t rebalances_started = 0;
  uint64_t rebalances_done = 0;
  uint64_t rebalances_timed_out = 0;
  /// Messages ignored (not from the owner, unknown region, wrong phase).
  uint64_t ignored_messages = 0;
  /// Registrations refused (number_of_shards mismatch).
  uint64_t refused_registrations = 0;
  /// A region reported a shard that has another home (an invariant was
  /// broken elsewhere; ERROR line).
  uint64_t conflicts = 0;
  /// Allocations or rebalances held back because the lease was not alive.
  uint64_t lease_refusals = 0;
};

/// The coordinator of one entity type.
///
/// Inputs (time never goes backwards between calls):
/// - `start(state, now)`: the first view; begins recovery (`coordinator_hello`
///   to every member with the role, and a watch of its region).
/// - `on_membership(state, now)`: the view changed.
/// - `on_message(from, message, now)`: from the region on node `from`.
/// - `on_region_terminated(node, why, now)`: a watch fired.
/// - `tick(now)`: whenever `next_tick()` is due.
///
/// Rules beyond the file comment:
/// - Allocation (`get_shard_home` for a shard without a home): only when
///   active and `lease_alive()`; the strategy chooses among the regions on
///   members that are up, reachable, registered, not proxies and not
///   shutting down. The chosen region gets `host_shard`, the requesters
///   `shard_home`. A request that cannot be served now (recovering, lease
///   not alive, no region, the shard's home is a removed member within its
///   margin, the shard is being rebalanced) waits and is answered when it
///   can be.
/// - Rebalance every rebalance_interval when active and the lease is alive
///   (the strategy's choice), and for every shard of a region that asked
///   for a graceful shutdown: `begin_hand_off` to every registered region
///   and proxy; when all acked (a region that terminated or was removed
///   counts as acked: H5), `hand_off` to the owner; the owner's
///   `shard_stopped` ends it and the shard is allocated again at once
///   (H8). One timer, `hand_off_timeout`, ends a rebalance that did not
///   finish; the shard then stays with its owner, and a late
///   `shard_stopped` from the owner still deallocates it (H2).
///   `shard_stopped` from any region but the owner is ignored (H1).
///   After such a timeout the owner's own `get_shard_home` for the shard
///   waits for its `shard_stopped` (it never gets a `shard_home` naming
///   itself, which could cross that `shard_stopped`: two homes). If that
///   `shard_stopped` is lost (a gap in the lane) the request waits until
///   the owner's region is gone (a known liveness limit).
/// - A region whose `number_of_shards` differs is refused
///   (`register_ack{false, reason naming both values}`).
class coordinator_engine {
public:
  /// `lease_alive`: the coordinator lease's check_alive (ctx.lease_alive());
  /// empty: no lease (always alive). `strategy` must not be null.
  coordinator_engine(unique_address self, sharding_settings settings,
                     std::shared_ptr<const allocation_strategy> strategy,
                     std::function<bool()> lease_alive = {},
                     coordinator_bug bug = coordinator_bug::none);

  /// `removals`: the members this node saw removed (removal_tracker.hpp)
  /// whose margin may not have passed; recovery waits until it has.
  coordinator_effects start(const cluster::membership_state& state,
                            timestamp now,
                            const std::vector<recent_removal>& removals = {});
  coordinator_effects on_membership(const cluster::membership_state& state,
                                    timestamp now);
  coordinator_effects on_message(const unique_address& from,
                                 const to_coordinator& message, timestamp now);
  coordinator_effects on_region_terminated(const unique_address& region,
                                           region_gone why, timestamp now);
  coordinator_effects tick(timestamp now);

  /// When `tick` must be called next, or none when only an input can
  /// change anything.
  std::optional<timestamp> next_tick() const;

  coordinator_phase phase() const noexcept {
    return phase_;
  }

  /// The cluster-wide shard map: every region (node) with its shards in
  /// allocation order, regions without shards included.
  std::map<unique_address, std::vector<shard_id>> shard_map() const;

  /// The home of `shard`, if it has one.
  std::optional<unique_address> home(const shard_id& shard) const;

  /// The shards being rebalanced.
  std::set<shard_id> rebalancing() const;

  /// Members whose report recovery still waits for.
  std::set<unique_address> awaiting_reports() const;

  const coordinator_counters& counters() const noexcept {
    return counters_;
  }

private:
  struct region_info {
    bool proxy = false;
    bool shutting_down = false;
    // Shards in allocation order.
    std::vector<shard_id> shards;
  };

  struct removed_member {
    timestamp effective_at{};
  };

  struct rebalance_state {
    unique_address owner;
    std::set<unique_address> awaiting_ack;
    bool hand_off_sent = false;
    timestamp deadline{};
  };

  bool lease_ok();
  bool allocatable(const unique_address& node) const;
  bool is_candidate(const cluster::member& m) const;
  std::vector<region_allocation> allocations(bool only_allocatable) const;
  void update_view(const cluster::membership_state& state, timestamp now,
                   coordinator_effects& out);
  void expect_report(const unique_address& node, timestamp now,
                     coordinator_effects& out);
  void resolve_report(const unique_address& node, timestamp now,
                      coordinator_effects& out);
  void maybe_finish_recovery(timestamp now, coordinator_effects& out);
  void on_register(const unique_address& from, const register_region& m,
                   timestamp now, coordinator_effects& out);
  void on_get_home(const unique_address& from, const shard_id& shard,
                   timestamp now, coordinator_effects& out);
  void on_ack(const unique_address& from, const shard_id& shard, timestamp now,
              coordinator_effects& out);
  void on_stopped(const unique_address& from, const shard_id& shard,
                  timestamp now, coordinator_effects& out);
  void on_shutdown_request(const unique_address& from, timestamp now,
                           coordinator_effects& out);
  void region_gone_now(const unique_address& node, const std::string& why,
                       timestamp now, coordinator_effects& out);
  void assign(const shard_id& shard, const unique_address& region);
  void deallocate(const shard_id& shard);
  bool try_allocate(const shard_id& shard, const unique_address& requester,
                    timestamp now, coordinator_effects& out);
  void answer_waiting(timestamp now, coordinator_effects& out);
  void start_rebalance(const shard_id& shard, timestamp now,
                       coordinator_effects& out);
  void continue_rebalance(const shard_id& shard, coordinator_effects& out);
  void rebalance_round(timestamp now, coordinator_effects& out);
  void hand_off_shutting_down(timestamp now, coordinator_effects& out);
  void log(coordinator_effects& out, log_level level, std::string text) const;

  unique_address self_;
  sharding_settings settings_;
  std::shared_ptr<const allocation_strategy> strategy_;
  std::function<bool()> lease_alive_;
  coordinator_bug bug_;
  coordinator_phase phase_ = coordinator_phase::recovering;
  bool started_ = false;
  coordinator_counters counters_;
  bool lease_refusal_logged_ = false;

  // the view: members with the role, by address
  std::map<unique_address, cluster::member> members_;
  std::set<unique_address> unreachable_;
  // Members removed from down or while unreachable, until their margin.
  std::map<unique_address, removed_member> removed_;

  // recovery
  std::set<unique_address> awaiting_;
  std::optional<timestamp> hello_at_;

  // regions and shards
  std::map<unique_address, region_info> regions_;
  std::set<unique_address> watched_;
  std::map<shard_id, unique_address> homes_;
  // Requests that wait: shard -> requesting regions.
  std::map<shard_id, std::set<unique_address>> waiting_;
  std::optional<timestamp> retry_at_;
  std::map<shard_id, rebalance_state> rebalances_;
  // Shards whose owner got `hand_off` in a rebalance that timed out, until
  // they are deallocated. The owner is stopping them (or has, its
  // shard_stopped in flight): it never gets a `shard_home` naming itself
  // for them, which could cross its shard_stopped and make it host the
  // shard again while the shard is allocated elsewhere (found by the
  // simulator); its request waits for the shard_stopped.
  std::set<shard_id> stopping_;
  std::optional<timestamp> rebalance_at_;
};

} // namespace troupe::sharding
