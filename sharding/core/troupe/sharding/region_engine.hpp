#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/assert.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/unique_address.hpp"
#include "troupe/sharding/coordinator_protocol.hpp"
#include "troupe/sharding/log_line.hpp"
#include "troupe/sharding/sharding_settings.hpp"

/// @file
/// One shard region as a pure state machine: Akka's ShardRegion and Shard
/// (akka.cluster.sharding, Akka 2.6) without the actors. The region of one
/// entity type on one node routes messages to its own entities or to the
/// region that hosts their shard, buffers while a shard's home is unknown
/// or it is being handed off, hosts the shards the coordinator allocates to
/// it, hands them off, passivates idle entities and shuts down gracefully.
///
/// Inputs carry `now` (the owner's monotonic clock); outputs are commands
/// (`region_engine::command`) that the owner executes in order after every
/// call (`drain`). No clock reads, no I/O, no logging here: log lines are
/// commands too. Spawning goes through the injected `spawn_fn`, so the
/// engine holds the new entity's reference at once.
///
/// Differences from Akka, and why:
/// - The shard level (Akka's Shard actor) is folded into the region: one
///   actor per region instead of one per shard, and a small per-entity
///   record (see `entity_record`) instead of Shard's maps.
/// - `get_shard_home` and `graceful_shutdown_request` are sent only after
///   the coordinator acknowledged the registration (Akka's region knows no
///   coordinator before RegisterAck); `register_ack` asks at once for every
///   shard with waiting messages (Akka's requestShardBufferHomes).
/// - `host_shard` (or a `shard_home` naming this region) during a graceful
///   shutdown is ignored: the coordinator hands the shard off like the
///   others and this region answers `shard_stopped` at once. A region that
///   hosts nothing and buffers nothing is done at once (Akka's
///   tryCompleteGracefulShutdown).
/// - A graceful shutdown waits, as Akka's, until nothing is buffered any
///   more (messages that arrived during a hand-off go to the new home), but
///   at most hand_off_timeout after the last shard was handed off (or after
///   the start); then what is left is dropped (counted, WARNING).
/// - A `shard_home` naming another region for a shard that runs here (not
///   in hand-off) is an ERROR line and ignored (Akka throws).
/// - `host_shard` for a shard whose entities are being stopped (after
///   `hand_off`) is ignored (DEBUG): the coordinator allocates it again
///   after the `shard_stopped` that follows.
///
/// Not thread-safe; owned by one actor (or one simulated node). `spawn_fn`
/// and the visitor of `drain` must not call back into the engine.
namespace troupe::sharding {

using runtime::timespan;
using runtime::timestamp;

/// An entity's id (the message extractor's string).
using entity_id = std::string;

/// A region's counters, for metrics and tests (since construction, except
/// `buffered`, which is the number buffered now).
struct region_counters {
  /// Messages handed to a local entity (a returned reference or a
  /// `to_entity` command).
  uint64_t delivered = 0;
  /// Messages forwarded to the region that hosts their shard.
  uint64_t forwarded = 0;
  /// Messages buffered now (all shards and entities together).
  size_t buffered = 0;
  /// Messages dropped (buffer full, failed spawn, region down or stopped).
  uint64_t dropped = 0;
  /// Entities spawned, and spawns that returned an invalid reference.
  uint64_t spawned = 0;
  uint64_t spawn_failures = 0;
  /// Entities passivated (idle timeout, active-entity limit, or asked).
  uint64_t passivated = 0;
  /// Entities killed after entity_stop_timeout.
  uint64_t killed = 0;
  /// Coordinator messages from a node that is not the coordinator's (or
  /// after the region went down or stopped).
  uint64_t ignored_coordinator_messages = 0;
  /// Registrations the coordinator refused.
  uint64_t registrations_refused = 0;
  friend bool operator==(const region_counters&, const region_counters&)
    = default;
};

/// The state of a local entity.
enum class entity_state : uint8_t {
  /// Running; receives messages.
  active = 0,
  /// Asked to stop (passivation, hand-off, shutdown); its messages wait in
  /// its buffer for the next incarnation.
  stopping,
  /// Killed after entity_stop_timeout; waiting for its termination.
  killed,
};

/// The region's relation to a shard.
enum class shard_state : uint8_t {
  /// Not hosted here (its home is remote or unknown).
  none = 0,
  /// Hosted here: messages go to local entities.
  active,
  /// Hosted here after `begin_hand_off`: entities run, new messages are
  /// buffered at the region.
  handing_off,
  /// Hosted here after `hand_off`: entities are stopping; `shard_stopped`
  /// follows when all have terminated.
  stopping,
};

/// Bugs the simulator's tests plant to show that its checkers catch them
/// (test/sim). `none` everywhere else; no configuration key reaches this.
enum class region_bug : uint8_t {
  none = 0,
  /// Answer `hand_off` with `shard_stopped` at once, before the shard's
  /// entities terminated.
  early_shard_stopped,
};

/// The shard region of one entity type on one node.
///
/// `Payload` is the owner's message type (moved, never copied); `EntityRef`
/// the owner's reference to an entity (cheap to copy, e.g. `caf::actor`;
/// a default-constructed or false-converting value means "spawn failed").
///
/// Inputs (time never goes backwards between calls):
/// - `deliver`: a message for `entity` of `shard` (the hot path);
///   `running_entity` is its fast path alone.
/// - `on_membership`: this node's membership view changed.
/// - `on_coordinator_message`: a message from the coordinator's node
///   `from` (authenticated by the transport).
/// - `on_entity_terminated`: a local entity terminated (any reason).
/// - `passivate`: the entity asked to be passivated (Akka's Passivate).
/// - `tick`: whenever `next_tick()` is due.
/// - `shutdown`: graceful stop (coordinated shutdown).
///
/// Rules:
/// - The coordinator runs on the singleton target with settings.role (the
///   oldest up or leaving member among those of the highest app_version,
///   `membership_state::singleton_target`). Coordinator messages from
///   any other node are ignored (counted, DEBUG): that fences off late
///   messages of a previous coordinator. A new coordinator node (or a
///   `coordinator_hello`) gets `register_region` with the hosted shards,
///   repeated every retry_interval until `register_ack`; a refusal is an
///   ERROR line and ends the attempts to that coordinator (until its
///   `coordinator_hello`, or another coordinator node).
/// - Routing a message for shard S: S hosted here and active -> its entity
///   (running: straight through, spawned when absent; stopping: its
///   buffer, for the next incarnation). S's home known, remote and
///   reachable -> `forward`. S's home known but unreachable (some observer
///   that is not down sees it so) -> buffered without asking: forwarded
///   in order once the home is reachable again, or, once it was removed,
///   sent where the coordinator re-homes S (Akka forwards to an
///   unreachable region and loses what a crashed node never gets; here
///   the loss is bounded by buffer_size and counted). Otherwise buffered
///   per shard, with `get_shard_home` (once, then every retry_interval
///   while messages wait). All buffered messages together are at most
///   buffer_size; a message that does not fit is dropped (counted;
///   WARNING the first time and every 1000th).
/// - Homes on members that left the view are forgotten (their buffered
///   messages then ask for the new home).
/// - `begin_hand_off`: forget S's home (hosted here: entities keep running,
///   new messages are buffered), answer `begin_hand_off_ack`. `hand_off`:
///   stop S's entities (stop message; kill after entity_stop_timeout,
///   ERROR), then `shard_stopped`; a region that does not host S answers at
///   once (scenario H1 (b)). Duplicates are idempotent.
/// - Passivation: an entity idle for passivation_idle_timeout (0: off), or
///   the least recently used one when a spawn would exceed
///   passivation_active_entity_limit (0: none), or one that asks, gets its
///   stop message; its messages wait and go to the next incarnation, which
///   is spawned when it terminated. An entity that stops on its own is
///   forgotten.
/// - Graceful shutdown (self leaving or exiting, or `shutdown()`):
///   hold_exit(true), `graceful_shutdown_request` every retry_interval
///   until acknowledged, hand off as asked; when nothing is hosted or
///   buffered: hold_exit(false), `stopped`. When no coordinator answered
///   within hand_off_timeout, or no member is left that could coordinate
///   (none up or leaving: the whole cluster stopping at once), every
///   entity is stopped locally (WARNING).
/// - Self down or removed: every entity is stopped at once, buffers are
///   dropped, then `stopped`; the region never hosts again.
///
/// Cost: `deliver` to a running entity is one hash lookup and an O(1)
/// move to the most recently used end of an intrusive list.
template <class Payload, class EntityRef>
class region_engine {
public:
  using spawn_fn = std::function<EntityRef(const entity_id&, const shard_id&)>;

