#include "troupe/sim/membership_world.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace troupe::sim {

using namespace std::chrono_literals;
using cluster::gossip;
using cluster::member;
using cluster::member_status;
using cluster::unique_address;

namespace {

// -- oracles (independent of membership_state)
// ----------------------------------

int rank(member_status s) {
  switch (s) {
    case member_status::joining:
      return 0;
    case member_status::weakly_up:
      return 1;
    case member_status::up:
      return 2;
    case member_status::leaving:
      return 3;
    case member_status::exiting:
      return 4;
    case member_status::down:
      return 5;
    case member_status::removed:
      return 6;
  }
  return 0;
}

const member* find(const gossip& g, const unique_address& a) {
  for (auto& m : g.members())
    if (m.address == a)
      return &m;
  return nullptr;
}

// Unreachable or terminated in the eyes of some observer (whole table).
bool unreachable_by_anyone(const gossip& g, const unique_address& a) {
  return !g.reachability().is_reachable(a);
}

// Unreachable in the eyes of some observer that is not down.
bool unreachable_by_live_observer(const gossip& g, const unique_address& a) {
  for (auto& observer : g.members()) {
    if (observer.status == member_status::down)
      continue;
    if (!g.reachability().is_reachable(observer.address, a))
      return true;
  }
  return false;
}

// Akka's leaderOf without its exception for self (ADR 0006): among
// members that are not down and that no live observer finds unreachable,
// the first up or leaving one in address order; failing that, the lowest
// address with down and exiting sorted last.
std::optional<unique_address> oracle_leader(const gossip& g) {
  std::vector<const member*> reachable;
  for (auto& m : g.members())
    if (m.status != member_status::down
        && !unreachable_by_live_observer(g, m.address))
      reachable.push_back(&m);
  if (reachable.empty())
    return std::nullopt;
  std::sort(reachable.begin(), reachable.end(),
            [](auto* x, auto* y) { return x->address < y->address; });
  for (auto* m : reachable)
    if (m->status == member_status::up || m->status == member_status::leaving)
      return m->address;
  auto last = [](member_status s) {
    return s == member_status::down || s == member_status::exiting;
  };
  auto best = *std::min_element(reachable.begin(), reachable.end(),
                                [&](auto* x, auto* y) {
                                  if (last(x->status) != last(y->status))
                                    return !last(x->status);
                                  return x->address < y->address;
                                });
  return best->address;
}

// Akka's convergence: every up or leaving member has seen the version, and
// every member some live observer finds unreachable (self aside) is down
// or exiting.
bool oracle_convergence(const gossip& g, const unique_address& self) {
  for (auto& m : g.members()) {
    if ((m.status == member_status::up || m.status == member_status::leaving)
        && g.seen_by().count(m.address) == 0)
      return false;
    if (m.address != self && m.status != member_status::down
        && m.status != member_status::exiting
        && unreachable_by_live_observer(g, m.address))
      return false;
  }
  return true;
}

bool same_state(const gossip& x, const gossip& y) {
  return x.members() == y.members() && x.reachability() == y.reachability()
         && x.version() == y.version() && x.tombstones() == y.tombstones();
}

std::string describe(const gossip& g) {
  std::string out;
  for (auto& m : g.members())
    out += fmt::format("{}={} ", to_string(m.address), to_string(m.status));
  return out;
}

} // namespace

std::optional<std::string> check_merge_laws_with(const merge_fn& merge,
                                                 const gossip& a,
                                                 const gossip& b,
                                                 const gossip& c) {
  if (!same_state(merge(a, b), merge(b, a)))
    return "merge is not commutative: merge(a, b) != merge(b, a)";
  if (!same_state(merge(merge(a, b), c), merge(a, merge(b, c))))
    return "merge is not associative: merge(merge(a, b), c) != "
           "merge(a, merge(b, c))";
  if (!same_state(merge(a, a), a))
    return "merge is not idempotent: merge(a, a) != a";
  return std::nullopt;
}

