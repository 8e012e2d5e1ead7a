#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "troupe/sharding/coordinator_engine.hpp"
#include "troupe/sharding/region_engine.hpp"
#include "troupe/sharding/removal_tracker.hpp"
#include "troupe/sim/singleton_world.hpp"

/// @file
/// Cluster sharding in the membership simulation, over the singleton layer
/// (which runs over the downing layer): every node runs a
/// `sharding::region_engine` for one entity type, fed with the node's
/// membership state after every step of its membership engine; the shard
/// coordinator is the cluster singleton's instance: when the singleton
/// layer starts an instance on a node, a `coordinator_engine` is created
/// there (with that node's lease client's check_alive() as lease_alive
/// when the scenario uses the coordinator lease), and it is dropped when
/// the instance terminates (or its node crashes). As in the shell, each
/// node incarnation keeps a `removal_tracker` fed with every view it sees;
/// a coordinator starting there feeds it its first view and gets its
/// removals within the margin in `start`.
///
/// The layer plays the shells (DESIGN.md §7): coordinator <-> region
/// messages and region forwards cross one simulated network that follows
/// the membership's link rules, FIFO per sender -> receiver with gaps (the
/// ordinary lane of remoting.hpp). Watches follow remoting.hpp: a watch
/// request is repeated while the link is blocked (a blip fires nothing);
/// it fires `not_published` at once when the node's incarnation runs but
/// no region is running there (not yet created, or already stopped), and
/// `stopped` when the region finished (its `stopped` command), on the same
/// FIFO lane behind the region's earlier messages; a crashed node or a
/// replaced incarnation answers nothing (its removal reaches the
/// coordinator through membership).
///
/// Entities are records: a spawn (the region's spawn_fn) makes a new
/// incarnation (its EntityRef is the incarnation number); a stop_entity
/// ends it 0-50 ms later (sometimes 50-500 ms, rarely 1-4 s, beyond the
/// scenario's hand-off timeout; on a node that is down always within
/// 50 ms: its actor system stops them), a kill_entity at once, and a crash
/// ends all entities of the node at once. A downed or
/// partitioned node's entities stay live until they really terminate.
/// Clients on two nodes send messages to random entities through their
/// node's region; a message "handled" by an entity is recorded in the ack
/// log (message id, entity, incarnation), which the checkers own.
///
/// Checkers (oracles written here from the world's own records, never from
/// the engines' state; DESIGN.md §10), run at every step that can break
/// them:
/// - one_incarnation (I2a): a spawn while the entity has a live
///   incarnation anywhere.
/// - one_home (I2b): a region starts hosting a shard (it sends
///   `shard_started`, which the region does exactly when it begins hosting
///   after `host_shard` or a `shard_home` naming itself) while another
///   region is still a home of it. A region stops being a home of a shard
///   when it sends `shard_stopped` for it (sent only after the shard's
///   entities terminated), when it finishes (`stopped`) or crashes, or,
///   for a region whose node is down or removed in its own view (the
///   world's input to it), when its last live incarnation of the shard
///   terminated. The home is inferred from these sends rather than read
///   from region_engine's queries: the oracle then rests on what crossed
///   the wire (what the coordinator could know), not on the region's own
///   bookkeeping, which the planted region bug early_shard_stopped makes
///   lie (that bug is caught by one_incarnation: the new home spawns while
///   the old incarnations still stop).
/// - one_handler (I2c): a message id handled twice (by any incarnations),
///   or by an entity it was not addressed to.
/// - lease_gates_allocation (with the coordinator lease): a coordinator
///   sends `host_shard` or `begin_hand_off` while its node's lease client's
///   check_alive() is false.
/// - removal_margin_exceeded: what one_incarnation or one_home would
///   report, when the other incarnation or home belongs to a member that
///   the acting node's view has removed or down but that has not learned
///   it is down yet: the doomed side decided later than
///   down_removal_margin after its removal. With the margin of ADR 0007
///   (stable_after + down_all_when_unstable, the resolver's decision
///   bound) this never happens in the scenario's fault model; the sweeps
///   fail on it like on any checker, and the planted bug
///   no_removal_margin shows it.
/// - one_coordinator (scenario S4): more than one coordinator engine on
///   nodes that are not crashed.
/// - sharding_liveness (the scenario): after the faults stop and the
///   cluster heals, every entity handles a probe within the bound.
///
/// Not thread-safe; one run on one thread.

