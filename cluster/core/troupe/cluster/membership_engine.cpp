#include "troupe/cluster/membership_engine.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace troupe::cluster {

namespace {

// Why a removed node stops: after its own leave (it was leaving or
// exiting, Akka's only way to Removed without Down) the end it asked for
// (its process exits 0); else a stop by the cluster.
self_stop_reason removal_kind(bool left) {
  return left ? self_stop_reason::left : self_stop_reason::removed;
}

std::string removal_reason(bool left) {
  return left ? "left the cluster: removed after leaving"
              : "removed from the cluster";
}

} // namespace

namespace {

template <class... Fs>
struct overload : Fs... {
  using Fs::operator()...;
};

template <class... Fs>
overload(Fs...) -> overload<Fs...>;

bool is_heartbeat_target(member_status s) {
  // Every member is watched until it is removed, joining ones too: a node
  // that dies while joining must become unreachable, or, once downed, it
  // could never be removed (a down member is removed when unreachable).
  return s != member_status::removed;
}

std::set<unique_address> heartbeat_nodes(const gossip& g) {
  std::set<unique_address> out;
  for (auto& m : g.members())
    if (is_heartbeat_target(m.status))
      out.insert(m.address);
  return out;
}

std::set<unique_address> unreachable_nodes(const gossip& g) {
  std::set<unique_address> out;
  for (auto& m : g.members())
    if (!g.reachability().is_reachable(m.address))
      out.insert(m.address);
  return out;
}

bool is_leaving_or_beyond(member_status s) {
  return s == member_status::leaving || s == member_status::exiting
         || s == member_status::down || s == member_status::removed;
}

} // namespace

const unique_address& claimed_sender(const membership_message& m) noexcept {
  return std::visit(
    overload{
      [](const init_join& x) -> const unique_address& { return x.from; },
      [](const init_join_ack& x) -> const unique_address& { return x.address; },
      [](const init_join_nack& x) -> const unique_address& {
        return x.address;
      },
      [](const cluster::join& x) -> const unique_address& { return x.node; },
      [](const welcome_gossip& x) -> const unique_address& { return x.from; },
      [](const gossip_envelope& x) -> const unique_address& { return x.from; },
      [](const gossip_status& x) -> const unique_address& { return x.from; },
      [](const heartbeat& x) -> const unique_address& { return x.from; },
      [](const heartbeat_response& x) -> const unique_address& {
        return x.from;
      },
      [](const exiting_confirmed& x) -> const unique_address& {
        return x.node;
      },
      [](const incarnation_probe& x) -> const unique_address& {
        return x.from;
      },
      [](const incarnation_probe_answer& x) -> const unique_address& {
        return x.from;
      },
    },
    m);
}

const char* message_name(const membership_message& m) noexcept {
  static constexpr const char* names[]
    = {"init_join",          "init_join_ack",
       "init_join_nack",     "join",
       "welcome_gossip",     "gossip_envelope",
       "gossip_status",      "heartbeat",
       "heartbeat_response", "exiting_confirmed",
       "incarnation_probe",  "incarnation_probe_answer"};
  static_assert(std::size(names) == std::variant_size_v<membership_message>);
  return names[m.index()];
}

membership_engine::membership_engine(unique_address self,
                                     std::set<std::string> roles,
                                     membership_settings settings,
                                     join_config config,
                                     join_config_checker checker, uint64_t seed,
                                     planted_bug bug)
  : settings_(std::move(settings)), roles_(std::move(roles)),
    config_(std::move(config)), checker_(std::move(checker)),
    state_(gossip{}, self),
    join_(joining_node{self, roles_, settings_.app_version, config_}, checker_,
          settings_.join()),
    heartbeat_(self, settings_.failure_detector.monitored_by_nr_of_members,
               settings_.failure_detector.phi_accrual()),
    rng_(seed), bug_(bug), incarnation_rng_(seed ^ 0x9e3779b97f4a7c15ULL) {}

std::optional<member> membership_engine::self_member() const {
  if (auto* m = state_.self_member())
    return *m;
  return std::nullopt;
}

