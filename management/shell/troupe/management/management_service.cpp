#include "troupe/management/management_service.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <fmt/format.h>

#include "troupe/bootstrap/seed_nodes_answer.hpp"
#include "troupe/cluster/membership_settings.hpp"
#include "troupe/cluster/membership_state.hpp"
#include "troupe/management/cluster_views.hpp"
#include "troupe/management/errc.hpp"
#include "troupe/management/http_server.hpp"
#include "troupe/management/management_settings.hpp"
#include "troupe/management/metrics.hpp"
#include "troupe/management/peer_view.hpp"
#include "troupe/management/router.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::management {

/// The page served at `/` (dashboard.html, embedded by the build).
const char* dashboard_html() noexcept;

namespace {

using peer_view_atom = caf::atom_constant<caf::atom("mgmtview")>;

runtime::error unavailable(std::string what) {
  return runtime::make_error(errc::unavailable, std::move(what));
}

} // namespace

void add_management_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<peer_view>("troupe.management.peer_view");
  runtime::add_error_category<errc>(cfg);
}

runtime::module management_module() {
  return runtime::module{"management", declare_management_config,
                         add_management_types};
}

struct management_service::state {
  caf::actor_system* sys = nullptr;
  // The node (it outlives this service: the HTTP server stops in its
  // coordinated shutdown).
  runtime::node* node = nullptr;
  cluster::cluster_handle cluster;
  cluster::remoting_handle remoting;
  std::optional<std::string> oldest_role;
  runtime::timespan query_timeout{std::chrono::seconds{2}};
  std::atomic<bool> stopping{false};
  runtime::logger log{"management"};

  // Guards everything below.
  mutable std::mutex mtx;
  std::optional<cluster::gossip> latest;
  std::vector<singleton::singleton_manager> singletons;
  std::vector<sharding::shard_region> regions;
  std::vector<lease::lease_handle> leases;
  caf::actor agent;
  std::unique_ptr<http_server> server;
  // The faults set through /faults (the transport does not list them).
  std::map<std::pair<cluster::endpoint, fault_direction>, cluster::link_fault>
    faults;

  std::optional<cluster::membership_state> view() const {
    std::lock_guard guard{mtx};
    if (!latest)
      return std::nullopt;
    return cluster::membership_state{*latest, cluster.self_address()};
  }

  // Every singleton manager here: the registered ones and the regions'
  // coordinators.
  std::vector<singleton::singleton_manager> all_singletons() const {
    std::lock_guard guard{mtx};
    auto out = singletons;
    for (const auto& r : regions)
      if (auto c = r.coordinator_manager())
        out.push_back(*c);
    return out;
  }

  std::vector<sharding::shard_region> all_regions() const {
    std::lock_guard guard{mtx};
    return regions;
  }

  // Every lease here, each once: the registered ones and the managers'.
  std::vector<lease::lease_handle> all_leases() const {
    std::vector<lease::lease_handle> out;
    {
      std::lock_guard guard{mtx};
      out = leases;
    }
    for (const auto& m : all_singletons())
      if (m.lease())
        out.push_back(*m.lease());
    std::vector<lease::lease_handle> unique;
    for (auto& l : out)
      if (std::none_of(unique.begin(), unique.end(),
                       [&](const auto& u) { return u.actor() == l.actor(); }))
        unique.push_back(std::move(l));
    return unique;
  }

  std::optional<singleton::manager_status>
  status_of(const singleton::singleton_manager& m) const {
    caf::scoped_actor self{*sys};
    std::optional<singleton::manager_status> out;
    self->request(m.actor(), query_timeout, singleton::status_atom::value)
      .receive([&](singleton::manager_status& s) { out = std::move(s); },
               [&](caf::error&) {});
    return out;
  }

