#include "troupe/sim/sharding_world.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/sharding/least_shard_allocation.hpp"
#include "troupe/sharding/shard_id.hpp"

namespace troupe::sim {

using namespace std::chrono_literals;
using cluster::member_status;
using sharding::coordinator_bug;
using sharding::coordinator_engine;
using sharding::region_bug;
using sharding::shard_id;

namespace {

int64_t ms(timespan t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t).count();
}

// The messages' names for the trace (coordinator_protocol.hpp declares
// message_name, which the core does not define yet).
const char* name_of(const sharding::to_coordinator& m) {
  static constexpr const char* names[]
    = {"register_region",    "get_shard_home", "shard_started",
       "begin_hand_off_ack", "shard_stopped",  "graceful_shutdown_request"};
  return names[m.index()];
}

const char* name_of(const sharding::to_region& m) {
  static constexpr const char* names[] = {
    "coordinator_hello", "register_ack", "shard_home",           "host_shard",
    "begin_hand_off",    "hand_off",     "graceful_shutdown_ack"};
  return names[m.index()];
}

} // namespace

sharding_layer::sharding_layer(membership_world& world,
                               singleton_layer& singleton,
                               sharding_world_settings settings)
  : w_(world), singleton_(singleton), settings_(std::move(settings)),
    strategy_(std::make_shared<sharding::least_shard_allocation>(
      sharding::least_shard_allocation_settings{
        static_cast<size_t>(
          settings_.sharding.least_shard_allocation_absolute_limit),
        settings_.sharding.least_shard_allocation_relative_limit})),
    net_(w_.sched(), w_.random(), [this](auto& from, auto& to, wire&& m) {
      deliver(from, to, std::move(m));
    }) {
  net_.set_delay(1ms, 20ms);
  net_.follow([this](const unique_address& from, const unique_address& to) {
    return w_.net().rule(from, to);
  });
  singleton_.on_instance([this](size_t i, uint64_t inc, bool live) {
    instance_changed(i, inc, live);
  });
}

shard_id sharding_layer::shard_of(const std::string& entity) const {
  return *sharding::default_shard_id(entity,
                                     settings_.sharding.number_of_shards);
}

bool sharding_layer::region_running(size_t i) const {
  return i < nodes_.size() && nodes_[i].region != nullptr;
}

bool sharding_layer::stopped(size_t i) const {
  if (!singleton_.stopped(i))
    return false;
  if (i >= nodes_.size())
    return true;
  auto& ns = nodes_[i];
  if (ns.region || ns.coordinator)
    return false;
  return std::none_of(live_.begin(), live_.end(),
                      [i](auto& x) { return x.second.node == i; });
}

bool sharding_layer::handing_off() const {
  return std::any_of(nodes_.begin(), nodes_.end(), [](auto& ns) {
    return ns.region && ns.region->shutting_down() && !ns.region->down();
  });
}

size_t sharding_layer::coordinators() const {
  size_t n = 0;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].coordinator && w_.alive(i))
      ++n;
  return n;
}

// -- regions
// ---------------------------------------------------------------------

void sharding_layer::after_step(size_t i) {
  singleton_.after_step(i);
  if (w_.failure())
    return;
  if (nodes_.size() < w_.size())
    nodes_.resize(w_.size());
  feed(i);
}

void sharding_layer::feed(size_t i) {
  auto& e = w_.engine(i);
  auto& ns = nodes_[i];
  auto now = w_.local_now(i);
  if (!ns.region && ns.self != e.self()) {
    ns.self = e.self();
    ns.removals = sharding::removal_tracker{};
    ns.region_done = false;
    ns.region_down = false;
    ns.watchers.clear();
  }
  if (!ns.region && !ns.region_done && w_.alive(i) && e.is_member()
      && !e.is_terminated()) {
    ns.region = std::make_unique<sim_region>(
      ns.self, settings_.sharding, false,
      [this, i](const std::string& entity, const shard_id& shard) {
        return spawn(i, entity, shard);
      },
      settings_.region_bug);
    ns.region_tick.reset();
    note("{} region starts", to_string(ns.self));
  }
  if (ns.region && ns.self == e.self()) {
    auto* me = e.state().self_member();
    if (e.is_terminated()) {
      // The membership stopped (removed, or shut down when downed): the
      // node's actor system goes down, and the region with it, as a region
      // that sees itself removed (the engine's view may still show this
      // node up when it learned its removal from another's gossip).
      if (!ns.region_down)
        region_gone_down(i);
      ns.region->on_membership(
        cluster::membership_state{cluster::gossip{}, ns.self}, now);
    } else {
      if (!ns.region_down && me != nullptr && me->status == member_status::down)
        region_gone_down(i);
      ns.region->on_membership(e.state(), now);
    }
    drain(i);
  }
  // The node's record of removals sees every view (the shell's region is
  // subscribed to the view from its start).
  if (ns.self == e.self() && w_.alive(i))
    ns.removals.on_view(e.state().latest_gossip(), now);
  if (ns.coordinator && !w_.failure()) {
    apply(i, ns.coordinator->on_membership(e.state(), now));
    check_coordinators();
  }
}