// -- commands
// -------------------------------------------------------------------

membership_effects membership_engine::start(clock_reading t) {
  effects out;
  if (terminated_ || started_)
    return out;
  started_ = true;
  if (!settings_.seed_nodes.empty())
    apply_join_effects(join_.start(t.now), t, out);
  return out;
}

membership_effects membership_engine::join(std::vector<endpoint> seeds,
                                           clock_reading t) {
  effects out;
  if (terminated_ || joined_)
    return out;
  started_ = true;
  apply_join_effects(join_.join_seed_nodes(std::move(seeds), t.now), t, out);
  return out;
}

membership_effects membership_engine::leave(const unique_address& node,
                                            clock_reading t) {
  effects out;
  if (terminated_ || !joined_)
    return out;
  auto* m = state_.latest_gossip().find(node);
  if (m == nullptr || is_leaving_or_beyond(m->status))
    return out;
  auto leaving = m->with_status(member_status::leaving);
  if (!leaving)
    return out;
  auto next = state_.latest_gossip();
  next.update(std::span{&*leaving, 1});
  out.info.push_back(fmt::format("marked {} as leaving", to_string(node)));
  update_latest(std::move(next), t, out);
  return out;
}

membership_effects membership_engine::down(const unique_address& node,
                                           clock_reading t) {
  effects out;
  if (terminated_ || !joined_)
    return out;
  auto next = state_.latest_gossip();
  if (!next.mark_as_down(node))
    return out;
  out.info.push_back(fmt::format("marked {} as down", to_string(node)));
  update_latest(std::move(next), t, out);
  return out;
}

// -- messages
// -------------------------------------------------------------------

membership_effects membership_engine::receive(const unique_address& from,
                                              const membership_message& m,
                                              clock_reading t) {
  effects out;
  if (terminated_)
    return out;
  if (auto claimed = claimed_sender(m); from.uid != 0 && claimed != from) {
    // The transport authenticated `from`; a message that names another
    // sender is a bug or a forgery, never acted on.
    out.info.push_back(fmt::format("ignored a {} from {} that claims to "
                                   "come from {}",
                                   message_name(m), to_string(from),
                                   to_string(claimed)));
    return out;
  }
  std::visit(
    overload{
      [&](const init_join& x) {
        // A member of a merging cluster refuses (cluster_merge.hpp): a
        // restarted member must find the cluster it is merging into.
        auto* me = state_.self_member();
        bool accepting = joined_ && me != nullptr && !is_merging()
                         && (me->status == member_status::up
                             || me->status == member_status::weakly_up);
        std::visit(
          [&](auto&& answer) {
            out.send.push_back({x.from, membership_message{answer}});
          },
          answer_init_join(x, self(), accepting, checker_, config_));
      },
      [&](const init_join_ack& x) {
        if (!joined_)
          apply_join_effects(join_.on_init_join_ack(x, t.now), t, out);
      },
      [&](const init_join_nack& x) {
        if (!joined_)
          apply_join_effects(join_.on_init_join_nack(x, t.now), t, out);
      },
      [&](const cluster::join& x) { on_join(x, t, out); },
      [&](const welcome_gossip& x) { on_welcome(x, t, out); },
      [&](const gossip_envelope& x) { on_gossip(x, t, out); },
      [&](const gossip_status& x) { on_status(x, t, out); },
      [&](const heartbeat& x) {
        // Answered whether or not the sender is known: it may know this
        // node from a newer gossip. Not answered when this view has the
        // sender down or removed (Akka answers anyway): an answer confirms
        // the sender to itself (heartbeat_sender_state::latest_answered),
        // and a downed node must not be told it is still counted in, also
        // in the moment between its removal and its quarantine (the chaos
        // test: a node resumed from SIGSTOP was answered there and wrote).
        const auto& g = state_.latest_gossip();
        const auto* m = g.find(x.from);
        bool gone = m != nullptr ? m->status == member_status::down
                                 : g.tombstones().count(x.from) != 0;
        if (joined_ && !gone)
          out.send.push_back(
            {x.from, membership_message{respond_to(x, self())}});
      },
      [&](const heartbeat_response& x) {
        if (joined_)
          heartbeat_.heartbeat_response(x, t.now);
      },
      [&](const exiting_confirmed& x) {
        // Kept even if this view does not show the node exiting yet (the
        // confirmation may overtake the gossip); dropped once it is gone.
        if (joined_ && state_.latest_gossip().has_member(x.node))
          exiting_confirmed_.insert(x.node);
      },
      [&](const incarnation_probe& x) { on_probe(x, t, out); },
      [&](const incarnation_probe_answer& x) { on_probe_answer(x, t, out); },
    },
    m);
  (void)from;
  return out;
}