  // What this node reports about itself (blocking, bounded per module).
  peer_view local_view() const {
    peer_view v;
    v.node = runtime::to_string(cluster.self_address());
    for (const auto& m : all_singletons()) {
      peer_singleton s;
      s.type = m.type_name();
      if (auto st = status_of(m)) {
        s.running = st->incarnation != 0;
        s.fencing_token = s.running ? st->fencing_token : 0;
      }
      v.singletons.push_back(std::move(s));
    }
    for (const auto& l : all_leases()) {
      peer_lease x;
      x.name = l.settings().name;
      x.owner = l.settings().owner;
      x.held = l.check_alive();
      x.fencing_token = l.token();
      x.ttl_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                   l.settings().ttl)
                   .count();
      v.leases.push_back(std::move(x));
    }
    for (const auto& r : all_regions())
      if (auto st = r.status(query_timeout))
        v.regions.push_back(peer_region{r.type_name(), st->entities});
    return v;
  }

  // Every answering member's report, this node's included; members that
  // are unreachable or not yet (or no longer) in the cluster are not
  // asked.
  std::vector<peer_view> gather() const {
    std::vector<runtime::unique_address> targets;
    if (auto v = view()) {
      using cluster::member_status;
      const auto& g = v->latest_gossip();
      for (const auto& m : g.members())
        if ((m.status == member_status::up
             || m.status == member_status::weakly_up
             || m.status == member_status::leaving
             || m.status == member_status::exiting)
            && (m.address == v->self()
                || g.overview().reachability.is_reachable(m.address)))
          targets.push_back(m.address);
    }
    std::vector<peer_view> out;
    caf::scoped_actor self{*sys};
    auto reply_to = remoting.reply_ref(caf::actor{self.ptr()});
    size_t asked = 0;
    for (const auto& node : targets) {
      if (node == cluster.self_address())
        continue;
      if (!remoting.send(cluster::remote_ref{node, agent_name},
                         caf::make_message(peer_view_atom::value), reply_to))
        ++asked;
    }
    // This node's own report needs no round trip.
    out.push_back(local_view());
    auto deadline = std::chrono::steady_clock::now() + query_timeout;
    size_t got = 0;
    bool timed_out = false;
    while (got < asked && !timed_out) {
      auto left = deadline - std::chrono::steady_clock::now();
      if (left <= runtime::timespan::zero())
        break;
      self->receive(
        [&](const cluster::remote_ref&, peer_view_atom, peer_view& v) {
          ++got;
          out.push_back(std::move(v));
        },
        caf::after(std::chrono::duration_cast<std::chrono::milliseconds>(left))
          >> [&] { timed_out = true; });
    }
    if (got < asked)
      log.debug("{} of {} members did not report within {}", asked - got, asked,
                runtime::render_duration(query_timeout));
    return out;
  }
};

namespace {

// The router's view of the node.
class node_source : public management_source {
public:
  explicit node_source(std::shared_ptr<management_service::state> st)
    : st_(std::move(st)) {}

  runtime::expected<members_view> members() const override {
    auto v = st_->view();
    if (!v)
      return unavailable("this node has no membership view yet");
    auto out
      = st_->oldest_role ? members_of(*v, *st_->oldest_role) : members_of(*v);
    add_foreign_clusters(out, st_->cluster.incarnation());
    return out;
  }

  runtime::expected<std::optional<shards_view>>
  shards(std::string_view type) const override {
    std::optional<sharding::shard_region> region;
    for (auto& r : st_->all_regions())
      if (r.type_name() == type)
        region = r;
    if (!region)
      return std::optional<shards_view>{};
    auto map = region->shard_map(st_->query_timeout);
    if (!map)
      return unavailable(
        fmt::format("the shard map of {}: {}", type, map.error().message));
    auto peers = st_->gather();
    shards_view out;
    out.type = std::string{type};
    for (auto& [node, shards] : *map) {
      region_view r;
      r.address = runtime::to_string(node);
      r.shards = shards;
      r.entities = entities_of(peers, r.address, type);
      out.regions.push_back(std::move(r));
    }
    return std::optional<shards_view>{std::move(out)};
  }

  runtime::expected<std::vector<singleton_view>> singletons() const override {
    return merge_singletons(st_->gather(), self());
  }

  runtime::expected<std::vector<lease_view>> leases() const override {
    return merge_leases(st_->gather(), self());
  }

  health ready() const override {
    if (st_->stopping.load())
      return {false, "shutting down"};
    auto v = st_->view();
    if (!v)
      return {false, "not a member yet (no membership view)"};
    auto* me = v->self_member();
    if (!me)
      return {false, "not a member yet"};
    using cluster::member_status;
    if (me->status != member_status::up
        && me->status != member_status::weakly_up)
      return {false, fmt::format("this node is {}, not up",
                                 cluster::to_string(me->status))};
    return {true, ""};
  }

  health alive() const override {
    if (st_->stopping.load())
      return {false, "shutting down"};
    return {true, ""};
  }