// -- the world
// ----------------------------------------------------------------------

membership_world::membership_world(uint64_t seed, world_settings settings)
  : settings_(std::move(settings)), rng_(seed),
    net_(sched_, rng_,
         [this](auto& from, auto& to, membership_message&& m) {
           deliver(from, to, std::move(m));
         }),
    trace_(settings_.trace_lines) {
  net_.set_delay(settings_.min_delay, settings_.max_delay);
  if (!settings_.merge)
    settings_.merge
      = [](const gossip& x, const gossip& y) { return cluster::merge(x, y); };
}

size_t membership_world::add_node(std::vector<std::string> roles) {
  node n;
  n.ep = cluster::endpoint{fmt::format("10.0.0.{}", nodes_.size() + 1), 2552};
  n.roles = std::move(roles);
  index_[{n.ep.host, n.ep.port}] = nodes_.size();
  nodes_.push_back(std::move(n));
  return nodes_.size() - 1;
}

void membership_world::set_app_version(size_t i, cluster::app_version version) {
  nodes_.at(i).app_version = std::move(version);
}

cluster::endpoint membership_world::endpoint_of(size_t i) const {
  return nodes_.at(i).ep;
}

unique_address membership_world::address(size_t i) const {
  auto& n = nodes_.at(i);
  return n.engine ? n.engine->self() : unique_address{n.ep.host, n.ep.port, 0};
}

bool membership_world::alive(size_t i) const {
  return nodes_.at(i).alive;
}

const membership_engine& membership_world::engine(size_t i) const {
  return *nodes_.at(i).engine;
}

cluster::clock_reading membership_world::reading(const node& n) const {
  auto global = sched_.now();
  return {n.clock.local(global),
          cluster::wall_time{std::chrono::milliseconds{1'700'000'000'000}}
            + std::chrono::duration_cast<std::chrono::milliseconds>(global)};
}

void membership_world::start(size_t i, std::vector<size_t> seeds) {
  auto& n = nodes_.at(i);
  if (n.alive)
    return;
  auto settings = settings_.membership;
  if (n.app_version)
    settings.app_version = *n.app_version;
  settings.seed_nodes.clear();
  for (auto s : seeds)
    settings.seed_nodes.push_back(nodes_.at(s).ep);
  unique_address self{n.ep.host, n.ep.port, rng_.nonzero()};
  auto bug = settings_.buggy_nodes.empty() || settings_.buggy_nodes.count(i)
               ? settings_.bug
               : cluster::planted_bug::none;
  cluster::join_config config{
    {"cluster.name", "sim"},
    {"troupe.protocol_major", std::to_string(cluster::protocol_major)}};
  n.engine = std::make_unique<membership_engine>(
    self, std::set<std::string>{n.roles.begin(), n.roles.end()}, settings,
    config, cluster::default_join_config_checker(), rng_.nonzero(), bug);
  n.clock.origin = timestamp{1h} + rng_.between(0s, 1000s);
  auto d = settings_.drift;
  n.clock.rate
    = 1.0 - d + 2 * d * static_cast<double>(rng_.below(1'000'001)) / 1e6;
  n.clock.started = sched_.now();
  n.alive = true;
  n.ranks.clear();
  ++n.incarnations;
  n.tick_due.reset();
  trace_.add(sched_.now(), fmt::format("start {} (clock rate {:.5f})",
                                       to_string(self), n.clock.rate));
  act(i, [&](auto& e, auto t) { return e.start(t); });
}

void membership_world::join(size_t i, std::vector<cluster::endpoint> seeds) {
  auto& n = nodes_.at(i);
  if (!n.alive)
    return;
  std::string list;
  for (const auto& s : seeds)
    list += (list.empty() ? "" : ",") + cluster::to_string(s);
  trace_.add(sched_.now(),
             fmt::format("{} joins through {}", to_string(address(i)), list));
  act(i, [&](auto& e, auto t) { return e.join(std::move(seeds), t); });
}