  /// Send `msg` to the coordinator on `coordinator`.
  struct send_to_coordinator {
    unique_address coordinator;
    to_coordinator msg;
    friend bool operator==(const send_to_coordinator&,
                           const send_to_coordinator&)
      = default;
  };

  /// Send `msg` to the local entity `ref`.
  struct to_entity {
    EntityRef ref;
    Payload msg;
    friend bool operator==(const to_entity&, const to_entity&) = default;
  };

  /// Send `msg` for `entity` of `shard` to the region on node `region`.
  struct forward {
    unique_address region;
    shard_id shard;
    entity_id entity;
    Payload msg;
    friend bool operator==(const forward&, const forward&) = default;
  };

  /// Send the configured stop message to the entity `ref`; report its
  /// termination with `on_entity_terminated`.
  struct stop_entity {
    entity_id entity;
    EntityRef ref;
    friend bool operator==(const stop_entity&, const stop_entity&) = default;
  };

  /// Kill the entity `ref` (`caf::exit_reason::kill`).
  struct kill_entity {
    entity_id entity;
    EntityRef ref;
    friend bool operator==(const kill_entity&, const kill_entity&) = default;
  };

  /// Hold (true) or let go (false) this node's exit from the cluster.
  struct hold_exit {
    bool hold = false;
    friend bool operator==(const hold_exit&, const hold_exit&) = default;
  };

  /// The region is done (graceful shutdown complete, or down and every
  /// entity terminated): the owner may terminate it.
  struct stopped {
    friend bool operator==(const stopped&, const stopped&) = default;
  };

  /// One command; the owner executes them in order.
  using command
    = std::variant<send_to_coordinator, to_entity, forward, stop_entity,
                   kill_entity, hold_exit, stopped, log_line>;

  region_engine(unique_address self, sharding_settings settings,
                bool proxy_only, spawn_fn spawn, region_bug bug = {})
    : self_(std::move(self)), settings_(std::move(settings)),
      proxy_only_(proxy_only), spawn_(std::move(spawn)), bug_(bug) {
    // nop
  }

  /// Bytes of one entity's record (without the map node around it and the
  /// id's characters), for the memory-per-entity benchmark.
  static constexpr size_t entity_record_size() noexcept {
    return sizeof(entity_record);
  }

  region_engine(const region_engine&) = delete;
  region_engine& operator=(const region_engine&) = delete;

  /// Whether a message's time matters to a running entity: idle
  /// passivation or the active-entity limit is on. If not, the fast paths
  /// ignore `now` (a caller may skip reading the clock for them).
  bool tracks_use() const noexcept {
    return settings_.passivation_idle_timeout > timespan::zero()
           || settings_.passivation_active_entity_limit > 0;
  }

  /// Routes `msg` for `entity` of `shard`. Returns the entity's reference
  /// when `msg` can go straight to a running local entity: the caller
  /// sends `msg` itself (untouched here), after executing every earlier
  /// command. Otherwise returns null and has taken `msg`: moved into a
  /// buffer or a command (forwarded, delivered after a spawn), or dropped
  /// (counted; then `msg` may be left as it was). The reference stays
  /// valid until the next call of the engine.
  const EntityRef* deliver(const entity_id& entity, const shard_id& shard,
                           Payload& msg, timestamp now) {
    if (auto* ref = running_entity(entity, now))
      return ref;
    if (stopped_ || down_) {
      drop(entity, shard, "the region has stopped");
      return nullptr;
    }
    route(shard_of(shard), entity, std::move(msg), now);
    prune();
    return nullptr;
  }

  /// `deliver` after `running_entity(entity, now)` came back null with no
  /// call of the engine in between: the rest of the routing, without
  /// looking `entity` up again (a caller that tried the fast path first).
  void deliver_not_running(const entity_id& entity, const shard_id& shard,
                           Payload&& msg, timestamp now) {
    if (stopped_ || down_) {
      drop(entity, shard, "the region has stopped");
      return;
    }
    route(shard_of(shard), entity, std::move(msg), now);
    prune();
  }