void membership_engine::apply_join_effects(std::vector<join_effect> xs,
                                           clock_reading t, effects& out) {
  for (auto& x : xs)
    std::visit(overload{
                 [&](send_init_join& s) {
                   for (auto& ep : s.to)
                     out.send.push_back({unique_address{ep.host, ep.port, 0},
                                         membership_message{s.message}});
                 },
                 [&](send_join& s) {
                   out.info.push_back(fmt::format(
                     "joining the cluster through {}", to_string(s.to)));
                   out.send.push_back({s.to, membership_message{s.message}});
                 },
                 [&](join_self&) { self_join(t, out); },
                 [&](joined&) {},
                 [&](give_up& g) {
                   terminate(self_stop_reason::join_unsuccessful,
                             fmt::format("gave up joining ({}): {}",
                                         to_string(g.reason), g.message),
                             out);
                 },
               },
               x);
}

void membership_engine::self_join(clock_reading t, effects& out) {
  if (joined_)
    return;
  joined_ = true;
  out.info.push_back("no other seed node is a member (each answered that it "
                     "is not one yet, or none answered within "
                     "seed_node_timeout): this node starts a new cluster");
  gossip first;
  first.add(member::joining(self(), {roles_.begin(), roles_.end()},
                            settings_.app_version));
  first.set_incarnation(found_incarnation(incarnation_rng_(), t.wall));
  out.info.push_back(fmt::format("founded cluster incarnation {}",
                                 to_string(first.incarnation())));
  next_probe_ = t.now;
  heartbeat_.init({self()}, {});
  next_gossip_ = next_leader_actions_ = next_reaper_ = next_heartbeat_ = t.now;
  update_latest(std::move(first), t, out);
}

void membership_engine::on_join(const cluster::join& m, clock_reading t,
                                effects& out) {
  if (!joined_)
    return;
  auto* me = state_.self_member();
  if (me == nullptr || is_leaving_or_beyond(me->status))
    return;
  if (is_merging()) {
    out.info.push_back(fmt::format("ignored the join of {}: this cluster "
                                   "leaves to join incarnation {}",
                                   to_string(m.node),
                                   to_string(merging_into())));
    return;
  }
  auto& g = state_.latest_gossip();
  if (g.tombstones().count(m.node) > 0)
    return; // a removed incarnation never comes back
  for (auto& existing : g.members()) {
    if (existing.address == m.node) {
      // Already a member (a retried join): welcome it again.
      out.send.push_back(
        {m.node, membership_message{welcome_gossip{self(), g}}});
      return;
    }
    if (existing.address.host == m.node.host
        && existing.address.port == m.node.port) {
      // A new incarnation of an existing member: the old one is gone.
      // Down it; the new one is let in once the old one is removed (its
      // join is retried).
      if (existing.status != member_status::down) {
        out.info.push_back(fmt::format(
          "{} is a new incarnation of {}: marking the old one as down",
          to_string(m.node), to_string(existing.address)));
        auto next = g;
        next.mark_as_down(existing.address);
        update_latest(std::move(next), t, out);
      }
      return;
    }
  }
  auto next = g;
  next.add(
    member::joining(m.node, {m.roles.begin(), m.roles.end()}, m.app_version));
  out.info.push_back(fmt::format("{} is joining", to_string(m.node)));
  update_latest(std::move(next), t, out);
  out.send.push_back({m.node, membership_message{welcome_gossip{
                                self(), state_.latest_gossip()}}});
}

