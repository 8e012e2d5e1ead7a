#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/logger.hpp>
#include <caf/message_view.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "troupe/cluster/cluster_daemon.hpp"
#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/sharding/coordinator_actor.hpp"
#include "troupe/sharding/entity_tag.hpp"
#include "troupe/sharding/errc.hpp"
#include "troupe/sharding/least_shard_allocation.hpp"
#include "troupe/sharding/region_engine.hpp"
#include "troupe/sharding/shard_id.hpp"
#include "troupe/sharding/sharding.hpp"
#include "troupe/sharding/shell_log.hpp"

namespace troupe::sharding {

namespace {

using cluster::remote_ref;
using cluster::tick_atom;
using cluster::view_atom;

// The region actor's private messages.
using entity_down_atom = caf::atom_constant<caf::atom("shedown")>;
using wake_atom = caf::atom_constant<caf::atom("shwake")>;
using done_atom = caf::atom_constant<caf::atom("shdone")>;

using engine_type = region_engine<caf::message, caf::actor>;

runtime::error make_err(errc code, std::string text) {
  return runtime::make_error(code, std::move(text));
}

void enqueue(const caf::actor& to, caf::message msg) {
  caf::actor_cast<caf::abstract_actor*>(to)->enqueue(
    nullptr, caf::make_message_id(), std::move(msg), nullptr);
}

// The names of a message's element types, for errors: the portable names
// (CAF's for built-in types, add_message_type's for registered ones), the
// demangled C++ name for others.
std::string type_names(caf::actor_system& sys, const caf::message& msg) {
  if (msg.empty())
    return "an empty message";
  std::string out = "(";
  for (size_t i = 0; i < msg.size(); ++i) {
    if (i > 0)
      out += ", ";
    auto rtti = msg.type(i);
    auto& name = sys.types().portable_name(rtti);
    if (&name != &sys.types().default_type_name()) {
      out += name;
      continue;
    }
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> demangled{
      rtti.second != nullptr
        ? abi::__cxa_demangle(rtti.second->name(), nullptr, nullptr, &status)
        : nullptr,
      &std::free};
    out += status == 0 && demangled ? demangled.get() : "?";
  }
  return out + ")";
}

} // namespace

// -- the state shared by the handles and the actor ---------------------------

/// Everything the send path (any thread) and the region actor share; the
/// engine and the wake bookkeeping only under `mtx`. Commands run under
/// the lock too, so the engine's order is the order of the mailboxes.
struct shard_region::shared {
  caf::actor_system* sys = nullptr;
  std::string type_name;
  std::string name;
  std::string coordinator_name;
  bool proxy_only = false;
  // This node.
  runtime::unique_address self;
  sharding_settings settings;
  message_extractor extractor;
  // The application gave its own entity_of (errors then say nothing about
  // the default one).
  bool custom_extractor = false;
  std::optional<caf::message> stop_message;
  entity_factory factory;
  cluster::cluster_handle cluster;
  cluster::remoting_handle remoting;
  std::optional<runtime::caf_clock_source> own_clock;
  const runtime::clock_source* clock = nullptr;
  runtime::logger log{"sharding"};
  caf::actor actor;
  caf::actor_addr actor_addr;
  std::optional<singleton::singleton_manager> coordinator;

  std::mutex mtx;
  std::unique_ptr<engine_type> engine;
  // The removals this node saw, for a coordinator that starts on it later.
  removal_tracker removals;
  // The earliest engine deadline the actor was told about.
  std::optional<timestamp> wake_at;
  bool done = false;
  uint64_t unmappable = 0;

