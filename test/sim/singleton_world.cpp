#include "troupe/sim/singleton_world.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::sim {

using namespace std::chrono_literals;
using cluster::member_status;
using singleton::manager_bug;
using singleton::manager_engine;

namespace {

/// The holder name of the manager's exit hold.
constexpr const char* exit_holder = "singleton";

int64_t ms(timespan t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t).count();
}

// -- oracles (independent of the manager core)
// -----------------------------------

/// The up member of a view where the singleton belongs: the highest
/// app_version, then the lowest up_number, then the lowest address (Akka's
/// age ordering, Member.ageOrdering, among the newest version's members).
std::optional<unique_address> target_up(const cluster::gossip& g) {
  const cluster::member* best = nullptr;
  for (auto& m : g.members()) {
    if (m.status != member_status::up)
      continue;
    if (best == nullptr || m.app_version > best->app_version
        || (m.app_version == best->app_version
            && (m.up_number < best->up_number
                || (m.up_number == best->up_number
                    && m.address < best->address))))
      best = &m;
  }
  if (best == nullptr)
    return std::nullopt;
  return best->address;
}

} // namespace

singleton_layer::singleton_layer(membership_world& world,
                                 downing_layer& downing,
                                 singleton_world_settings settings)
  : w_(world), downing_(downing), settings_(std::move(settings)),
    net_(w_.sched(), w_.random(),
         [this](auto& from, auto& to, singleton::hand_over_message&& m) {
           deliver(from, to, std::move(m));
         }) {
  net_.follow([this](const unique_address& from, const unique_address& to) {
    return w_.net().rule(from, to);
  });
}

bool singleton_layer::current(size_t i, const unique_address& self) const {
  auto& ns = nodes_[i];
  return ns.manager != nullptr && ns.self == self;
}

bool singleton_layer::stopped(size_t i) const {
  return i >= nodes_.size() || (!nodes_[i].manager && !nodes_[i].inst);
}

void singleton_layer::after_step(size_t i) {
  downing_.after_step(i);
  if (w_.failure())
    return;
  if (nodes_.size() < w_.size())
    nodes_.resize(w_.size());
  feed(i);
  check();
}

void singleton_layer::feed(size_t i) {
  auto& e = w_.engine(i);
  auto& ns = nodes_[i];
  auto now = w_.local_now(i);
  if (!ns.manager) {
    if (!w_.alive(i) || !e.is_member() || e.is_terminated() || ns.inst)
      return;
    ns.manager = std::make_unique<manager_engine>(e.self(), settings_.manager,
                                                  settings_.bug);
    ns.self = e.self();
    ns.stopping = false;
    ns.tick_due.reset();
    ns.lease = lease_client{};
  }
  if (ns.stopping || ns.self != e.self())
    return;
  apply(i, ns.manager->on_membership(e.state(), now));
  if (ns.manager && (!w_.alive(i) || e.is_terminated())) {
    // The membership actor terminated (downed or removed): the shell stops
    // the manager, which stops the instance and releases the lease.
    w_.note(fmt::format("{} singleton: membership terminated, stopping",
                        to_string(ns.self)));
    ns.stopping = true;
    apply(i, ns.manager->stop(w_.local_now(i)));
  }
}