bool membership_engine::valid(const gossip& g, const char* kind,
                              const unique_address& from, effects& out) const {
  auto problem = check_invariants(g);
  if (!problem)
    return true;
  out.info.push_back(fmt::format("ignored an invalid {} from {}: {}", kind,
                                 to_string(from), *problem));
  return false;
}

void membership_engine::on_welcome(const welcome_gossip& m, clock_reading t,
                                   effects& out) {
  if (joined_ || !m.gossip.has_member(self())
      || !valid(m.gossip, "welcome_gossip", m.from, out))
    return;
  if (join_.state() != join_state::awaiting_welcome
      && join_.state() != join_state::joining_seed)
    return;
  if (!m.gossip.incarnation().is_set() || m.gossip.merging_into().is_set()) {
    // A cluster that leaves (or a gossip of no cluster) is no place to
    // join: the join process retries, and finds the cluster it merges
    // into.
    out.info.push_back(
      fmt::format("ignored the welcome of {}: {}", to_string(m.from),
                  m.gossip.incarnation().is_set()
                    ? "its cluster leaves to join incarnation "
                        + to_string(m.gossip.merging_into())
                    : std::string{"it names no cluster incarnation"}));
    return;
  }
  joined_ = true;
  apply_join_effects(join_.on_welcome(welcome{m.from}, t.now), t, out);
  out.info.push_back(fmt::format("welcomed by {} into cluster incarnation {}",
                                 to_string(m.from),
                                 to_string(m.gossip.incarnation())));
  next_probe_
    = t.now + settings_.incarnation_probe_interval.value_or(timespan{0});
  auto next = m.gossip;
  next.seen(self());
  heartbeat_.init(heartbeat_nodes(next), unreachable_nodes(next));
  next_gossip_ = next_leader_actions_ = next_reaper_ = next_heartbeat_ = t.now;
  publish(std::move(next), t, out);
  if (m.from != self())
    gossip_to(m.from, out);
}

void membership_engine::on_gossip(const gossip_envelope& m, clock_reading t,
                                  effects& out) {
  if (!joined_ || m.to != self()
      || !valid(m.gossip, "gossip_envelope", m.from, out))
    return;
  // Gossip of another cluster is never merged: a detection instead.
  if (!same_cluster(m.from, m.gossip.incarnation(), cluster_size(m.gossip), t,
                    out))
    return;
  auto& local = state_.latest_gossip();
  auto& remote = m.gossip;
  if (!remote.has_member(self())) {
    if (remote.tombstones().count(self()) > 0)
      terminate(removal_kind(left_gracefully(local)),
                fmt::format("{} (learned from {})",
                            removal_reason(left_gracefully(local)),
                            to_string(m.from)),
                out);
    return; // gossip from a cluster this node is not part of
  }
  if (!local.has_member(m.from)) {
    // Akka ignores gossip from unknown nodes. A removed node that missed
    // its removal (the gossip that removed it was lost) would live on as
    // a zombie: tell it (Akka relies on the transport's quarantine
    // notice for that).
    tell_if_removed(m.from, out);
    return;
  }
  if (auto* peer = local.find(m.from);
      peer != nullptr && peer->status == member_status::down)
    return; // a downed member's view no longer counts
  gossip winner;
  bool talkback = false;
  switch (compare(remote.version(), local.version())) {
    case clock_order::same: {
      winner = local;
      winner.merge_seen(remote);
      // The sender learns who else has seen this version.
      talkback = winner.seen_by() != remote.seen_by();
      break;
    }
    case clock_order::before: // local is newer
      winner = local;
      talkback = true;
      break;
    case clock_order::after: // remote is newer
      winner = remote;
      break;
    case clock_order::concurrent:
      winner = merge(remote, local);
      // The merge prunes the clock entries of removed members. When a
      // removed member made one side's change, the merged version can
      // equal the other side's although the contents differ, and views
      // with equal versions never exchange contents again (the simulator
      // found a leave, marked by an exiting member just before its
      // removal, lost this way forever; Akka does not bump here and has
      // the same hazard). A version of this node's own makes the merged
      // gossip newer than both.
      if (compare(winner.version(), remote.version()) != clock_order::after
          || compare(winner.version(), local.version()) != clock_order::after)
        winner.increment(self());
      talkback = true;
      break;
  }
  winner.seen(self());
  talkback = talkback || !winner.is_seen_by(m.from);
  publish(std::move(winner), t, out);
  if (!terminated_ && talkback)
    send_envelope(m.from, out);
}