void membership_world::crash(size_t i) {
  auto& n = nodes_.at(i);
  if (!n.alive)
    return;
  n.alive = false;
  trace_.add(sched_.now(), fmt::format("crash {}", to_string(address(i))));
}

void membership_world::leave(size_t by, size_t node_index) {
  auto& n = nodes_.at(by);
  if (!n.alive)
    return;
  trace_.add(sched_.now(),
             fmt::format("{} asks {} to leave", to_string(address(by)),
                         to_string(address(node_index))));
  act(by, [&](auto& e, auto t) { return e.leave(address(node_index), t); });
}

void membership_world::down(size_t by, size_t node_index) {
  down_address(by, address(node_index));
}

void membership_world::down_address(size_t by, const unique_address& node) {
  auto& n = nodes_.at(by);
  if (!n.alive)
    return;
  trace_.add(sched_.now(), fmt::format("{} downs {}", to_string(address(by)),
                                       to_string(node)));
  act(by, [&](auto& e, auto t) { return e.down(node, t); });
}

void membership_world::set_contacts(size_t i,
                                    const std::vector<size_t>& contacts) {
  auto& n = nodes_.at(i);
  if (!n.alive)
    return;
  std::vector<cluster::endpoint> eps;
  for (auto c : contacts)
    eps.push_back(nodes_.at(c).ep);
  trace_.add(sched_.now(),
             fmt::format("{} gets contacts {}", to_string(address(i)),
                         fmt::join(contacts, ",")));
  act(i, [&](auto& e, auto t) { return e.set_contact_endpoints(eps, t); });
}

void membership_world::hold_exit(size_t i, const std::string& holder,
                                 bool hold) {
  auto& n = nodes_.at(i);
  if (!n.alive)
    return;
  trace_.add(sched_.now(),
             fmt::format("{} {} its exit for {}", to_string(address(i)),
                         hold ? "holds" : "lets go", holder));
  act(i, [&](auto& e, auto t) { return e.hold_exit(holder, hold, t); });
}

void membership_world::partition(const std::vector<size_t>& a,
                                 const std::vector<size_t>& b) {
  std::vector<unique_address> xs;
  std::vector<unique_address> ys;
  for (auto i : a)
    xs.push_back(address(i));
  for (auto i : b)
    ys.push_back(address(i));
  net_.partition(xs, ys);
  trace_.add(sched_.now(), fmt::format("partition {} | {}", fmt::join(a, ","),
                                       fmt::join(b, ",")));
}

std::optional<size_t>
membership_world::index_of(const unique_address& a) const {
  auto it = index_.find({a.host, a.port});
  if (it == index_.end())
    return std::nullopt;
  return it->second;
}

void membership_world::deliver(const unique_address& from,
                               const unique_address& to,
                               membership_message&& m) {
  auto i = index_of(to);
  if (!i || !nodes_[*i].alive || failure_)
    return;
  auto& n = nodes_[*i];
  if (to.uid != 0 && to.uid != n.engine->self().uid)
    return; // meant for an earlier incarnation
  ++steps_;
  if (settings_.trace && !std::holds_alternative<cluster::heartbeat>(m)
      && !std::holds_alternative<cluster::heartbeat_response>(m))
    trace_.add(sched_.now(),
               fmt::format("{} -> {}: {}", to_string(from), to_string(to),
                           cluster::message_name(m)));
  if (auto* env = std::get_if<cluster::gossip_envelope>(&m);
      env != nullptr && settings_.checkers) {
    if (auto v = cluster::check_invariants(env->gossip))
      return fail(
        "gossip_invariants",
        fmt::format("{} sent an invalid gossip: {}", to_string(from), *v));
    auto& local = n.engine->state().latest_gossip();
    auto& third = third_ ? *third_ : local;
    if (auto v
        = check_merge_laws_with(settings_.merge, env->gossip, local, third))
      return fail("merge_laws", *v);
    third_ = env->gossip;
  }
  act(*i, [&](auto& e, auto t) { return e.receive(from, m, t); });
}