void sharding_layer::region_gone_down(size_t i) {
  auto& ns = nodes_[i];
  ns.region_down = true;
  // A down region's homes end when their last entity terminated.
  std::vector<shard_id> empty;
  for (auto& [shard, regions] : homes_)
    if (regions.count(ns.self) > 0
        && live_by_shard_.count({ns.self, shard}) == 0)
      empty.push_back(shard);
  for (auto& shard : empty)
    home_ends(i, shard, "its region is down and its entities terminated");
}

void sharding_layer::drain(size_t i) {
  auto& ns = nodes_[i];
  if (!ns.region || w_.failure())
    return;
  auto self = ns.self;
  bool done = false;
  std::vector<sim_region::command> cmds;
  ns.region->drain([&](auto& c) { cmds.push_back(std::move(c)); });
  for (auto& c : cmds) {
    if (w_.failure())
      return;
    std::visit(
      [&](auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, sim_region::send_to_coordinator>) {
          if (auto* s = std::get_if<sharding::shard_started>(&x.msg))
            home_begins(i, s->shard);
          else if (auto* s = std::get_if<sharding::shard_stopped>(&x.msg))
            home_ends(i, s->shard, "it sent shard_stopped");
          note("{} region -> {}: {}", to_string(self), to_string(x.coordinator),
               name_of(x.msg));
          send(self, x.coordinator, std::move(x.msg));
        } else if constexpr (std::is_same_v<T, sim_region::to_entity>) {
          handled(x.ref, x.msg);
        } else if constexpr (std::is_same_v<T, sim_region::forward>) {
          int copies
            = settings_.transport == transport_bug::duplicate_forwards ? 2 : 1;
          for (int k = 0; k < copies; ++k)
            send(self, x.region, forwarded{x.shard, x.entity, x.msg});
        } else if constexpr (std::is_same_v<T, sim_region::stop_entity>) {
          // A down node's actor system stops its entities at once; else
          // an entity sometimes takes long to stop (beyond the hand-off
          // timeout: late shard_stopped, repeated hand_off, scenario H1).
          auto& r = w_.random();
          auto delay = nodes_[i].region_down           ? r.between(0ms, 50ms)
                       : r.chance(settings_.slow_stop) ? r.between(1s, 4s)
                       : r.chance(0.1)                 ? r.between(50ms, 500ms)
                                                       : r.between(0ms, 50ms);
          w_.sched().after(delay, [this, inc = x.ref] {
            if (!w_.failure())
              terminate(inc, "stopped");
          });
        } else if constexpr (std::is_same_v<T, sim_region::kill_entity>) {
          w_.sched().after(0ms, [this, inc = x.ref] {
            if (!w_.failure())
              terminate(inc, "killed");
          });
        } else if constexpr (std::is_same_v<T, sim_region::hold_exit>) {
          w_.sched().at(w_.sched().now(), [this, i, self, hold = x.hold] {
            if (w_.failure() || !w_.alive(i) || w_.engine(i).self() != self)
              return;
            w_.hold_exit(i, "sharding", hold);
          });
        } else if constexpr (std::is_same_v<T, sim_region::stopped>) {
          done = true;
        } else {
          if (x.level != sharding::log_level::debug)
            note("{} region: {}", to_string(self), x.text);
        }
      },
      c);
  }
  if (!done) {
    schedule_region_tick(i);
    return;
  }
  note("{} region STOPPED", to_string(self));
  std::vector<shard_id> hosted;
  for (auto& [shard, regions] : homes_)
    if (regions.count(self) > 0)
      hosted.push_back(shard);
  for (auto& shard : hosted)
    home_ends(i, shard, "its region stopped");
  for (auto& [coordinator, id] : ns.watchers)
    send_control(self, coordinator,
                 watch_fired{id, sharding::region_gone::stopped},
                 [] { return true; });
  ns.watchers.clear();
  ns.region_done = true;
  ns.region.reset();
  ns.region_tick.reset();
}

