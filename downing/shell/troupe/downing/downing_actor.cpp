#include "troupe/downing/downing_actor.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include "troupe/cluster/membership_settings.hpp"
#include "troupe/cluster/membership_state.hpp"
#include "troupe/cluster/phi_accrual_detector.hpp"
#include "troupe/downing/errc.hpp"
#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"
#include <fmt/format.h>

namespace troupe::downing {

namespace {

using cluster::tick_atom;
using cluster::view_atom;

struct downing_state {
  static inline const char* name = "troupe.downing";
  std::unique_ptr<downing_engine> engine;
  cluster::cluster_handle cluster;
  std::optional<lease::lease_handle> lease;
  std::optional<runtime::caf_clock_source> own_clock;
  const runtime::clock_source* clock = nullptr;
  runtime::timespan lease_timeout{0};
  std::optional<timestamp> scheduled;
  runtime::logger log{"downing"};
};

using downing_self = caf::stateful_actor<downing_state>*;

void write(const runtime::logger& log, const log_line& line) {
  switch (line.level) {
    case log_level::info:
      log.info("{}", line.text);
      break;
    case log_level::warning:
      log.warning("{}", line.text);
      break;
    case log_level::error:
      log.error("{}", line.text);
      break;
  }
}

void schedule_tick(downing_self self) {
  auto& st = self->state;
  runtime::schedule_tick(self, tick_atom::value, st.scheduled,
                         st.engine->next_tick(), *st.clock);
}

void execute(downing_self self, downing_effects fx);

void acquire(downing_self self) {
  auto& st = self->state;
  auto answer = [self](bool acquired) {
    auto& s = self->state;
    execute(self, s.engine->on_lease_acquired(acquired, s.clock->now()));
  };
  if (!st.lease) {
    st.log.error("no lease to acquire (lease_majority without a lease): "
                 "counted as refused");
    answer(false);
    return;
  }
  // The lease answers within `wait`; the request's own timeout is a
  // little longer, and the engine gives up after lease_answer_timeout.
  auto wait = st.lease_timeout;
  self
    ->request(st.lease->actor(), wait + std::chrono::seconds{1},
              lease::acquire_atom::value, wait)
    .then([answer](const lease::acquire_result& r) { answer(r.acquired); },
          [self, answer](const caf::error& err) {
            self->state.log.warning("acquiring the resolver's lease failed: {} "
                                    "(counted as refused)",
                                    self->system().render(err));
            answer(false);
          });
}

void release(downing_self self) {
  auto& st = self->state;
  if (!st.lease)
    return;
  self
    ->request(st.lease->actor(), st.lease_timeout + std::chrono::seconds{1},
              lease::release_atom::value)
    .then([](bool) {},
          [self](const caf::error& err) {
            self->state.log.warning("releasing the resolver's lease failed: {} "
                                    "(it expires after its ttl)",
                                    self->system().render(err));
          });
}

// Carries out `fx` in the engine's order, then re-arms the timer.
void execute(downing_self self, downing_effects fx) {
  auto& st = self->state;
  if (fx.release_lease)
    release(self);
  for (auto& node : fx.down)
    st.cluster.down(node);
  for (auto& line : fx.log)
    write(st.log, line);
  if (fx.acquire_lease)
    acquire(self);
  schedule_tick(self);
}

caf::behavior downing_behavior(downing_self self,
                               cluster::cluster_handle cluster,
                               downing_actor_settings settings) {
  auto& st = self->state;
  st.cluster = std::move(cluster);
  st.lease = std::move(settings.lease);
  st.lease_timeout = settings.engine.lease_answer_timeout;
  if (settings.clock) {
    st.clock = settings.clock;
  } else {
    st.own_clock.emplace(self->system().clock());
    st.clock = &*st.own_clock;
  }
  st.engine = std::make_unique<downing_engine>(st.cluster.self_address(),
                                               std::move(settings.engine),
                                               st.clock->now(), settings.bug);
  return {
    [self](view_atom, const cluster::gossip& g) {
      auto& s = self->state;
      cluster::membership_state state{g, s.cluster.self_address()};
      execute(self, s.engine->on_membership(state, s.clock->now()));
    },
    [self](tick_atom, int64_t due) {
      auto& s = self->state;
      if (s.scheduled && s.scheduled->time_since_epoch().count() == due)
        s.scheduled.reset();
      execute(self, s.engine->tick(s.clock->now()));
    },
    [self](quarantined_atom) {
      auto& s = self->state;
      execute(self, s.engine->on_quarantined_by_remote(s.clock->now()));
    },
  };
}

} // namespace

runtime::expected<downing_handle>
downing_handle::start(caf::actor_system& sys, cluster::cluster_handle cluster,
                      downing_actor_settings settings) {
  if (auto err = validate(settings.engine.downing))
    return err;
  downing_handle h;
  if (!settings.engine.downing.active_strategy)
    return h;
  auto c = cluster;
  h.actor_
    = sys.spawn(downing_behavior, std::move(cluster), std::move(settings));
  c.subscribe_view(h.actor_);
  return h;
}

runtime::expected<downing_handle>
downing_handle::start(runtime::node& node, cluster::cluster_handle cluster) {
  auto s = downing_settings_from_config(node.cfg());
  if (!s)
    return s.error();
  downing_actor_settings settings;
  settings.engine.downing = std::move(*s);
  settings.clock = &node.clock();
  auto& strategy = settings.engine.downing.active_strategy;
  if (!strategy)
    return downing_handle{};
  if (auto ms = cluster::membership_settings_from_config(node.cfg())) {
    auto& fd = ms->failure_detector;
    auto detection = cluster::detection_time(
      fd.phi_accrual(), cluster::fractional_ms{fd.heartbeat_interval},
      cluster::fractional_ms{0});
    if (auto w = stable_after_warning(settings.engine.downing, detection,
                                      ms->gossip_interval))
      runtime::logger{"downing"}.warning("{}", *w);
  }
  runtime::logger log{"downing"};
  log.info(
    "split brain resolver: {}, stable_after {}, "
    "down_all_when_unstable {}",
    name_of(*strategy),
    runtime::render_duration(settings.engine.downing.stability.stable_after),
    settings.engine.downing.stability.down_all_when_unstable
        > runtime::timespan{0}
      ? runtime::render_duration(
        settings.engine.downing.stability.down_all_when_unstable)
      : std::string{"off"});
  if (auto* lm = std::get_if<lease_majority>(&*strategy)) {
    if (node.cfg().get<std::string>("lease.backend") == "file")
      log.warning("lease_majority over the file lease backend: the lease is "
                  "shared only by processes that see the same "
                  "lease.file.directory (one host, or a shared file system); "
                  "nodes on other hosts would each win their own lease");
    auto name = resolver_lease_name(
      lm->lease_name, node.cfg().get<std::string>("cluster.name"));
    auto lease = lease::lease_handle::spawn_from_config(
      node, name, to_string(cluster.self_address()));
    if (!lease)
      return runtime::make_error(
        errc::invalid_settings,
        fmt::format("the resolver's lease {}: {}", name,
                    node.system().render(lease.error())));
    settings.lease = std::move(*lease);
  }
  auto h = start(node.system(), std::move(cluster), std::move(settings));
  if (h && h->active())
    node.add_shutdown_task(
      runtime::shutdown_phase::cluster_shutdown, "split brain resolver",
      [x = *h](const runtime::shutdown_context&) { x.stop(); });
  return h;
}

void downing_handle::stop() const {
  if (actor_)
    caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

} // namespace troupe::downing