void membership_engine::on_status(const gossip_status& m, clock_reading t,
                                  effects& out) {
  if (!joined_ || !same_cluster(m.from, m.incarnation, std::nullopt, t, out))
    return;
  if (!state_.latest_gossip().has_member(m.from)) {
    tell_if_removed(m.from, out);
    return;
  }
  auto& local = state_.latest_gossip();
  switch (compare(m.version, local.version())) {
    case clock_order::same: {
      // Same version: pool who has seen it (Akka sends the whole gossip
      // when the seen digests differ; the status here carries the set).
      if (m.seen == local.seen_by())
        break;
      auto next = local;
      for (auto& node : m.seen)
        if (next.has_member(node))
          next.seen(node);
      bool sender_lacks = next.seen_by() != m.seen;
      if (next.seen_by() != local.seen_by())
        publish(std::move(next), t, out);
      if (sender_lacks && !terminated_)
        gossip_to(m.from, out);
      break;
    }
    case clock_order::after: // the sender is newer: ask for its gossip
      out.send.push_back(
        {m.from, membership_message{gossip_status{
                   self(), local.version(), local.seen_by(), incarnation()}}});
      break;
    case clock_order::before:
    case clock_order::concurrent:
      send_envelope(m.from, out);
      break;
  }
}

// -- timers
// -----------------------------------------------------------------------

membership_effects membership_engine::tick(clock_reading t) {
  effects out;
  if (terminated_)
    return out;
  if (!joined_) {
    if (auto due = join_.next_tick(); due && *due <= t.now)
      apply_join_effects(join_.tick(t.now), t, out);
    return out;
  }
  first_heartbeat_timers(t);
  if (t.now >= next_heartbeat_) {
    heartbeat_tick(t, out);
    next_heartbeat_ = t.now + settings_.failure_detector.heartbeat_interval;
  }
  // Leader actions decide on the view as it was before this tick (the
  // reaper's changes are gossiped first).
  if (t.now >= next_leader_actions_) {
    if (confirmed_exit_)
      confirm_exit(out);
    leader_actions_tick(t, out);
    next_leader_actions_ = t.now + settings_.leader_actions_interval;
  }
  if (!terminated_ && t.now >= next_reaper_) {
    reaper_tick(t, out);
    next_reaper_ = t.now + settings_.unreachable_nodes_reaper_interval;
  }
  if (!terminated_)
    probe_tick(t, out);
  if (!terminated_ && t.now >= next_gossip_) {
    gossip_tick(out);
    auto& g = state_.latest_gossip();
    // Akka's gossip speed-up: while fewer than half of the members have
    // seen the current version, gossip three times as often.
    bool speedup = g.seen_by().size() * 2 < g.members().size();
    if (!speedup)
      for (auto& m : g.members())
        if (must_see_for_convergence(m.status) && !g.is_seen_by(m.address)) {
          speedup = true;
          break;
        }
    next_gossip_
      = t.now
        + (speedup ? settings_.gossip_interval / 3 : settings_.gossip_interval);
  }
  merge_tick(t, out);
  return out;
}