template <class Call>
void membership_world::act(size_t i, Call&& call) {
  auto& n = nodes_[i];
  // The leader checker needs the view before the call; copying it costs
  // O(members) per step, which only the checkers pay for.
  std::optional<cluster::membership_state> before;
  if (settings_.checkers)
    before = n.engine->state();
  handle(i, call(*n.engine, reading(n)), before ? &*before : nullptr);
}

void membership_world::handle(size_t i, cluster::membership_effects fx,
                              const cluster::membership_state* before) {
  auto& n = nodes_[i];
  auto self = n.engine->self();
  if (settings_.trace) {
    for (auto& line : fx.info)
      trace_.add(sched_.now(), fmt::format("{}: {}", to_string(self), line));
    for (auto& e : fx.events)
      trace_.add(sched_.now(), fmt::format("{} event {}", to_string(self),
                                           cluster::to_string(e)));
  }
  if (before != nullptr)
    check(i, fx, *before);
  for (auto& s : fx.send)
    net_.send(self, s.to, std::move(s.message));
  if (fx.shutdown && !settings_.keep_running_when_downed)
    n.alive = false;
  else
    schedule_tick(i);
  if (settings_.after_step)
    settings_.after_step(i);
  if (fx.shutdown && !n.alive && settings_.on_stop)
    settings_.on_stop(i, *fx.shutdown);
}

timestamp membership_world::local_now(size_t i) const {
  return nodes_.at(i).clock.local(sched_.now());
}

timespan membership_world::global_time_of(size_t i, timestamp local) const {
  auto& n = nodes_.at(i);
  auto wait = std::max(local - n.clock.local(sched_.now()), timespan{0});
  auto global_wait = timespan{
    static_cast<int64_t>(static_cast<double>(wait.count()) / n.clock.rate)
    + 1000};
  return sched_.now() + std::max(global_wait, timespan{1ms});
}

void membership_world::schedule_tick_at(size_t i, timestamp due,
                                        std::optional<timespan>& pending,
                                        std::function<void()> fire) {
  auto at = global_time_of(i, due);
  if (pending && *pending <= at && *pending >= sched_.now())
    return;
  pending = at;
  auto* p = &pending;
  sched_.at(at, [this, p, at, fire = std::move(fire)] {
    if (failure_ || *p != at)
      return;
    p->reset();
    fire();
  });
}

void membership_world::schedule_tick(size_t i) {
  auto& n = nodes_[i];
  auto due = n.engine->next_tick();
  if (!due || !n.alive)
    return;
  auto at = global_time_of(i, *due);
  if (n.tick_due && *n.tick_due <= at)
    return;
  n.tick_due = at;
  auto incarnation = n.incarnations;
  sched_.at(at, [this, i, at, incarnation] {
    auto& n = nodes_[i];
    if (!n.alive || n.incarnations != incarnation || n.tick_due != at
        || failure_)
      return;
    n.tick_due.reset();
    ++steps_;
    act(i, [](auto& e, auto t) { return e.tick(t); });
  });
}