  /// `deliver`'s fast path alone, for a caller that has the message in
  /// another form than Payload: the reference of `entity` when it runs
  /// here and its shard is active (counted as delivered, its idle time
  /// restarted; the caller sends the message itself, after executing every
  /// earlier command), else null and nothing changed (then `deliver` it).
  /// Needs no shard id. The reference stays valid until the next call of
  /// the engine.
  const EntityRef* running_entity(const entity_id& entity, timestamp now) {
    if (auto i = entities_.find(entity); i != entities_.end()) {
      auto& r = i->second;
      if (r.state == entity_state::active
          && r.shard->second.state == shard_state::active) {
        touch(&*i, now);
        ++counters_.delivered;
        return &r.ref;
      }
    }
    return nullptr;
  }

  /// `deliver`'s forwarding path alone, for a caller that has the message
  /// in another form than Payload: the home of `shard` when a message for
  /// it goes straight to another region (the region runs, the shard is not
  /// active here, its home is known and reachable; exactly when `deliver`
  /// would queue a `forward`), counted as forwarded; the caller sends the
  /// message itself, after executing every earlier command. Else null and
  /// nothing changed (then `deliver` it). The address stays valid until
  /// the next call of the engine.
  const unique_address* forward_home(const shard_id& shard) {
    if (stopped_ || down_)
      return nullptr;
    auto i = shards_.find(shard);
    if (i == shards_.end())
      return nullptr;
    const auto* home = forward_target(i->second);
    if (home != nullptr)
      ++counters_.forwarded;
    return home;
  }

  /// What `first_message` did.
  struct first_delivery {
    /// The new entity's reference (valid until the next call of the
    /// engine): the caller sends the message itself.
    const EntityRef* ref = nullptr;
    /// False: nothing changed, `deliver` the message. True with a null
    /// `ref`: the spawn failed and the message counts as dropped (logged).
    bool taken = false;
  };

  /// `deliver`'s path for the first message of an entity, for a caller
  /// that has the message in another form than Payload: when `shard` is
  /// active here and `entity` unknown, spawns it (counted as spawned and
  /// delivered, exactly as `deliver` would) and the caller sends the
  /// message itself, after executing every earlier command; else nothing
  /// changed.
  first_delivery first_message(const entity_id& entity, const shard_id& shard,
                               timestamp now) {
    if (stopped_ || down_)
      return {};
    auto s = shards_.find(shard);
    if (s == shards_.end() || s->second.state != shard_state::active)
      return {};
    auto [i, added] = entities_.try_emplace(entity);
    if (!added)
      return {};
    if (!spawn_into(&*i, &*s, 1, now)) {
      entities_.erase(i);
      return {nullptr, true};
    }
    ++counters_.delivered;
    return {&i->second.ref, true};
  }

  /// This node's membership view changed.
  void on_membership(const cluster::membership_state& state, timestamp now) {
    if (stopped_)
      return;
    const cluster::member* me = state.self_member();
    if (me != nullptr)
      seen_self_ = true;
    if ((me == nullptr && seen_self_)
        || (me != nullptr && me->status == cluster::member_status::down)) {
      become_down(me == nullptr ? "removed" : "down", now);
      return;
    }
    if (down_)
      return;
    update_unreachable(state);
    for (auto& entry : shards_) {
      auto& [id, s] = entry;
      if (!s.home)
        continue;
      if (state.latest_gossip().find(*s.home) == nullptr) {
        log(log_level::info,
            fmt::format("forgot the home of shard {}: {} left the cluster", id,
                        runtime::to_string(*s.home)));
        s.home.reset();
        maybe_ask(&entry, now);
      } else if (!s.buffer.empty() && s.state == shard_state::none
                 && !unreachable_.contains(*s.home)) {
        log(log_level::info,
            fmt::format("forwarding {} message(s) for shard {} to {}: "
                        "reachable again",
                        s.buffer.size(), id, runtime::to_string(*s.home)));
        forward_buffer(&entry);
      }
    }
    std::optional<unique_address> coordinator;
    // The coordinator is a singleton: it runs on the singleton target.
    if (auto m = state.singleton_target(role()))
      coordinator = m->address;
    if (coordinator != coordinator_) {
      coordinator_ = std::move(coordinator);
      change_coordinator(now);
    }
    if (me != nullptr
        && (me->status == cluster::member_status::leaving
            || me->status == cluster::member_status::exiting))
      begin_shutdown("this node is leaving the cluster", now);
    maybe_finish(now);
    prune();
  }

  /// A message from the coordinator on node `from`.
  void on_coordinator_message(const unique_address& from, const to_region& msg,
                              timestamp now) {
    if (stopped_ || down_ || !coordinator_ || from != *coordinator_) {
      ++counters_.ignored_coordinator_messages;
      log(log_level::debug,
          fmt::format("ignored {} from {}: the coordinator is {}",
                      message_name(msg), runtime::to_string(from),
                      stopped_ || down_ ? std::string{"gone (region stopped)"}
                      : coordinator_    ? runtime::to_string(*coordinator_)
                                        : std::string{"unknown"}));
      return;
    }
    std::visit([&](const auto& x) { handle(x, now); }, msg);
    maybe_finish(now);
    prune();
  }

  /// A local entity terminated (stopped as asked, killed, or on its own).
  void on_entity_terminated(const entity_id& entity, timestamp now) {
    auto i = entities_.find(entity);
    if (i == entities_.end())
      return;
    auto* e = &*i;
    auto* s = e->second.shard;
    if (e->second.state == entity_state::active) {
      lru_unlink(e);
      log(log_level::debug,
          fmt::format("entity {} of shard {} terminated", entity, s->first));
    }
    shard_unlink(e);
    entities_.erase(i);
    if (auto b = entity_buffers_.find(entity); b != entity_buffers_.end()) {
      auto msgs = std::move(b->second);
      entity_buffers_.erase(b);
      counters_.buffered -= msgs.size();
      release(s, entity, msgs, now);
    }
    if (s->second.state == shard_state::stopping && s->second.entities == 0)
      finish_stop(s, now);
    maybe_finish(now);
    prune();
  }

  /// The entity asked to be passivated (Akka's Passivate).
  void passivate(const entity_id& entity, timestamp now) {
    if (auto i = entities_.find(entity); i != entities_.end())
      passivate_entry(&*i, "it asked", now);
    prune();
  }