namespace troupe::sim {

/// A message to an entity.
struct sharding_payload {
  uint64_t id = 0;
  std::string entity;
  bool probe = false;
  friend bool operator==(const sharding_payload&, const sharding_payload&)
    = default;
};

/// The EntityRef of the simulated regions: the incarnation number (0: a
/// failed spawn).
using sim_region = sharding::region_engine<sharding_payload, uint64_t>;

/// A planted fault of the simulated transport (checker one_handler): every
/// forward between regions is delivered twice, which the protocol assumes
/// never happens.
enum class transport_bug : uint8_t { none = 0, duplicate_forwards };

/// What a sharding run plants and checks.
struct sharding_world_settings {
  sharding::sharding_settings sharding;
  sharding::coordinator_bug bug = sharding::coordinator_bug::none;
  sharding::region_bug region_bug = sharding::region_bug::none;
  transport_bug transport = transport_bug::none;
  /// Entities addressed ("e0" .. "e<entities-1>").
  size_t entities = 300;
  /// Nodes whose clients send, and how often each sends one message.
  std::vector<size_t> clients{0, 1};
  timespan send_interval = std::chrono::milliseconds{40};
  /// Whether the coordinator runs behind the singleton's lease.
  bool use_lease = false;
  /// Records trace lines (formatting them costs more than the run).
  bool trace = true;
  /// Chance that an entity (not on a down node) takes 1-4 s to stop.
  double slow_stop = 0.03;
};

/// The sharding layer over one membership_world and its singleton layer.
class sharding_layer {
public:
  sharding_layer(membership_world& world, singleton_layer& singleton,
                 sharding_world_settings settings);

  /// The world's after_step hook (it calls the singleton layer's first).
  void after_step(size_t i);

  /// Crashes node `i`: its region, coordinator and entities die with it.
  void crash(size_t i);

  /// Whether node `i` may start again: nothing of it runs any more.
  bool stopped(size_t i) const;

  /// Starts the clients' traffic until global time `until`.
  void start_traffic(timespan until);

  /// The liveness phase: probes every entity (again every 3 s until it
  /// answered) from the live nodes' regions.
  void start_probes();

  /// Whether every entity handled a probe.
  bool all_reached() const {
    return probing_ && unreached_.empty();
  }

  /// Live coordinator engines on nodes that are not crashed.
  size_t coordinators() const;
  /// Whether a region runs a graceful shutdown (its node leaves).
  bool handing_off() const;

  /// One `host_shard` a coordinator sent (an allocation, also after a
  /// rebalance): global time, the coordinator's node, the region's node.
  struct allocation {
    timespan at{0};
    size_t coordinator = 0;
    unique_address region;
    sharding::shard_id shard;
  };

  /// Every allocation so far, in order.
  const std::vector<allocation>& allocations() const noexcept {
    return allocations_;
  }

  /// The regions that are a home of each shard now (the checkers' record).
  const std::map<sharding::shard_id, std::set<unique_address>>&
  homes() const noexcept {
    return homes_;
  }

  /// Messages handled by entities, and incarnations spawned.
  uint64_t acks() const noexcept {
    return acked_.size();
  }
  uint64_t spawns() const noexcept {
    return incarnations_;
  }