void singleton_layer::apply(size_t i, effects fx) {
  auto& ns = nodes_[i];
  if (w_.failure() || !ns.manager || fx.empty()) {
    schedule_tick(i);
    return;
  }
  auto self = ns.self;
  for (auto& line : fx.log)
    w_.note(fmt::format("{} singleton {}: {}", to_string(self),
                        to_string(ns.manager->state()), line.text));
  if (fx.stop_instance) {
    if (ns.inst && !ns.inst->stop_requested) {
      ns.inst->stop_requested = true;
      auto inc = ns.inst->incarnation;
      auto delay = w_.random().between(0ms, 50ms);
      w_.note(fmt::format("{} instance #{} asked to stop (in {} ms)",
                          to_string(self), inc, ms(delay)));
      w_.sched().after(delay, [this, i, self, inc] {
        auto& ns = nodes_[i];
        if (w_.failure() || ns.self != self || !ns.inst
            || ns.inst->incarnation != inc)
          return;
        terminate_instance(i, "stopped as asked");
      });
    } else if (!ns.inst) {
      w_.note(fmt::format("{} singleton: stop_instance without an instance",
                          to_string(self)));
    }
  }
  // Never due here (instances stop within 50 ms), but honoured: as the
  // stop above, after this step.
  if (fx.kill_instance && ns.inst) {
    auto inc = ns.inst->incarnation;
    w_.sched().after(0ms, [this, i, self, inc] {
      auto& ns = nodes_[i];
      if (w_.failure() || ns.self != self || !ns.inst
          || ns.inst->incarnation != inc)
        return;
      terminate_instance(i, "killed (instance_stop_timeout)");
    });
  }
  if (fx.release_lease)
    lease_release(i);
  if (fx.start)
    start_instance(i, *fx.start);
  if (w_.failure())
    return;
  if (fx.acquire_lease)
    lease_acquire(i);
  for (auto& out : fx.send) {
    w_.note(fmt::format("{} -> {}: {}", to_string(self), to_string(out.to),
                        singleton::name_of(out.message)));
    net_.send(self, out.to, std::move(out.message));
  }
  if (fx.hold_exit) {
    // As an actor message to the membership: after this step.
    w_.sched().at(w_.sched().now(), [this, i, self, hold = *fx.hold_exit] {
      if (w_.failure() || !w_.alive(i) || w_.engine(i).self() != self)
        return;
      w_.hold_exit(i, exit_holder, hold);
    });
  }
  if (fx.stopped) {
    w_.note(fmt::format("{} singleton manager stopped", to_string(self)));
    ns.manager.reset();
    ns.tick_due.reset();
    return;
  }
  schedule_tick(i);
}

void singleton_layer::schedule_tick(size_t i) {
  auto& ns = nodes_[i];
  if (!ns.manager)
    return;
  if (auto due = ns.manager->next_tick())
    w_.schedule_tick_at(i, *due, ns.tick_due, [this, i, self = ns.self] {
      if (!current(i, self))
        return;
      apply(i, nodes_[i].manager->tick(w_.local_now(i)));
      check();
    });
}

void singleton_layer::deliver(const unique_address& from,
                              const unique_address& to,
                              singleton::hand_over_message&& m) {
  auto i = w_.index_of(to);
  if (!i || w_.failure() || !current(*i, to))
    return;
  w_.note(fmt::format("{} -> {}: {} arrives", to_string(from), to_string(to),
                      singleton::name_of(m)));
  apply(*i, nodes_[*i].manager->on_message(from, m, w_.local_now(*i)));
  check();
}

// -- the instance
// ------------------------------------------------------------------

void singleton_layer::start_instance(size_t i,
                                     const singleton::start_instance& s) {
  auto& ns = nodes_[i];
  auto now = w_.sched().now();
  ++starts_;
  start_log_.emplace_back(now, i);
  w_.note(fmt::format("{} instance #{} STARTS (fencing token {})",
                      to_string(ns.self), s.incarnation, s.fencing_token));
  for (size_t j = 0; j < nodes_.size(); ++j)
    if (nodes_[j].inst)
      return w_.fail(
        "one_instance",
        fmt::format("{} starts instance #{} while {}'s instance #{} (started "
                    "at {} ms{}) is still live",
                    to_string(ns.self), s.incarnation,
                    to_string(nodes_[j].self), nodes_[j].inst->incarnation,
                    ms(nodes_[j].inst->started),
                    nodes_[j].inst->stop_requested ? ", asked to stop" : ""));
  if (settings_.manager.use_lease) {
    if (any_token_ && s.fencing_token <= max_token_)
      return w_.fail("tokens_increase",
                     fmt::format("{} starts instance #{} with fencing token {} "
                                 "but an earlier start had token {}",
                                 to_string(ns.self), s.incarnation,
                                 s.fencing_token, max_token_));
    any_token_ = true;
    max_token_ = std::max(max_token_, s.fencing_token);
  }
  ns.inst = instance{s.incarnation, s.fencing_token, now, false};
  if (on_instance_)
    on_instance_(i, s.incarnation, true);
  schedule_self_stop(i);
}