  /// Time-driven work: registration and get_shard_home retries, idle
  /// passivation, kills, the graceful shutdown's retries and deadline.
  void tick(timestamp now) {
    if (stopped_)
      return;
    if (register_at_ && *register_at_ <= now)
      register_region_now(now);
    while (!asks_.empty() && asks_.front().first <= now) {
      auto [at, s] = asks_.front();
      asks_.pop_front();
      if (s->second.ask_at == at) {
        s->second.ask_at.reset();
        maybe_ask(s, now);
      }
    }
    if (settings_.passivation_idle_timeout > timespan::zero())
      while (lru_head_ != nullptr
             && lru_head_->second.time + settings_.passivation_idle_timeout
                  <= now)
        passivate_entry(lru_head_, "idle", now);
    while (!kills_.empty() && kills_.front().first <= now) {
      auto [at, entity] = std::move(kills_.front());
      kills_.pop_front();
      kill_if_due(entity, at);
    }
    if (shutdown_request_at_ && *shutdown_request_at_ <= now)
      request_shutdown(now);
    if (shutdown_deadline_ && *shutdown_deadline_ <= now)
      on_shutdown_deadline(now);
    maybe_finish(now);
    prune();
  }

  /// Graceful stop: hand every shard off (see the class comment).
  void shutdown(timestamp now) {
    if (!stopped_ && !down_)
      begin_shutdown("shutdown requested", now);
    maybe_finish(now);
    prune();
  }

  /// When `tick` must be called next; none when only an input can change
  /// anything.
  std::optional<timestamp> next_tick() const {
    if (stopped_)
      return std::nullopt;
    std::optional<timestamp> result;
    auto consider = [&](std::optional<timestamp> t) {
      if (t && (!result || *t < *result))
        result = t;
    };
    consider(register_at_);
    if (!asks_.empty())
      consider(asks_.front().first);
    if (settings_.passivation_idle_timeout > timespan::zero()
        && lru_head_ != nullptr)
      consider(lru_head_->second.time + settings_.passivation_idle_timeout);
    if (!kills_.empty())
      consider(kills_.front().first);
    consider(shutdown_request_at_);
    consider(shutdown_deadline_);
    return result;
  }

  /// Whether commands wait for `drain`.
  bool has_commands() const noexcept {
    return !commands_.empty();
  }

  /// Calls `f(command&)` for every command in order (`f` may move from
  /// it), then clears them (keeping the capacity).
  template <class F>
  void drain(F&& f) {
    for (auto& x : commands_)
      f(x);
    commands_.clear();
  }

  // -- queries ---------------------------------------------------------------

  /// The shards hosted here (active, handing off or stopping) with their
  /// number of entities.
  std::map<shard_id, size_t> shards() const {
    std::map<shard_id, size_t> result;
    for (const auto& [id, s] : shards_)
      if (s.state != shard_state::none)
        result.emplace(id, s.entities);
    return result;
  }

  /// The local entities of `shard` (any state), sorted.
  std::vector<entity_id> entities(const shard_id& shard) const {
    std::vector<entity_id> result;
    if (auto i = shards_.find(shard); i != shards_.end())
      for (auto* e = i->second.first; e != nullptr; e = e->second.shard_next)
        result.push_back(e->first);
    std::sort(result.begin(), result.end());
    return result;
  }

  /// The state of the local entity `entity`; none when there is none.
  std::optional<entity_state> state_of(const entity_id& entity) const {
    if (auto i = entities_.find(entity); i != entities_.end())
      return i->second.state;
    return std::nullopt;
  }

  /// This region's relation to `shard`.
  shard_state state_of_shard(const shard_id& shard) const {
    auto i = shards_.find(shard);
    return i == shards_.end() ? shard_state::none : i->second.state;
  }

  /// The remote home of `shard` this region knows, if any.
  std::optional<unique_address> home_of(const shard_id& shard) const {
    auto i = shards_.find(shard);
    return i == shards_.end() ? std::nullopt : i->second.home;
  }

  /// Messages buffered now, all shards and entities together.
  size_t buffered() const noexcept {
    return counters_.buffered;
  }

  /// Messages buffered for `shard` (at the region and in its entities'
  /// buffers).
  size_t buffered(const shard_id& shard) const {
    auto i = shards_.find(shard);
    if (i == shards_.end())
      return 0;
    size_t n = i->second.buffer.size();
    for (auto* e = i->second.first; e != nullptr; e = e->second.shard_next)
      if (auto b = entity_buffers_.find(e->first); b != entity_buffers_.end())
        n += b->second.size();
    return n;
  }

  /// The references of every local entity (any state): what the owner
  /// kills when it goes away without a graceful stop.
  std::vector<EntityRef> entity_refs() const {
    std::vector<EntityRef> out;
    out.reserve(entities_.size());
    for (auto& [id, e] : entities_)
      out.push_back(e.ref);
    return out;
  }

  /// All local entities, and the active ones.
  size_t entity_count() const noexcept {
    return entities_.size();
  }
  size_t active_entities() const noexcept {
    return active_;
  }

  const region_counters& counters() const noexcept {
    return counters_;
  }
  /// The coordinator's node (the singleton target with the role), if any.
  const std::optional<unique_address>& coordinator() const noexcept {
    return coordinator_;
  }
  /// Whether the coordinator acknowledged the registration.
  bool registered() const noexcept {
    return registered_;
  }
  bool proxy_only() const noexcept {
    return proxy_only_;
  }
  bool shutting_down() const noexcept {
    return shutting_down_;
  }
  /// Down or removed: stopping every entity, never hosting again.
  bool down() const noexcept {
    return down_;
  }
  bool is_stopped() const noexcept {
    return stopped_;
  }
  const unique_address& self() const noexcept {
    return self_;
  }

private:
  struct entity_record;
  struct shard_record;
  using entity_entry = std::pair<const entity_id, entity_record>;
  using shard_entry = std::pair<const shard_id, shard_record>;

  // One local entity. Kept small: a region may hold a million idle
  // entities. With an 8-byte EntityRef (caf::actor) this is 64 bytes; with
  // the map node (next pointer, the id's std::string, cached hash) and its
  // bucket about 120 bytes per entity, plus the id's characters beyond 15.
  // Buffers of stopping entities live in `entity_buffers_`, and their kill
  // deadlines in `kills_`, not here.
  struct entity_record {
    EntityRef ref{};
    // LRU list of active entities (head: least recently used).
    entity_entry* lru_prev = nullptr;
    entity_entry* lru_next = nullptr;
    // The shard's list of entities.
    entity_entry* shard_prev = nullptr;
    entity_entry* shard_next = nullptr;
    shard_entry* shard = nullptr;
    // active: the last message; stopping: the kill deadline.
    timestamp time{};
    entity_state state = entity_state::active;
  };

  struct pending {
    entity_id entity;
    Payload msg;
  };

