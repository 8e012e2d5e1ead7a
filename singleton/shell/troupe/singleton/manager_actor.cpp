#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/singleton/errc.hpp"
#include "troupe/singleton/singleton.hpp"
#include <fmt/format.h>

namespace troupe::singleton {

namespace {

using cluster::remote_ref;
using cluster::tick_atom;
using cluster::view_atom;

struct manager_actor_state {
  static inline const char* name = "troupe.singleton.manager";
  std::string type_name;
  std::string holder; // "singleton:<type>", the exit hold's name
  std::unique_ptr<manager_engine> engine;
  cluster::cluster_handle cluster;
  cluster::remoting_handle remoting;
  std::optional<lease::lease_handle> lease;
  instance_factory factory;
  std::optional<caf::message> stop_message;
  runtime::timespan lease_timeout{0};
  std::optional<runtime::caf_clock_source> own_clock;
  const runtime::clock_source* clock = nullptr;
  std::optional<timestamp> scheduled;
  // The running instance (and the cell the exit functor kills it through).
  caf::actor instance;
  uint64_t incarnation = 0;
  bool stopping_instance = false;
  std::shared_ptr<caf::actor> instance_cell = std::make_shared<caf::actor>();
  std::shared_ptr<bool> exit_held = std::make_shared<bool>(false);
  std::vector<caf::response_promise> stop_promises;
  bool done = false;
  runtime::logger log{"singleton"};
};

using manager_self = caf::stateful_actor<manager_actor_state>*;

runtime::log_level level_of(log_level x) {
  switch (x) {
    case log_level::debug:
      return runtime::log_level::debug;
    case log_level::info:
      return runtime::log_level::info;
    case log_level::warning:
      return runtime::log_level::warning;
    case log_level::error:
      return runtime::log_level::error;
  }
  return runtime::log_level::error;
}

void write(const manager_actor_state& st, const log_line& line) {
  st.log.log(level_of(line.level), "{}: {}", st.type_name, line.text);
}

void execute(manager_self self, manager_effects fx);

timestamp now(manager_self self) {
  return self->state.clock->now();
}

void stop_instance(manager_self self) {
  auto& st = self->state;
  if (!st.instance || st.stopping_instance)
    return;
  st.stopping_instance = true;
  if (st.stop_message)
    self->send(st.instance, *st.stop_message);
  else
    self->send_exit(st.instance, caf::exit_reason::user_shutdown);
}

void spawn_instance(manager_self self, const start_instance& x) {
  auto& st = self->state;
  instance_context ctx;
  ctx.type_name = st.type_name;
  ctx.incarnation = x.incarnation;
  ctx.fencing_token = x.fencing_token;
  ctx.node = st.cluster.self_address();
  ctx.remoting = st.remoting;
  if (st.lease)
    ctx.check_alive = [lease = *st.lease] { return lease.check_alive(); };
  auto fn = [factory = st.factory, ctx](caf::event_based_actor* inst) {
    return factory(inst, ctx);
  };
  st.instance = self->spawn(fn);
  st.incarnation = x.incarnation;
  st.stopping_instance = false;
  *st.instance_cell = st.instance;
  self->monitor(st.instance);
  auto name = instance_name(st.type_name);
  if (auto published = st.remoting.publish(name, st.instance); !published)
    st.log.error("{}: instance {} runs but could not be published as {}: {}",
                 st.type_name, x.incarnation, name, published.error().message);
  st.log.info("{}: started instance {} (fencing token {})", st.type_name,
              x.incarnation, x.fencing_token);
}

void acquire_lease(manager_self self) {
  auto& st = self->state;
  auto answer = [self](bool acquired, uint64_t token) {
    execute(self,
            self->state.engine->on_lease_acquired(acquired, token, now(self)));
  };
  if (!st.lease) {
    st.log.error("{}: no lease to acquire (use_lease without a lease): "
                 "counted as refused",
                 st.type_name);
    answer(false, 0);
    return;
  }
  auto wait = st.lease_timeout;
  self
    ->request(st.lease->actor(), wait + std::chrono::seconds{1},
              lease::acquire_atom::value, wait)
    .then(
      [answer](const lease::acquire_result& r) { answer(r.acquired, r.token); },
      [self, answer](const caf::error& err) {
        self->state.log.warning("{}: acquiring the lease failed: {} (counted "
                                "as refused)",
                                self->state.type_name,
                                self->system().render(err));
        answer(false, 0);
      });
}

void release_lease(manager_self self) {
  auto& st = self->state;
  auto released = [self] {
    execute(self, self->state.engine->on_lease_released(now(self)));
  };
  if (!st.lease) {
    released();
    return;
  }
  self
    ->request(st.lease->actor(), st.lease_timeout + std::chrono::seconds{1},
              lease::release_atom::value)
    .then([released](bool) { released(); },
          [self, released](const caf::error& err) {
            self->state.log.warning("{}: releasing the lease failed: {} (it "
                                    "expires after its ttl)",
                                    self->state.type_name,
                                    self->system().render(err));
            released();
          });
}

void send_all(manager_self self, const std::vector<outgoing>& xs) {
  auto& st = self->state;
  auto to_name = manager_name(st.type_name);
  for (auto& x : xs) {
    auto msg = std::visit([](const auto& m) { return caf::make_message(m); },
                          x.message);
    // A lost message is what the network may do anyway: the engine repeats
    // what matters.
    if (auto err = st.remoting.send(remote_ref{x.to, to_name}, msg))
      st.log.debug("{}: {} to {} not sent: {}", st.type_name,
                   name_of(x.message), to_string(x.to), err.message);
  }
}

void finish(manager_self self) {
  auto& st = self->state;
  st.done = true;
  for (auto& rp : st.stop_promises)
    rp.deliver(true);
  st.stop_promises.clear();
  auto me = caf::actor_cast<caf::actor>(self);
  st.cluster.unsubscribe(me);
  if (st.lease)
    st.lease->unsubscribe(me);
  st.remoting.unpublish(manager_name(st.type_name));
  self->quit();
}

void schedule_tick(manager_self self) {
  auto& st = self->state;
  runtime::schedule_tick(self, tick_atom::value, st.scheduled,
                         st.engine->next_tick(), *st.clock);
}

// Carries out `fx` in the engine's order (manager_effects), then re-arms
// the timer. Lease answers come back later, each through `execute` again.
void execute(manager_self self, manager_effects fx) {
  auto& st = self->state;
  if (fx.stop_instance)
    stop_instance(self);
  if (fx.kill_instance && st.instance)
    self->send_exit(st.instance, caf::exit_reason::kill);
  if (fx.release_lease)
    release_lease(self);
  if (fx.start)
    spawn_instance(self, *fx.start);
  if (fx.acquire_lease)
    acquire_lease(self);
  send_all(self, fx.send);
  if (fx.hold_exit) {
    *st.exit_held = *fx.hold_exit;
    st.cluster.hold_exit(st.holder, *fx.hold_exit);
  }
  for (auto& line : fx.log)
    write(st, line);
  if (fx.stopped) {
    finish(self);
    return;
  }
  schedule_tick(self);
}

template <class T>
auto on_hand_over() {
  return [](manager_self self, const remote_ref& from, const T& m) {
    auto& st = self->state;
    if (st.done)
      return;
    execute(self,
            st.engine->on_message(from.node, hand_over_message{m}, now(self)));
  };
}

singleton_identity identity_of(const manager_actor_state& st) {
  singleton_identity id;
  auto running = st.engine->running_instance();
  if (!st.instance || st.stopping_instance || !running)
    return id;
  id.running = true;
  id.instance = st.remoting.local_ref(instance_name(st.type_name));
  id.incarnation = *running;
  id.fencing_token = st.engine->fencing_token();
  return id;
}

struct manager_init {
  std::string type_name;
  cluster::cluster_handle cluster;
  cluster::remoting_handle remoting;
  instance_factory factory;
  manager_settings settings;
  manager_options options;
};

caf::behavior manager_behavior(manager_self self, manager_init init) {
  auto& st = self->state;
  st.type_name = std::move(init.type_name);
  st.holder = "singleton:" + st.type_name;
  st.cluster = std::move(init.cluster);
  st.remoting = std::move(init.remoting);
  st.factory = std::move(init.factory);
  st.lease = std::move(init.options.lease);
  st.stop_message = std::move(init.options.stop_message);
  st.lease_timeout = init.options.lease_timeout;
  if (init.options.clock) {
    st.clock = init.options.clock;
  } else {
    st.own_clock.emplace(self->system().clock());
    st.clock = &*st.own_clock;
  }
  st.engine = std::make_unique<manager_engine>(
    st.cluster.self_address(), std::move(init.settings), init.options.bug);
  if (st.lease)
    st.lease->subscribe(caf::actor_cast<caf::actor>(self));
  // However the actor ends, the instance ends with it and the exit hold is
  // let go (a dead manager must not keep its node from leaving).
  self->attach_functor([cell = st.instance_cell, held = st.exit_held,
                        cluster = st.cluster, holder = st.holder] {
    if (*cell)
      caf::anon_send_exit(*cell, caf::exit_reason::kill);
    if (*held)
      cluster.hold_exit(holder, false);
  });
  self->set_down_handler([self](const caf::down_msg& dm) {
    auto& s = self->state;
    if (!s.instance || dm.source != s.instance.address())
      return;
    s.remoting.unpublish(instance_name(s.type_name));
    s.log.info("{}: instance {} terminated: {}", s.type_name, s.incarnation,
               self->system().render(dm.reason));
    s.instance = nullptr;
    *s.instance_cell = nullptr;
    s.stopping_instance = false;
    execute(self, s.engine->on_instance_terminated(s.incarnation, now(self)));
  });
  // An error message (an instance that does not handle its stop message
  // answers with unexpected_message) must not end the manager, which CAF's
  // default error handler would do: the instance would be killed and the
  // lease left to its ttl. Logged; the stop is bounded by
  // instance_stop_timeout anyway.
  self->set_error_handler([self](caf::error& err) {
    auto& s = self->state;
    if (err == caf::sec::unexpected_message && s.stopping_instance)
      s.log.warning("{}: instance {} did not handle its stop message "
                    "(manager_options::stop_message); it is killed after "
                    "singleton.instance_stop_timeout",
                    s.type_name, s.incarnation);
    else
      s.log.warning("{}: ignored an error message: {}", s.type_name,
                    self->system().render(err));
  });
  return {
    [self](const remote_ref& from, const hand_over_to_me& m) {
      on_hand_over<hand_over_to_me>()(self, from, m);
    },
    [self](const remote_ref& from, const hand_over_in_progress& m) {
      on_hand_over<hand_over_in_progress>()(self, from, m);
    },
    [self](const remote_ref& from, const hand_over_done& m) {
      on_hand_over<hand_over_done>()(self, from, m);
    },
    [self](const remote_ref& from, const take_over_from_me& m) {
      on_hand_over<take_over_from_me>()(self, from, m);
    },
    [self](const remote_ref& from, const identify_singleton&) {
      auto& s = self->state;
      if (!from.is_addressable())
        return;
      if (auto err = s.remoting.send(from, caf::make_message(identity_of(s))))
        s.log.debug("{}: identity for {} not sent: {}", s.type_name,
                    to_string(from), err.message);
    },
    [self](view_atom, const cluster::gossip& g) {
      auto& s = self->state;
      if (s.done)
        return;
      cluster::membership_state state{g, s.cluster.self_address()};
      execute(self, s.engine->on_membership(state, now(self)));
    },
    [self](tick_atom, int64_t due) {
      auto& s = self->state;
      if (s.scheduled && s.scheduled->time_since_epoch().count() == due)
        s.scheduled.reset();
      if (!s.done)
        execute(self, s.engine->tick(now(self)));
    },
    [self](const lease::lease_lost& lost) {
      auto& s = self->state;
      if (s.done)
        return;
      s.log.info("{}: lease {} lost: {}", s.type_name, lost.name, lost.reason);
      execute(self, s.engine->on_lease_lost(lost.token, now(self)));
    },
    [self](stop_atom) -> caf::result<bool> {
      auto& s = self->state;
      if (s.done)
        return true;
      auto rp = self->make_response_promise<bool>();
      s.stop_promises.push_back(rp);
      execute(self, s.engine->stop(now(self)));
      return rp;
    },
    [self](status_atom) {
      auto& s = self->state;
      manager_status out;
      out.state = to_string(s.engine->state());
      out.incarnation = s.engine->running_instance().value_or(0);
      out.fencing_token = s.engine->fencing_token();
      out.counters = s.engine->counters();
      return out;
    },
  };
}

runtime::error start_failed(std::string text) {
  return runtime::make_error(errc::start_failed, std::move(text));
}

// The leases (name and owner: one node) the managers of one actor system
// use, and by which singleton type: two types on one lease (one
// `singleton.lease_name` for all) would have the second refused forever by
// its own node ("held by" itself). Entries go when their manager exits.
struct lease_claims {
  std::mutex mtx;
  std::map<std::tuple<const caf::actor_system*, std::string, std::string>,
           std::string>
    by;
};

lease_claims& claims() {
  static lease_claims instance;
  return instance;
}

// Claims `lease` of `owner` for `type` on `sys`; the name of the type holding
// it when another one does.
std::optional<std::string> claim_lease(const caf::actor_system& sys,
                                       const std::string& lease,
                                       const std::string& owner,
                                       const std::string& type) {
  auto& c = claims();
  std::lock_guard<std::mutex> guard{c.mtx};
  auto [i, added] = c.by.try_emplace({&sys, lease, owner}, type);
  if (!added)
    return i->second;
  return std::nullopt;
}

void unclaim_lease(const caf::actor_system& sys, const std::string& lease,
                   const std::string& owner) {
  auto& c = claims();
  std::lock_guard<std::mutex> guard{c.mtx};
  c.by.erase({&sys, lease, owner});
}

} // namespace

runtime::expected<singleton_manager> singleton_manager::start(
  caf::actor_system& sys, cluster::cluster_handle cluster,
  cluster::remoting_handle remoting, std::string type_name,
  instance_factory factory, manager_options options) {
  if (auto err = validate_type_name(type_name))
    return err;
  auto settings = options.settings.value_or(manager_settings{});
  if (options.lease)
    settings.use_lease = true;
  if (auto err = validate(settings))
    return err;
  if (!cluster.valid() || !remoting.valid())
    return start_failed(fmt::format(
      "singleton {}: the manager needs a running cluster and remoting",
      type_name));
  if (!factory)
    return start_failed(
      fmt::format("singleton {}: no instance factory", type_name));
  if (settings.use_lease && !options.lease)
    return start_failed(fmt::format(
      "singleton {}: singleton.use_lease is on but no lease was given",
      type_name));
  std::string lease_name;
  std::string lease_owner;
  if (options.lease) {
    lease_name = options.lease->settings().name;
    lease_owner = options.lease->settings().owner;
    if (auto other = claim_lease(sys, lease_name, lease_owner, type_name))
      return start_failed(fmt::format(
        "singleton {}: the lease {} is already used by the singleton {} on "
        "this node; every singleton type needs a lease of its own (leave "
        "singleton.lease_name empty for <cluster.name>-singleton-<type>)",
        type_name, lease_name, *other));
  }
  singleton_manager h;
  h.sys_ = &sys;
  h.type_name_ = type_name;
  h.lease_ = options.lease;
  manager_init init{
    type_name,          std::move(cluster),  remoting,
    std::move(factory), std::move(settings), std::move(options)};
  auto c = init.cluster;
  h.actor_ = sys.spawn(manager_behavior, std::move(init));
  if (!lease_name.empty())
    h.actor_->attach_functor([&sys, lease_name, lease_owner] {
      unclaim_lease(sys, lease_name, lease_owner);
    });
  if (auto published = remoting.publish(manager_name(type_name), h.actor_);
      !published) {
    caf::anon_send_exit(h.actor_, caf::exit_reason::user_shutdown);
    return start_failed(
      fmt::format("singleton {}: {}", type_name, published.error().message));
  }
  c.subscribe_view(h.actor_);
  return h;
}

runtime::expected<singleton_manager>
singleton_manager::start(runtime::node& node, cluster::cluster_handle cluster,
                         cluster::remoting_handle remoting,
                         std::string type_name, instance_factory factory,
                         manager_options options) {
  if (auto err = validate_type_name(type_name))
    return err;
  auto& cfg = node.cfg();
  if (!options.settings) {
    runtime::timespan stable_after = std::chrono::seconds{20};
    if (cfg.schema().find("downing.stable_after"))
      stable_after = cfg.get<runtime::timespan>("downing.stable_after");
    auto s = manager_settings_from_config(cfg, stable_after);
    if (!s)
      return s.error();
    options.settings = std::move(*s);
  }
  if (!options.clock)
    options.clock = &node.clock();
  if (options.settings->use_lease && !options.lease) {
    auto name
      = singleton_lease_name(cfg.get<std::string>("singleton.lease_name"),
                             cfg.get<std::string>("cluster.name"), type_name);
    auto lease = lease::lease_handle::spawn_from_config(
      node, name, to_string(cluster.self_address()));
    if (!lease)
      return start_failed(fmt::format("singleton {}: the lease {}: {}",
                                      type_name, name,
                                      node.system().render(lease.error())));
    options.lease = std::move(*lease);
  }
  auto timeout = options.stop_timeout;
  auto h = start(node.system(), std::move(cluster), std::move(remoting),
                 std::move(type_name), std::move(factory), std::move(options));
  // After the leave (cluster_exiting handed the instance over) and before
  // release_leases: an instance still running here (the node was downed,
  // or the leave timed out) stops, and its lease is released, before the
  // lease actors go.
  if (h)
    node.add_shutdown_task(
      runtime::shutdown_phase::cluster_shutdown, "singleton " + h->type_name(),
      [x = *h, timeout](const runtime::shutdown_context& ctx) {
        x.stop_and_wait(std::min(timeout, ctx.remaining()));
      });
  return h;
}

void singleton_manager::stop() const {
  if (actor_)
    caf::anon_send(actor_, stop_atom::value);
}

runtime::error
singleton_manager::stop_and_wait(runtime::timespan timeout) const {
  if (!actor_ || !sys_)
    return {};
  caf::scoped_actor self{*sys_};
  runtime::error result;
  self->request(actor_, timeout, stop_atom::value)
    .receive([](bool) {},
             [&](caf::error& err) {
               result = start_failed(fmt::format(
                 "singleton {}: the graceful stop did not finish within {}: "
                 "{}",
                 type_name_, runtime::render_duration(timeout),
                 sys_->render(err)));
             });
  if (result) {
    runtime::logger{"singleton"}.warning("{}", result.message);
    caf::anon_send_exit(actor_, caf::exit_reason::kill);
  }
  return result;
}

} // namespace troupe::singleton
