#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>

#include <caf/typed_event_based_actor.hpp>

#include "cluster_daemon_support.hpp"
#include "sim_remoting.hpp"
#include "troupe/bootstrap/bootstrap_coordinator.hpp"
#include "troupe/bootstrap/config_discovery.hpp"
#include "troupe/bootstrap/seed_nodes_answer.hpp"

// The bootstrap coordinator's wiring on CAF's deterministic coordinator:
// cluster daemons on the simulated transport, the config discovery, and a
// stand-in HTTP client that answers each node's GET /bootstrap/seed-nodes
// from that node's daemon, as the management route does. Timers (discovery,
// probes, stable_margin) run on simulated time.

using namespace troupe;
using namespace troupe::test;
using cluster::cluster_handle;

namespace {

const unique_address a{"10.0.0.1", 2552, 11};
const unique_address b{"10.0.0.2", 2552, 22};
const unique_address c{"10.0.0.3", 2552, 33};

bootstrap::contact_point cp(const unique_address& x) {
  return bootstrap::contact_point{x.host, 8558};
}

// Answers GET http://<host>:8558/bootstrap/seed-nodes from the daemon of
// <host> (its state as the route reads it); 503 for an unknown host.
using daemons
  = std::map<std::string, std::pair<unique_address, cluster_handle>>;

runtime::http_client_actor::behavior_type
fake_http(runtime::http_client_actor::pointer self,
          std::shared_ptr<daemons> nodes) {
  return {
    [self, nodes](
      const runtime::http_request& req) -> caf::result<runtime::http_response> {
      auto host = req.url.substr(7, req.url.find(':', 7) - 7);
      auto i = nodes->find(host);
      if (i == nodes->end())
        return runtime::http_response{503, {}, "no such node"};
      auto rp = self->make_response_promise<runtime::http_response>();
      auto self_addr = i->second.first;
      self
        ->request(i->second.second.actor(), std::chrono::seconds{1},
                  cluster::state_atom::value)
        .then(
          [rp, self_addr](const cluster::current_cluster_state& st) mutable {
            cluster::membership_state view{cluster::gossip{st.members},
                                           self_addr};
            auto answer = bootstrap::seed_nodes_of(self_addr, &view);
            rp.deliver(runtime::http_response{200, {}, to_json(answer)});
          },
          [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
      return rp;
    },
  };
}

class world {
public:
  world() : w(1, {}, {bootstrap::bootstrap_module().init_caf}) {
    http = w.sys().spawn(fake_http, nodes);
  }

  ~world() {
    for (auto& x : coordinators)
      caf::anon_send_exit(x.actor(), caf::exit_reason::user_shutdown);
    for (auto& [host, n] : *nodes)
      n.second.stop();
    caf::anon_send_exit(http, caf::exit_reason::user_shutdown);
    w.det().run();
  }

  // Starts `addr`'s daemon without seeds and its coordinator over the
  // contact points of `points` (default a, b and c), `required` of them.
  cluster_handle start(const unique_address& addr, size_t required = 3,
                       std::vector<bootstrap::contact_point> points
                       = {cp(a), cp(b), cp(c)}) {
    auto remoting = w.start(addr);
    cluster::cluster_daemon_settings s;
    s.membership = short_settings();
    s.config = test_join_config();
    auto h = cluster_handle::start(w.sys(), remoting, std::move(s));
    REQUIRE(h);
    (*nodes)[addr.host] = {addr, *h};
    bootstrap::bootstrap_coordinator_settings bs;
    bs.bootstrap.method = bootstrap::discovery_method::config;
    bs.bootstrap.config_contact_points = std::move(points);
    bs.bootstrap.required_contact_point_nr = required;
    bs.discovery = std::make_shared<bootstrap::config_discovery>(
      bs.bootstrap.config_contact_points);
    bs.http = http;
    coordinators.push_back(
      bootstrap::bootstrap_handle::start(w.sys(), *h, std::move(bs)));
    w.det().run();
    return *h;
  }

  cluster::current_cluster_state state(const cluster_handle& h) {
    probe p{w.sys()};
    p.send(h.actor(), cluster::state_atom::value);
    w.det().run();
    auto got = p.poll<cluster::current_cluster_state>();
    REQUIRE(got);
    REQUIRE(*got);
    return **got;
  }

  sim_remoting w;
  std::shared_ptr<daemons> nodes = std::make_shared<daemons>();
  runtime::http_client_actor http;
  std::vector<bootstrap::bootstrap_handle> coordinators;
};

} // namespace

TEST_CASE("bootstrap coordinator (sim): three nodes found one cluster, the "
          "lowest founds it after stable_margin") {
  world x;
  auto C = x.start(c);
  auto B = x.start(b);
  auto A = x.start(a);
  // Before stable_margin (5 s) nobody founds.
  x.w.advance(3s);
  CHECK(x.state(A).members.empty());
  CHECK(x.state(B).members.empty());
  x.w.advance(20s);
  for (auto* h : {&A, &B, &C}) {
    auto s = x.state(*h);
    INFO(to_string(h->self_address()));
    CHECK(all_up(s, 3));
    // The lowest address founded: it became the leader and the oldest.
    CHECK(s.leader == a);
  }
}

TEST_CASE("bootstrap coordinator (sim): a node started after the cluster "
          "formed joins it through the reported seed nodes") {
  world x;
  auto A = x.start(a, 2, {cp(a), cp(b)});
  auto B = x.start(b, 2, {cp(a), cp(b)});
  x.w.advance(20s);
  REQUIRE(all_up(x.state(A), 2));
  // c discovers all three and is the highest: it joins through the seeds
  // a and b report (founding would need every answer to say "no").
  auto C = x.start(c, 2);
  x.w.advance(10s);
  auto s = x.state(C);
  CHECK(all_up(s, 3));
  CHECK(s.leader == a);
  CHECK(all_up(x.state(B), 3));
}

TEST_CASE("bootstrap coordinator (sim): a contact point that does not "
          "answer blocks founding") {
  world x;
  // c is discovered but never started: its probe gets 503.
  auto A = x.start(a);
  auto B = x.start(b);
  x.w.advance(30s);
  CHECK(x.state(A).members.empty());
  CHECK(x.state(B).members.empty());
  auto C = x.start(c);
  x.w.advance(20s);
  CHECK(all_up(x.state(A), 3));
  CHECK(all_up(x.state(C), 3));
}