  // One shard this region has seen (records are kept: at most
  // number_of_shards of them).
  struct shard_record {
    shard_state state = shard_state::none;
    // Its remote home, if known.
    std::optional<unique_address> home;
    // Its entities, in spawn order.
    entity_entry* first = nullptr;
    entity_entry* last = nullptr;
    size_t entities = 0;
    // Messages waiting for a home (or for the end of a hand-off).
    std::deque<pending> buffer;
    // When get_shard_home is asked again (none: not asking).
    std::optional<timestamp> ask_at;
  };

  // -- routing ---------------------------------------------------------------

  shard_entry* shard_of(const shard_id& shard) {
    return &*shards_.try_emplace(shard).first;
  }

  // Where messages for `sr` are forwarded: its home when the shard is not
  // active here and the home is known and reachable; else null.
  const unique_address* forward_target(const shard_record& sr) const {
    if (sr.state == shard_state::active || !sr.home
        || (!unreachable_.empty() && unreachable_.contains(*sr.home)))
      return nullptr;
    return &*sr.home;
  }

  void route(shard_entry* s, const entity_id& entity, Payload&& msg,
             timestamp now) {
    auto& sr = s->second;
    if (sr.state == shard_state::active) {
      deliver_local(s, entity, std::move(msg), now);
    } else if (const auto* home = forward_target(sr)) {
      commands_.emplace_back(forward{*home, s->first, entity, std::move(msg)});
      ++counters_.forwarded;
    } else if (sr.home) {
      // Unreachable home: wait for it (or for the shard's new home).
      if (admit(entity, s->first)) {
        sr.buffer.push_back(pending{entity, std::move(msg)});
        ++counters_.buffered;
      }
    } else if (admit(entity, s->first)) {
      sr.buffer.push_back(pending{entity, std::move(msg)});
      ++counters_.buffered;
      maybe_ask(s, now);
    }
  }

  void deliver_local(shard_entry* s, const entity_id& entity, Payload&& msg,
                     timestamp now) {
    // One hash-table operation for a new entity and for a known one.
    auto [i, added] = entities_.try_emplace(entity);
    entity_entry* e = &*i;
    if (added) {
      if (!spawn_into(e, s, 1, now)) {
        entities_.erase(i);
        return;
      }
    } else if (i->second.state == entity_state::active) {
      touch(e, now);
    } else {
      if (admit(entity, s->first)) {
        entity_buffers_[entity].push_back(std::move(msg));
        ++counters_.buffered;
      }
      return;
    }
    commands_.emplace_back(to_entity{e->second.ref, std::move(msg)});
    ++counters_.delivered;
  }

  // Whether one more message fits the region's buffer; drops otherwise.
  bool admit(const entity_id& entity, const shard_id& shard) {
    if (counters_.buffered < settings_.buffer_size)
      return true;
    drop(entity, shard,
         fmt::format("the buffer is full (buffer_size {})",
                     settings_.buffer_size));
    return false;
  }

  void drop(const entity_id& entity, const shard_id& shard,
            std::string_view why) {
    ++counters_.dropped;
    if (counters_.dropped == 1 || counters_.dropped % 1000 == 0)
      log(log_level::warning,
          fmt::format("dropped a message for entity {} of shard {}: {} ({} "
                      "dropped so far)",
                      entity, shard, why, counters_.dropped));
  }

  // Asks for `s`'s home unless already asking, nothing waits, or the
  // coordinator has not acknowledged the registration yet.
  void maybe_ask(shard_entry* s, timestamp now) {
    auto& sr = s->second;
    if (sr.ask_at || sr.buffer.empty() || !registered_ || !coordinator_)
      return;
    to_coordinator_now(get_shard_home{s->first});
    sr.ask_at = now + settings_.retry_interval;
    asks_.emplace_back(*sr.ask_at, s);
  }

  // The messages of a terminated entity's buffer: to its next incarnation
  // while its shard is active, else back to the shard's buffer (their
  // order before every message buffered there), or dropped when down.
  void release(shard_entry* s, const entity_id& entity,
               std::vector<Payload>& msgs, timestamp now) {
    if (down_ || stopped_) {
      for (size_t k = 0; k < msgs.size(); ++k)
        drop(entity, s->first, "the region has stopped");
      return;
    }
    if (s->second.state != shard_state::active) {
      std::vector<pending> front;
      for (auto& m : msgs)
        front.push_back(pending{entity, std::move(m)});
      s->second.buffer.insert(s->second.buffer.begin(),
                              std::make_move_iterator(front.begin()),
                              std::make_move_iterator(front.end()));
      counters_.buffered += front.size();
      maybe_ask(s, now);
      return;
    }
    auto* e = spawn(s, entity, msgs.size(), now);
    if (e == nullptr)
      return;
    for (auto& m : msgs)
      commands_.emplace_back(to_entity{e->second.ref, std::move(m)});
    counters_.delivered += msgs.size();
  }

  // Moves the buffers of `s`'s stopping entities to the front of the
  // shard's buffer (they arrived before anything buffered there).
  void move_entity_buffers(shard_entry* s, timestamp now) {
    std::vector<pending> front;
    for (auto* e = s->second.first; e != nullptr; e = e->second.shard_next) {
      auto b = entity_buffers_.find(e->first);
      if (b == entity_buffers_.end())
        continue;
      for (auto& m : b->second)
        front.push_back(pending{e->first, std::move(m)});
      entity_buffers_.erase(b);
    }
    if (front.empty())
      return;
    s->second.buffer.insert(s->second.buffer.begin(),
                            std::make_move_iterator(front.begin()),
                            std::make_move_iterator(front.end()));
    maybe_ask(s, now);
  }

  // -- entities --------------------------------------------------------------

  static bool valid(const EntityRef& ref) {
    if constexpr (std::is_constructible_v<bool, const EntityRef&>)
      return static_cast<bool>(ref);
    else
      return !(ref == EntityRef{});
  }

  // Spawns `entity` in `s` (passivating the least recently used entity
  // first when at the active-entity limit). On failure: drops `messages`,
  // ERROR line, null.
  entity_entry* spawn(shard_entry* s, const entity_id& entity, size_t messages,
                      timestamp now) {
    auto [i, added] = entities_.try_emplace(entity);
    TROUPE_ASSERT(added);
    if (!spawn_into(&*i, s, messages, now)) {
      entities_.erase(i);
      return nullptr;
    }
    return &*i;
  }