  runtime::expected<std::string> metrics_text() const override {
    metrics_snapshot s;
    if (auto v = st_->view()) {
      auto counts = count_members(*v);
      s.members_by_status = std::move(counts.by_status);
      s.unreachable_members = counts.unreachable;
    }
    auto c = st_->cluster.counters();
    s.leader_changes = c.leader_changes;
    s.foreign_incarnations = st_->cluster.incarnation().foreign.size();
    s.foreign_incarnation_detections = c.foreign_detections;
    s.gossip_rounds = c.gossip_sent;
    s.gossip_received = c.gossip_received;
    for (const auto& l : st_->all_leases())
      s.leases.push_back(
        lease_metrics{l.settings().name, l.acquisitions(), l.losses()});
    for (const auto& m : st_->all_singletons()) {
      auto st = st_->status_of(m);
      s.singletons_running.emplace_back(m.type_name(),
                                        st && st->incarnation != 0);
    }
    for (const auto& r : st_->all_regions()) {
      auto st = r.status(st_->query_timeout);
      if (!st) // stopped (handed off at shutdown), or busy past the bound
        continue;
      s.regions.push_back(region_metrics{
        r.type_name(), st->shards.size(), st->entities, st->delivered,
        st->forwarded, st->buffered, st->dropped});
    }
    auto rm = st_->remoting.metrics();
    s.remoting_sent = rm.sent;
    s.remoting_delivered = rm.delivered;
    s.remoting_dead_letters = rm.dead_letters;
    auto tm = st_->remoting.transport().metrics();
    s.transport_bytes_out = tm.total.bytes_out;
    s.transport_bytes_in = tm.total.bytes_in;
    for (size_t i = 0; i < cluster::drop_reason_count; ++i)
      s.transport_drops.emplace_back(
        cluster::to_string(static_cast<cluster::drop_reason>(i)),
        tm.total.drops[i]);
    s.shutdown_phase = st_->node->coordinated_shutdown().current_phase();
    return render_metrics(s);
  }

  runtime::error apply(member_operation op,
                       const std::string& address) override {
    auto v = st_->view();
    if (!v)
      return unavailable("this node has no membership view yet");
    auto target = find_member(*v, address);
    if (!target)
      return target.error();
    if (op == member_operation::leave)
      st_->cluster.leave(*target);
    else
      st_->cluster.down(*target);
    st_->log.info("{} {} (asked through the management API)",
                  op == member_operation::leave ? "leave" : "down",
                  runtime::to_string(*target));
    return {};
  }

  runtime::expected<std::string> bootstrap_seed_nodes() const override {
    auto self = st_->cluster.self_address();
    auto v = st_->view();
    return bootstrap::to_json(
      bootstrap::seed_nodes_of(self, v ? &*v : nullptr));
  }

  runtime::expected<std::vector<fault_view>> faults() const override {
    std::lock_guard guard{st_->mtx};
    std::vector<fault_view> out;
    for (auto& [key, f] : st_->faults)
      out.push_back(fault_view{
        cluster::to_string(key.first), key.second, f.blackhole,
        std::chrono::duration_cast<std::chrono::milliseconds>(f.delay),
        f.drop_probability});
    return out;
  }

  runtime::error set_fault(const fault_request& f) override {
    auto peer = cluster::parse_seed_node(f.peer);
    if (!peer)
      return runtime::make_error(
        errc::invalid_address,
        fmt::format("the peer \"{}\" is not host:port", f.peer.substr(0, 64)));
    if (*peer == cluster::endpoint_of(st_->cluster.self_address()))
      return runtime::make_error(
        errc::invalid_address,
        fmt::format("{} is this node; name a peer", f.peer.substr(0, 64)));
    cluster::link_fault fault;
    fault.blackhole = f.blackhole;
    fault.delay = f.delay;
    fault.drop_probability = f.drop_probability;
    auto& transport = st_->remoting.transport();
    std::lock_guard guard{st_->mtx};
    for (auto d : f.directions) {
      transport.set_fault(*peer,
                          d == fault_direction::inbound
                            ? cluster::direction::inbound
                            : cluster::direction::outbound,
                          fault);
      if (fault.is_healthy())
        st_->faults.erase({*peer, d});
      else
        st_->faults[{*peer, d}] = fault;
    }
    // Loud on purpose: an injected fault explains whatever follows.
    if (fault.is_healthy())
      st_->log.warning("fault injection: healed the link to {} ({})",
                       cluster::to_string(*peer), directions_text(f));
    else
      st_->log.warning(
        "fault injection: {} the link to {} ({}; asked through the "
        "management API)",
        fault.blackhole ? std::string{"blackholed"}
                        : fmt::format("delay {}ms, drop probability {} on",
                                      f.delay.count(), f.drop_probability),
        cluster::to_string(*peer), directions_text(f));
    return {};
  }

private:
  static std::string directions_text(const fault_request& f) {
    if (f.directions.size() == 2)
      return "both directions";
    return f.directions.front() == fault_direction::inbound ? "inbound"
                                                            : "outbound";
  }

  std::string self() const {
    return runtime::to_string(st_->cluster.self_address());
  }

