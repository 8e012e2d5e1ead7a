#include "troupe/cluster/remoting_actor.hpp"

#include <map>
#include <set>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/remoting_shared.hpp"
#include "troupe/cluster/remoting_wire.hpp"
#include "troupe/cluster/watch_table.hpp"

namespace troupe::cluster {

namespace {

struct remoting_state {
  static inline const char* name = "troupe.remoting";

  std::shared_ptr<detail::remoting_shared> sh;
  std::unique_ptr<watch_table> table;
  // Local watchers by id (weak: watching keeps no actor alive), from their
  // first watch until they stop.
  std::map<watcher_id, caf::actor_addr> watchers;
  // Actors monitored as publishers or watchers.
  std::set<caf::actor_addr> monitored;
  std::vector<char> buf;
};

using remoting_self = remoting_actor::stateful_pointer<remoting_state>;

void execute(remoting_self self, const watch_effects& effects);

void monitor_once(remoting_self self, const caf::actor& actor) {
  if (self->state.monitored.insert(actor.address()).second)
    self->monitor(actor);
}

runtime::timestamp now(remoting_self self) {
  return self->clock().now();
}

// Sends one control envelope (built in st.buf) to `to` on `lane`.
runtime::error send_envelope(remoting_self self, const unique_address& to,
                             lane lane) {
  auto& st = self->state;
  return st.sh->transport->send(to, lane, std::as_bytes(std::span{st.buf}));
}

void send_watch_request(remoting_self self, const remote_ref& ref,
                        envelope_kind kind) {
  auto& st = self->state;
  if (ref.node == st.sh->local) {
    if (kind == envelope_kind::watch)
      execute(self, st.table->watch_received(
                      ref.node, ref.name, st.sh->registry->contains(ref.name)));
    else
      st.table->unwatch_received(ref.node, ref.name);
    return;
  }
  st.buf.clear();
  append_watch(st.buf, kind, ref.name);
  auto err = send_envelope(self, ref.node, lane::control);
  if (!err)
    return;
  st.sh->log.debug("{} {}: {}", to_string(kind), to_string(ref), err.message);
  // A quarantined node is gone for good: its watches fire now.
  if (kind == envelope_kind::watch && err.category == "cluster"
      && err.code == static_cast<uint8_t>(errc::quarantined))
    execute(self, st.table->node_removed(ref.node, down_cause::node_quarantined,
                                         err.message));
}

void send_down_notice(remoting_self self, const send_down& d) {
  auto& st = self->state;
  if (d.to == st.sh->local) {
    execute(self, st.table->down_received(d.to, lane::ordinary, d.name, d.cause,
                                          d.seq, d.reason, now(self)));
    return;
  }
  st.buf.clear();
  append_down(st.buf, d.name, d.cause, d.seq, d.reason);
  // Both lanes: the control copy is fast, the ordinary one is ordered
  // behind this node's earlier messages (watch_table.hpp).
  for (auto l : {lane::control, lane::ordinary})
    if (auto err = send_envelope(self, d.to, l))
      st.sh->log.debug("down of \"{}\" to {} ({}): {}", d.name, to_string(d.to),
                       to_string(l), err.message);
}

void notify(remoting_self self, const notify_watcher& n) {
  auto& st = self->state;
  auto i = st.watchers.find(n.watcher);
  if (i == st.watchers.end())
    return;
  st.sh->log.debug("watch of {} fired: {} ({})", to_string(n.down.ref),
                   to_string(n.down.cause), n.down.reason);
  // The entry stays until the watcher stops (it is monitored): one batch
  // of effects may notify it several times.
  if (auto watcher = caf::actor_cast<caf::actor>(i->second))
    caf::anon_send(watcher, n.down);
}

void execute(remoting_self self, const watch_effects& effects) {
  for (auto& e : effects) {
    if (auto* w = std::get_if<send_watch>(&e)) {
      send_watch_request(self, w->ref, envelope_kind::watch);
    } else if (auto* u = std::get_if<send_unwatch>(&e)) {
      send_watch_request(self, u->ref, envelope_kind::unwatch);
    } else if (auto* d = std::get_if<send_down>(&e)) {
      send_down_notice(self, *d);
    } else if (auto* n = std::get_if<notify_watcher>(&e)) {
      notify(self, *n);
    } else if (auto* t = std::get_if<start_flush_timer>(&e)) {
      self->delayed_send(self, t->at - now(self), flush_atom::value);
    }
  }
}

// `name` (published or a reply name) is gone: its remote watchers hear.
void gone(remoting_self self, const std::string& name, down_cause cause,
          const std::string& reason) {
  auto& st = self->state;
  st.sh->log.info("\"{}\" is no longer reachable: {} ({})", name,
                  to_string(cause), reason);
  execute(self, st.table->published_gone(name, cause, reason));
}

void on_down(remoting_self self, const caf::down_msg& msg) {
  auto& st = self->state;
  auto& addr = msg.source;
  st.monitored.erase(addr);
  auto reason = self->system().render(msg.reason);
  auto& registry = *st.sh->registry;
  for (auto& name : registry.names_of(addr))
    if (registry.remove_if(name, addr))
      gone(self, name, down_cause::actor_stopped, reason);
  if (registry.forget_exposed(addr.id()))
    execute(self,
            st.table->published_gone(published_registry::reply_name(addr.id()),
                                     down_cause::actor_stopped, reason));
  if (st.watchers.erase(addr.id()) > 0)
    execute(self, st.table->watcher_stopped(addr.id()));
}

void on_control(remoting_self self, const control_received& c) {
  auto& st = self->state;
  switch (c.kind) {
    case envelope_kind::watch:
      execute(self, st.table->watch_received(
                      c.from, c.name, st.sh->registry->contains(c.name)));
      break;
    case envelope_kind::unwatch:
      st.table->unwatch_received(c.from, c.name);
      break;
    case envelope_kind::down:
      execute(self, st.table->down_received(c.from, c.lane, c.name, c.cause,
                                            c.seq, c.reason, now(self)));
      break;
    case envelope_kind::message:
    case envelope_kind::tagged:
      break; // delivered by the listener
  }
}

void on_node_removed(remoting_self self, const unique_address& node,
                     down_cause cause, const std::string& reason) {
  auto& st = self->state;
  if (st.table->is_removed(node))
    return;
  auto effects = st.table->node_removed(node, cause, reason);
  st.sh->log.info("node {} {}: {} watch(es) fired ({})", to_string(node),
                  cause == down_cause::node_removed ? "removed" : "quarantined",
                  effects.size(), reason);
  execute(self, effects);
}

// Quarantines the removed `node` in the transport. After the table: the
// transport's quarantine report that follows finds the node removed
// already. Idempotent (the transport's is).
void quarantine(remoting_self self, const unique_address& node) {
  auto& st = self->state;
  if (st.sh->transport->is_quarantined(node))
    return;
  st.sh->log.info("node {} quarantined: no more traffic with it",
                  to_string(node));
  st.sh->transport->remove_node(node);
}

remoting_actor::behavior_type
remoting_impl(remoting_self self, std::shared_ptr<detail::remoting_shared> sh) {
  auto& st = self->state;
  st.table
    = std::make_unique<watch_table>(sh->local, sh->settings.down_flush_timeout);
  st.sh = std::move(sh);
  self->set_down_handler([=](caf::down_msg& msg) { on_down(self, msg); });
  return {
    [=](published_atom, const std::string& name, const caf::actor& actor) {
      // Reply references ($<id>) come and go with requests: not INFO.
      auto level = name.front() == '$' ? runtime::log_level::debug
                                       : runtime::log_level::info;
      self->state.sh->log.log(level, "published \"{}\" (actor {})", name,
                              actor.id());
      monitor_once(self, actor);
    },
    [=](unpublished_atom, const std::string& name) {
      gone(self, name, down_cause::unpublished, "unpublished");
    },
    [=](watch_atom, const remote_ref& ref, const caf::actor& watcher) {
      auto& st = self->state;
      st.watchers.emplace(watcher.id(), watcher.address());
      monitor_once(self, watcher);
      execute(self, st.table->watch(watcher.id(), ref));
    },
    [=](unwatch_atom, const remote_ref& ref, const caf::actor& watcher) {
      execute(self, self->state.table->unwatch(watcher.id(), ref));
    },
    [=](node_removed_atom, const unique_address& node,
        const std::string& reason, runtime::timespan quarantine_after) {
      // The watches fire now; traffic with the node flows until the
      // quarantine, so the node still hears of its removal.
      on_node_removed(self, node, down_cause::node_removed, reason);
      if (quarantine_after > runtime::timespan{0})
        self->delayed_send(self, quarantine_after, quarantine_atom::value,
                           node);
      else
        quarantine(self, node);
    },
    [=](quarantine_atom, const unique_address& node) {
      quarantine(self, node);
    },
    [=](status_atom) {
      auto& st = self->state;
      return remoting_status{st.sh->registry->names(), st.table->size()};
    },
    [=](const control_received& c) { on_control(self, c); },
    [=](const peer_event& e) {
      auto& st = self->state;
      switch (e.change) {
        case peer_change::up:
          execute(self, st.table->peer_up(e.peer));
          break;
        case peer_change::down:
          st.table->peer_down(e.peer);
          break;
        case peer_change::quarantined:
          on_node_removed(self, e.peer, down_cause::node_quarantined, e.reason);
          break;
      }
    },
    [=](flush_atom) {
      execute(self, self->state.table->flush_timer_fired(now(self)));
    },
  };
}

} // namespace

remoting_actor
spawn_remoting_actor(caf::actor_system& sys,
                     std::shared_ptr<detail::remoting_shared> shared) {
  return sys.spawn(remoting_impl, std::move(shared));
}

} // namespace troupe::cluster