void singleton_layer::schedule_self_stop(size_t i) {
  auto& r = w_.random();
  if (!faults_on_ || !r.chance(settings_.self_stop))
    return;
  auto self = nodes_[i].self;
  auto inc = nodes_[i].inst->incarnation;
  w_.sched().after(r.between(1s, 20s), [this, i, self, inc] {
    auto& ns = nodes_[i];
    if (w_.failure() || !faults_on_ || ns.self != self || !ns.inst
        || ns.inst->incarnation != inc || ns.inst->stop_requested)
      return;
    terminate_instance(i, "stopped by itself");
  });
}

void singleton_layer::terminate_instance(size_t i, const std::string& why) {
  auto& ns = nodes_[i];
  auto inc = ns.inst->incarnation;
  w_.note(fmt::format("{} instance #{} TERMINATED ({})", to_string(ns.self),
                      inc, why));
  ns.inst.reset();
  if (on_instance_)
    on_instance_(i, inc, false);
  if (ns.manager)
    apply(i, ns.manager->on_instance_terminated(inc, w_.local_now(i)));
  check();
}

void singleton_layer::crash(size_t i) {
  if (!w_.alive(i))
    return;
  w_.crash(i);
  if (i >= nodes_.size())
    return;
  auto& ns = nodes_[i];
  if (ns.inst) {
    w_.note(fmt::format("{} instance #{} TERMINATED (crash)",
                        to_string(ns.self), ns.inst->incarnation));
    if (on_instance_)
      on_instance_(i, ns.inst->incarnation, false);
  }
  ns.inst.reset();
  ns.manager.reset();
  ns.tick_due.reset();
  ns.lease = lease_client{};
}

// -- the lease
// ---------------------------------------------------------------------

timespan singleton_layer::safety_margin() const {
  return std::max(timespan{settings_.lease_ttl / 10}, timespan{200ms});
}

bool singleton_layer::check_alive(size_t i) const {
  auto& l = nodes_[i].lease;
  return l.phase == lease_phase::held && w_.local_now(i) < l.deadline;
}

bool singleton_layer::backend_free_for(const unique_address& a) const {
  return !holder_ || *holder_ == a
         || w_.sched().now() - renewed_ >= settings_.lease_ttl;
}

void singleton_layer::cut_from_lease(size_t i, bool cut) {
  if (cut)
    cut_.insert(i);
  else
    cut_.erase(i);
  w_.note(fmt::format("node {} {} the lease backend", i,
                      cut ? "cut off from" : "reaches"));
}

void singleton_layer::stop_faults() {
  faults_on_ = false;
  cut_.clear();
  downing_.stop_faults();
}

template <class Op, class Answer, class Timeout>
void singleton_layer::lease_request(size_t i, const std::string& what, Op op,
                                    Answer answer, Timeout timeout) {
  auto& ns = nodes_[i];
  auto self = ns.self;
  auto id = ++requests_;
  ns.lease.request = id;
  auto& r = w_.random();
  auto now = w_.sched().now();
  auto& f = settings_.lease_faults;
  auto unavailable = [this, &f](timespan t) {
    return faults_on_
           && std::any_of(
             f.unavailable.begin(), f.unavailable.end(),
             [t](auto& p) { return p.first <= t && t < p.second; });
  };
  auto timeout_at
    = w_.global_time_of(i, w_.local_now(i) + settings_.lease_operation_timeout);
  w_.sched().at(timeout_at, [this, i, self, id, timeout] {
    auto& ns = nodes_[i];
    if (w_.failure() || !current(i, self) || ns.lease.request != id)
      return;
    ns.lease.request = 0;
    timeout();
    check();
  });
  if (cut_.count(i) > 0 || unavailable(now)) {
    w_.note(fmt::format("{} lease {}: the backend is unreachable",
                        to_string(self), what));
    return;
  }
  auto arrival = now + r.between(2ms, 20ms);
  w_.sched().at(arrival, [this, i, self, id, what, op, answer, unavailable] {
    if (w_.failure())
      return;
    auto result = op(); // applied at the backend
    auto& rnd = w_.random();
    auto& faults = settings_.lease_faults;
    bool lost = faults_on_ && rnd.chance(faults.lost);
    if (what == "acquire" && result.first && faults_on_
        && rnd.chance(faults.applied_lost))
      lost = true;
    auto delay = faults_on_ && rnd.chance(faults.slow) ? rnd.between(1s, 4s)
                                                       : rnd.between(2ms, 20ms);
    w_.note(fmt::format(
      "lease backend: {} by {}: {}{}", what, to_string(self),
      result.first ? fmt::format("ok (token {})", result.second) : "refused",
      lost ? " (answer lost)" : fmt::format(" (answer in {} ms)", ms(delay))));
    if (lost || cut_.count(i) > 0 || unavailable(w_.sched().now()))
      return;
    w_.sched().after(delay, [this, i, self, id, answer, result] {
      auto& ns = nodes_[i];
      if (w_.failure() || !current(i, self) || ns.lease.request != id)
        return;
      ns.lease.request = 0;
      answer(result.first, result.second);
      check();
    });
  });
}