  // Spawns the entity of the fresh record `e` (just inserted, so that a
  // first message costs one hash-table insert and no extra lookup); false
  // when the spawn failed (the caller erases `e`).
  bool spawn_into(entity_entry* e, shard_entry* s, size_t messages,
                  timestamp now) {
    auto limit = settings_.passivation_active_entity_limit;
    while (limit > 0 && active_ >= limit && lru_head_ != nullptr)
      passivate_entry(lru_head_, "the active-entity limit", now);
    EntityRef ref = spawn_(e->first, s->first);
    if (!valid(ref)) {
      ++counters_.spawn_failures;
      counters_.dropped += messages;
      log(log_level::error,
          fmt::format("spawning entity {} of shard {} failed: dropped {} "
                      "message(s)",
                      e->first, s->first, messages));
      return false;
    }
    e->second.ref = std::move(ref);
    e->second.shard = s;
    e->second.time = now;
    lru_push_back(e);
    shard_link(s, e);
    ++counters_.spawned;
    return true;
  }

  void passivate_entry(entity_entry* e, std::string_view why, timestamp now) {
    if (e->second.state != entity_state::active)
      return;
    ++counters_.passivated;
    log(log_level::debug, fmt::format("passivating entity {} of shard {} ({})",
                                      e->first, e->second.shard->first, why));
    begin_stop(e, now);
  }

  // Sends the stop message; the kill follows after entity_stop_timeout.
  void begin_stop(entity_entry* e, timestamp now) {
    auto& r = e->second;
    if (r.state != entity_state::active)
      return;
    lru_unlink(e);
    r.state = entity_state::stopping;
    r.time = now + settings_.entity_stop_timeout;
    kills_.emplace_back(r.time, e->first);
    commands_.emplace_back(stop_entity{e->first, r.ref});
  }

  void kill_if_due(const entity_id& entity, timestamp at) {
    auto i = entities_.find(entity);
    if (i == entities_.end() || i->second.state != entity_state::stopping
        || i->second.time != at)
      return;
    auto& r = i->second;
    r.state = entity_state::killed;
    ++counters_.killed;
    log(log_level::error,
        fmt::format("entity {} of shard {} did not terminate within "
                    "entity_stop_timeout ({}ms) of its stop message: killing "
                    "it",
                    entity, r.shard->first,
                    millis(settings_.entity_stop_timeout)));
    commands_.emplace_back(kill_entity{entity, r.ref});
  }

  // Records a message for a running entity: its time (idle passivation)
  // and its place at the LRU tail (the active-entity limit); neither
  // matters when both are off.
  void touch(entity_entry* e, timestamp now) {
    if (!tracks_use())
      return;
    e->second.time = now;
    if (lru_tail_ != e) {
      lru_unlink(e);
      lru_push_back(e);
    }
  }

  void lru_push_back(entity_entry* e) {
    auto& r = e->second;
    r.lru_prev = lru_tail_;
    r.lru_next = nullptr;
    if (lru_tail_ != nullptr)
      lru_tail_->second.lru_next = e;
    else
      lru_head_ = e;
    lru_tail_ = e;
    ++active_;
  }

  void lru_unlink(entity_entry* e) {
    auto& r = e->second;
    (r.lru_prev != nullptr ? r.lru_prev->second.lru_next : lru_head_)
      = r.lru_next;
    (r.lru_next != nullptr ? r.lru_next->second.lru_prev : lru_tail_)
      = r.lru_prev;
    r.lru_prev = r.lru_next = nullptr;
    --active_;
  }

  // Appends `e` to its shard's list (spawn order).
  void shard_link(shard_entry* s, entity_entry* e) {
    auto& sr = s->second;
    e->second.shard_prev = sr.last;
    e->second.shard_next = nullptr;
    (sr.last != nullptr ? sr.last->second.shard_next : sr.first) = e;
    sr.last = e;
    ++sr.entities;
  }

  void shard_unlink(entity_entry* e) {
    auto& r = e->second;
    auto& sr = r.shard->second;
    (r.shard_prev != nullptr ? r.shard_prev->second.shard_next : sr.first)
      = r.shard_next;
    (r.shard_next != nullptr ? r.shard_next->second.shard_prev : sr.last)
      = r.shard_prev;
    --sr.entities;
  }

  // -- shards ----------------------------------------------------------------

  void set_state(shard_entry* s, shard_state x) {
    auto& sr = s->second;
    if (sr.state == shard_state::none && x != shard_state::none)
      ++hosted_;
    else if (sr.state != shard_state::none && x == shard_state::none)
      --hosted_;
    sr.state = x;
  }

  void host(const shard_id& shard, timestamp now) {
    if (proxy_only_) {
      log(log_level::error,
          fmt::format("the coordinator asked this proxy-only region to host "
                      "shard {}: ignored",
                      shard));
      return;
    }
    if (shutting_down_) {
      log(log_level::debug,
          fmt::format("not hosting shard {}: the region is shutting down",
                      shard));
      return;
    }
    auto* s = shard_of(shard);
    auto& sr = s->second;
    if (sr.state == shard_state::stopping) {
      log(log_level::debug,
          fmt::format("not hosting shard {} again before its entities "
                      "stopped",
                      shard));
      return;
    }
    if (sr.state != shard_state::active)
      log(log_level::debug, fmt::format("hosting shard {}", shard));
    set_state(s, shard_state::active);
    sr.home.reset();
    sr.ask_at.reset();
    to_coordinator_now(shard_started{shard});
    auto msgs = std::move(sr.buffer);
    sr.buffer.clear();
    counters_.buffered -= msgs.size();
    for (auto& p : msgs)
      deliver_local(s, p.entity, std::move(p.msg), now);
  }

  // Stops every entity of hosted `s` (hand-off, shutdown, down).
  void stop_shard(shard_entry* s, timestamp now) {
    auto& sr = s->second;
    if (sr.state == shard_state::none || sr.state == shard_state::stopping)
      return;
    move_entity_buffers(s, now);
    set_state(s, shard_state::stopping);
    for (auto* e = sr.first; e != nullptr; e = e->second.shard_next)
      begin_stop(e, now);
    if (sr.entities == 0)
      finish_stop(s, now);
  }

  // Every entity of `s` terminated: the shard is not hosted any more.
  void finish_stop(shard_entry* s, timestamp now) {
    set_state(s, shard_state::none);
    if (down_)
      return;
    log(log_level::debug, fmt::format("shard {} stopped", s->first));
    to_coordinator_now(shard_stopped{s->first});
    s->second.ask_at.reset();
    maybe_ask(s, now);
    if (shutting_down_)
      shutdown_deadline_ = now + settings_.hand_off_timeout;
  }

