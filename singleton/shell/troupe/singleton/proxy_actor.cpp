#include <memory>
#include <optional>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/message_view.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/singleton/errc.hpp"
#include "troupe/singleton/proxy_core.hpp"
#include "troupe/singleton/singleton.hpp"
#include <fmt/format.h>

namespace troupe::singleton {

namespace {

using cluster::remote_ref;
using cluster::tick_atom;
using cluster::view_atom;

// One message for the instance and the reply reference of its sender.
struct envelope {
  caf::message msg;
  remote_ref reply_to;
};

struct proxy_actor_state {
  static inline const char* name = "troupe.singleton.proxy";
  std::string type_name;
  std::unique_ptr<proxy_core<envelope, remote_ref>> core;
  cluster::cluster_handle cluster;
  cluster::remoting_handle remoting;
  remote_ref self_ref;
  std::optional<runtime::caf_clock_source> own_clock;
  const runtime::clock_source* clock = nullptr;
  std::optional<timestamp> scheduled;
  uint64_t identifications = 0;
  uint64_t dropped_seen = 0;
  runtime::logger log{"singleton"};
};

using proxy_self = caf::stateful_actor<proxy_actor_state>*;

void schedule_tick(proxy_self self) {
  auto& st = self->state;
  runtime::schedule_tick(self, tick_atom::value, st.scheduled,
                         st.core->next_tick(), *st.clock);
}

// Carries out `fx` (identify, then deliver in order) and re-arms the timer.
void execute(proxy_self self, proxy_effects<envelope> fx) {
  auto& st = self->state;
  if (fx.identify) {
    ++st.identifications;
    auto to = remote_ref{*fx.identify, manager_name(st.type_name)};
    if (auto err = st.remoting.send(to, caf::make_message(identify_singleton{}),
                                    st.self_ref))
      st.log.debug("{}: identify request to {} not sent: {}", st.type_name,
                   to_string(to), err.message);
  }
  if (!fx.deliver.empty()) {
    auto& target = st.core->target();
    for (auto& e : fx.deliver) {
      auto err
        = target ? st.remoting.send(*target, e.msg, e.reply_to)
                 : runtime::make_error(errc::start_failed, "no instance known");
      if (err)
        st.log.debug("{}: a message to the instance was lost: {}", st.type_name,
                     err.message);
    }
  }
  schedule_tick(self);
}

// Logs drops at WARNING the first time and every 1000th.
void report_drops(proxy_self self) {
  auto& st = self->state;
  auto dropped = st.core->dropped();
  for (auto n = st.dropped_seen + 1; n <= dropped; ++n)
    if (n == 1 || n % 1000 == 0)
      st.log.warning("{}: the proxy dropped {} message(s) so far (buffer of "
                     "{} full while the instance is unknown)",
                     st.type_name, n, st.core->buffered());
  st.dropped_seen = dropped;
}

// A message for the instance, from the current sender.
void forward(proxy_self self, caf::message msg) {
  auto& st = self->state;
  envelope e;
  e.msg = std::move(msg);
  if (auto sender = caf::actor_cast<caf::actor>(self->current_sender()))
    e.reply_to = st.remoting.reply_ref(sender);
  auto fx = st.core->send(std::move(e));
  report_drops(self);
  execute(self, std::move(fx));
}

struct proxy_init {
  std::string type_name;
  cluster::cluster_handle cluster;
  cluster::remoting_handle remoting;
  proxy_settings settings;
  const runtime::clock_source* clock = nullptr;
};

caf::behavior proxy_behavior(proxy_self self, proxy_init init) {
  auto& st = self->state;
  st.type_name = std::move(init.type_name);
  st.cluster = std::move(init.cluster);
  st.remoting = std::move(init.remoting);
  st.core = std::make_unique<proxy_core<envelope, remote_ref>>(
    std::move(init.settings));
  if (init.clock) {
    st.clock = init.clock;
  } else {
    st.own_clock.emplace(self->system().clock());
    st.clock = &*st.own_clock;
  }
  st.self_ref = st.remoting.reply_ref(caf::actor_cast<caf::actor>(self));
  // Everything the proxy does not handle itself goes to the instance.
  self->set_default_handler(
    [self](caf::scheduled_actor*,
           caf::message_view& mv) -> caf::result<caf::message> {
      forward(self, mv.move_content_to_message());
      return caf::message{};
    });
  // An error value sent to the proxy is a message for the instance too:
  // CAF's default error handler would end the proxy (and drop its buffer).
  self->set_error_handler([self](caf::error& err) {
    forward(self, caf::make_message(std::move(err)));
  });
  return {
    [self](view_atom, const cluster::gossip& g) {
      auto& s = self->state;
      cluster::membership_state state{g, s.cluster.self_address()};
      auto before = s.core->target();
      auto fx = s.core->on_membership(state, s.clock->now());
      // The host changed: the old instance's watch is of no use any more.
      if (before && s.core->target() != before)
        s.remoting.unwatch(*before, self);
      execute(self, std::move(fx));
    },
    [self](tick_atom, int64_t due) {
      auto& s = self->state;
      if (s.scheduled && s.scheduled->time_since_epoch().count() == due)
        s.scheduled.reset();
      execute(self, s.core->tick(s.clock->now()));
    },
    [self](const remote_ref& from, const singleton_identity& id) {
      auto& s = self->state;
      if (!id.running || !id.instance.is_addressable())
        return; // asks again after identification_interval
      if (s.core->target() == id.instance)
        return;
      s.log.debug("{}: the instance is {} (incarnation {}, from {})",
                  s.type_name, to_string(id.instance), id.incarnation,
                  to_string(from.node));
      if (auto err = s.remoting.watch(id.instance, self))
        s.log.warning("{}: cannot watch the instance {}: {}", s.type_name,
                      to_string(id.instance), err.message);
      execute(self, s.core->on_identified(id.instance, s.clock->now()));
    },
    [self](const cluster::remote_down& down) {
      auto& s = self->state;
      if (s.core->target() != down.ref)
        return;
      s.log.debug("{}: the instance {} is gone ({}): identifying again",
                  s.type_name, to_string(down.ref), to_string(down.cause));
      execute(self, s.core->on_instance_gone(s.clock->now()));
    },
    [self](status_atom) {
      auto& s = self->state;
      proxy_status out;
      out.target = s.core->target().value_or(remote_ref{});
      out.expected_host
        = s.core->expected_host().value_or(runtime::unique_address{});
      out.buffered = s.core->buffered();
      out.dropped = s.core->dropped();
      out.identifications = s.identifications;
      return out;
    },
  };
}

} // namespace

runtime::expected<singleton_proxy>
singleton_proxy::start(caf::actor_system& sys, cluster::cluster_handle cluster,
                       cluster::remoting_handle remoting, std::string type_name,
                       proxy_options options) {
  if (auto err = validate_type_name(type_name))
    return err;
  auto settings = options.settings.value_or(proxy_settings{});
  if (auto err = validate(settings))
    return err;
  if (!cluster.valid() || !remoting.valid())
    return runtime::make_error(
      errc::start_failed,
      fmt::format("singleton {}: the proxy needs a running cluster and "
                  "remoting",
                  type_name));
  singleton_proxy h;
  auto c = cluster;
  h.actor_ = sys.spawn(proxy_behavior,
                       proxy_init{std::move(type_name), std::move(cluster),
                                  std::move(remoting), std::move(settings),
                                  options.clock});
  c.subscribe_view(h.actor_);
  return h;
}

runtime::expected<singleton_proxy>
singleton_proxy::start(runtime::node& node, cluster::cluster_handle cluster,
                       cluster::remoting_handle remoting, std::string type_name,
                       proxy_options options) {
  if (!options.settings) {
    auto s = proxy_settings_from_config(node.cfg());
    if (!s)
      return s.error();
    options.settings = std::move(*s);
  }
  if (!options.clock)
    options.clock = &node.clock();
  auto h = start(node.system(), std::move(cluster), std::move(remoting),
                 std::move(type_name), std::move(options));
  if (h)
    node.stop_on_shutdown(caf::actor_cast<caf::strong_actor_ptr>(h->actor()));
  return h;
}

void singleton_proxy::send(caf::message msg) const {
  if (actor_)
    caf::anon_send(actor_, std::move(msg));
}

void singleton_proxy::stop() const {
  if (actor_)
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

} // namespace troupe::singleton