void singleton_layer::lease_acquire(size_t i) {
  auto& ns = nodes_[i];
  ns.lease.phase = lease_phase::acquiring;
  auto start = w_.local_now(i);
  auto self = ns.self;
  lease_request(
    i, "acquire",
    [this, self] {
      if (!backend_free_for(self))
        return std::make_pair(false, uint64_t{0});
      holder_ = self;
      renewed_ = w_.sched().now();
      return std::make_pair(true, ++token_counter_);
    },
    [this, i, start](bool ok, uint64_t token) {
      auto& ns = nodes_[i];
      if (ok) {
        ns.lease.phase = lease_phase::held;
        ns.lease.token = token;
        ns.lease.deadline = start + settings_.lease_ttl - safety_margin();
        auto at = w_.global_time_of(i, ns.lease.deadline);
        w_.sched().at(at, [this] { check(); });
        lease_renew(i, token);
      } else {
        ns.lease.phase = lease_phase::idle;
      }
      apply(i, ns.manager->on_lease_acquired(ok, token, w_.local_now(i)));
    },
    [this, i] {
      auto& ns = nodes_[i];
      ns.lease.phase = lease_phase::idle;
      apply(i, ns.manager->on_lease_acquired(false, 0, w_.local_now(i)));
    });
}

void singleton_layer::lease_renew(size_t i, uint64_t token) {
  auto self = nodes_[i].self;
  auto at = w_.global_time_of(i, w_.local_now(i) + settings_.lease_ttl / 3);
  w_.sched().at(at, [this, i, self, token] {
    auto& ns = nodes_[i];
    if (w_.failure() || !current(i, self) || ns.lease.phase != lease_phase::held
        || ns.lease.token != token)
      return;
    auto start = w_.local_now(i);
    lease_request(
      i, "renew",
      [this, self] {
        if (holder_ != self
            || w_.sched().now() - renewed_ >= settings_.lease_ttl)
          return std::make_pair(false, uint64_t{0});
        renewed_ = w_.sched().now();
        return std::make_pair(true, uint64_t{0});
      },
      [this, i, start, token](bool ok, uint64_t) {
        auto& ns = nodes_[i];
        if (ns.lease.phase != lease_phase::held || ns.lease.token != token)
          return;
        if (!ok)
          return lease_lost(i, "the backend names another holder or none");
        ns.lease.deadline = std::max(
          ns.lease.deadline, start + settings_.lease_ttl - safety_margin());
        auto at = w_.global_time_of(i, ns.lease.deadline);
        w_.sched().at(at, [this] { check(); });
      },
      [] {});
    lease_renew(i, token);
  });
}

void singleton_layer::lease_release(size_t i) {
  auto& ns = nodes_[i];
  ns.lease.phase = lease_phase::releasing;
  auto self = ns.self;
  auto released = [this, i](bool, uint64_t) {
    auto& ns = nodes_[i];
    ns.lease.phase = lease_phase::idle;
    apply(i, ns.manager->on_lease_released(w_.local_now(i)));
  };
  lease_request(
    i, "release",
    [this, self] {
      if (holder_ != self)
        return std::make_pair(true, uint64_t{0});
      holder_.reset();
      return std::make_pair(true, uint64_t{0});
    },
    released, [released] { released(false, 0); });
}

void singleton_layer::lease_lost(size_t i, const std::string& why) {
  auto& ns = nodes_[i];
  ns.lease.phase = lease_phase::idle;
  w_.note(fmt::format("{} lease lost: {}", to_string(ns.self), why));
  apply(
    i, ns.manager->on_lease_lost(ns.manager->fencing_token(), w_.local_now(i)));
}