void sharding_layer::schedule_region_tick(size_t i) {
  auto& ns = nodes_[i];
  if (!ns.region)
    return;
  if (auto due = ns.region->next_tick())
    w_.schedule_tick_at(i, *due, ns.region_tick, [this, i, self = ns.self] {
      auto& ns = nodes_[i];
      if (!ns.region || ns.self != self)
        return;
      ns.region->tick(w_.local_now(i));
      drain(i);
    });
}

void sharding_layer::region_deliver(size_t i, const std::string& entity,
                                    const shard_id& shard,
                                    sharding_payload msg) {
  auto& ns = nodes_[i];
  if (const uint64_t* ref
      = ns.region->deliver(entity, shard, msg, w_.local_now(i))) {
    // The commands before it first, then the message itself.
    auto inc = *ref;
    drain(i);
    handled(inc, msg);
    return;
  }
  drain(i);
}

// -- entities
// --------------------------------------------------------------------

uint64_t sharding_layer::spawn(size_t i, const std::string& entity,
                               const shard_id& shard) {
  auto inc = ++incarnations_;
  auto& self = nodes_[i].self;
  auto& live = live_by_entity_[entity];
  if (!live.empty() && !w_.failure()) {
    auto& other = live_.at(*live.begin());
    w_.fail(doomed_late(i, other.node, other.region) ? "removal_margin_exceeded"
                                                     : "one_incarnation",
            fmt::format("{} spawns entity {} (shard {}) as #{} while #{} on "
                        "{} is live",
                        to_string(self), entity, shard, inc, *live.begin(),
                        to_string(other.region)));
  }
  live.insert(inc);
  live_.emplace(inc, entity_rec{entity, shard, i, self});
  ++live_by_shard_[{self, shard}];
  return inc;
}

void sharding_layer::terminate(uint64_t inc, const std::string& why) {
  auto it = live_.find(inc);
  if (it == live_.end())
    return;
  auto rec = it->second;
  live_.erase(it);
  live_by_entity_[rec.entity].erase(inc);
  auto key = std::make_pair(rec.region, rec.shard);
  if (--live_by_shard_[key] == 0)
    live_by_shard_.erase(key);
  if (why == "crash")
    return;
  auto& ns = nodes_[rec.node];
  if (ns.self != rec.region)
    return;
  if (ns.region_down && live_by_shard_.count(key) == 0
      && homes_[rec.shard].count(rec.region) > 0)
    home_ends(rec.node, rec.shard,
              "its region is down and its entities terminated");
  if (ns.region) {
    ns.region->on_entity_terminated(rec.entity, w_.local_now(rec.node));
    drain(rec.node);
  }
}

void sharding_layer::handled(uint64_t inc, const sharding_payload& msg) {
  auto it = live_.find(inc);
  if (it == live_.end())
    return; // an entity that is gone handles nothing
  auto& rec = it->second;
  if (rec.entity != msg.entity)
    return w_.fail("one_handler",
                   fmt::format("message {} for entity {} was handled by "
                               "entity {} (#{})",
                               msg.id, msg.entity, rec.entity, inc));
  auto [a, added] = acked_.emplace(msg.id, std::make_pair(rec.entity, inc));
  if (!added)
    return w_.fail("one_handler",
                   fmt::format("message {} for entity {} was handled twice: "
                               "by #{} and by #{} on {}",
                               msg.id, msg.entity, a->second.second, inc,
                               to_string(rec.region)));
  if (msg.probe)
    unreached_.erase(msg.entity);
}

void sharding_layer::home_begins(size_t i, const shard_id& shard) {
  auto& self = nodes_[i].self;
  auto& regions = homes_[shard];
  for (auto& other : regions)
    if (other != self)
      return w_.fail(doomed_late(i, *w_.index_of(other), other)
                       ? "removal_margin_exceeded"
                       : "one_home",
                     fmt::format("{} starts hosting shard {} while {} is "
                                 "still its home",
                                 to_string(self), shard, to_string(other)));
  regions.insert(self);
}

bool sharding_layer::doomed_late(size_t i, size_t j,
                                 const unique_address& other) const {
  // The other side removed (or downed) `other`, but `other` has not yet
  // learned that it is down: its region still runs.
  auto* m = w_.engine(i).state().latest_gossip().find(other);
  bool gone = m == nullptr || m->status == member_status::down;
  return gone && j < nodes_.size() && nodes_[j].self == other
         && !nodes_[j].region_down;
}