  std::shared_ptr<management_service::state> st_;
};

// Keeps the latest gossip and answers the other nodes' asks for this
// node's report. Detached: building the report asks local actors and
// waits (bounded), which must not hold a scheduler thread.
caf::behavior agent(caf::event_based_actor*,
                    std::weak_ptr<management_service::state> weak) {
  return {
    [weak](cluster::view_atom, const cluster::gossip& g) {
      if (auto st = weak.lock()) {
        std::lock_guard guard{st->mtx};
        st->latest = g;
      }
    },
    [weak](const cluster::remote_ref& from, peer_view_atom) {
      auto st = weak.lock();
      if (!st || !from.is_addressable())
        return;
      auto v = st->local_view();
      if (auto err = st->remoting.send(
            from, caf::make_message(peer_view_atom::value, std::move(v))))
        st->log.debug("report to {} not sent: {}",
                      runtime::to_string(from.node), err.message);
    },
  };
}

} // namespace

namespace {

// Probes answer 503, the server stops, the agent exits. Idempotent.
void stop_service(management_service::state& st) {
  st.stopping.store(true);
  std::unique_ptr<http_server> server;
  caf::actor agent;
  {
    std::lock_guard guard{st.mtx};
    server = std::move(st.server);
    agent = std::move(st.agent);
  }
  if (server)
    server->stop();
  if (agent)
    caf::anon_send_exit(agent, caf::exit_reason::user_shutdown);
}

} // namespace

management_service::management_service(std::shared_ptr<state> st)
  : st_(std::move(st)) {}

management_service::~management_service() {
  stop();
}

runtime::expected<std::unique_ptr<management_service>>
management_service::start(runtime::node& node, cluster::cluster_handle cluster,
                          cluster::remoting_handle remoting) {
  auto settings = management_settings_from_config(node.cfg());
  if (!settings)
    return settings.error();
  auto st = std::make_shared<state>();
  st->sys = &node.system();
  st->node = &node;
  st->cluster = cluster;
  st->remoting = remoting;
  st->query_timeout = settings->query_timeout;
  if (node.cfg().schema().find("singleton.role"))
    if (auto role = node.cfg().get<std::string>("singleton.role");
        !role.empty())
      st->oldest_role = role;
  st->agent
    = node.system().spawn<caf::detached>(agent, std::weak_ptr<state>{st});
  if (auto published = remoting.publish(agent_name, st->agent); !published) {
    caf::anon_send_exit(st->agent, caf::exit_reason::user_shutdown);
    return published.error();
  }
  cluster.subscribe_view(st->agent);
  if (settings->enabled) {
    http_server_settings hs;
    hs.bind = settings->bind;
    hs.port = settings->port;
    hs.max_connections = settings->max_connections;
    // A gather waits up to query_timeout for its peers; the probes, the
    // members and the metrics must not queue behind it.
    hs.workers = 4;
    hs.answer_inline = answers_without_waiting;
    auto rs = router_settings_of(*settings, dashboard_html());
    hs.max_body = rs.max_body;
    auto source = std::make_shared<node_source>(st);
    auto server = http_server::start(hs, [source, rs](const http_request& r) {
      return handle(*source, rs, r);
    });
    if (!server) {
      caf::anon_send_exit(st->agent, caf::exit_reason::user_shutdown);
      return server.error();
    }
    st->log.info("management API on http://{}:{}/ (dashboard at /)",
                 settings->bind.find(':') != std::string::npos
                   ? "[" + settings->bind + "]"
                   : settings->bind,
                 (*server)->port());
    st->server = std::move(*server);
  }
  std::unique_ptr<management_service> svc{new management_service(st)};
  // Readiness turns 503 as the node stops taking work (Kubernetes takes it
  // out of its Services); the API keeps answering (/alive, /metrics,
  // /cluster/members) through the rest of the shutdown. The agent is
  // detached (its own thread): it must be gone before the actor system
  // stops, or stopping would wait for its thread forever.
  node.add_shutdown_task(
    runtime::shutdown_phase::service_unbind, "management readiness",
    [st](const runtime::shutdown_context&) { st->stopping.store(true); });
  node.add_shutdown_task(
    runtime::shutdown_phase::before_actor_system_terminate, "management API",
    [st](const runtime::shutdown_context&) { stop_service(*st); });
  return svc;
}

uint16_t management_service::port() const noexcept {
  std::lock_guard guard{st_->mtx};
  return st_->server ? st_->server->port() : 0;
}

void management_service::add_singleton(singleton::singleton_manager manager) {
  std::lock_guard guard{st_->mtx};
  st_->singletons.push_back(std::move(manager));
}

void management_service::add_region(sharding::shard_region region) {
  std::lock_guard guard{st_->mtx};
  st_->regions.push_back(std::move(region));
}

void management_service::add_lease(lease::lease_handle lease) {
  std::lock_guard guard{st_->mtx};
  st_->leases.push_back(std::move(lease));
}

void management_service::set_stopping() noexcept {
  st_->stopping.store(true);
}

void management_service::stop() {
  if (st_)
    stop_service(*st_);
}

} // namespace troupe::management
