#include "troupe/sharding/coordinator_actor.hpp"

#include <memory>
#include <optional>
#include <utility>
#include <variant>

#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>

#include <fmt/format.h>

#include "troupe/cluster/cluster_daemon.hpp"
#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/sharding/shell_log.hpp"

namespace troupe::sharding {

namespace {

using cluster::remote_ref;
using cluster::tick_atom;
using cluster::view_atom;

struct coordinator_state {
  coordinator_init init;
  std::unique_ptr<coordinator_engine> engine;
  std::optional<runtime::caf_clock_source> own_clock;
  const runtime::clock_source* clock = nullptr;
  std::optional<timestamp> scheduled;
  std::string region;
  runtime::logger log{"sharding"};
};

using state_ptr = std::shared_ptr<coordinator_state>;

void execute(caf::event_based_actor* self, coordinator_state& st,
             coordinator_effects fx) {
  for (auto& node : fx.watch)
    if (auto err = st.init.remoting.watch(remote_ref{node, st.region}, self))
      st.log.warning("{}: cannot watch the region on {}: {}", st.init.type_name,
                     to_string(node), err.message);
  for (auto& x : fx.send) {
    auto msg = std::visit([](const auto& m) { return caf::make_message(m); },
                          x.message);
    // A lost message is what the network may do anyway: both sides repeat
    // what matters (registration, get_shard_home, hello; hand-offs end by
    // their timeout).
    if (auto err = st.init.remoting.send(remote_ref{x.to, st.region}, msg))
      st.log.debug("{}: {} to {} not sent: {}", st.init.type_name,
                   message_name(x.message), to_string(x.to), err.message);
  }
  for (auto& line : fx.log)
    write_log(st.log, st.init.type_name, line);
  runtime::schedule_tick(self, tick_atom::value, st.scheduled,
                         st.engine->next_tick(), *st.clock);
}

template <class T>
auto on_region_message(caf::event_based_actor* self, state_ptr st) {
  return [self, st](const remote_ref& from, const T& m) {
    execute(
      self, *st,
      st->engine->on_message(from.node, to_coordinator{m}, st->clock->now()));
  };
}

} // namespace

caf::behavior coordinator_behavior(caf::event_based_actor* self,
                                   coordinator_init init,
                                   const singleton::instance_context& ctx) {
  auto st = std::make_shared<coordinator_state>();
  st->init = std::move(init);
  st->region = region_name(st->init.type_name);
  if (st->init.clock) {
    st->clock = st->init.clock;
  } else {
    st->own_clock.emplace(self->system().clock());
    st->clock = &*st->own_clock;
  }
  std::function<bool()> lease_alive;
  if (ctx.check_alive)
    lease_alive = ctx.check_alive;
  auto strategy = st->init.strategy;
  st->engine = std::make_unique<coordinator_engine>(
    ctx.node, st->init.settings, std::move(strategy), std::move(lease_alive),
    st->init.bug);
  st->log.info("{}: coordinator incarnation {} starts on {} (fencing token "
               "{})",
               st->init.type_name, ctx.incarnation, to_string(ctx.node),
               ctx.fencing_token);
  st->init.cluster.subscribe_view(caf::actor_cast<caf::actor>(self));
  self->attach_functor(
    [cluster = st->init.cluster, me = caf::actor_cast<caf::actor_addr>(self)] {
      if (auto a = caf::actor_cast<caf::actor>(me))
        cluster.unsubscribe(a);
    });
  bool started = false;
  return {
    [self, st, started](view_atom, const cluster::gossip& g) mutable {
      cluster::membership_state state{g, st->init.cluster.self_address()};
      auto now = st->clock->now();
      if (!started) {
        started = true;
        std::vector<recent_removal> removals;
        if (st->init.recent_removals)
          removals = st->init.recent_removals(g, now);
        execute(self, *st, st->engine->start(state, now, removals));
      } else {
        execute(self, *st, st->engine->on_membership(state, now));
      }
    },
    on_region_message<register_region>(self, st),
    on_region_message<get_shard_home>(self, st),
    on_region_message<shard_started>(self, st),
    on_region_message<begin_hand_off_ack>(self, st),
    on_region_message<shard_stopped>(self, st),
    on_region_message<graceful_shutdown_request>(self, st),
    [self, st](const remote_ref& from, const get_shard_map&) {
      if (!from.is_addressable())
        return;
      shard_map_reply reply;
      reply.active = st->engine->phase() == coordinator_phase::active;
      reply.regions = st->engine->shard_map();
      if (auto err = st->init.remoting.send(from, caf::make_message(reply)))
        st->log.debug("{}: shard map for {} not sent: {}", st->init.type_name,
                      to_string(from), err.message);
    },
    [self, st](const cluster::remote_down& down) {
      // A node's removal reaches the engine through the view (with the
      // removal margin); only a region that stopped, or that was never
      // there, is reported here.
      region_gone why;
      switch (down.cause) {
        case cluster::down_cause::not_published:
          why = region_gone::not_published;
          break;
        case cluster::down_cause::actor_stopped:
        case cluster::down_cause::unpublished:
          why = region_gone::stopped;
          break;
        default:
          return;
      }
      execute(
        self, *st,
        st->engine->on_region_terminated(down.ref.node, why, st->clock->now()));
    },
    [self, st](tick_atom, int64_t due) {
      if (st->scheduled && st->scheduled->time_since_epoch().count() == due)
        st->scheduled.reset();
      execute(self, *st, st->engine->tick(st->clock->now()));
    },
  };
}

} // namespace troupe::sharding