  timestamp now() const {
    return clock->now();
  }
};

namespace {

using shared = shard_region::shared;

// not_running once the region stopped (its actor system may be gone: a
// handle can outlive it), else none. The caller holds `sh.mtx`.
runtime::error stopped_error_locked(const shared& sh) {
  if (sh.done)
    return make_err(errc::not_running,
                    fmt::format("the region of {} has stopped", sh.type_name));
  return {};
}

// `stopped_error_locked`, taking the lock.
runtime::error stopped_error(shared& sh) {
  std::lock_guard<std::mutex> guard{sh.mtx};
  return stopped_error_locked(sh);
}

// Sends `msg` for `entity` of `shard` to the region on `home`: entity and
// shard travel in the frame's tag, the payload is the whole message (ADR
// 0008). The caller holds `sh.mtx`.
void forward(shared& sh, const runtime::unique_address& home,
             const entity_id& entity, const shard_id& shard,
             const caf::message& msg) {
  thread_local std::string tag;
  auto err = make_entity_tag(tag, entity, shard);
  if (!err)
    err = sh.remoting.send_tagged(home, sh.name, tag, msg);
  if (err)
    sh.log.warning("{}: a message for entity {} (shard {}) to the region on "
                   "{} was not sent: {}",
                   sh.type_name, entity, shard, to_string(home), err.message);
}

// Runs the engine's commands in order; the caller holds `sh.mtx`.
void run(shared& sh) {
  auto& eng = *sh.engine;
  if (eng.has_commands())
    eng.drain([&sh](auto& cmd) {
      std::visit(
        [&sh](auto& c) {
          using T = std::decay_t<decltype(c)>;
          if constexpr (std::is_same_v<T, engine_type::send_to_coordinator>) {
            auto msg = std::visit(
              [](const auto& m) { return caf::make_message(m); }, c.msg);
            if (auto err = sh.remoting.send(
                  remote_ref{c.coordinator, sh.coordinator_name}, msg))
              sh.log.debug("{}: {} to the coordinator on {} not sent: {}",
                           sh.type_name, message_name(c.msg),
                           to_string(c.coordinator), err.message);
          } else if constexpr (std::is_same_v<T, engine_type::to_entity>) {
            enqueue(c.ref, std::move(c.msg));
          } else if constexpr (std::is_same_v<T, engine_type::forward>) {
            forward(sh, c.region, c.entity, c.shard, c.msg);
          } else if constexpr (std::is_same_v<T, engine_type::stop_entity>) {
            if (sh.stop_message)
              enqueue(c.ref, *sh.stop_message);
            else
              caf::anon_send_exit(c.ref, caf::exit_reason::user_shutdown);
          } else if constexpr (std::is_same_v<T, engine_type::kill_entity>) {
            caf::anon_send_exit(c.ref, caf::exit_reason::kill);
          } else if constexpr (std::is_same_v<T, engine_type::hold_exit>) {
            sh.cluster.hold_exit("sharding:" + sh.type_name, c.hold);
          } else if constexpr (std::is_same_v<T, engine_type::stopped>) {
            if (!sh.done) {
              sh.done = true;
              caf::anon_send(sh.actor, done_atom::value);
            }
          } else if constexpr (std::is_same_v<T, log_line>) {
            write_log(sh.log, sh.type_name, c);
          }
        },
        cmd);
    });
  // Tell the actor about an earlier deadline (the send path runs on other
  // threads and cannot arm the actor's timer itself).
  auto next = eng.next_tick();
  if (next && (!sh.wake_at || *next < *sh.wake_at) && !sh.done) {
    sh.wake_at = next;
    caf::anon_send(sh.actor, wake_atom::value);
  }
}

// Routes one message on the calling thread.
runtime::error route(shared& sh, const entity_id& entity, const shard_id& shard,
                     caf::message msg) {
  std::lock_guard<std::mutex> guard{sh.mtx};
  if (auto err = stopped_error_locked(sh))
    return err;
  if (auto ref = sh.engine->deliver(entity, shard, msg, sh.now())) {
    // The engine returns a reference only when it queued nothing, and a
    // touched entity only moves the next deadline later: nothing to run.
    if (sh.engine->has_commands())
      run(sh);
    enqueue(*ref, std::move(msg));
    return {};
  }
  run(sh);
  return {};
}

// The shard of `entity` from the extractor's shard_of; an exception from it
// is an unmappable message.
runtime::expected<shard_id> shard_of(shared& sh, const entity_id& entity) {
  try {
    return sh.extractor.shard_of(entity);
  } catch (const std::exception& e) {
    return make_err(errc::unmappable_message,
                    fmt::format("{}: the message extractor's shard_of threw "
                                "for entity {}: {}",
                                sh.type_name, entity, e.what()));
  } catch (...) {
    return make_err(errc::unmappable_message,
                    fmt::format("{}: the message extractor's shard_of threw "
                                "for entity {}",
                                sh.type_name, entity));
  }
}

// Routes to `entity`, its shard from the extractor's shard_of.
runtime::error route_to(shared& sh, const entity_id& entity, caf::message msg) {
  auto shard = shard_of(sh, entity);
  if (!shard)
    return shard.error();
  return route(sh, entity, *shard, std::move(msg));
}

std::optional<entity_id> default_entity_of(const caf::message& msg) {
  if (!msg.empty() && msg.match_element<std::string>(0)) {
    auto& id = msg.get_as<std::string>(0);
    if (!id.empty())
      return id;
  }
  return std::nullopt;
}

// Maps a message sent without an entity id; logs and counts what cannot be
// mapped.
runtime::error route_unaddressed(shared& sh, caf::message msg) {
  if (auto err = stopped_error(sh))
    return err;
  std::optional<entity_id> entity;
  std::string failure;
  try {
    entity = sh.extractor.entity_of(msg);
  } catch (const std::exception& e) {
    failure = fmt::format(" (the extractor threw: {})", e.what());
  } catch (...) {
    failure = " (the extractor threw)";
  }
  if (!entity || entity->empty()) {
    auto text = fmt::format(
      "{}: the message extractor cannot map {} to an entity{}", sh.type_name,
      type_names(*sh.sys, msg),
      !failure.empty()      ? failure
      : sh.custom_extractor ? std::string{}
                            : std::string{" (the default extractor takes the "
                                          "entity id from a first element of "
                                          "type std::string)"});
    {
      std::lock_guard<std::mutex> guard{sh.mtx};
      ++sh.unmappable;
    }
    return make_err(errc::unmappable_message, std::move(text));
  }
  return route_to(sh, *entity, std::move(msg));
}

// Routes a message another region forwarded (a tagged remoting message:
// the tag names entity and shard, `msg` is the payload) on the receiving
// thread.
void route_forwarded(shared& sh, const runtime::unique_address& from,
                     std::string_view tag, caf::message msg) {
  auto x = parse_entity_tag(tag);
  if (!x) {
    sh.log.warning("{}: dropped a message from {}: {}", sh.type_name,
                   to_string(from), x.error().message);
    return;
  }
  entity_id entity{x->entity};
  if (auto err = route(sh, entity, shard_id{x->shard}, std::move(msg)))
    sh.log.debug("{}: dropped a message from {} for entity {}: {}",
                 sh.type_name, to_string(from), entity, err.message);
}

// -- entities -----------------------------------------------------------------

// An entity's actor: the application's behavior over this state, which
// tells the region when the actor ends (its destructor runs in CAF's
// on_exit, whatever the reason). Cheaper per spawn than an attached
// functor, and only what the notice needs: an idle entity's memory counts
// (bench/sharding_bench, figure 4).
struct entity_shell {
  static inline const char* name = "troupe.sharding.entity";
  entity_id entity;
  caf::actor_addr region;