void sharding_layer::home_ends(size_t i, const shard_id& shard,
                               const std::string& why) {
  auto h = homes_.find(shard);
  if (h == homes_.end() || h->second.erase(nodes_[i].self) == 0)
    return;
  note("{} is no home of shard {} any more ({})", to_string(nodes_[i].self),
       shard, why);
}

void sharding_layer::crash(size_t i) {
  bool was_alive = w_.alive(i);
  singleton_.crash(i);
  if (!was_alive || i >= nodes_.size())
    return;
  auto& ns = nodes_[i];
  std::vector<uint64_t> dead;
  for (auto& [inc, rec] : live_)
    if (rec.node == i)
      dead.push_back(inc);
  for (auto inc : dead)
    terminate(inc, "crash");
  std::vector<shard_id> hosted;
  for (auto& [shard, regions] : homes_)
    if (regions.count(ns.self) > 0)
      hosted.push_back(shard);
  for (auto& shard : hosted)
    home_ends(i, shard, "its node crashed");
  ns.region.reset();
  ns.region_tick.reset();
  ns.region_done = true;
  ns.watchers.clear();
  ns.coordinator.reset();
  ns.coordinator_tick.reset();
  ns.instance.reset();
}

// -- the coordinator
// -------------------------------------------------------------

void sharding_layer::instance_changed(size_t i, uint64_t incarnation,
                                      bool live) {
  if (nodes_.size() < w_.size())
    nodes_.resize(w_.size());
  auto& ns = nodes_[i];
  if (!live) {
    if (ns.instance == incarnation) {
      ns.instance.reset();
      if (ns.coordinator)
        note("{} coordinator #{} gone", to_string(ns.self), ns.coordinator_id);
      ns.coordinator.reset();
      ns.coordinator_tick.reset();
    }
    return;
  }
  ns.instance = incarnation;
  // The instance actor starts after this step.
  w_.sched().after(0ms, [this, i, incarnation, self = w_.engine(i).self()] {
    auto& ns = nodes_[i];
    if (w_.failure() || ns.instance != incarnation || ns.coordinator
        || w_.engine(i).self() != self)
      return;
    start_coordinator(i, incarnation);
  });
}

void sharding_layer::start_coordinator(size_t i, uint64_t incarnation) {
  auto& ns = nodes_[i];
  std::function<bool()> lease_alive;
  if (settings_.use_lease)
    lease_alive = [this, i] { return singleton_.lease_alive(i); };
  ns.coordinator = std::make_unique<coordinator_engine>(
    w_.engine(i).self(), settings_.sharding, strategy_, lease_alive,
    settings_.bug);
  ns.coordinator_id = ++coordinator_ids_;
  ns.coordinator_tick.reset();
  note("{} coordinator #{} STARTS (instance #{})",
       to_string(w_.engine(i).self()), ns.coordinator_id, incarnation);
  check_coordinators();
  // As the shell's coordinator: its first view feeds the node's removal
  // record, whose removals within the margin go to start.
  auto now = w_.local_now(i);
  auto& state = w_.engine(i).state();
  ns.removals.on_view(state.latest_gossip(), now);
  auto removals
    = ns.removals.recent(now, settings_.sharding.down_removal_margin);
  for (auto& r : removals)
    note("{} coordinator #{}: {} was removed {} ms ago",
         to_string(w_.engine(i).self()), ns.coordinator_id, to_string(r.node),
         ms(now - r.removed_at));
  apply(i, ns.coordinator->start(state, now, removals));
}

void sharding_layer::check_coordinators() {
  if (!w_.failure() && coordinators() > 1)
    w_.fail("one_coordinator", fmt::format("{} coordinators run:\n{}",
                                           coordinators(), describe()));
}

void sharding_layer::apply(size_t i, sharding::coordinator_effects fx) {
  auto& ns = nodes_[i];
  if (!ns.coordinator || w_.failure())
    return;
  auto self = w_.engine(i).self();
  auto id = ns.coordinator_id;
  for (auto& node : fx.watch)
    send_control(self, node, watch_request{id}, [this, i, id] {
      return nodes_[i].coordinator && nodes_[i].coordinator_id == id;
    });
  for (auto& s : fx.send) {
    bool gated = std::holds_alternative<sharding::host_shard>(s.message)
                 || std::holds_alternative<sharding::begin_hand_off>(s.message);
    if (settings_.use_lease && gated && !singleton_.lease_alive(i))
      return w_.fail("lease_gates_allocation",
                     fmt::format("coordinator #{} on {} sends {} to {} while "
                                 "its lease client's check_alive() is false",
                                 id, to_string(self), name_of(s.message),
                                 to_string(s.to)));
    if (auto* h = std::get_if<sharding::host_shard>(&s.message))
      allocations_.push_back({w_.sched().now(), i, s.to, h->shard});
    note("{} coordinator -> {}: {}", to_string(self), to_string(s.to),
         name_of(s.message));
    send(self, s.to, std::move(s.message));
  }
  for (auto& line : fx.log)
    if (line.level != sharding::log_level::debug)
      note("{} coordinator: {}", to_string(self), line.text);
  schedule_coordinator_tick(i);
}