void membership_world::check(size_t i, const cluster::membership_effects& fx,
                             const cluster::membership_state& before) {
  if (failure_)
    return;
  auto& n = nodes_[i];
  auto self = n.engine->self();
  auto& g = n.engine->state().latest_gossip();
  // status_monotonic and removed_never_returns, in this node's view.
  // A member that left this node's view was removed, tombstone or not.
  for (auto& [addr, r] : n.ranks)
    if (r < rank(member_status::removed) && find(g, addr) == nullptr)
      r = rank(member_status::removed);
  for (auto& [addr, at] : g.tombstones())
    n.ranks[addr] = rank(member_status::removed);
  for (auto& m : g.members()) {
    auto r = rank(m.status);
    auto it = n.ranks.find(m.address);
    if (it != n.ranks.end() && it->second == rank(member_status::removed))
      return fail("removed_never_returns",
                  fmt::format("{} sees the removed {} again as {}",
                              to_string(self), to_string(m.address),
                              to_string(m.status)));
    if (it != n.ranks.end() && r < it->second)
      return fail("status_monotonic",
                  fmt::format("{} saw {} go back to {}", to_string(self),
                              to_string(m.address), to_string(m.status)));
    n.ranks[m.address] = r;
  }
  // single_leader: moves only by the leader of a converged view.
  if (!fx.leader_moves.empty()) {
    auto& bg = before.latest_gossip();
    auto leader = oracle_leader(bg);
    if (leader != self)
      return fail("single_leader",
                  fmt::format("{} made leader moves ({}) but the leader of "
                              "its view is {}; view: {}",
                              to_string(self),
                              cluster::to_string(fx.leader_moves.front()),
                              leader ? to_string(*leader) : "none",
                              describe(bg)));
    bool weakly_up_only
      = std::all_of(fx.leader_moves.begin(), fx.leader_moves.end(),
                    [](auto& a) { return a.to == member_status::weakly_up; });
    if (!weakly_up_only && !oracle_convergence(bg, self))
      return fail("single_leader",
                  fmt::format("{} made leader moves ({}) without convergence; "
                              "view: {}",
                              to_string(self),
                              cluster::to_string(fx.leader_moves.front()),
                              describe(bg)));
  }
  // Equal converged views agree on the leader.
  if (oracle_convergence(g, self))
    for (size_t j = 0; j < nodes_.size(); ++j) {
      if (j == i || !nodes_[j].alive || !nodes_[j].engine)
        continue;
      auto& other = nodes_[j].engine->state().latest_gossip();
      auto other_self = nodes_[j].engine->self();
      if (other.members() == g.members()
          && other.reachability() == g.reachability()
          && oracle_convergence(other, other_self)
          && oracle_leader(other) != oracle_leader(g))
        return fail("single_leader",
                    fmt::format("{} and {} have the same converged view but "
                                "different leaders",
                                to_string(self), to_string(other_self)));
    }
}

void membership_world::fail(std::string checker, std::string detail) {
  if (failure_)
    return;
  trace_.add(sched_.now(), "VIOLATION " + checker + ": " + detail);
  failure_ = violation{std::move(checker), std::move(detail)};
}

void membership_world::run_until(timespan t) {
  while (!failure_ && !sched_.empty() && sched_.next_time() <= t)
    sched_.step();
  if (!failure_)
    sched_.run_until(t);
}

bool membership_world::run_until(timespan t,
                                 const std::function<bool()>& pred) {
  while (!failure_ && !pred()) {
    if (sched_.empty() || sched_.next_time() > t) {
      sched_.run_until(t); // time passes even when nothing happens
      return pred();
    }
    sched_.step();
  }
  return !failure_ && pred();
}

std::string membership_world::views() const {
  std::string out;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    auto& n = nodes_[i];
    if (!n.engine)
      continue;
    out += fmt::format("  node {} {} ({}): {}\n", i,
                       to_string(n.engine->self()), n.alive ? "alive" : "dead",
                       cluster::to_string(n.engine->state().latest_gossip()));
  }
  return out;
}

double membership_world::rounds() const {
  return static_cast<double>(sched_.now().count())
         / static_cast<double>(settings_.membership.gossip_interval.count());
}

bool membership_world::converged(size_t expected) const {
  std::vector<size_t> live;
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].alive)
      live.push_back(i);
  if (live.size() != expected)
    return false;
  const gossip* first = nullptr;
  std::optional<unique_address> leader;
  for (auto i : live) {
    auto& e = *nodes_[i].engine;
    if (!e.is_member())
      return false;
    auto& g = e.state().latest_gossip();
    if (g.members().size() != live.size())
      return false;
    for (auto& m : g.members())
      if (m.status != member_status::up || unreachable_by_anyone(g, m.address))
        return false;
    for (auto j : live)
      if (find(g, nodes_[j].engine->self()) == nullptr)
        return false;
    if (!oracle_convergence(g, e.self()))
      return false;
    auto l = oracle_leader(g);
    if (first == nullptr) {
      first = &g;
      leader = l;
    } else if (g.members() != first->members() || l != leader) {
      return false;
    }
  }
  return true;
}