std::optional<timestamp> membership_engine::next_tick() const {
  if (terminated_)
    return std::nullopt;
  if (!joined_)
    return join_.next_tick();
  auto next = std::min(
    {next_gossip_, next_leader_actions_, next_reaper_, next_heartbeat_});
  if (settings_.incarnation_probe_interval && !is_merging())
    next = std::min(next, next_probe_);
  if (merging_since_)
    next = std::min(next,
                    *merging_since_ + merge_linger(settings_.gossip_interval));
  for (auto& [node, due] : first_heartbeat_due_)
    next = std::min(next, due);
  return next;
}

void membership_engine::heartbeat_tick(clock_reading t, effects& out) {
  auto round = heartbeat_.tick(t.now);
  for (auto& to : round.receivers)
    out.send.push_back({to, membership_message{round.heartbeat}});
  // A receiver that never answers must still become unreachable: start
  // its detector after expected_response_after (Akka's
  // ExpectedFirstHeartbeat).
  for (auto& to : round.first_heartbeat_to)
    first_heartbeat_due_.try_emplace(
      to, t.now + settings_.failure_detector.expected_response_after);
}

void membership_engine::first_heartbeat_timers(clock_reading t) {
  std::erase_if(first_heartbeat_due_, [&](auto& entry) {
    if (entry.second > t.now)
      return false;
    heartbeat_.expected_first_heartbeat(entry.first, t.now);
    return true;
  });
}

void membership_engine::reaper_tick(clock_reading t, effects& out) {
  auto& g = state_.latest_gossip();
  auto& fd = heartbeat_.failure_detector();
  auto& reach = g.reachability();
  std::vector<unique_address> now_unreachable;
  std::vector<unique_address> now_reachable;
  for (auto& m : g.members()) {
    if (m.address == self())
      continue;
    bool self_sees_unreachable = !reach.is_reachable(self(), m.address);
    bool available = fd.is_available(m.address, t.now);
    if (!available && !self_sees_unreachable)
      now_unreachable.push_back(m.address);
    else if (available && self_sees_unreachable)
      now_reachable.push_back(m.address);
  }
  if (now_unreachable.empty() && now_reachable.empty())
    return;
  auto next = g;
  for (auto& x : now_unreachable) {
    next.reachability().unreachable(self(), x);
    out.info.push_back(fmt::format("marking {} as unreachable (phi {:.1f})",
                                   to_string(x), fd.phi(x, t.now)));
  }
  for (auto& x : now_reachable) {
    next.reachability().reachable(self(), x);
    out.info.push_back(
      fmt::format("marking {} as reachable again", to_string(x)));
  }
  update_latest(std::move(next), t, out);
}

void membership_engine::leader_actions_tick(clock_reading t, effects& out) {
  leader_actions_settings las;
  las.min_nr_of_members = settings_.min_nr_of_members;
  las.prune_gossip_tombstones_after
    = std::chrono::duration_cast<std::chrono::milliseconds>(
      settings_.prune_gossip_tombstones_after);
  auto r = leader_actions(state_, exiting_confirmed_, t.wall, las);
  if (bug_ == planted_bug::lead_without_being_leader
      && r.verdict == leader_actions_verdict::not_leader && state_.leader()) {
    // Planted: decide as if this node were the leader.
    membership_state as_leader{state_.latest_gossip(), *state_.leader()};
    r = leader_actions(as_leader, exiting_confirmed_, t.wall, las);
  }
  if (r.verdict == leader_actions_verdict::not_leader) {
    unconverged_since_.reset();
    return;
  }
  if (r.verdict == leader_actions_verdict::no_convergence) {
    if (!unconverged_since_)
      unconverged_since_ = t.now;
    if (settings_.allow_weakly_up_members
        && t.now - *unconverged_since_ >= *settings_.allow_weakly_up_members)
      r = move_joining_to_weakly_up(state_, exiting_confirmed_, las);
    if (r.verdict != leader_actions_verdict::changed)
      return;
  } else {
    unconverged_since_.reset();
  }
  if (r.verdict != leader_actions_verdict::changed)
    return;
  std::vector<unique_address> removed;
  out.leader_moves.insert(out.leader_moves.end(), r.actions.begin(),
                          r.actions.end());
  for (auto& a : r.actions) {
    out.info.push_back(fmt::format("leader is moving {}", to_string(a)));
    if (a.to == member_status::removed)
      removed.push_back(a.address);
  }
  update_latest(std::move(r.next), t, out);
  // The removed nodes no longer get gossip from anyone: tell them, so
  // that they shut down now rather than by failure detection.
  for (auto& node : removed)
    if (node != self())
      send_envelope(node, out);
}