  /// Describes every node's region and coordinator (failure reports).
  std::string describe() const;

private:
  struct forwarded {
    sharding::shard_id shard;
    std::string entity;
    sharding_payload msg;
  };
  struct watch_request {
    uint64_t coordinator = 0;
  };
  struct watch_fired {
    uint64_t coordinator = 0;
    sharding::region_gone why = sharding::region_gone::not_published;
  };
  using wire = std::variant<sharding::to_coordinator, sharding::to_region,
                            forwarded, watch_request, watch_fired>;

  struct entity_rec {
    std::string entity;
    sharding::shard_id shard;
    size_t node = 0;
    unique_address region;
  };

  struct node_state {
    unique_address self;
    std::unique_ptr<sim_region> region;
    bool region_done = false; // this incarnation's region finished
    bool region_down = false; // down or removed in its own view
    std::optional<timespan> region_tick;
    std::vector<std::pair<unique_address, uint64_t>> watchers;
    std::optional<uint64_t> instance; // the singleton instance running here
    std::unique_ptr<sharding::coordinator_engine> coordinator;
    uint64_t coordinator_id = 0;
    std::optional<timespan> coordinator_tick;
    // The removals this incarnation saw (the shell's region keeps this
    // record; a coordinator starting here gets its recent ones).
    sharding::removal_tracker removals;
  };

  void feed(size_t i);
  void drain(size_t i);
  void schedule_region_tick(size_t i);
  void instance_changed(size_t i, uint64_t incarnation, bool live);
  void start_coordinator(size_t i, uint64_t incarnation);
  void apply(size_t i, sharding::coordinator_effects fx);
  void schedule_coordinator_tick(size_t i);
  void send(const unique_address& from, const unique_address& to, wire m);
  /// Sends `m` as a watch request or a watch's answer: repeated every 1 s
  /// while the link is blocked, while `still` holds.
  void send_control(const unique_address& from, const unique_address& to,
                    wire m, std::function<bool()> still);
  void deliver(const unique_address& from, const unique_address& to, wire&& m);
  void region_deliver(size_t i, const std::string& entity,
                      const sharding::shard_id& shard, sharding_payload msg);
  uint64_t spawn(size_t i, const std::string& entity,
                 const sharding::shard_id& shard);
  void terminate(uint64_t inc, const std::string& why);
  void handled(uint64_t inc, const sharding_payload& msg);
  void home_begins(size_t i, const sharding::shard_id& shard);
  void home_ends(size_t i, const sharding::shard_id& shard,
                 const std::string& why);
  void region_gone_down(size_t i);
  /// Whether node i's view has `other` (node j) removed or down while
  /// `other`'s region has not learned it is down yet.
  bool doomed_late(size_t i, size_t j, const unique_address& other) const;
  void send_one(size_t client, bool probe, const std::string& entity);
  sharding::shard_id shard_of(const std::string& entity) const;
  bool region_running(size_t i) const;
  void check_coordinators();
  template <class... Args>
  void note(fmt::format_string<Args...> f, Args&&... args) {
    if (settings_.trace)
      w_.note(fmt::format(f, std::forward<Args>(args)...));
  }

