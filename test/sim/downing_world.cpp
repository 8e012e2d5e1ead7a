#include "troupe/sim/downing_world.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::sim {

using namespace std::chrono_literals;
using cluster::member_status;

namespace {

/// How long a node that knows it is down may keep running.
constexpr timespan stop_grace = 1s;

// -- oracles (independent of the downing core)
// ----------------------------------

/// Whether `node`'s own view shows it as an up member.
bool up_in_own_view(const membership_engine& e) {
  if (!e.is_member() || e.is_terminated())
    return false;
  auto self = e.self_member();
  return self && self->status == member_status::up;
}

/// The up members of a node's view.
std::set<unique_address> up_members(const membership_engine& e) {
  std::set<unique_address> out;
  for (auto& m : e.state().latest_gossip().members())
    if (m.status == member_status::up)
      out.insert(m.address);
  return out;
}

/// Whether `e`'s view has `other` down, exiting or not at all.
bool gone_in(const membership_engine& e, const unique_address& other) {
  for (auto& m : e.state().latest_gossip().members())
    if (m.address == other)
      return m.status == member_status::down
             || m.status == member_status::exiting;
  return true;
}

} // namespace

downing_layer::downing_layer(membership_world& world,
                             downing_world_settings settings)
  : w_(world), settings_(std::move(settings)) {
  // nop
}

bool downing_layer::current(size_t i, const unique_address& self) const {
  return w_.alive(i) && w_.engine(i).self() == self && nodes_[i].engine
         && nodes_[i].self == self;
}

bool downing_layer::protected_node(const unique_address& a) const {
  auto i = w_.index_of(a);
  return i && settings_.protected_majority.count(*i) > 0;
}

void downing_layer::after_step(size_t i) {
  if (w_.failure())
    return;
  if (nodes_.size() < w_.size())
    nodes_.resize(w_.size());
  auto& e = w_.engine(i);
  auto& ns = nodes_[i];
  auto now = w_.sched().now();
  if (ns.self != e.self()) {
    ns.down_since.reset();
    ns.engine.reset();
  }
  if (w_.alive(i)) {
    auto self = e.self_member();
    if (!ns.down_since
        && (e.is_terminated() || (self && self->status == member_status::down)))
      ns.down_since = now;
    if (holder_ == e.self())
      expiry_ = now + settings_.lease_ttl; // the holder renews
  }
  check_stopped();
  check_majority(i);
  feed(i);
}

void downing_layer::check_majority(size_t i) {
  auto& g = settings_.protected_majority;
  if (g.empty() || g.count(i) == 0 || w_.failure())
    return;
  bool lease = std::holds_alternative<downing::lease_majority>(
    *settings_.engine.downing.active_strategy);
  if (lease && (harmful_fault_ || outsider_held_lease_))
    return;
  auto& e = w_.engine(i);
  auto fail = [&](const std::string& what) {
    w_.fail("majority_survives",
            fmt::format("{} {}; protected majority {{{}}}", to_string(e.self()),
                        what, fmt::join(g, ",")));
  };
  if (!w_.alive(i) || e.is_terminated())
    return fail("stopped");
  for (auto& m : e.state().latest_gossip().members())
    if (m.status == member_status::down && protected_node(m.address))
      return fail(fmt::format("sees {} down", to_string(m.address)));
}

void downing_layer::check_stopped() {
  auto now = w_.sched().now();
  for (size_t j = 0; j < nodes_.size(); ++j) {
    auto& ns = nodes_[j];
    if (ns.down_since && w_.alive(j) && now - *ns.down_since > stop_grace)
      return w_.fail(
        "downed_node_stops",
        fmt::format(
          "{} knows it is down (or its membership "
          "terminated) since {} ms and still runs",
          to_string(w_.address(j)),
          std::chrono::duration_cast<std::chrono::milliseconds>(*ns.down_since)
            .count()));
  }
}

void downing_layer::feed(size_t i) {
  auto& e = w_.engine(i);
  auto& ns = nodes_[i];
  if (!w_.alive(i) || !e.is_member() || e.is_terminated()) {
    ns.engine.reset();
    return;
  }
  if (!ns.engine) {
    ns.engine = std::make_unique<downing::downing_engine>(
      e.self(), settings_.engine, w_.local_now(i), settings_.bug);
    ns.self = e.self();
    ns.tick_due.reset();
  }
  apply(i, ns.self, ns.engine->on_membership(e.state(), w_.local_now(i)));
  schedule_tick(i);
}

void downing_layer::apply(size_t i, const unique_address& self,
                          downing::downing_effects fx) {
  if (fx.empty() || w_.failure())
    return;
  for (auto& line : fx.log)
    w_.note(fmt::format("{} SBR {}: {}", to_string(self),
                        downing::to_string(line.level), line.text));
  if (fx.release_lease && holder_ == self) {
    holder_.reset();
    w_.note(fmt::format("lease released by {}", to_string(self)));
  }
  if (!fx.down.empty()) {
    // As an actor message to the membership: after this step.
    w_.sched().at(w_.sched().now(), [this, i, self, downs = fx.down] {
      if (w_.failure() || !current(i, self))
        return;
      for (auto& node : downs)
        w_.down_address(i, node);
    });
  }
  if (fx.acquire_lease)
    acquire(i, self);
}

