#include "troupe/bootstrap/bootstrap_coordinator.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <fmt/format.h>

#include "troupe/bootstrap/discovery_from_config.hpp"
#include "troupe/bootstrap/errc.hpp"
#include "troupe/cluster/cluster_daemon.hpp"
#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/http_client.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/node.hpp"

namespace troupe::bootstrap {

/// What one discovery answered (a message to the coordinator).
struct discovery_outcome {
  std::vector<contact_point> points;
  runtime::error error;
};

template <class Inspector>
auto inspect(Inspector& f, contact_point& x) {
  return f(x.host, x.port);
}

template <class Inspector>
auto inspect(Inspector& f, discovery_outcome& x) {
  return f(x.points, x.error.category, x.error.code, x.error.message);
}

namespace {

using cluster::tick_atom;
using cluster::view_atom;
using discovered_atom = caf::atom_constant<caf::atom("discovered")>;

struct coordinator_state {
  static inline const char* name = "troupe.bootstrap";
  std::unique_ptr<bootstrap_process> process;
  std::shared_ptr<contact_point_discovery> discovery;
  runtime::http_client_actor http;
  cluster::cluster_handle cluster;
  std::optional<runtime::caf_clock_source> own_clock;
  const runtime::clock_source* clock = nullptr;
  timespan discovery_timeout{0};
  timespan probe_timeout{0};
  std::optional<timestamp> scheduled;
  // The last cause logged per contact point ("" once it answered).
  std::map<contact_point, std::string> probe_errors;
  std::string discovery_error;
  // The cluster endpoints last handed to the incarnation probe.
  std::vector<cluster::endpoint> contacts;
  runtime::logger log{"bootstrap"};
};

using coordinator = caf::stateful_actor<coordinator_state>*;

void execute(coordinator self, std::vector<bootstrap_effect> fx);

void start_discovery(coordinator self) {
  auto& st = self->state;
  caf::actor me = caf::actor_cast<caf::actor>(self);
  st.discovery->discover(st.discovery_timeout,
                         [me](runtime::expected<std::vector<contact_point>> r) {
                           discovery_outcome out;
                           if (r)
                             out.points = std::move(*r);
                           else
                             out.error = r.error();
                           caf::anon_send(me, discovered_atom::value,
                                          std::move(out));
                         });
}

void probe_failed(coordinator self, const contact_point& point, uint64_t id,
                  runtime::error err) {
  auto& st = self->state;
  auto& last = st.probe_errors[point];
  if (last != err.message) {
    st.log.warning("probing contact point {} failed: {}", to_string(point),
                   err.message);
    last = err.message;
  }
  execute(self, st.process->on_probe_failed(id, err, st.clock->now()));
}

void start_probe(coordinator self, const probe& p) {
  auto& st = self->state;
  runtime::http_request req;
  req.method = "GET";
  req.url = fmt::format("http://{}/bootstrap/seed-nodes", to_string(p.point));
  req.timeout = st.probe_timeout;
  req.max_response_bytes = 64 * 1024;
  auto point = p.point;
  auto id = p.id;
  self->request(st.http, st.probe_timeout + std::chrono::seconds{1}, req)
    .then(
      [self, point, id](const runtime::http_response& resp) {
        auto& s = self->state;
        if (resp.status != 200) {
          probe_failed(
            self, point, id,
            runtime::make_error(errc::probe_failed,
                                fmt::format("HTTP {} from {}: {}", resp.status,
                                            to_string(point),
                                            resp.body.substr(0, 200))));
          return;
        }
        auto answer = parse_seed_nodes_answer(resp.body);
        if (!answer) {
          probe_failed(self, point, id,
                       runtime::make_error(errc::bad_probe_answer,
                                           fmt::format("{} (from {})",
                                                       answer.error().message,
                                                       to_string(point))));
          return;
        }
        auto& last = s.probe_errors[point];
        if (!last.empty()) {
          s.log.info("contact point {} answers again", to_string(point));
          last.clear();
        }
        execute(self, s.process->on_probe_answer(id, std::move(*answer),
                                                 s.clock->now()));
        // The cluster probes these for a second cluster of its name, also
        // after bootstrap is done (cluster_handle::set_contact_endpoints).
        if (auto eps = s.process->answered_cluster_endpoints();
            eps != s.contacts) {
          s.contacts = eps;
          s.cluster.set_contact_endpoints(std::move(eps));
        }
      },
      [self, point, id](const caf::error& err) {
        auto text = runtime::error_message(err);
        probe_failed(self, point, id,
                     runtime::make_error(
                       errc::probe_failed,
                       text.empty() ? self->system().render(err) : text));
      });
}

void execute(coordinator self, std::vector<bootstrap_effect> fx) {
  auto& st = self->state;
  for (auto& e : fx) {
    if (std::holds_alternative<discover>(e)) {
      start_discovery(self);
    } else if (auto* p = std::get_if<probe>(&e)) {
      start_probe(self, *p);
    } else if (auto* j = std::get_if<join_seed_nodes>(&e)) {
      std::string list;
      for (const auto& s : j->seeds)
        list += (list.empty() ? "" : ", ") + cluster::to_string(s);
      st.log.info("joining the cluster that contact points report, through "
                  "seed nodes {}",
                  list);
      st.cluster.join(j->seeds);
    } else if (std::holds_alternative<join_self>(e)) {
      st.log.info("{}", st.process->status().detail);
      st.cluster.join({cluster::endpoint_of(st.cluster.self_address())});
    } else if (auto* c = std::get_if<status_changed>(&e)) {
      if (c->status.reason != wait_reason::joining)
        st.log.info("waiting ({}): {}", to_string(c->status.reason),
                    c->status.detail);
    }
  }
  runtime::schedule_tick(self, tick_atom::value, st.scheduled,
                         st.process->next_tick(), *st.clock);
}

caf::behavior coordinator_behavior(coordinator self,
                                   cluster::cluster_handle cluster,
                                   bootstrap_coordinator_settings settings) {
  auto& st = self->state;
  st.cluster = std::move(cluster);
  st.discovery = std::move(settings.discovery);
  st.discovery_timeout = settings.bootstrap.discovery_timeout;
  st.probe_timeout = settings.bootstrap.probing_failure_timeout;
  if (settings.clock) {
    st.clock = settings.clock;
  } else {
    st.own_clock.emplace(self->system().clock());
    st.clock = &*st.own_clock;
  }
  if (settings.http) {
    st.http = std::move(settings.http);
  } else {
    st.http = runtime::spawn_http_client(self->system());
    self->link_to(st.http);
  }
  st.process = std::make_unique<bootstrap_process>(
    st.cluster.self_address(), std::move(settings.bootstrap), settings.bug);
  st.log.info("bootstrap through {}", st.discovery->describe());
  execute(self, st.process->start(st.clock->now()));
  return {
    [self](discovered_atom, discovery_outcome& out) {
      auto& s = self->state;
      auto now = s.clock->now();
      if (out.error) {
        if (s.discovery_error != out.error.message) {
          s.log.warning("discovery through {} failed: {}",
                        s.discovery->describe(), out.error.message);
          s.discovery_error = out.error.message;
        }
        execute(self, s.process->on_discovery_failed(out.error, now));
        return;
      }
      if (!s.discovery_error.empty()) {
        s.log.info("discovery answers again");
        s.discovery_error.clear();
      }
      execute(self, s.process->on_discovered(std::move(out.points), now));
    },
    [self](tick_atom, int64_t due) {
      auto& s = self->state;
      if (s.scheduled && s.scheduled->time_since_epoch().count() == due)
        s.scheduled.reset();
      execute(self, s.process->tick(s.clock->now()));
    },
    [self](view_atom, const cluster::gossip& g) {
      auto& s = self->state;
      if (s.process->done())
        return;
      cluster::membership_state view{g, s.cluster.self_address()};
      if (view.self_member() != nullptr) {
        s.process->on_member();
        s.log.info("bootstrap done: this node is a member ({})",
                   cluster::to_string(view.self_member()->status));
      }
    },
  };
}

void add_bootstrap_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<contact_point>("troupe.bootstrap.contact_point");
  cfg.add_message_type<std::vector<contact_point>>(
    "std::vector<troupe.bootstrap.contact_point>");
  cfg.add_message_type<discovery_outcome>("troupe.bootstrap.discovery_outcome");
  runtime::add_error_category<errc>(cfg);
}

void declare_all(runtime::config_schema& schema) {
  declare_bootstrap_config(schema);
  declare_discovery_config(schema);
}

} // namespace