void membership_engine::gossip_tick(effects& out) {
  auto& g = state_.latest_gossip();
  std::vector<unique_address> valid;
  std::vector<unique_address> preferred;
  // The members whose view blocks convergence (up or leaving, not seen):
  // unlike Akka, these come first among the preferred targets. While a
  // large cluster forms, hundreds of joining members have not seen the
  // version either, and Akka's uniform choice among them reaches the few
  // up members that convergence waits for only by chance.
  std::vector<unique_address> blocking;
  for (auto& m : g.members()) {
    if (m.address == self() || !state_.valid_node_for_gossip(m.address))
      continue;
    valid.push_back(m.address);
    if (!g.is_seen_by(m.address)) {
      preferred.push_back(m.address);
      if (must_see_for_convergence(m.status))
        blocking.push_back(m.address);
    }
  }
  if (valid.empty())
    return;
  std::uniform_real_distribution<double> unit{0.0, 1.0};
  bool prefer = !preferred.empty() && unit(rng_) < different_view_probability();
  auto& from = !prefer ? valid : !blocking.empty() ? blocking : preferred;
  std::uniform_int_distribution<size_t> pick{0, from.size() - 1};
  gossip_to(from[pick(rng_)], out);
}

double membership_engine::different_view_probability() const {
  // Akka's adjustedGossipDifferentViewProbability: from the configured
  // value at `reduce` members down to a third of it at 3 * `reduce`.
  auto size = static_cast<double>(state_.latest_gossip().members().size());
  auto p = settings_.gossip_different_view_probability;
  auto low
    = static_cast<double>(settings_.reduce_gossip_different_view_probability);
  auto high = low * 3;
  if (size <= low)
    return p;
  auto min_p = p / 3;
  if (size >= high)
    return min_p;
  return p + (size - low) * (min_p - p) / (high - low);
}

void membership_engine::gossip_to(const unique_address& node, effects& out) {
  auto& g = state_.latest_gossip();
  if (g.is_seen_by(node))
    out.send.push_back(
      {node, membership_message{gossip_status{self(), g.version(), g.seen_by(),
                                              g.incarnation()}}});
  else
    send_envelope(node, out);
}

void membership_engine::tell_if_removed(const unique_address& node,
                                        effects& out) {
  if (state_.latest_gossip().tombstones().count(node) > 0)
    send_envelope(node, out);
}

void membership_engine::send_envelope(const unique_address& node,
                                      effects& out) {
  out.send.push_back({node, membership_message{gossip_envelope{
                              self(), node, state_.latest_gossip()}}});
}

// -- state changes
// ----------------------------------------------------------------

void membership_engine::update_latest(gossip next, clock_reading t,
                                      effects& out) {
  next.increment(self());
  next.only_seen(self());
  publish(std::move(next), t, out);
}

