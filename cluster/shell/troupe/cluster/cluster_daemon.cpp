#include "troupe/cluster/cluster_daemon.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/message.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "troupe/cluster/membership_errc.hpp"
#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"
#include <fmt/format.h>

namespace troupe::cluster {

namespace {

struct daemon_state {
  static inline const char* name = "troupe.cluster.daemon";
  std::unique_ptr<membership_engine> engine;
  remoting_handle remoting;
  shutdown_hook on_shutdown;
  leaving_hook on_leaving;
  bool saw_leaving = false;
  std::optional<runtime::caf_clock_source> own_clock;
  const runtime::clock_source* clock = nullptr;
  std::vector<caf::actor> subscribers;
  /// Subscribers of the latest gossip, and the gossip they last got.
  std::vector<caf::actor> view_subscribers;
  std::optional<gossip> last_view;
  runtime::timespan quarantine_after{0};
  // This node stopped: its last view went out (publish_last_view).
  bool views_closed = false;
  /// The due time of the tick in flight, if any.
  std::optional<timestamp> scheduled;
  runtime::logger log{"cluster"};
  std::shared_ptr<membership_counters> counters;
  /// What the transport and the report were last told.
  cluster_incarnation told_transport;
  std::optional<incarnation_report> last_report;
};

using daemon_self = cluster_daemon::stateful_pointer<daemon_state>;

clock_reading read_clock(const daemon_state& st) {
  auto wall = std::chrono::time_point_cast<wall_time::duration>(
    std::chrono::system_clock::now());
  return clock_reading{st.clock->now(), wall};
}

void send_all(daemon_state& st, const std::vector<outbound_message>& xs) {
  for (auto& x : xs) {
    auto msg = std::visit([](const auto& m) { return caf::make_message(m); },
                          x.message);
    // A failed send (quarantined, shutting down) is what a network loss
    // would be: the engine's timers repeat what matters.
    if (auto err = st.remoting.send(remote_ref{x.to, daemon_name}, msg, {},
                                    lane::control))
      st.log.debug("membership message {} to {} not sent: {}",
                   message_name(x.message), to_string(x.to), err.message);
    else if (st.counters && std::holds_alternative<gossip_envelope>(x.message))
      st.counters->gossip_sent.fetch_add(1, std::memory_order_relaxed);
  }
}

void publish(daemon_self self, const std::vector<cluster_event>& events) {
  if (auto& c = self->state.counters)
    for (auto& e : events)
      if (std::holds_alternative<leader_changed>(e))
        c->leader_changes.fetch_add(1, std::memory_order_relaxed);
  for (auto& e : events)
    for (auto& sub : self->state.subscribers)
      std::visit([&](const auto& x) { caf::anon_send(sub, x); }, e);
}

// Sends the latest gossip to the view subscribers when it changed.
void publish_view(daemon_self self) {
  auto& st = self->state;
  if (st.view_subscribers.empty() || st.views_closed)
    return;
  auto& latest = st.engine->state().latest_gossip();
  if (st.last_view && *st.last_view == latest)
    return;
  st.last_view = latest;
  for (auto& sub : st.view_subscribers)
    caf::anon_send(sub, view_atom::value, latest);
}

// The last view, when this node stops; no view follows it. If its own
// latest view still lists it as a member that is not down (it learned its
// removal from another node's gossip, e.g. after a pause longer than
// failure detection plus downing), the last view is that one without it:
// shard regions and singleton managers then stop at once, as for a removal
// they saw, instead of handing off as if the node were leaving (the others
// already run what it hosted).
void publish_last_view(daemon_self self) {
  auto& st = self->state;
  if (st.views_closed)
    return;
  st.views_closed = true;
  auto last = st.engine->state().latest_gossip();
  auto me = st.engine->self();
  if (auto* m = last.find(me); m != nullptr && m->status != member_status::down)
    last.remove(me, read_clock(st).wall);
  if (st.last_view && *st.last_view == last)
    return;
  st.last_view = last;
  for (auto& sub : st.view_subscribers)
    caf::anon_send(sub, view_atom::value, last);
}

void schedule_tick(daemon_self self) {
  auto& st = self->state;
  runtime::schedule_tick(self, tick_atom::value, st.scheduled,
                         st.engine->next_tick(), *st.clock);
}

// Carries out `fx` in the engine's order, then re-arms the timer.
// Publishes heartbeat_sender_state::latest_answered for
// cluster_handle::last_confirmed (membership_counters::last_confirmed_ns).
// A node that stops is never confirmed again.
void publish_confirmation(daemon_state& st, bool stopping) {
  if (!st.counters)
    return;
  constexpr auto never = std::numeric_limits<int64_t>::min();
  auto& hb = st.engine->heartbeats();
  int64_t ns = never;
  if (!stopping) {
    if (!hb.has_receivers())
      ns = std::numeric_limits<int64_t>::max();
    else if (auto t = hb.latest_answered())
      ns = std::chrono::duration_cast<std::chrono::nanoseconds>(*t).count();
  }
  st.counters->last_confirmed_ns.store(ns, std::memory_order_release);
}

// Tells the transport this node's incarnation when it changed (it goes
// into every later handshake), and refreshes the incarnation report.
void publish_incarnation(daemon_state& st, const membership_effects& fx) {
  auto& e = *st.engine;
  if (e.incarnation() != st.told_transport) {
    st.told_transport = e.incarnation();
    st.remoting.transport().set_incarnation(st.told_transport);
  }
  if (!st.counters)
    return;
  st.counters->foreign_detections.fetch_add(fx.met_foreign.size(),
                                            std::memory_order_relaxed);
  incarnation_report r{e.incarnation(), e.merging_into(), {}};
  for (const auto& [inc, x] : e.foreign_clusters())
    r.foreign.push_back(x);
  if (st.last_report && *st.last_report == r)
    return;
  st.last_report = r;
  st.counters->set_report(std::move(r));
}

void execute(daemon_self self, membership_effects fx) {
  auto& st = self->state;
  publish_confirmation(st, fx.shutdown.has_value() || st.views_closed);
  publish_incarnation(st, fx);
  send_all(st, fx.send);
  publish(self, fx.events);
  publish_view(self);
  // Watches on a removed node fire now; remoting quarantines it later, so
  // that it still gets the gossip that removed it.
  for (auto& node : fx.removed)
    st.remoting.node_removed(node, "removed from the cluster membership",
                             st.quarantine_after);
  // The errors (another cluster met, a merge decided) come first: the
  // info lines of the same call follow from them.
  for (auto& line : fx.errors)
    st.log.error("{}", line);
  for (auto& line : fx.info)
    st.log.info("{}", line);
  if (!st.saw_leaving && st.on_leaving)
    for (auto& e : fx.events)
      if (auto* left = std::get_if<member_left>(&e);
          left != nullptr && left->member.address == st.engine->self()) {
        st.saw_leaving = true;
        st.on_leaving();
        break;
      }
  if (fx.shutdown) {
    st.log.info("this node ({}) stops: {}", to_string(st.engine->self()),
                fx.shutdown->text);
    publish_last_view(self);
    if (st.on_shutdown)
      st.on_shutdown(*fx.shutdown);
  }
  schedule_tick(self);
}

// Adds `sub` to `subs` (once), watches it and sends it `first...`.
template <class... Ts>
void add_subscriber(daemon_self self, std::vector<caf::actor>& subs,
                    const caf::actor& sub, const Ts&... first) {
  if (!sub || std::find(subs.begin(), subs.end(), sub) != subs.end())
    return;
  subs.push_back(sub);
  self->monitor(sub);
  caf::anon_send(sub, first...);
}

void subscribe(daemon_self self, const caf::actor& sub) {
  add_subscriber(self, self->state.subscribers, sub,
                 self->state.engine->snapshot());
}

void subscribe_view(daemon_self self, const caf::actor& sub) {
  add_subscriber(self, self->state.view_subscribers, sub, view_atom::value,
                 self->state.engine->state().latest_gossip());
}

void unsubscribe(daemon_self self, const caf::actor_addr& sub) {
  auto drop = [&](std::vector<caf::actor>& subs) {
    subs.erase(
      std::remove_if(subs.begin(), subs.end(),
                     [&](const caf::actor& x) { return x.address() == sub; }),
      subs.end());
  };
  drop(self->state.subscribers);
  drop(self->state.view_subscribers);
}

// One handler per membership message alternative.
template <class T>
auto on_message(daemon_self self) {
  return [self](const remote_ref& from, const T& m) {
    auto& st = self->state;
    if constexpr (std::is_same_v<T, gossip_envelope>)
      if (st.counters)
        st.counters->gossip_received.fetch_add(1, std::memory_order_relaxed);
    execute(self, st.engine->receive(from.node, membership_message{m},
                                     read_clock(st)));
  };
}

template <class... Ts>
cluster_daemon::behavior_type make_behavior(daemon_self self,
                                            std::variant<Ts...>*) {
  return {
    on_message<Ts>(self)...,
    [self](join_atom, std::vector<endpoint> seeds) {
      auto& st = self->state;
      execute(self, st.engine->join(std::move(seeds), read_clock(st)));
    },
    [self](leave_atom, const unique_address& node) {
      auto& st = self->state;
      execute(self, st.engine->leave(node, read_clock(st)));
    },
    [self](down_atom, const unique_address& node) {
      auto& st = self->state;
      execute(self, st.engine->down(node, read_clock(st)));
    },
    [self](hold_exit_atom, const std::string& holder, bool hold) {
      auto& st = self->state;
      execute(self, st.engine->hold_exit(holder, hold, read_clock(st)));
    },
    [self](contacts_atom, std::vector<endpoint> endpoints) {
      auto& st = self->state;
      execute(self, st.engine->set_contact_endpoints(std::move(endpoints),
                                                     read_clock(st)));
    },
    [self](foreign_atom, const unique_address& peer,
           const cluster_incarnation& theirs) {
      auto& st = self->state;
      execute(self,
              st.engine->foreign_incarnation_met(peer, theirs, read_clock(st)));
    },
    [self](subscribe_atom, const caf::actor& sub) { subscribe(self, sub); },
    [self](subscribe_atom, view_atom, const caf::actor& sub) {
      subscribe_view(self, sub);
    },
    [self](unsubscribe_atom, const caf::actor& sub) {
      if (sub)
        unsubscribe(self, sub.address());
    },
    [self](self_member_atom) -> caf::result<member> {
      if (self->state.engine->is_terminated())
        return runtime::to_caf_error(runtime::make_error(
          membership_errc::unknown_member,
          fmt::format("{} is no longer a member (it stopped: removed, "
                      "downed or refused)",
                      to_string(self->state.engine->self()))));
      if (auto m = self->state.engine->self_member())
        return *m;
      return runtime::to_caf_error(runtime::make_error(
        membership_errc::unknown_member,
        fmt::format("{} is not a member (yet)",
                    to_string(self->state.engine->self()))));
    },
    [self](state_atom) { return self->state.engine->snapshot(); },
    [self](tick_atom, int64_t due) {
      auto& st = self->state;
      if (st.scheduled && st.scheduled->time_since_epoch().count() == due)
        st.scheduled.reset();
      execute(self, st.engine->tick(read_clock(st)));
    },
    [self](start_atom) {
      auto& st = self->state;
      execute(self, st.engine->start(read_clock(st)));
    },
  };
}

cluster_daemon::behavior_type daemon(daemon_self self, remoting_handle remoting,
                                     cluster_daemon_settings settings) {
  auto& st = self->state;
  st.remoting = std::move(remoting);
  st.on_shutdown = std::move(settings.on_shutdown);
  st.on_leaving = std::move(settings.on_leaving);
  st.counters = std::move(settings.counters);
  st.quarantine_after = settings.quarantine_removed_after;
  if (settings.clock) {
    st.clock = settings.clock;
  } else {
    st.own_clock.emplace(self->system().clock());
    st.clock = &*st.own_clock;
  }
  auto addr = st.remoting.local_address();
  auto roles = settings.membership.roles;
  st.engine = std::make_unique<membership_engine>(
    addr, std::move(roles), std::move(settings.membership),
    std::move(settings.config), std::move(settings.checker),
    settings.seed != 0 ? settings.seed : addr.uid);
  self->set_down_handler(
    [self](const caf::down_msg& dm) { unsubscribe(self, dm.source); });
  return make_behavior(self, static_cast<membership_message*>(nullptr));
}

} // namespace

runtime::expected<cluster_daemon>
spawn_cluster_daemon(caf::actor_system& sys, remoting_handle remoting,
                     cluster_daemon_settings settings) {
  auto actor = sys.spawn(daemon, remoting, std::move(settings));
  auto published = remoting.publish(daemon_name, actor);
  if (!published) {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    return published.error();
  }
  // Handshakes that name another cluster incarnation reach the engine (a
  // weak reference: the listener must not keep a stopped daemon alive).
  remoting.on_foreign_incarnation(
    [weak = caf::actor_cast<caf::weak_actor_ptr>(actor)](
      const unique_address& peer, const cluster_incarnation& theirs) {
      if (auto d = caf::actor_cast<cluster_daemon>(weak))
        caf::anon_send(d, foreign_atom::value, peer, theirs);
    });
  // The engine starts as the daemon's first message (joins the seeds).
  caf::anon_send(actor, start_atom::value);
  return actor;
}

} // namespace troupe::cluster