void downing_layer::schedule_tick(size_t i) {
  auto& ns = nodes_[i];
  if (!ns.engine)
    return;
  if (auto due = ns.engine->next_tick())
    w_.schedule_tick_at(i, *due, ns.tick_due, [this, i, self = ns.self] {
      if (!current(i, self))
        return;
      apply(i, self, nodes_[i].engine->tick(w_.local_now(i)));
      schedule_tick(i);
    });
}

bool downing_layer::lease_free_for(const unique_address& self) const {
  return !holder_ || *holder_ == self || w_.sched().now() >= expiry_;
}

void downing_layer::acquire(size_t i, const unique_address& self) {
  enum class answer { granted, already_exists, refused, unavailable };
  ++acquires_;
  auto now = w_.sched().now();
  auto& r = w_.random();
  bool down_period
    = faults_on_
      && std::any_of(settings_.faults.unavailable.begin(),
                     settings_.faults.unavailable.end(), [now](auto& p) {
                       return p.first <= now && now < p.second;
                     });
  answer a = answer::refused;
  if (down_period) {
    a = answer::unavailable;
    harmful_fault_ = true;
  } else if (lease_free_for(self)) {
    holder_ = self;
    expiry_ = now + settings_.lease_ttl;
    if (!protected_node(self))
      outsider_held_lease_ = true;
    a = faults_on_ && r.chance(settings_.faults.benign_conflict)
          ? answer::already_exists
          : answer::granted;
  }
  bool lost = faults_on_ && r.chance(settings_.faults.lost);
  auto delay = faults_on_ && r.chance(settings_.faults.slow)
                 ? r.between(1s, 8s)
                 : r.between(5ms, 50ms);
  // 100 ms of margin for the node's clock drift
  if (lost || delay + 100ms >= settings_.engine.lease_answer_timeout)
    harmful_fault_ = true;
  static constexpr const char* names[]
    = {"granted", "already exists", "refused", "unavailable"};
  w_.note(fmt::format(
    "lease acquire by {}: {}{}", to_string(self), names[static_cast<int>(a)],
    lost
      ? " (answer lost)"
      : fmt::format(
        " (answer in {} ms)",
        std::chrono::duration_cast<std::chrono::milliseconds>(delay).count())));
  if (lost)
    return;
  w_.sched().at(now + delay, [this, i, self, a] {
    if (w_.failure() || !current(i, self))
      return;
    // The lease client (scenario D3): "already exists" is acquired when
    // this owner holds the lease.
    bool acquired
      = a == answer::granted
        || (a == answer::already_exists && !settings_.benign_conflict_as_refused
            && holder_ == self);
    apply(i, self,
          nodes_[i].engine->on_lease_acquired(acquired, w_.local_now(i)));
    schedule_tick(i);
  });
}

bool downing_layer::settled() const {
  std::set<unique_address> live;
  std::vector<size_t> up;
  for (size_t i = 0; i < w_.size(); ++i)
    if (w_.alive(i) && up_in_own_view(w_.engine(i))) {
      live.insert(w_.address(i));
      up.push_back(i);
    }
  return std::all_of(up.begin(), up.end(), [&](size_t i) {
    return up_members(w_.engine(i)) == live;
  });
}

std::optional<violation> downing_layer::check_one_side() const {
  std::vector<size_t> up;
  for (size_t i = 0; i < w_.size(); ++i)
    if (w_.alive(i) && up_in_own_view(w_.engine(i)))
      up.push_back(i);
  for (auto i : up)
    for (auto j : up)
      if (i < j && gone_in(w_.engine(i), w_.address(j))
          && gone_in(w_.engine(j), w_.address(i)))
        return violation{
          "one_side",
          fmt::format("split brain: {} and {} are both up and each has the "
                      "other down or removed",
                      to_string(w_.address(i)), to_string(w_.address(j)))};
  if (!settled())
    return violation{"one_side",
                     "the live up nodes do not agree on one set of up members "
                     "that are exactly the live up nodes"};
  return std::nullopt;
}

// -- the random scenario
// -----------------------------------------------------------