  membership_world& w_;
  singleton_layer& singleton_;
  sharding_world_settings settings_;
  std::shared_ptr<const sharding::allocation_strategy> strategy_;
  network<wire> net_;
  std::vector<node_state> nodes_;
  uint64_t incarnations_ = 0;
  std::vector<allocation> allocations_;
  uint64_t message_ids_ = 0;
  uint64_t coordinator_ids_ = 0;
  // the world's records (the oracles' ground truth)
  std::map<uint64_t, entity_rec> live_;
  std::map<std::string, std::set<uint64_t>> live_by_entity_;
  std::map<std::pair<unique_address, sharding::shard_id>, size_t>
    live_by_shard_;
  std::map<sharding::shard_id, std::set<unique_address>> homes_;
  std::map<uint64_t, std::pair<std::string, uint64_t>> acked_;
  bool probing_ = false;
  std::set<std::string> unreached_;
};

/// The random sharding scenario of one seed: 4-6 nodes join (and 1-2 more
/// join during the faults), clients send to 200-400 entities over 20-50
/// shards; then 30 s of faults (crashes with restarts, joins, graceful
/// leaves, clean partitions and heals at any time, also during a
/// partition; with a lease also one-way blocks, clogged links, lease
/// faults and nodes cut off from the lease backend; the singleton layer's
/// instances stopping by themselves), with keep_majority, stable_after
/// 3-5 s, down_all_when_unstable on (Akka's max(3/4 stable_after, 4 s))
/// and down_removal_margin = stable_after + down_all_when_unstable (ADR
/// 0007; the coordinator singleton's margin 0 with the lease, else the
/// same); leaves during a partition and partitions during a hand-off for
/// a leave are left out (see the scenario); then the faults stop, the
/// network heals, stopped nodes start again, and within `liveness_bound`
/// every entity handles a probe.
/// With `rolling` (scenario S4) the faults are only restarts: 5 nodes,
/// restarted one at a time or two at a time (a graceful leave or a crash,
/// then a new incarnation), while the messages flow. With `upgrade` as
/// well, every restarted incarnation runs a higher `cluster.app_version`
/// than every node before it, so each one becomes the singleton target
/// (the coordinator's host) as soon as it is up: a hand-over per restart,
/// under crashes and leaves.
struct sharding_scenario {
  bool use_lease = false;
  sharding::coordinator_bug bug = sharding::coordinator_bug::none;
  sharding::region_bug region_bug = sharding::region_bug::none;
  transport_bug transport = transport_bug::none;
  bool rolling = false;
  /// With `rolling`: each restart runs a newer app_version.
  bool upgrade = false;
  /// Chance that an entity takes 1-4 s to stop (beyond the scenario's
  /// hand_off_timeout of 2 s: rebalances time out and repeat, late and
  /// duplicate shard_stopped, scenarios H1 and H2).
  double slow_stop = 0.03;
  timespan liveness_bound = std::chrono::seconds{90};
  /// Records the trace (a sweep runs without it and replays a failing
  /// seed with it: a seed replays exactly).
  bool trace = true;
};

/// The scenarios' resolver: keep_majority with `stable_after` and
/// down_all_when_unstable on, as Akka's "on": max(3/4 stable_after, 4 s)
/// (ADR 0007).
downing_world_settings keep_majority_downing(timespan stable_after);

/// The resolver's decision bound, stable_after + down_all_when_unstable:
/// the removal margin's auto (ADR 0007).
timespan decision_bound(const downing_world_settings& ds);

/// The singleton layer's settings for the shard coordinator, as the shell's
/// coordinator singleton (region.cpp): with the lease the lease keeps two
/// coordinators apart (margin 0), without one the removal margin; short
/// lease retries and restart backoffs (2 s, 1-5 s).
singleton_world_settings coordinator_singleton(bool use_lease, timespan margin);

/// The scenarios' sharding timings: retries every 1 s, rebalance every
/// 3 s, hand-off timeout 2 s, at most 5 shards per rebalance round; the
/// removal margin and the coordinator lease as given.
void scenario_timings(sharding::sharding_settings& s, bool use_lease,
                      timespan margin);

/// The run's result, with the sharding layer's counts.
struct sharding_result : scenario_result {
  uint64_t acks = 0;
  uint64_t spawns = 0;
};

sharding_result run_sharding_scenario(uint64_t seed,
                                      const sharding_scenario& options);

/// The planted bug named `name`: "none", a coordinator_bug
/// ("skip_recovery", "no_removal_margin", "trust_any_shard_stopped",
/// "ignore_lease"), a region_bug ("early_shard_stopped") or the transport
/// bug "duplicate_forwards"; false when it names none.
bool sharding_bug_named(const std::string& name, sharding_scenario& options);

} // namespace troupe::sim