void membership_engine::publish(gossip next, clock_reading t, effects& out) {
  if (bug_ == planted_bug::forget_tombstones)
    next.prune_tombstones(wall_time::max());
  if (bug_ == planted_bug::status_regression)
    for (auto& m : next.members())
      if (m.address != self() && m.status == member_status::up) {
        auto back = m;
        back.status = member_status::joining;
        next.update(std::span{&back, 1});
        break;
      }
  membership_state after{std::move(next), self()};
  auto events = diff(state_, after);
  // Most gossip changes only the seen set: then no heartbeat target is new
  // (comparing the members is O(n); building the sets is O(n log n)).
  std::optional<std::set<unique_address>> before_members;
  if (state_.latest_gossip().members() != after.latest_gossip().members())
    before_members = heartbeat_nodes(state_.latest_gossip());
  state_ = std::move(after);
  auto& g = state_.latest_gossip();
  for (auto& e : events) {
    if (auto* r = std::get_if<member_removed>(&e)) {
      out.removed.push_back(r->member.address);
      heartbeat_.remove_member(r->member.address, t.now);
    } else if (auto* u = std::get_if<unreachable_member>(&e)) {
      heartbeat_.unreachable_member(u->member.address, t.now);
    } else if (auto* rc = std::get_if<reachable_member>(&e)) {
      heartbeat_.reachable_member(rc->member.address, t.now);
    }
  }
  if (before_members)
    for (auto& node : heartbeat_nodes(g))
      if (before_members->count(node) == 0 && node != self())
        heartbeat_.add_member(node, t.now);
  out.events.insert(out.events.end(), std::make_move_iterator(events.begin()),
                    std::make_move_iterator(events.end()));
  std::erase_if(exiting_confirmed_,
                [&](auto& node) { return !g.has_member(node); });
  auto* me = g.find(self());
  if (me != nullptr && me->status == member_status::exiting && !confirmed_exit_
      && exit_holds_.empty()) {
    confirmed_exit_ = true;
    confirm_exit(out);
  }
  if (me != nullptr && me->status == member_status::exiting
      && g.members().size() == 1) {
    // The last member left: nobody else could remove it.
    terminate(self_stop_reason::left, "left the cluster as its last member",
              out);
  } else if (me == nullptr) {
    terminate(removal_kind(confirmed_exit_), removal_reason(confirmed_exit_),
              out);
  } else if (me->status == member_status::down
             && settings_.shutdown_when_downed) {
    // Tell a few others first, so the down spreads even if this node was
    // the only one to know.
    gossip_tick(out);
    terminate(self_stop_reason::downed, "this node was downed", out);
  }
  merge_tick(t, out);
}

membership_effects membership_engine::hold_exit(const std::string& holder,
                                                bool hold, clock_reading t) {
  (void)t;
  membership_effects out;
  if (hold) {
    exit_holds_.insert(holder);
    return out;
  }
  if (exit_holds_.erase(holder) == 0 || !exit_holds_.empty() || terminated_)
    return out;
  auto* me = state_.latest_gossip().find(self());
  if (me != nullptr && me->status == member_status::exiting
      && !confirmed_exit_) {
    confirmed_exit_ = true;
    confirm_exit(out);
  }
  return out;
}

// Tells the two nodes that may lead once this one is gone that its exit is
// complete. Repeated every leader-actions interval while this node is
// exiting: the message may be lost, and the node is removed only when a
// leader has it.
void membership_engine::confirm_exit(effects& out) {
  std::vector<member> others;
  for (auto& m : state_.latest_gossip().members())
    if (m.address != self())
      others.push_back(m);
  for (int k = 0; k < 2 && !others.empty(); ++k) {
    auto leader = state_.leader_of(others);
    if (!leader)
      break;
    out.send.push_back(
      {*leader, membership_message{exiting_confirmed{self()}}});
    std::erase_if(others, [&](auto& m) { return m.address == *leader; });
  }
}

bool membership_engine::left_gracefully(const gossip& local) const {
  if (confirmed_exit_)
    return true;
  auto* me = local.find(self());
  return me != nullptr
         && (me->status == member_status::leaving
             || me->status == member_status::exiting);
}

void membership_engine::terminate(self_stop_reason why, std::string text,
                                  effects& out) {
  if (terminated_)
    return;
  terminated_ = true;
  out.info.push_back("shutting down: " + text);
  out.shutdown = self_stop{why, std::move(text)};
}

std::string_view to_string(self_stop_reason reason) noexcept {
  switch (reason) {
    case self_stop_reason::left:
      return "left";
    case self_stop_reason::downed:
      return "downed";
    case self_stop_reason::removed:
      return "removed";
    case self_stop_reason::join_unsuccessful:
      return "join_unsuccessful";
    case self_stop_reason::merging:
      return "merging";
  }
  return "unknown";
}

} // namespace troupe::cluster