scenario_result run_downing_scenario(uint64_t seed,
                                     const downing_scenario& options) {
  downing_layer* layer = nullptr;
  auto ws = resolver_world_settings(layer);
  ws.keep_running_when_downed = options.keep_running_when_downed;
  membership_world w{seed, ws};
  auto& r = w.random();
  auto& s = w.sched();
  size_t n = 5 + r.below(5);
  for (size_t i = 0; i < n; ++i)
    w.add_node();
  bool clean = r.chance(0.5);
  downing_world_settings ds;
  ds.bug = options.bug;
  ds.benign_conflict_as_refused = options.benign_conflict_as_refused;
  auto& stability = ds.engine.downing.stability;
  stability.stable_after = 3s + r.between(0s, 2s);
  stability.down_all_when_unstable = clean ? 0s : 4s;
  if (options.strategy == "lease_majority") {
    downing::lease_majority lm;
    lm.acquire_lease_delay_for_minority = 2s;
    lm.release_after = 10s;
    ds.engine.downing.active_strategy = lm;
  } else {
    ds.engine.downing.active_strategy = downing::keep_majority{};
  }
  // The protected majority (clean seeds): more than half, not everyone.
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = i;
  for (size_t i = n - 1; i > 0; --i)
    std::swap(order[i], order[r.below(i + 1)]);
  if (clean) {
    size_t size = n / 2 + 1 + r.below(n - (n / 2 + 1));
    ds.protected_majority.insert(order.begin(), order.begin() + size);
  }
  auto& g = ds.protected_majority;
  for (size_t i = 0; i < n; ++i)
    s.at(r.between(0s, 3s), [&w, i] { w.start(i, {0, 1}); });
  // Faults start once everyone is up (at most at 20 s).
  w.run_until(20s, [&] { return w.converged(n); });
  bool formed = w.converged(n);
  if (!formed)
    g.clear(); // no majority was up when the faults started
  const timespan faults_start = s.now() + 1s;
  const timespan faults_end = faults_start + 40s;
  if (r.chance(0.3))
    for (auto k = r.below(3) + 1; k > 0; --k) {
      auto from = faults_start + r.between(0s, 35s);
      ds.faults.unavailable.emplace_back(from, from + r.between(2s, 8s));
    }
  ds.faults.slow = r.chance(0.3) ? 0.3 : 0.0;
  ds.faults.lost = r.chance(0.3) ? 0.2 : 0.0;
  ds.faults.benign_conflict = r.chance(0.5) ? 0.5 : 0.0;
  downing_layer dl{w, ds};
  layer = &dl;
  auto alive_count = [&] {
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
      k += w.alive(i) ? 1 : 0;
    return k;
  };
  auto pick = [&](size_t x) {
    auto y = (x + 1 + r.below(n - 1)) % n;
    return y;
  };
  for (auto t = faults_start + r.between(0s, 3s); t < faults_end;
       t += r.between(1s, 5s)) {
    s.at(t, [&] {
      auto k = r.below(10);
      if (clean) {
        if (k < 5) { // a clean partition into 2 or 3 groups, G in one
          auto groups = 2 + r.below(2);
          std::vector<std::vector<size_t>> parts(groups);
          auto home = r.below(groups);
          for (size_t i = 0; i < n; ++i)
            parts[g.count(i) > 0 ? home : r.below(groups)].push_back(i);
          w.heal();
          w.note("heal");
          for (size_t a = 0; a < groups; ++a)
            for (size_t b = a + 1; b < groups; ++b)
              if (!parts[a].empty() && !parts[b].empty())
                w.partition(parts[a], parts[b]);
        } else if (k < 7) {
          w.heal();
          w.note("heal");
        } else { // crash a node outside G
          auto i = r.below(n);
          if (g.count(i) == 0 && alive_count() > 2)
            w.crash(i);
        }
        return;
      }
      if (k < 3) { // symmetric partition, on top of what is there
        std::vector<size_t> a;
        std::vector<size_t> b;
        for (size_t i = 0; i < n; ++i)
          (r.chance(0.5) ? a : b).push_back(i);
        if (!a.empty() && !b.empty())
          w.partition(a, b);
      } else if (k < 5) { // asymmetric: one direction of one pair
        auto x = r.below(n);
        auto y = pick(x);
        w.net().link(w.address(x), w.address(y)).blocked = true;
        w.note(fmt::format("block {} -> {}", x, y));
      } else if (k < 7) {
        w.heal();
        w.note("heal");
      } else if (k < 8) { // clogged link
        auto x = r.below(n);
        auto y = pick(x);
        w.net().link(w.address(x), w.address(y)).extra_delay
          = r.between(500ms, 4s);
        w.note(fmt::format("clog {} -> {}", x, y));
      } else if (alive_count() > 2) {
        w.crash(r.below(n));
      }
    });
  }
  scenario_result result;
  result.seed = seed;
  result.nodes = n;
  w.note(fmt::format("downing scenario: {} nodes, {}, {}, stable_after {} ms, "
                     "protected majority {{{}}}",
                     n, options.strategy, clean ? "clean" : "messy",
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                       stability.stable_after)
                       .count(),
                     fmt::join(g, ",")));
  w.run_until(faults_end);
  if (!w.failure()) {
    // The dust settles: faults stop, the network heals, the resolver downs
    // the crashed members, the downed shut down.
    w.heal();
    dl.stop_faults();
    auto start = s.now();
    w.run_until(start + 120s, [&] { return dl.settled(); });
    // a little longer, so that a split shows in removed members too
    w.run_until(s.now() + 10s);
    if (!w.failure())
      if (auto v = dl.check_one_side())
        result.failure = v;
    result.liveness_rounds
      = static_cast<double>((s.now() - start).count())
        / static_cast<double>(ws.membership.gossip_interval.count());
  }
  conclude(result, w);
  return result;
}

} // namespace troupe::sim