void singleton_layer::expire_leases() {
  // check_alive() turns false by itself at the deadline; on_lost fires then.
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto& ns = nodes_[i];
    if (ns.manager && ns.lease.phase == lease_phase::held && !check_alive(i))
      lease_lost(i, "the local deadline passed");
  }
}

// -- the checkers
// ------------------------------------------------------------------

void singleton_layer::check() {
  if (w_.failure())
    return;
  expire_leases();
  size_t live = 0;
  for (auto& ns : nodes_)
    live += ns.inst ? 1 : 0;
  if (live > 1)
    return w_.fail("one_instance",
                   fmt::format("{} instances are live:\n{}", live, describe()));
  if (!settings_.manager.use_lease)
    return;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto& ns = nodes_[i];
    if (ns.inst && !ns.inst->stop_requested && !check_alive(i))
      return w_.fail(
        "lease_alive",
        fmt::format("{}'s instance #{} (token {}) runs, unasked to stop, but "
                    "its lease client's check_alive() is false",
                    to_string(ns.self), ns.inst->incarnation, ns.inst->token));
  }
}

bool singleton_layer::settled() const {
  std::vector<size_t> live;
  for (size_t i = 0; i < w_.size(); ++i)
    if (w_.alive(i))
      live.push_back(i);
  if (live.empty() || !w_.converged(live.size()))
    return false;
  auto target = target_up(w_.engine(live.front()).state().latest_gossip());
  if (!target)
    return false;
  auto at = w_.index_of(*target);
  size_t running = 0;
  for (auto& ns : nodes_)
    running += ns.inst ? 1 : 0;
  if (!at || running != 1 || *at >= nodes_.size())
    return false;
  auto& ns = nodes_[*at];
  return ns.manager && ns.self == *target && ns.inst && !ns.inst->stop_requested
         && (!settings_.manager.use_lease || check_alive(*at));
}

std::string singleton_layer::describe() const {
  std::string out;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto& ns = nodes_[i];
    out += fmt::format(
      "  node {} {}: manager {}, instance {}, lease {}\n", i,
      to_string(ns.self),
      ns.manager ? singleton::to_string(ns.manager->state()) : "none",
      ns.inst ? fmt::format("#{} token {} since {} ms{}", ns.inst->incarnation,
                            ns.inst->token, ms(ns.inst->started),
                            ns.inst->stop_requested ? " (asked to stop)" : "")
              : "none",
      ns.lease.phase == lease_phase::held ? fmt::format(
        "held (token {}, alive {})", ns.lease.token, check_alive(i))
      : ns.lease.phase == lease_phase::acquiring ? "acquiring"
      : ns.lease.phase == lease_phase::releasing ? "releasing"
                                                 : "idle");
  }
  return out;
}

// -- the random scenario
// -----------------------------------------------------------

std::optional<manager_bug> singleton_bug_named(const std::string& name) {
  if (name == "none")
    return manager_bug::none;
  if (name == "skip_hand_over")
    return manager_bug::skip_hand_over;
  if (name == "trust_any_done")
    return manager_bug::trust_any_done;
  if (name == "ignore_lease_lost")
    return manager_bug::ignore_lease_lost;
  if (name == "reuse_token")
    return manager_bug::reuse_token;
  return std::nullopt;
}