// -- the random scenario
// -----------------------------------------------------------

void conclude(scenario_result& result, const membership_world& w) {
  if (w.failure())
    result.failure = w.failure();
  if (result.failure)
    result.trace = w.log().render() + "views at the end:\n" + w.views();
}

scenario_result run_random_scenario(uint64_t seed, cluster::planted_bug bug,
                                    merge_fn merge, double liveness_rounds) {
  world_settings ws;
  ws.bug = bug;
  ws.merge = std::move(merge);
  membership_world w{seed, ws};
  auto& r = w.random();
  auto& s = w.sched();
  size_t n = 3 + r.below(5);
  for (size_t i = 0; i < n; ++i)
    w.add_node();
  // Initial start: node 0 is the first seed; everyone joins {0, 1}.
  for (size_t i = 0; i < n; ++i)
    s.at(r.between(0s, 3s), [&w, i] { w.start(i, {0, 1}); });
  auto others = [&](size_t self) {
    std::vector<size_t> out;
    for (size_t j = 0; j < n; ++j)
      if (j != self)
        out.push_back(j);
    return out;
  };
  auto pick_alive = [&]() -> std::optional<size_t> {
    std::vector<size_t> xs;
    for (size_t i = 0; i < n; ++i)
      if (w.alive(i))
        xs.push_back(i);
    if (xs.empty())
      return std::nullopt;
    return xs[r.below(xs.size())];
  };
  // Faults from 10 s to 50 s.
  const timespan faults_end = 50s;
  for (auto t = 10s + r.between(0s, 3s); t < faults_end;
       t += r.between(1s, 5s)) {
    s.at(t, [&, t] {
      switch (r.below(10)) {
        case 0:
        case 1: { // symmetric partition
          std::vector<size_t> a;
          std::vector<size_t> b;
          for (size_t i = 0; i < n; ++i)
            (r.chance(0.5) ? a : b).push_back(i);
          if (!a.empty() && !b.empty())
            w.partition(a, b);
          break;
        }
        case 2: { // asymmetric: one direction of one pair
          auto x = r.below(n);
          auto y = (x + 1 + r.below(n - 1)) % n;
          w.net().link(w.address(x), w.address(y)).blocked = true;
          break;
        }
        case 3:
          w.heal();
          w.net().set_loss(0.0);
          break;
        case 4: { // crash, keeping at least two nodes
          size_t alive = 0;
          for (size_t i = 0; i < n; ++i)
            alive += w.alive(i) ? 1 : 0;
          if (alive > 2)
            if (auto i = pick_alive())
              w.crash(*i);
          break;
        }
        case 5: { // restart a dead node as a new incarnation
          for (size_t i = 0; i < n; ++i)
            if (!w.alive(i)) {
              w.start(i, others(i)); // never the first seed of a restart
              break;
            }
          break;
        }
        case 6: // graceful leave
          if (auto by = pick_alive())
            w.leave(*by, r.below(n));
          break;
        case 7: { // clogged link
          auto x = r.below(n);
          auto y = (x + 1 + r.below(n - 1)) % n;
          w.net().link(w.address(x), w.address(y)).extra_delay
            = r.between(500ms, 4s);
          break;
        }
        case 8:
          w.net().set_loss(0.05 + 0.1 * static_cast<double>(r.below(3)));
          break;
        case 9: // an operator downs a dead node
          for (size_t i = 0; i < n; ++i)
            if (!w.alive(i))
              if (auto by = pick_alive()) {
                w.down(*by, i);
                break;
              }
          break;
      }
      (void)t;
    });
  }
  scenario_result result;
  result.seed = seed;
  result.nodes = n;
  w.run_until(faults_end);
  if (!w.failure()) {
    // Liveness: faults stop, the network heals, dead members are downed
    // by every live member (as the split brain resolver or an operator
    // would), and the cluster converges.
    w.heal();
    w.net().set_loss(0.0);
    auto down_stale = [&] {
      for (size_t by = 0; by < n; ++by) {
        if (!w.alive(by) || !w.engine(by).is_member())
          continue;
        auto members = w.engine(by).state().latest_gossip().members();
        for (auto& m : members) {
          auto idx = w.index_of(m.address);
          bool current = idx && w.alive(*idx) && w.address(*idx) == m.address;
          if (!current && m.status != member_status::down
              && m.status != member_status::removed)
            w.down_address(by, m.address);
        }
      }
    };
    // A live node that is not a member and has no seed left that is a
    // live, staying member cannot join: restart it the way an operator
    // would, with the staying members as seeds, or as the first seed of a
    // new cluster when there is none.
    auto staying = [&](size_t i) {
      if (!w.alive(i) || !w.engine(i).is_member())
        return false;
      auto self = w.engine(i).self_member();
      return self
             && (self->status == member_status::up
                 || self->status == member_status::weakly_up
                 || self->status == member_status::joining);
    };
    // A member that no other staying member knows was welcomed by a node
    // that died before the join spread (it may have asked to leave since):
    // nobody gossips with it (gossip from unknown nodes is ignored, as in
    // Akka) and it never becomes up or removed. An operator (or
    // Kubernetes, the member never being ready) restarts it: it is an
    // orphan too.
    auto unknown_joiner = [&](size_t i, const std::vector<size_t>& members) {
      if (!w.engine(i).self_member())
        return false;
      bool others = false;
      for (auto j : members) {
        if (j == i)
          continue;
        others = true;
        if (w.engine(j).state().latest_gossip().has_member(w.address(i)))
          return false;
      }
      return others;
    };
    auto rejoin_orphans = [&] {
      std::vector<size_t> members;
      for (size_t i = 0; i < n; ++i)
        if (staying(i))
          members.push_back(i);
      for (size_t i = 0; i < n; ++i) {
        if (w.alive(i) && w.engine(i).is_member()
            && unknown_joiner(i, members)) {
          if (auto it = std::find(members.begin(), members.end(), i);
              it != members.end())
            members.erase(it);
          w.crash(i);
          w.start(i, members);
          continue;
        }
        if (!w.alive(i) || w.engine(i).is_member())
          continue;
        bool has_seed = false;
        for (auto& ep : w.engine(i).joining().seed_nodes())
          for (auto m : members)
            has_seed = has_seed || w.endpoint_of(m) == ep;
        if (has_seed)
          continue;
        w.crash(i);
        if (members.empty())
          members.push_back(i); // the first seed of a new cluster
        w.start(i, members);
      }
    };
    auto start = w.sched().now();
    auto deadline
      = start
        + timespan{static_cast<int64_t>(
          liveness_rounds
          * static_cast<double>(ws.membership.gossip_interval.count()))};
    auto expected = [&] {
      size_t k = 0;
      for (size_t i = 0; i < n; ++i)
        k += w.alive(i) ? 1 : 0;
      return k;
    };
    bool done = false;
    while (!done && !w.failure() && w.sched().now() < deadline) {
      down_stale();
      rejoin_orphans();
      done = w.run_until(std::min(deadline, w.sched().now() + 5s),
                         [&] { return w.converged(expected()); });
    }
    if (!done && !w.failure())
      result.failure = violation{
        "liveness", fmt::format("no convergence of the {} live nodes within "
                                "{} gossip rounds after the faults stopped",
                                expected(), liveness_rounds)};
    result.liveness_rounds
      = static_cast<double>((w.sched().now() - start).count())
        / static_cast<double>(ws.membership.gossip_interval.count());
  }
  conclude(result, w);
  return result;
}

} // namespace troupe::sim