  // -- coordinator messages --------------------------------------------------

  void handle(const coordinator_hello&, timestamp now) {
    reset_registration();
    register_region_now(now);
  }

  void handle(const register_ack& x, timestamp now) {
    register_at_.reset();
    if (!x.accepted) {
      registered_ = false;
      refused_ = true;
      ++counters_.registrations_refused;
      log(log_level::error,
          fmt::format("the coordinator on {} refused the registration: {}",
                      runtime::to_string(*coordinator_), x.reason));
      return;
    }
    if (!registered_)
      log(log_level::info, fmt::format("registered with the coordinator on {}",
                                       runtime::to_string(*coordinator_)));
    registered_ = true;
    for (auto& entry : shards_) {
      entry.second.ask_at.reset();
      maybe_ask(&entry, now);
    }
    if (shutting_down_ && !shutdown_acked_)
      request_shutdown(now);
  }

  void handle(const shard_home& x, timestamp now) {
    if (x.region == self_) {
      host(x.shard, now);
      return;
    }
    auto* s = shard_of(x.shard);
    auto& sr = s->second;
    if (sr.state == shard_state::active) {
      log(log_level::error,
          fmt::format("the coordinator says shard {} lives on {}, but it runs "
                      "here: ignored",
                      x.shard, runtime::to_string(x.region)));
      return;
    }
    sr.home = x.region;
    sr.ask_at.reset();
    // An unreachable home keeps the messages until it is reachable again.
    if (!unreachable_.contains(x.region))
      forward_buffer(s);
  }

  // Forwards the buffer of `s` to its (remote, reachable) home, in order.
  void forward_buffer(shard_entry* s) {
    auto& sr = s->second;
    counters_.buffered -= sr.buffer.size();
    counters_.forwarded += sr.buffer.size();
    for (auto& p : sr.buffer)
      commands_.emplace_back(
        forward{*sr.home, s->first, std::move(p.entity), std::move(p.msg)});
    sr.buffer.clear();
  }

  // The members some observer that is not down sees as unreachable; logs
  // each that becomes so while shards live there.
  void update_unreachable(const cluster::membership_state& state) {
    std::set<unique_address> now_unreachable;
    for (const auto& m : state.latest_gossip().members())
      if (m.address != self_
          && !state.is_reachable_excluding_downed_observers(m.address))
        now_unreachable.insert(m.address);
    for (const auto& n : now_unreachable) {
      if (unreachable_.contains(n))
        continue;
      size_t homed = 0;
      for (const auto& [id, s] : shards_)
        if (s.home == n)
          ++homed;
      if (homed > 0)
        log(log_level::warning,
            fmt::format("{} is unreachable: messages for its {} shard(s) "
                        "wait here (at most buffer_size {} in all) until it "
                        "is reachable again or its shards are re-homed",
                        runtime::to_string(n), homed, settings_.buffer_size));
    }
    unreachable_ = std::move(now_unreachable);
  }

  void handle(const host_shard& x, timestamp now) {
    host(x.shard, now);
  }

  void handle(const begin_hand_off& x, timestamp now) {
    auto* s = shard_of(x.shard);
    s->second.home.reset();
    to_coordinator_now(begin_hand_off_ack{x.shard});
    if (s->second.state == shard_state::active) {
      log(log_level::debug, fmt::format("begin hand-off of shard {}", x.shard));
      set_state(s, shard_state::handing_off);
      move_entity_buffers(s, now);
    }
  }

  void handle(const hand_off& x, timestamp now) {
    if (shutting_down_) // progress: the coordinator hands off
      shutdown_deadline_ = now + settings_.hand_off_timeout;
    auto i = shards_.find(x.shard);
    if (i == shards_.end() || i->second.state == shard_state::none) {
      // Scenario H1 (b): never stall a hand-off of a shard not hosted here.
      to_coordinator_now(shard_stopped{x.shard});
      return;
    }
    if (i->second.state == shard_state::stopping)
      return;
    log(log_level::debug,
        fmt::format("handing off shard {}: stopping {} entities", x.shard,
                    i->second.entities));
    stop_shard(&*i, now);
    if (bug_ == region_bug::early_shard_stopped
        && i->second.state == shard_state::stopping)
      to_coordinator_now(shard_stopped{x.shard});
  }

  void handle(const graceful_shutdown_ack&, timestamp) {
    if (!shutting_down_)
      return;
    shutdown_acked_ = true;
    shutdown_answered_ = true;
    shutdown_request_at_.reset();
    log(log_level::info, "graceful shutdown: the coordinator acknowledged");
  }

  // -- coordinator and registration ------------------------------------------

  void reset_registration() {
    registered_ = false;
    refused_ = false;
    register_at_.reset();
    shutdown_acked_ = false;
    shutdown_request_at_.reset();
    // asks resume after the new registration is acknowledged
    for (auto& entry : shards_)
      entry.second.ask_at.reset();
    asks_.clear();
  }

  void change_coordinator(timestamp now) {
    reset_registration();
    if (!coordinator_) {
      log(log_level::warning,
          fmt::format("no coordinator: no up or leaving member{}",
                      settings_.role.empty()
                        ? std::string{}
                        : fmt::format(" with role {}", settings_.role)));
      // Shutting down with no member left that could take the shards
      // (the whole cluster stopping at once): waiting for hand_off_timeout
      // would only hold this node's exit.
      if (shutting_down_ && !local_stop_)
        stop_locally("no member is left to take them (none is up or "
                     "leaving)",
                     now);
      return;
    }
    log(log_level::info, fmt::format("the coordinator is on {}",
                                     runtime::to_string(*coordinator_)));
    register_region_now(now);
  }

  void register_region_now(timestamp now) {
    register_at_.reset();
    if (!coordinator_ || registered_ || refused_ || down_ || stopped_)
      return;
    register_region msg{proxy_only_, settings_.number_of_shards, {}};
    for (const auto& [id, n] : shards())
      msg.shards.push_back(id);
    to_coordinator_now(std::move(msg));
    register_at_ = now + settings_.retry_interval;
  }

  void to_coordinator_now(to_coordinator msg) {
    if (coordinator_)
      commands_.emplace_back(
        send_to_coordinator{*coordinator_, std::move(msg)});
  }

  // -- graceful shutdown and down ---------------------------------------------