void sharding_layer::schedule_coordinator_tick(size_t i) {
  auto& ns = nodes_[i];
  if (!ns.coordinator)
    return;
  if (auto due = ns.coordinator->next_tick())
    w_.schedule_tick_at(i, *due, ns.coordinator_tick,
                        [this, i, id = ns.coordinator_id] {
                          auto& ns = nodes_[i];
                          if (!ns.coordinator || ns.coordinator_id != id)
                            return;
                          apply(i, ns.coordinator->tick(w_.local_now(i)));
                        });
}

// -- the network
// -----------------------------------------------------------------

void sharding_layer::send(const unique_address& from, const unique_address& to,
                          wire m) {
  net_.send(from, to, std::move(m));
}

void sharding_layer::send_control(const unique_address& from,
                                  const unique_address& to, wire m,
                                  std::function<bool()> still) {
  if (w_.failure() || !still())
    return;
  if (w_.net().rule(from, to).blocked) {
    w_.sched().after(1s, [this, from, to, m = std::move(m), still] {
      send_control(from, to, m, still);
    });
    return;
  }
  net_.send(from, to, std::move(m));
}

void sharding_layer::deliver(const unique_address& from,
                             const unique_address& to, wire&& m) {
  if (w_.failure())
    return;
  auto at = w_.index_of(to);
  if (!at || *at >= nodes_.size())
    return;
  auto i = *at;
  auto& ns = nodes_[i];
  auto now = w_.local_now(i);
  std::visit(
    [&](auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, sharding::to_coordinator>) {
        if (ns.coordinator && w_.engine(i).self() == to)
          apply(i, ns.coordinator->on_message(from, x, now));
      } else if constexpr (std::is_same_v<T, sharding::to_region>) {
        if (ns.region && ns.self == to) {
          ns.region->on_coordinator_message(from, x, now);
          drain(i);
        }
      } else if constexpr (std::is_same_v<T, forwarded>) {
        if (ns.region && ns.self == to)
          region_deliver(i, x.entity, x.shard, std::move(x.msg));
      } else if constexpr (std::is_same_v<T, watch_request>) {
        if (ns.region && ns.self == to) {
          ns.watchers.emplace_back(from, x.coordinator);
        } else if (w_.alive(i) && w_.engine(i).self() == to) {
          send_control(
            to, from,
            watch_fired{x.coordinator, sharding::region_gone::not_published},
            [] { return true; });
        }
      } else if constexpr (std::is_same_v<T, watch_fired>) {
        if (ns.coordinator && ns.coordinator_id == x.coordinator) {
          note("{} coordinator: the watch of {} fired ({})", to_string(to),
               to_string(from),
               x.why == sharding::region_gone::stopped ? "stopped"
                                                       : "not published");
          apply(i, ns.coordinator->on_region_terminated(from, x.why, now));
        }
      }
    },
    m);
}

// -- traffic
// ---------------------------------------------------------------------

void sharding_layer::send_one(size_t client, bool probe,
                              const std::string& entity) {
  if (!region_running(client) || !w_.alive(client))
    return;
  sharding_payload msg{++message_ids_, entity, probe};
  region_deliver(client, entity, shard_of(entity), std::move(msg));
}

void sharding_layer::start_traffic(timespan until) {
  auto& s = w_.sched();
  for (auto c : settings_.clients)
    for (auto t = s.now() + w_.random().between(0ms, settings_.send_interval);
         t < until; t += settings_.send_interval)
      s.at(t, [this, c] {
        if (w_.failure())
          return;
        auto k = w_.random().below(settings_.entities);
        send_one(c, false, fmt::format("e{}", k));
      });
}