  entity_shell() = default;
  entity_shell(const entity_shell&) = delete;
  entity_shell& operator=(const entity_shell&) = delete;

  ~entity_shell() {
    if (auto r = caf::actor_cast<caf::actor>(region))
      caf::anon_send(r, entity_down_atom::value, entity);
  }
};

// -- the region actor ---------------------------------------------------------

struct region_actor_state {
  static inline const char* name = "troupe.sharding.region";
  std::shared_ptr<shared> sh;
  std::optional<timestamp> scheduled;
  remote_ref self_ref;
  std::vector<caf::response_promise> stop_promises;
  std::vector<caf::response_promise> map_promises;
};

using region_self = caf::stateful_actor<region_actor_state>*;

// Runs `f(engine, now)` under the lock, then the commands, then arms the
// timer.
template <class F>
void with_engine(region_self self, F f) {
  auto& st = self->state;
  auto& sh = *st.sh;
  std::optional<timestamp> next;
  {
    std::lock_guard<std::mutex> guard{sh.mtx};
    f(*sh.engine, sh.now());
    run(sh);
    next = sh.engine->next_tick();
    sh.wake_at = next;
  }
  runtime::schedule_tick(self, tick_atom::value, st.scheduled, next, *sh.clock);
}

void finish(region_self self) {
  auto& st = self->state;
  for (auto& rp : st.stop_promises)
    rp.deliver(true);
  st.stop_promises.clear();
  st.sh->cluster.unsubscribe(caf::actor_cast<caf::actor>(self));
  st.sh->remoting.unpublish(st.sh->name);
  self->quit();
}

template <class T>
auto on_coordinator_message(region_self self) {
  return [self](const remote_ref& from, const T& m) {
    with_engine(self, [&](engine_type& eng, timestamp now) {
      eng.on_coordinator_message(from.node, to_region{m}, now);
    });
  };
}

region_status status_of(shared& sh) {
  std::lock_guard<std::mutex> guard{sh.mtx};
  auto& eng = *sh.engine;
  region_status out;
  out.type_name = sh.type_name;
  out.proxy_only = sh.proxy_only;
  if (eng.coordinator())
    out.coordinator = *eng.coordinator();
  for (auto& [shard, n] : eng.shards())
    out.shards.emplace(shard, n);
  out.entities = eng.entity_count();
  auto& c = eng.counters();
  out.buffered = c.buffered;
  out.dropped = c.dropped + sh.unmappable;
  out.delivered = c.delivered;
  out.forwarded = c.forwarded;
  out.spawned = c.spawned;
  out.passivated = c.passivated;
  return out;
}

caf::behavior region_behavior(region_self self, std::shared_ptr<shared> sh) {
  auto& st = self->state;
  st.sh = std::move(sh);
  st.self_ref = st.sh->remoting.local_ref(st.sh->name);
  // However the actor ends, its entities end with it and the exit hold is
  // let go.
  self->attach_functor([w = std::weak_ptr<shared>{st.sh}] {
    auto sh = w.lock();
    if (!sh)
      return;
    std::vector<caf::actor> entities;
    {
      std::lock_guard<std::mutex> guard{sh->mtx};
      sh->done = true;
      entities = sh->engine->entity_refs();
    }
    for (auto& e : entities)
      caf::anon_send_exit(e, caf::exit_reason::kill);
    sh->cluster.hold_exit("sharding:" + sh->type_name, false);
  });
  // Messages sent to the region actor itself go through routing (those
  // from other regions take the tagged receiver, see start).
  self->set_default_handler(
    [self](caf::scheduled_actor*,
           caf::message_view& mv) -> caf::result<caf::message> {
      auto& sh = *self->state.sh;
      auto msg = mv.move_content_to_message();
      if (auto err = route_unaddressed(sh, std::move(msg)))
        sh.log.warning("{} (dropped)", err.message);
      return caf::message{};
    });
  self->set_error_handler([self](caf::error& err) {
    self->state.sh->log.warning("{}: ignored an error message: {}",
                                self->state.sh->type_name,
                                self->system().render(err));
  });
  return {
    [self](view_atom, const cluster::gossip& g) {
      auto& sh = *self->state.sh;
      auto self_address = sh.cluster.self_address();
      with_engine(self, [&](engine_type& eng, timestamp now) {
        sh.removals.on_view(g, now);
        eng.on_membership(cluster::membership_state{g, self_address}, now);
      });
    },
    on_coordinator_message<coordinator_hello>(self),
    on_coordinator_message<register_ack>(self),
    on_coordinator_message<shard_home>(self),
    on_coordinator_message<host_shard>(self),
    on_coordinator_message<begin_hand_off>(self),
    on_coordinator_message<hand_off>(self),
    on_coordinator_message<graceful_shutdown_ack>(self),
    [self](entity_down_atom, const entity_id& entity) {
      with_engine(self, [&](engine_type& eng, timestamp now) {
        eng.on_entity_terminated(entity, now);
      });
    },
    [self](passivate_atom, const entity_id& entity) {
      with_engine(self, [&](engine_type& eng, timestamp now) {
        eng.passivate(entity, now);
      });
    },
    [self](tick_atom, int64_t due) {
      auto& st = self->state;
      if (st.scheduled && st.scheduled->time_since_epoch().count() == due)
        st.scheduled.reset();
      with_engine(self,
                  [&](engine_type& eng, timestamp now) { eng.tick(now); });
    },
    [self](wake_atom) { with_engine(self, [](engine_type&, timestamp) {}); },
    [self](done_atom) { finish(self); },
    [self](stop_atom) -> caf::result<bool> {
      auto& st = self->state;
      auto rp = self->make_response_promise<bool>();
      st.stop_promises.push_back(rp);
      with_engine(self,
                  [&](engine_type& eng, timestamp now) { eng.shutdown(now); });
      return rp;
    },
    [self](status_atom) { return status_of(*self->state.sh); },
    [self](entities_atom, const shard_id& shard) {
      auto& sh = *self->state.sh;
      std::lock_guard<std::mutex> guard{sh.mtx};
      return sh.engine->entities(shard);
    },
    [self](shard_map_atom) -> caf::result<shard_map_reply> {
      auto& st = self->state;
      auto& sh = *st.sh;
      std::optional<runtime::unique_address> coordinator;
      {
        std::lock_guard<std::mutex> guard{sh.mtx};
        coordinator = sh.engine->coordinator();
      }
      if (!coordinator)
        return runtime::to_caf_error(make_err(
          errc::no_coordinator,
          fmt::format("{}: no coordinator is known yet", sh.type_name)));
      auto rp = self->make_response_promise<shard_map_reply>();
      st.map_promises.push_back(rp);
      auto reply_to = sh.remoting.reply_ref(caf::actor_cast<caf::actor>(self));
      if (auto err
          = sh.remoting.send(remote_ref{*coordinator, sh.coordinator_name},
                             caf::make_message(get_shard_map{}), reply_to))
        sh.log.debug("{}: shard map request not sent: {}", sh.type_name,
                     err.message);
      return rp;
    },
    [self](const remote_ref&, const shard_map_reply& reply) {
      auto& st = self->state;
      for (auto& rp : st.map_promises)
        rp.deliver(reply);
      st.map_promises.clear();
    },
  };
}

// -- the registry of regions per actor system (find_region) ------------------

// Keyed by the actor system and the node: the simulated worlds of the tests
// run several nodes in one actor system.
struct registry {
  std::mutex mtx;
  std::map<std::pair<const caf::actor_system*, runtime::unique_address>,
           std::map<std::string, std::weak_ptr<shared>, std::less<>>>
    by_node;
};

// Whether the region `w` still runs (a stopped one's handles may live on;
// its type may be started again).
bool running(const std::weak_ptr<shared>& w) {
  auto sh = w.lock();
  return sh && !stopped_error(*sh);
}

registry& regions() {
  static registry instance;
  return instance;
}

} // namespace

// -- shard_region -------------------------------------------------------------

void entity_context::passivate() const {
  if (region)
    caf::anon_send(region, passivate_atom::value, entity);
}

std::optional<singleton::singleton_manager>
shard_region::coordinator_manager() const {
  if (!sh_)
    return std::nullopt;
  return sh_->coordinator;
}

const caf::actor& shard_region::actor() const noexcept {
  static const caf::actor none;
  return sh_ ? sh_->actor : none;
}

const std::string& shard_region::type_name() const noexcept {
  static const std::string none;
  return sh_ ? sh_->type_name : none;
}

runtime::error shard_region::send(const entity_id& entity,
                                  caf::message msg) const {
  if (!sh_)
    return make_err(errc::not_running, "the region was never started");
  if (auto err = stopped_error(*sh_))
    return err;
  if (entity.empty())
    return make_err(errc::unmappable_message,
                    fmt::format("{}: an empty entity id (message {})",
                                sh_->type_name, type_names(*sh_->sys, msg)));
  return route_to(*sh_, entity, std::move(msg));
}

runtime::error shard_region::send_element(const entity_id& entity,
                                          caf::mailbox_element_ptr elem) const {
  if (!sh_ || entity.empty())
    return send(entity, elem->move_content_to_message());
  auto& sh = *sh_;
  std::lock_guard<std::mutex> guard{sh.mtx};
  if (auto err = stopped_error_locked(sh))
    return err;
  // The clock only when a running entity's idle time is tracked.
  auto timed = sh.engine->tracks_use();
  auto now = timed ? sh.now() : timestamp{};
  if (auto ref = sh.engine->running_entity(entity, now)) {
    // As in route: nothing to run (a touch only moves the next deadline
    // later), then the mailbox, under the lock.
    if (sh.engine->has_commands())
      run(sh);
    caf::actor_cast<caf::abstract_actor*>(*ref)->enqueue(std::move(elem),
                                                         nullptr);
    return {};
  }
  // Not running here: the shard id (only now: the fast path needs none)
  // and the rest of the routing, under the same lock.
  if (!timed)
    now = sh.now();
  auto shard = shard_of(sh, entity);
  if (!shard)
    return shard.error();
  // A shard homed on a reachable region: straight out, after what the
  // engine queued (its commands come first).
  if (sh.engine->has_commands())
    run(sh);
  if (const auto* home = sh.engine->forward_home(*shard)) {
    forward(sh, *home, entity, *shard, elem->move_content_to_message());
    return {};
  }
  // A new entity of a shard hosted here gets the element itself.
  if (auto first = sh.engine->first_message(entity, *shard, now); first.taken) {
    if (first.ref != nullptr)
      caf::actor_cast<caf::abstract_actor*>(*first.ref)
        ->enqueue(std::move(elem), nullptr);
    run(sh);
    return {};
  }
  sh.engine->deliver_not_running(entity, *shard,
                                 elem->move_content_to_message(), now);
  run(sh);
  return {};
}

runtime::error shard_region::send(caf::message msg) const {
  if (!sh_)
    return make_err(errc::not_running, "the region was never started");
  return route_unaddressed(*sh_, std::move(msg));
}

namespace {

template <class T, class... Ts>
runtime::expected<T> ask(shard_region::shared* sh, runtime::timespan timeout,
                         Ts&&... xs) {
  if (!sh)
    return make_err(errc::not_running, "the region was never started");
  // A stopped region's actor system may be gone (a handle can outlive it).
  if (auto err = stopped_error(*sh))
    return err;
  caf::scoped_actor self{*sh->sys};
  runtime::expected<T> result
    = make_err(errc::not_running, "no answer from the region");
  self->request(sh->actor, timeout, std::forward<Ts>(xs)...)
    .receive([&](T& x) { result = std::move(x); },
             [&](caf::error& err) {
               auto code = err.category() == caf::atom("sharding")
                             ? static_cast<errc>(err.code())
                             : errc::not_running;
               auto text = runtime::error_message(err);
               result = make_err(code, text.empty()
                                         ? fmt::format("{}: {}", sh->type_name,
                                                       sh->sys->render(err))
                                         : text);
             });
  return result;
}

} // namespace

runtime::expected<region_status>
shard_region::status(runtime::timespan timeout) const {
  return ask<region_status>(sh_.get(), timeout, status_atom::value);
}

runtime::expected<std::vector<entity_id>>
shard_region::entities(const shard_id& shard, runtime::timespan timeout) const {
  return ask<std::vector<entity_id>>(sh_.get(), timeout, entities_atom::value,
                                     shard);
}

runtime::expected<region_shards>
shard_region::shard_map(runtime::timespan timeout) const {
  if (sh_)
    if (auto err = stopped_error(*sh_))
      return err;
  auto reply = ask<shard_map_reply>(sh_.get(), timeout, shard_map_atom::value);
  if (!reply) {
    if (reply.error().code == static_cast<uint8_t>(errc::not_running))
      return make_err(errc::no_coordinator,
                      fmt::format("{}: the coordinator did not answer within "
                                  "{}",
                                  sh_ ? sh_->type_name : std::string{},
                                  runtime::render_duration(timeout)));
    return reply.error();
  }
  return std::move(reply->regions);
}

void shard_region::stop() const {
  if (sh_ && sh_->actor)
    caf::anon_send(sh_->actor, stop_atom::value);
}

runtime::error shard_region::stop_and_wait(runtime::timespan timeout) const {
  if (!sh_ || !sh_->actor)
    return {};
  {
    std::lock_guard<std::mutex> guard{sh_->mtx};
    if (sh_->done) // stopped already (e.g. the node left the cluster)
      return {};
  }
  if (timeout <= runtime::timespan::zero())
    return make_err(errc::stop_failed,
                    fmt::format("{}: stop_and_wait needs a positive timeout, "
                                "got {} (nothing stopped)",
                                sh_->type_name,
                                runtime::render_duration(timeout)));
  auto done = ask<bool>(sh_.get(), timeout, stop_atom::value);
  if (!done) {
    if (stopped_error(*sh_))
      return {}; // it stopped meanwhile
    auto err
      = make_err(errc::stop_failed,
                 fmt::format("{}: the region's graceful stop did not "
                             "finish within {} ({}); killed",
                             sh_->type_name, runtime::render_duration(timeout),
                             done.error().message));
    sh_->log.warning("{}", err.message);
    caf::anon_send_exit(sh_->actor, caf::exit_reason::kill);
    return err;
  }
  return {};
}

runtime::expected<shard_region>
shard_region::start(caf::actor_system& sys, cluster::cluster_handle cluster,
                    cluster::remoting_handle remoting, std::string type_name,
                    entity_factory factory, region_options options,
                    bool proxy_only, bool with_coordinator) {
  if (auto err = validate_type_name(type_name))
    return err;
  auto settings = options.settings.value_or(sharding_settings{});
  if (options.coordinator_lease)
    settings.use_lease = true;
  if (auto err = validate(settings))
    return err;
  if (!cluster.valid() || !remoting.valid())
    return make_err(errc::start_failed,
                    fmt::format("sharding {}: the region needs a running "
                                "cluster and remoting",
                                type_name));
  if (!proxy_only && !factory)
    return make_err(errc::start_failed,
                    fmt::format("sharding {}: no entity factory", type_name));
  if (with_coordinator && settings.use_lease && !options.coordinator_lease)
    return make_err(errc::start_failed,
                    fmt::format("sharding {}: sharding.use_lease is on but no "
                                "coordinator lease was given",
                                type_name));
  auto sh = std::make_shared<shared>();
  sh->sys = &sys;
  sh->type_name = type_name;
  sh->name = region_name(type_name);
  sh->coordinator_name
    = singleton::instance_name(coordinator_singleton_type(type_name));
  sh->proxy_only = proxy_only;
  sh->self = cluster.self_address();
  sh->settings = settings;
  sh->custom_extractor = static_cast<bool>(options.extractor.entity_of);
  sh->extractor = std::move(options.extractor);
  if (!sh->extractor.entity_of)
    sh->extractor.entity_of = default_entity_of;
  if (!sh->extractor.shard_of)
    sh->extractor.shard_of
      = [n = settings.number_of_shards](const entity_id& id) {
          auto shard = default_shard_id(id, n); // n >= 1: validated
          return shard ? *shard : std::string{"0"};
        };
  sh->stop_message = std::move(options.stop_message);
  sh->factory = std::move(factory);
  sh->cluster = cluster;
  sh->remoting = remoting;
  if (options.clock) {
    sh->clock = options.clock;
  } else {
    sh->own_clock.emplace(sys.clock());
    sh->clock = &*sh->own_clock;
  }
  {
    auto& r = regions();
    std::lock_guard<std::mutex> guard{r.mtx};
    auto& types = r.by_node[{&sys, cluster.self_address()}];
    if (auto i = types.find(type_name); i != types.end() && running(i->second))
      return make_err(errc::start_failed,
                      fmt::format("sharding {}: a region of this type already "
                                  "runs on this node",
                                  type_name));
    types[type_name] = sh;
  }
  // Entities are spawned on the thread that routes their first message,
  // under the region's lock.
  std::weak_ptr<shared> weak = sh;
  // entity_context::member_confirmed: a member answered a heartbeat sent
  // within half the removal margin (none without a margin).
  std::function<bool()> confirmation;
  if (settings.down_removal_margin > timespan::zero())
    confirmation = [weak, window = settings.down_removal_margin / 2] {
      auto sh = weak.lock();
      if (!sh)
        return false;
      auto last = sh->cluster.last_confirmed();
      if (last == timespan::max())
        return true;
      if (last == timespan::min())
        return false;
      return sh->now().time_since_epoch() - last <= window;
    };
  auto spawn = [weak, confirmation](const entity_id& entity,
                                    const shard_id& shard) -> caf::actor {
    auto sh = weak.lock();
    if (!sh || !sh->factory)
      return caf::actor{};
    // CAF's spawn points the calling thread's logger slot at the actor
    // system's logger, a counted reference that ~actor_system waits for: a
    // thread of the application (not one of CAF's) that routes a first
    // message and outlives the node would keep the process from exiting.
    // Such a thread had no logger before; it gets none after.
    bool foreign_thread = caf::logger::current_logger() == nullptr;
    auto entity_actor
      = sh->sys->spawn([sh, entity, shard,
                        confirmation](caf::stateful_actor<entity_shell>* self) {
          auto& st = self->state;
          st.entity = entity;
          st.region = sh->actor_addr;
          return sh->factory(self, entity_context{sh->type_name, entity, shard,
                                                  sh->self, sh->remoting,
                                                  sh->actor, confirmation});
        });
    if (foreign_thread)
      caf::logger::set_current_actor_system(nullptr);
    return entity_actor;
  };
  sh->engine = std::make_unique<engine_type>(cluster.self_address(), settings,
                                             proxy_only, std::move(spawn));
  sh->actor = sys.spawn(region_behavior, sh);
  sh->actor_addr = sh->actor.address();
  // Messages from other regions are routed on the thread that receives
  // them, without a hop through the region actor's mailbox.
  auto receiver = [weak](const runtime::unique_address& from,
                         std::string_view tag, caf::message msg) {
    if (auto sh = weak.lock())
      route_forwarded(*sh, from, tag, std::move(msg));
  };
  if (auto published = remoting.publish(sh->name, sh->actor, receiver);
      !published) {
    caf::anon_send_exit(sh->actor, caf::exit_reason::user_shutdown);
    return make_err(
      errc::start_failed,
      fmt::format("sharding {}: {}", type_name, published.error().message));
  }
  if (with_coordinator) {
    singleton::manager_options mo;
    singleton::manager_settings ms;
    ms.role = settings.role;
    ms.use_lease = settings.use_lease;
    // With a lease the lease keeps two coordinators apart; without one the
    // removal margin does (DESIGN.md §10).
    ms.down_removal_margin = settings.use_lease ? runtime::timespan::zero()
                                                : settings.down_removal_margin;
    mo.settings = ms;
    mo.lease = options.coordinator_lease;
    mo.clock = options.clock;
    coordinator_init init{type_name, settings,      options.strategy, cluster,
                          remoting,  options.clock, options.bug};
    init.recent_removals = [weak, margin = settings.down_removal_margin](
                             const cluster::gossip& g, timestamp now) {
      std::vector<recent_removal> out;
      if (auto sh = weak.lock()) {
        std::lock_guard<std::mutex> guard{sh->mtx};
        sh->removals.on_view(g, now);
        out = sh->removals.recent(now, margin);
      }
      return out;
    };
    if (!init.strategy)
      init.strategy = std::make_shared<least_shard_allocation>(
        least_shard_allocation_settings{
          static_cast<size_t>(settings.least_shard_allocation_absolute_limit),
          settings.least_shard_allocation_relative_limit});
    auto manager = singleton::singleton_manager::start(
      sys, cluster, remoting, coordinator_singleton_type(type_name),
      [init](caf::event_based_actor* self,
             const singleton::instance_context& ctx) {
        return coordinator_behavior(self, init, ctx);
      },
      std::move(mo));
    if (!manager) {
      caf::anon_send_exit(sh->actor, caf::exit_reason::user_shutdown);
      return manager.error();
    }
    sh->coordinator = *manager;
  }
  cluster.subscribe_view(sh->actor);
  return shard_region{sh};
}

namespace {

// The node-level start: settings from the configuration, the coordinator
// lease from `lease.*`, and the shutdown hook (the region hands off its
// shards before the node leaves; registered after the coordinator's
// manager, so it runs first: the node runs its tasks latest first).
runtime::expected<shard_region>
start_on_node(runtime::node& node, cluster::cluster_handle cluster,
              cluster::remoting_handle remoting, std::string type_name,
              entity_factory factory, region_options options, bool proxy_only) {
  if (auto err = validate_type_name(type_name))
    return err;
  auto& cfg = node.cfg();
  if (!options.settings) {
    if (!cfg.schema().find("sharding.number_of_shards"))
      return make_err(errc::start_failed,
                      fmt::format("sharding {}: the node was started without "
                                  "sharding::sharding_module()",
                                  type_name));
    runtime::timespan stable_after = std::chrono::seconds{20};
    if (cfg.schema().find("downing.stable_after"))
      stable_after = cfg.get<runtime::timespan>("downing.stable_after");
    auto s = sharding_settings_from_config(
      cfg, options.decision_bound.value_or(stable_after));
    if (!s)
      return s.error();
    options.settings = std::move(*s);
  }
  if (!options.clock)
    options.clock = &node.clock();
  // A node without sharding.role hosts nothing and never runs the
  // coordinator.
  if (auto& role = options.settings->role; !role.empty()) {
    auto roles = cfg.get<std::vector<std::string>>("cluster.roles");
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) {
      if (!proxy_only)
        runtime::logger{"sharding"}.warning(
          "{}: this node hosts no entities and never runs the coordinator: "
          "sharding.role \"{}\" is not among its cluster.roles [{}]; it "
          "routes as a proxy (messages wait until a node with the role runs "
          "the coordinator)",
          type_name, role, fmt::join(roles, ", "));
      proxy_only = true;
    }
  }
  if (!proxy_only && options.settings->use_lease
      && !options.coordinator_lease) {
    auto name
      = coordinator_lease_name(cfg.get<std::string>("sharding.lease_name"),
                               cfg.get<std::string>("cluster.name"), type_name);
    auto lease = lease::lease_handle::spawn_from_config(
      node, name, to_string(cluster.self_address()));
    if (!lease)
      return make_err(errc::start_failed,
                      fmt::format("sharding {}: the coordinator lease {}: {}",
                                  type_name, name,
                                  node.system().render(lease.error())));
    options.coordinator_lease = std::move(*lease);
  }
  auto timeout = options.stop_timeout;
  auto region = shard_region::start(node.system(), std::move(cluster),
                                    std::move(remoting), std::move(type_name),
                                    std::move(factory), std::move(options),
                                    proxy_only, !proxy_only);
  if (!region)
    return region;
  // The region hands its shards off before the node leaves (Akka's
  // cluster-sharding-shutdown-region); a downed node's region stopped its
  // entities already (never hosting again), so there it ends at once. The
  // coordinator is a singleton: handed over in cluster_exiting, its
  // manager stopped with the others.
  node.add_shutdown_task(
    runtime::shutdown_phase::cluster_sharding_shutdown_region,
    "sharding region " + region->type_name(),
    [r = *region, timeout](const runtime::shutdown_context& ctx) {
      r.stop_and_wait(std::min(timeout, ctx.remaining()));
    });
  if (auto coordinator = region->coordinator_manager())
    node.add_shutdown_task(
      runtime::shutdown_phase::cluster_shutdown,
      "sharding coordinator " + region->type_name(),
      [m = *coordinator](const runtime::shutdown_context& ctx) {
        m.stop_and_wait(ctx.remaining());
      });
  return region;
}

} // namespace