runtime::module bootstrap_module() {
  return runtime::module{"bootstrap", declare_all, add_bootstrap_types};
}

bootstrap_handle
bootstrap_handle::start(caf::actor_system& sys, cluster::cluster_handle cluster,
                        bootstrap_coordinator_settings settings) {
  bootstrap_handle h;
  auto c = cluster;
  h.actor_
    = sys.spawn(coordinator_behavior, std::move(cluster), std::move(settings));
  c.subscribe_view(h.actor_);
  return h;
}

runtime::expected<bootstrap_handle>
bootstrap_handle::start(runtime::node& node, cluster::cluster_handle cluster,
                        uint16_t management_port) {
  auto s = bootstrap_settings_from_config(node.cfg());
  if (!s)
    return s.error();
  if (s->method == discovery_method::off)
    return bootstrap_handle{};
  if (management_port == 0)
    return runtime::make_error(
      errc::invalid_settings,
      fmt::format("cluster.bootstrap.discovery_method is {} but the "
                  "management API does not serve (management.enabled is "
                  "false): bootstrap probes every contact point's "
                  "GET /bootstrap/seed-nodes, this node's own included",
                  to_string(s->method)));
  auto fallback
    = s->contact_point_port != 0 ? s->contact_point_port : management_port;
  auto discovery = discovery_from_config(node.cfg(), *s, fallback);
  if (!discovery)
    return discovery.error();
  bootstrap_coordinator_settings settings;
  settings.bootstrap = std::move(*s);
  settings.discovery = std::move(*discovery);
  settings.clock = &node.clock();
  auto h = start(node.system(), std::move(cluster), std::move(settings));
  node.stop_on_shutdown(caf::actor_cast<caf::strong_actor_ptr>(h.actor()));
  return h;
}

} // namespace troupe::bootstrap