void sharding_layer::start_probes() {
  probing_ = true;
  for (size_t k = 0; k < settings_.entities; ++k)
    unreached_.insert(fmt::format("e{}", k));
  auto& s = w_.sched();
  for (auto t = s.now(); t < s.now() + 10min; t += 3s)
    s.at(t, [this] {
      if (w_.failure() || unreached_.empty())
        return;
      std::vector<size_t> from;
      for (size_t i = 0; i < nodes_.size(); ++i)
        if (region_running(i) && w_.alive(i))
          from.push_back(i);
      if (from.empty())
        return;
      auto targets = unreached_;
      for (auto& e : targets)
        send_one(from[w_.random().below(from.size())], true, e);
    });
}

std::string sharding_layer::describe() const {
  std::string out;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto& ns = nodes_[i];
    size_t entities = 0;
    for (auto& [inc, rec] : live_)
      entities += rec.node == i ? 1 : 0;
    out += fmt::format(
      "  node {} {}: region {}, {} live entities, coordinator {}\n", i,
      to_string(ns.self),
      ns.region ? fmt::format("{} shard(s){}{}", ns.region->shards().size(),
                              ns.region->registered() ? ", registered" : "",
                              ns.region_down ? ", down" : "")
      : ns.region_done ? "stopped"
                       : "none",
      entities,
      ns.coordinator ? fmt::format("#{} {}", ns.coordinator_id,
                                   sharding::to_string(ns.coordinator->phase()))
                     : "none");
  }
  if (probing_)
    out += fmt::format("  {} entities unreached\n", unreached_.size());
  return out;
}

// -- the random scenario
// -----------------------------------------------------------

bool sharding_bug_named(const std::string& name, sharding_scenario& options) {
  static const std::map<std::string, coordinator_bug> coordinator{
    {"skip_recovery", coordinator_bug::skip_recovery},
    {"no_removal_margin", coordinator_bug::no_removal_margin},
    {"trust_any_shard_stopped", coordinator_bug::trust_any_shard_stopped},
    {"ignore_lease", coordinator_bug::ignore_lease}};
  if (name == "none")
    return true;
  if (auto c = coordinator.find(name); c != coordinator.end()) {
    options.bug = c->second;
    return true;
  }
  if (name == "early_shard_stopped") {
    options.region_bug = region_bug::early_shard_stopped;
    return true;
  }
  if (name == "duplicate_forwards") {
    options.transport = transport_bug::duplicate_forwards;
    return true;
  }
  return false;
}

downing_world_settings keep_majority_downing(timespan stable_after) {
  downing_world_settings ds;
  auto& stability = ds.engine.downing.stability;
  stability.stable_after = stable_after;
  stability.down_all_when_unstable
    = std::max<timespan>(stable_after * 3 / 4, 4s);
  ds.engine.downing.active_strategy = downing::keep_majority{};
  return ds;
}

timespan decision_bound(const downing_world_settings& ds) {
  auto& stability = ds.engine.downing.stability;
  return stability.stable_after + stability.down_all_when_unstable;
}

singleton_world_settings coordinator_singleton(bool use_lease,
                                               timespan margin) {
  singleton_world_settings ss;
  ss.manager.use_lease = use_lease;
  ss.manager.down_removal_margin = use_lease ? timespan{0} : margin;
  ss.manager.lease_retry_interval = 2s;
  ss.manager.restart_min_backoff = 1s;
  ss.manager.restart_max_backoff = 5s;
  return ss;
}

void scenario_timings(sharding::sharding_settings& s, bool use_lease,
                      timespan margin) {
  s.retry_interval = 1s;
  s.rebalance_interval = 3s;
  s.hand_off_timeout = 2s;
  s.least_shard_allocation_absolute_limit = 5;
  s.down_removal_margin = margin;
  s.use_lease = use_lease;
}