scenario_result run_singleton_scenario(uint64_t seed,
                                       const singleton_scenario& options) {
  singleton_layer* layer = nullptr;
  auto ws = resolver_world_settings(layer);
  ws.trace = options.trace;
  // The membership simulation checks the membership; here its checkers
  // would only slow the sweep down.
  ws.checkers = false;
  membership_world w{seed, ws};
  auto& r = w.random();
  auto& s = w.sched();
  size_t n = 4 + r.below(4);
  for (size_t i = 0; i < n; ++i)
    w.add_node();
  downing_world_settings ds;
  auto& stability = ds.engine.downing.stability;
  stability.stable_after = 3s + r.between(0s, 2s);
  stability.down_all_when_unstable = 0s;
  bool lease_majority = options.use_lease && r.chance(0.3);
  if (lease_majority) {
    downing::lease_majority lm;
    lm.acquire_lease_delay_for_minority = 2s;
    lm.release_after = 10s;
    ds.engine.downing.active_strategy = lm;
  } else {
    ds.engine.downing.active_strategy = downing::keep_majority{};
  }
  singleton_world_settings ss;
  ss.bug = options.bug;
  ss.manager.use_lease = options.use_lease;
  ss.manager.down_removal_margin
    = options.use_lease ? 0s : stability.stable_after;
  ss.manager.lease_retry_interval = 2s;
  ss.manager.restart_min_backoff = 1s;
  ss.manager.restart_max_backoff = 5s;
  ss.lease_ttl = 4s + r.between(0s, 4s);
  const timespan faults_start = 25s;
  const timespan faults_end = faults_start + 40s;
  auto& lf = ss.lease_faults;
  if (options.use_lease) {
    if (r.chance(0.4))
      for (auto k = r.below(3) + 1; k > 0; --k) {
        auto from = faults_start + r.between(0s, 35s);
        lf.unavailable.emplace_back(from, from + r.between(1s, 10s));
      }
    lf.lost = r.chance(0.3) ? 0.1 : 0.0;
    lf.slow = r.chance(0.3) ? 0.1 : 0.0;
    lf.applied_lost = r.chance(0.3) ? 0.3 : 0.0;
  }
  downing_layer dl{w, ds};
  singleton_layer sl{w, dl, ss};
  layer = &sl;
  for (size_t i = 0; i < n; ++i)
    s.at(r.between(0s, 3s), [&w, i] { w.start(i, {0, 1}); });
  w.run_until(20s, [&] { return w.converged(n); });
  auto live = [&] {
    std::vector<size_t> out;
    for (size_t i = 0; i < n; ++i)
      if (w.alive(i) && w.engine(i).is_member())
        out.push_back(i);
    return out;
  };
  // The oldest up member in the view of the first live node (the
  // singleton target: the scenario runs one app_version).
  auto oldest = [&]() -> std::optional<size_t> {
    auto l = live();
    if (l.empty())
      return std::nullopt;
    auto a = target_up(w.engine(l.front()).state().latest_gossip());
    return a ? w.index_of(*a) : std::nullopt;
  };
  auto restart = [&](size_t i) {
    if (w.alive(i) || !sl.stopped(i))
      return;
    auto l = live();
    if (l.empty()) {
      // A new cluster only once the old one is gone entirely (its last
      // instance may still be stopping).
      for (size_t j = 0; j < n; ++j)
        if (w.alive(j) || !sl.stopped(j))
          return;
      l.push_back(i); // self-join
    }
    w.start(i, l);
  };
  auto stuck = [&](size_t i) {
    if (!w.alive(i))
      return false;
    auto self = w.engine(i).self_member();
    if (!w.engine(i).is_member() || !self || self->status != member_status::up)
      return true;
    for (auto j : live()) {
      auto& g = w.engine(j).state().latest_gossip();
      if (std::none_of(g.members().begin(), g.members().end(),
                       [&](auto& m) { return m.address == self->address; }))
        return true;
    }
    return false;
  };
  // Only through members that are not stuck: a stuck node's view is an
  // island of gone members, which downing them would make a second
  // cluster.
  auto down_the_gone = [&] {
    for (auto i : live()) {
      if (stuck(i))
        continue;
      for (auto& m : w.engine(i).state().latest_gossip().members()) {
        auto j = w.index_of(m.address);
        bool gone = !j || !w.alive(*j) || w.engine(*j).self() != m.address;
        if (gone && m.status != member_status::down)
          s.at(s.now(), [&w, i, a = m.address] { w.down_address(i, a); });
      }
    }
  };
  auto leave = [&](size_t i) {
    if (w.alive(i) && live().size() > 2)
      w.leave(i, i);
  };
  auto crash = [&](size_t i) {
    if (live().size() > 2)
      sl.crash(i);
  };
  for (auto t = faults_start + r.between(0s, 2s); t < faults_end;
       t += r.between(1s, 4s)) {
    s.at(t, [&] {
      auto k = r.below(20);
      auto any = r.below(n);
      if (k < 2) {
        leave(any);
      } else if (k < 4) { // S1: the oldest and another leave within 100 ms
        auto o = oldest();
        if (!o)
          return;
        auto other = (*o + 1 + r.below(n - 1)) % n;
        w.note(fmt::format("S1: {} and {} leave", *o, other));
        leave(*o);
        s.after(r.between(0ms, 100ms), [&, other] { leave(other); });
      } else if (k < 5) {
        if (auto o = oldest())
          leave(*o);
      } else if (k < 6) {
        crash(any);
      } else if (k < 8) {
        if (auto o = oldest())
          crash(*o);
      } else if (k < 11) { // a clean partition into two groups
        std::vector<size_t> a;
        std::vector<size_t> b;
        for (size_t i = 0; i < n; ++i)
          (r.chance(0.5) ? a : b).push_back(i);
        w.heal();
        w.note("heal");
        if (a.empty() || b.empty())
          return;
        w.partition(a, b);
        if (options.use_lease && r.chance(0.5))
          for (auto i : a.size() < b.size() ? a : b)
            sl.cut_from_lease(i, true);
      } else if (k < 13 && options.use_lease) {
        // messy: one direction, or a clogged link (with a lease only:
        // keep_majority may then leave both sides up for a while, and
        // without a lease nothing else keeps their singletons apart)
        auto x = r.below(n);
        auto y = (x + 1 + r.below(n - 1)) % n;
        if (r.chance(0.5)) {
          w.net().link(w.address(x), w.address(y)).blocked = true;
          w.note(fmt::format("block {} -> {}", x, y));
        } else {
          w.net().link(w.address(x), w.address(y)).extra_delay
            = r.between(500ms, 4s);
          w.note(fmt::format("clog {} -> {}", x, y));
        }
      } else if (k < 15) {
        w.heal();
        w.note("heal");
        for (size_t i = 0; i < n; ++i)
          sl.cut_from_lease(i, false);
      } else if (k < 16) {
        if (options.use_lease) {
          sl.cut_from_lease(any, true);
          s.after(r.between(1s, 10s),
                  [&, any] { sl.cut_from_lease(any, false); });
        }
      } else {
        for (size_t i = 0; i < n; ++i)
          if (!w.alive(i) && r.chance(0.5))
            restart(i);
      }
    });
  }
  scenario_result result;
  result.seed = seed;
  result.nodes = n;
  w.note(
    fmt::format("singleton scenario: {} nodes, {}, {}, stable_after {} ms, "
                "down_removal_margin {} ms, lease ttl {} ms",
                n, options.use_lease ? "with a lease" : "without a lease",
                lease_majority ? "lease_majority" : "keep_majority",
                ms(stability.stable_after), ms(ss.manager.down_removal_margin),
                ms(ss.lease_ttl)));
  w.run_until(faults_end);
  if (!w.failure()) {
    // The faults stop, the network heals, every stopped node starts again.
    w.heal();
    sl.stop_faults();
    auto start = s.now();
    // After 10 s an operator downs the members that are gone (crashed, or
    // an earlier incarnation), as the membership scenario does: a minority
    // of exiting members cannot be removed otherwise.
    // A node stuck outside the cluster for 20 s (joining or weakly up in
    // its own view, or missing from another live member's view: the
    // membership's own liveness, not the singleton's) is restarted by the
    // operator.
    std::vector<timespan> stuck_since(n, start);
    for (auto t = start; t < start + 90s; t += 2s)
      s.at(t, [&, operator_on = t >= start + 10s] {
        for (size_t i = 0; i < n; ++i)
          restart(i);
        if (!operator_on || sl.settled())
          return;
        down_the_gone();
        for (size_t i = 0; i < n; ++i) {
          if (!stuck(i))
            stuck_since[i] = s.now();
          else if (s.now() - stuck_since[i] >= 20s) {
            w.note(fmt::format("operator: node {} is stuck outside the "
                               "cluster, restarting it",
                               i));
            sl.crash(i);
            stuck_since[i] = s.now();
          }
        }
      });
    bool ok = w.run_until(start + options.liveness_bound,
                          [&] { return sl.settled(); });
    result.liveness_rounds
      = static_cast<double>((s.now() - start).count())
        / static_cast<double>(ws.membership.gossip_interval.count());
    if (!ok && !w.failure())
      result.failure = violation{
        "singleton_liveness",
        fmt::format("{} s after the faults stopped, not exactly one instance "
                    "on the singleton target of the live nodes:\n{}",
                    ms(options.liveness_bound) / 1000, sl.describe())};
    // a little longer: the instance stays where it is
    if (ok)
      w.run_until(s.now() + 5s);
  }
  conclude(result, w);
  return result;
}

} // namespace troupe::sim