runtime::expected<shard_region>
shard_region::start(runtime::node& node, cluster::cluster_handle cluster,
                    cluster::remoting_handle remoting, std::string type_name,
                    entity_factory factory, region_options options) {
  return start_on_node(node, std::move(cluster), std::move(remoting),
                       std::move(type_name), std::move(factory),
                       std::move(options), false);
}

runtime::expected<shard_region>
shard_region::start_proxy(runtime::node& node, cluster::cluster_handle cluster,
                          cluster::remoting_handle remoting,
                          std::string type_name, region_options options) {
  return start_on_node(node, std::move(cluster), std::move(remoting),
                       std::move(type_name), entity_factory{},
                       std::move(options), true);
}

runtime::expected<shard_region> find_region(caf::actor_system& sys,
                                            std::string_view type_name) {
  auto& r = regions();
  std::lock_guard<std::mutex> guard{r.mtx};
  std::set<std::string> known;
  for (auto& [key, types] : r.by_node) {
    if (key.first != &sys)
      continue;
    if (auto j = types.find(type_name); j != types.end() && running(j->second))
      return shard_region{j->second.lock()};
    for (auto& [name, w] : types)
      if (running(w))
        known.insert(name);
  }
  return make_err(errc::unknown_type,
                  fmt::format("no region of entity type '{}' runs on this "
                              "node (running: {})",
                              type_name,
                              known.empty()
                                ? std::string{"none"}
                                : fmt::format("{}", fmt::join(known, ", "))));
}

} // namespace troupe::sharding