sharding_result run_sharding_scenario(uint64_t seed,
                                      const sharding_scenario& options) {
  sharding_layer* layer = nullptr;
  auto ws = resolver_world_settings(layer);
  ws.trace = options.trace;
  ws.checkers = false;
  membership_world w{seed, ws};
  auto& r = w.random();
  auto& s = w.sched();
  size_t initial = options.rolling ? 5 : 4 + r.below(3);
  size_t n = options.rolling ? 5 : initial + 1 + r.below(2);
  for (size_t i = 0; i < n; ++i)
    w.add_node();
  auto ds = keep_majority_downing(3s + r.between(0s, 2s));
  auto& stability = ds.engine.downing.stability;
  const timespan margin = decision_bound(ds);
  auto ss = coordinator_singleton(options.use_lease, margin);
  ss.lease_ttl = 4s + r.between(0s, 4s);
  ss.self_stop = options.rolling ? 0.0 : 0.1;
  const timespan faults_start = 12s;
  const timespan faults_end = faults_start + (options.rolling ? 40s : 30s);
  if (options.use_lease) {
    auto& lf = ss.lease_faults;
    if (r.chance(0.4)) {
      auto from = faults_start + r.between(0s, 25s);
      lf.unavailable.emplace_back(from, from + r.between(1s, 8s));
    }
    lf.lost = r.chance(0.3) ? 0.1 : 0.0;
    lf.slow = r.chance(0.3) ? 0.1 : 0.0;
  }
  sharding_world_settings hs;
  hs.bug = options.bug;
  hs.region_bug = options.region_bug;
  hs.transport = options.transport;
  hs.use_lease = options.use_lease;
  hs.trace = options.trace;
  hs.slow_stop = options.slow_stop;
  hs.entities = 200 + r.below(201);
  auto& sh = hs.sharding;
  sh.number_of_shards = static_cast<uint32_t>(20 + r.below(31));
  sh.passivation_idle_timeout = 3s + r.between(0s, 5s);
  scenario_timings(sh, options.use_lease, margin);
  downing_layer dl{w, ds};
  singleton_layer sl{w, dl, ss};
  sharding_layer hl{w, sl, hs};
  layer = &hl;
  for (size_t i = 0; i < initial; ++i)
    s.at(r.between(0s, 2s), [&w, i] { w.start(i, {0, 1}); });
  w.run_until(10s, [&] { return w.converged(initial); });
  hl.start_traffic(faults_end);
  auto live = [&] {
    std::vector<size_t> out;
    for (size_t i = 0; i < n; ++i)
      if (w.alive(i) && w.engine(i).is_member())
        out.push_back(i);
    return out;
  };
  // The fault model (ADR 0007): crashes, joins and restarts at any time,
  // partitions at any time, also during others' decisions. The doomed side
  // decides at the latest stable_after + down_all_when_unstable after its
  // first reachability change, and the removal margin covers that.
  //
  // Leaves during partitions are in the model too: the resolver never downs
  // an exiting member (Akka's rule) and the other side's leader removes it
  // once unreachable; the coordinator then waits hand_off_timeout +
  // entity_stop_timeout before the member's shards move, and the leaving
  // region stops its entities hand_off_timeout after its last progress
  // (the coordinator's ack, a hand_off, a stopped shard) even when the
  // coordinator went silent after acknowledging.
  bool partitioned = false;
  auto restart = [&](size_t i) {
    if (w.alive(i) || !hl.stopped(i))
      return;
    auto l = live();
    if (l.empty()) {
      for (size_t j = 0; j < n; ++j)
        if (w.alive(j) || !hl.stopped(j))
          return;
      l.push_back(i);
    }
    w.note(fmt::format("node {} starts again", i));
    w.start(i, l);
  };
  // A node that is gone (or stopped) is restarted once it stopped, every
  // 1 s after `from`.
  auto restart_later = [&](size_t i, timespan from) {
    for (auto t = from; t < faults_end + 5s; t += 1s)
      s.at(t, [&, i] { restart(i); });
  };
  uint32_t version = 0;
  if (options.rolling) {
    // S4: restarts one at a time or two at a time, every 4-8 s.
    for (auto t = faults_start; t < faults_end; t += r.between(4s, 8s))
      s.at(t, [&] {
        auto a = r.below(n);
        std::vector<size_t> victims{a};
        if (r.chance(0.4))
          victims.push_back((a + 1 + r.below(n - 1)) % n);
        for (auto v : victims) {
          if (!w.alive(v))
            continue;
          if (r.chance(0.5)) {
            w.note(fmt::format("S4: node {} leaves to restart", v));
            w.leave(v, v);
          } else {
            w.note(fmt::format("S4: node {} crashes to restart", v));
            hl.crash(v);
            // an operator (or the resolver) downs the crashed member
            s.after(r.between(2s, 5s), [&, v, a = w.address(v)] {
              for (auto j : live())
                if (j != v)
                  return w.down_address(j, a);
            });
          }
          if (options.upgrade)
            w.set_app_version(v, cluster::app_version{++version, 0, 0, ""});
          restart_later(v, s.now() + 1s);
        }
      });
  } else {
    for (auto t = faults_start + r.between(0s, 2s); t < faults_end;
         t += r.between(1s, 4s)) {
      s.at(t, [&] {
        auto k = r.below(20);
        auto any = r.below(n);
        if (k < 2) {
          if (w.alive(any) && live().size() > 2) {
            w.leave(any, any);
            restart_later(any, s.now() + 5s);
          }
        } else if (k < 5) {
          if (live().size() > 2 && w.alive(any)) {
            hl.crash(any);
            restart_later(any, s.now() + r.between(3s, 15s));
          }
        } else if (k < 7) { // a new node joins (rebalance)
          for (size_t i = initial; i < n; ++i)
            if (!w.alive(i) && hl.stopped(i)) {
              restart(i);
              break;
            }
        } else if (k < 11) { // a clean partition into two groups
          std::vector<size_t> a;
          std::vector<size_t> b;
          for (size_t i = 0; i < n; ++i)
            (r.chance(0.5) ? a : b).push_back(i);
          w.heal();
          w.note("heal");
          partitioned = false;
          if (a.empty() || b.empty())
            return;
          partitioned = true;
          w.partition(a, b);
          if (options.use_lease && r.chance(0.5))
            for (auto i : a.size() < b.size() ? a : b)
              sl.cut_from_lease(i, true);
        } else if (k < 13 && options.use_lease) { // messy (lease only)
          partitioned = true;
          auto x = r.below(n);
          auto y = (x + 1 + r.below(n - 1)) % n;
          if (r.chance(0.5))
            w.net().link(w.address(x), w.address(y)).blocked = true;
          else
            w.net().link(w.address(x), w.address(y)).extra_delay
              = r.between(500ms, 4s);
          w.note(fmt::format("messy link {} -> {}", x, y));
        } else if (k < 16) {
          w.heal();
          w.note("heal");
          partitioned = false;
          for (size_t i = 0; i < n; ++i)
            sl.cut_from_lease(i, false);
        } else if (options.use_lease) {
          sl.cut_from_lease(any, true);
          s.after(r.between(1s, 8s),
                  [&, any] { sl.cut_from_lease(any, false); });
        }
      });
    }
  }
  sharding_result result;
  result.seed = seed;
  result.nodes = n;
  w.note(fmt::format(
    "sharding scenario: {} nodes ({} at first), {}{}, {} entities over {} "
    "shards, stable_after {} ms, down_removal_margin {} ms",
    n, initial, options.use_lease ? "with a lease" : "without a lease",
    options.rolling
      ? (options.upgrade ? ", rolling upgrades" : ", rolling restarts")
      : "",
    hs.entities, sh.number_of_shards, ms(stability.stable_after),
    ms(sh.down_removal_margin)));
  w.run_until(faults_end);
  if (!w.failure()) {
    w.heal();
    sl.stop_faults();
    auto start = s.now();
    std::vector<timespan> stuck_since(n, start);
    // Every node starts again; after 10 s an operator downs members that
    // are gone (crashed, or an earlier incarnation) in the views of the
    // live nodes, and restarts a node that still is no up member.
    for (auto t = start; t < start + options.liveness_bound; t += 2s)
      s.at(t, [&, operator_on = t >= start + 10s] {
        for (size_t i = 0; i < n; ++i)
          restart(i);
        if (!operator_on)
          return;
        for (auto i : live())
          for (auto& m : w.engine(i).state().latest_gossip().members()) {
            auto j = w.index_of(m.address);
            bool gone = !j || !w.alive(*j) || w.engine(*j).self() != m.address;
            if (gone && m.status != member_status::down)
              s.at(s.now(), [&w, i, a = m.address] { w.down_address(i, a); });
          }
        for (size_t i = 0; i < n; ++i) {
          auto self = w.alive(i) ? w.engine(i).self_member() : std::nullopt;
          if (!w.alive(i) || (self && self->status == member_status::up))
            stuck_since[i] = s.now();
          else if (s.now() - stuck_since[i] >= 20s) {
            w.note(fmt::format("operator: node {} is stuck outside the "
                               "cluster, restarting it",
                               i));
            hl.crash(i);
            stuck_since[i] = s.now();
          }
        }
      });
    hl.start_probes();
    bool ok = w.run_until(start + options.liveness_bound,
                          [&] { return hl.all_reached(); });
    result.liveness_rounds
      = static_cast<double>((s.now() - start).count())
        / static_cast<double>(ws.membership.gossip_interval.count());
    if (!ok && !w.failure())
      result.failure = violation{
        "sharding_liveness",
        fmt::format("{} s after the faults stopped, not every entity handled "
                    "a probe:\n{}{}",
                    ms(options.liveness_bound) / 1000, hl.describe(),
                    sl.describe())};
  }
  result.acks = hl.acks();
  result.spawns = hl.spawns();
  if (w.failure() && !result.failure)
    result.failure = w.failure();
  conclude(result, w);
  return result;
}

} // namespace troupe::sim