  void begin_shutdown(std::string_view why, timestamp now) {
    if (shutting_down_ || down_ || stopped_)
      return;
    shutting_down_ = true;
    log(log_level::info,
        fmt::format("graceful shutdown ({}): handing off {} shard(s)", why,
                    hosted_));
    commands_.emplace_back(hold_exit{true});
    exit_held_ = true;
    shutdown_deadline_ = now + settings_.hand_off_timeout;
    if (seen_self_ && !coordinator_) {
      stop_locally("no member is left to take them (none is up or leaving)",
                   now);
      return;
    }
    request_shutdown(now);
  }

  void request_shutdown(timestamp now) {
    shutdown_request_at_.reset();
    if (!shutting_down_ || shutdown_acked_ || !registered_ || !coordinator_)
      return;
    to_coordinator_now(graceful_shutdown_request{});
    shutdown_request_at_ = now + settings_.retry_interval;
  }

  // No progress within hand_off_timeout during the graceful shutdown (no
  // coordinator answered the request, or it went silent after its ack: cut
  // off, or its node crashed): the shards are stopped here. The
  // coordinator moves the shards of a member removed while leaving only
  // hand_off_timeout + entity_stop_timeout after the removal, which comes
  // after this deadline started, so the entities here stop first.
  void on_shutdown_deadline(timestamp now) {
    stop_locally(fmt::format("{} within hand_off_timeout ({}ms)",
                             shutdown_answered_
                               ? "no progress after the coordinator's ack"
                               : "no coordinator answered",
                             millis(settings_.hand_off_timeout)),
                 now);
  }

  // Gives up the hand-off: the hosted shards' entities stop here (safe:
  // no other node starts them until the coordinator allocates them anew),
  // and what waits for a home is dropped.
  void stop_locally(std::string_view why, timestamp now) {
    shutdown_deadline_.reset();
    local_stop_ = true;
    if (hosted_ > 0) {
      log(log_level::warning,
          fmt::format("graceful shutdown: {}: stopping the entities of {} "
                      "shard(s) locally",
                      why, hosted_));
      stop_all(now);
    }
    maybe_finish(now);
  }

  void stop_all(timestamp now) {
    std::vector<shard_entry*> hosted;
    for (auto& entry : shards_)
      if (entry.second.state != shard_state::none)
        hosted.push_back(&entry);
    // in shard order: the same inputs give the same commands
    std::sort(hosted.begin(), hosted.end(),
              [](auto* x, auto* y) { return x->first < y->first; });
    for (auto* s : hosted)
      stop_shard(s, now);
  }

  void become_down(std::string_view what, timestamp now) {
    if (down_)
      return;
    down_ = true;
    log(log_level::warning,
        fmt::format("this node is {}: stopping {} entities, never hosting "
                    "again",
                    what, entities_.size()));
    reset_registration();
    shutdown_request_at_.reset();
    shutdown_deadline_.reset();
    drop_buffers();
    stop_all(now);
    maybe_finish(now);
    prune();
  }

  void drop_buffers() {
    if (counters_.buffered == 0)
      return;
    log(log_level::warning,
        fmt::format("dropped {} buffered message(s): the region stops",
                    counters_.buffered));
    counters_.dropped += counters_.buffered;
    counters_.buffered = 0;
    entity_buffers_.clear();
    for (auto& entry : shards_) {
      entry.second.buffer.clear();
      entry.second.ask_at.reset();
    }
    asks_.clear();
  }

  void maybe_finish(timestamp) {
    if (stopped_)
      return;
    if (down_) {
      if (!entities_.empty())
        return;
    } else {
      if (!shutting_down_ || hosted_ > 0)
        return;
      if (counters_.buffered > 0 && !local_stop_)
        return;
      drop_buffers();
    }
    stopped_ = true;
    register_at_.reset();
    shutdown_request_at_.reset();
    shutdown_deadline_.reset();
    asks_.clear();
    kills_.clear();
    if (exit_held_) {
      exit_held_ = false;
      commands_.emplace_back(hold_exit{false});
    }
    log(log_level::info, "region stopped");
    commands_.emplace_back(stopped{});
  }

  // -- helpers ---------------------------------------------------------------

  // Drops stale entries at the heads of the retry queues, so that
  // next_tick() is exact.
  void prune() {
    while (!asks_.empty()
           && asks_.front().second->second.ask_at != asks_.front().first)
      asks_.pop_front();
    while (!kills_.empty()) {
      auto i = entities_.find(kills_.front().second);
      if (i != entities_.end() && i->second.state == entity_state::stopping
          && i->second.time == kills_.front().first)
        break;
      kills_.pop_front();
    }
  }

  std::optional<std::string_view> role() const {
    if (settings_.role.empty())
      return std::nullopt;
    return std::string_view{settings_.role};
  }

  static long long millis(timespan d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  }

  void log(log_level level, std::string text) {
    commands_.emplace_back(log_line{level, std::move(text)});
  }

  unique_address self_;
  sharding_settings settings_;
  bool proxy_only_;
  spawn_fn spawn_;
  region_bug bug_;
  std::vector<command> commands_;
  region_counters counters_;

  // entities and shards
  std::unordered_map<entity_id, entity_record> entities_;
  std::unordered_map<shard_id, shard_record> shards_;
  // Messages for stopping entities, for their next incarnation.
  std::unordered_map<entity_id, std::vector<Payload>> entity_buffers_;
  entity_entry* lru_head_ = nullptr;
  entity_entry* lru_tail_ = nullptr;
  size_t active_ = 0;
  // Shards not in state none.
  size_t hosted_ = 0;
  // get_shard_home retries and kill deadlines, in time order (every entry
  // is now + a fixed span); an entry is stale when its shard's ask_at (its
  // entity's kill deadline) differs.
  std::deque<std::pair<timestamp, shard_entry*>> asks_;
  std::deque<std::pair<timestamp, entity_id>> kills_;

  // the coordinator
  bool seen_self_ = false;
  std::optional<unique_address> coordinator_;
  // Members some observer that is not down sees as unreachable.
  std::set<unique_address> unreachable_;
  bool registered_ = false;
  bool refused_ = false;
  std::optional<timestamp> register_at_;

  // graceful shutdown and down
  bool shutting_down_ = false;
  bool shutdown_acked_ = false;
  bool shutdown_answered_ = false;
  bool local_stop_ = false;
  std::optional<timestamp> shutdown_request_at_;
  std::optional<timestamp> shutdown_deadline_;
  bool exit_held_ = false;
  bool down_ = false;
  bool stopped_ = false;
};

} // namespace troupe::sharding
