#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <vector>

#include "cluster_daemon_support.hpp"
#include "configured_node.hpp"
#include "tcp_remoting.hpp"
#include "troupe/test/eventually.hpp"

// Cluster daemons on the real TCP transport on loopback, one actor system
// per node in this process, with DESIGN.md §10's shortened settings. Real
// time: every wait polls with a deadline.

using namespace troupe;
using namespace troupe::test;
using cluster::cluster_handle;
using cluster::current_cluster_state;

namespace {

/// One node: remoting on loopback, the daemon, a subscriber and the
/// shutdown hook's log.
struct cluster_node {
  std::unique_ptr<real_node> base;
  cluster_handle handle;
  std::shared_ptr<event_log> events = std::make_shared<event_log>();
  std::shared_ptr<shutdown_log> stops = std::make_shared<shutdown_log>();

  /// Starts on `port` (0: ephemeral) joining through `seeds` (empty: this
  /// node's own endpoint, i.e. it founds the cluster).
  cluster_node(std::vector<cluster::endpoint> seeds, uint16_t port = 0,
               cluster::join_config config = test_join_config()) {
    base = std::make_unique<real_node>(loopback(port));
    if (seeds.empty())
      seeds.push_back(cluster::endpoint_of(addr()));
    cluster::cluster_daemon_settings s;
    s.membership = short_settings();
    s.config = std::move(config);
    s.on_shutdown = stops->hook();
    s.quarantine_removed_after = 1s;
    auto h = cluster_handle::start(base->sys(), base->remoting, std::move(s));
    REQUIRE(h);
    handle = *h;
    // Subscribed before the join starts: a founding node is up at once, and
    // would otherwise be up in the first snapshot, without a member_up event
    // of its own (the daemon handles its mailbox in order).
    handle.subscribe(base->spawn(event_recorder, events));
    handle.join(std::move(seeds));
  }

  ~cluster_node() {
    stop();
  }

  /// Stops the daemon and the transport without leaving (a crash as the
  /// others see it).
  void stop() {
    if (!base)
      return;
    handle.stop();
    base.reset();
  }

  const unique_address& addr() const {
    return base->addr();
  }

  cluster::endpoint ep() const {
    return cluster::endpoint_of(addr());
  }

  current_cluster_state state() const {
    auto s = handle.state();
    return s ? *s : current_cluster_state{};
  }
};

using nodes = std::vector<std::unique_ptr<cluster_node>>;

/// Starts `n` nodes; the first founds the cluster, the others join through
/// it.
nodes start_cluster(size_t n) {
  nodes xs;
  xs.push_back(
    std::make_unique<cluster_node>(std::vector<cluster::endpoint>{}));
  for (size_t i = 1; i < n; ++i)
    xs.push_back(std::make_unique<cluster_node>(
      std::vector<cluster::endpoint>{xs.front()->ep()}));
  return xs;
}

bool everyone_sees_all_up(const nodes& xs, size_t n) {
  for (auto& x : xs)
    if (x->base && !all_up(x->state(), n))
      return false;
  return true;
}

} // namespace

TEST_CASE("cluster daemon (tcp): 3 and 5 nodes join through a seed and all "
          "see all up") {
  auto n = GENERATE(size_t{3}, size_t{5});
  INFO(n << " nodes");
  auto xs = start_cluster(n);
  CHECK(eventually([&] { return everyone_sees_all_up(xs, n); }, 20s));
  for (auto& x : xs) {
    CHECK(x->events->copy().front().rfind("snapshot", 0) == 0);
    for (auto& y : xs)
      CHECK(x->events->has("member_up", to_string(y->addr())));
    CHECK(x->stops->count() == 0);
  }
}

TEST_CASE("cluster daemon (tcp): leave moves the member through exiting to "
          "removed on every node, and the leaving node stops") {
  auto xs = start_cluster(3);
  REQUIRE(eventually([&] { return everyone_sees_all_up(xs, 3); }, 20s));
  auto leaving = xs[2]->addr();
  xs[1]->handle.leave(leaving);
  CHECK(eventually(
    [&] { return all_up(xs[0]->state(), 2) && all_up(xs[1]->state(), 2); },
    20s));
  for (size_t i = 0; i < 2; ++i) {
    auto& log = *xs[i]->events;
    auto removed = log.index_of("member_removed", to_string(leaving));
    CHECK(log.index_of("member_left", to_string(leaving))
          < log.index_of("member_exited", to_string(leaving)));
    CHECK(log.index_of("member_exited", to_string(leaving)) < removed);
    CHECK(removed < log.copy().size());
  }
  CHECK(eventually([&] { return xs[2]->stops->count() == 1; }, 10s));
}

TEST_CASE("cluster daemon (tcp): a node stopped without leaving becomes "
          "unreachable on the others within the detector's bound") {
  auto xs = start_cluster(3);
  REQUIRE(eventually([&] { return everyone_sees_all_up(xs, 3); }, 20s));
  auto gone = xs[2]->addr();
  auto t0 = std::chrono::steady_clock::now();
  xs[2]->stop();
  REQUIRE(eventually(
    [&] {
      return xs[0]->events->has("unreachable_member", to_string(gone))
             && xs[1]->events->has("unreachable_member", to_string(gone));
    },
    20s));
  auto took = std::chrono::steady_clock::now() - t0;
  // The bound: acceptable pause (1 s) plus a few heartbeat intervals for
  // phi to pass 8 with a 100 ms deviation, plus one reaper interval; the
  // slack covers a loaded 2-core machine.
  auto s = short_settings();
  auto bound = s.failure_detector.acceptable_heartbeat_pause
               + 10 * s.failure_detector.heartbeat_interval
               + s.unreachable_nodes_reaper_interval + 3s;
  INFO("took "
       << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
       << " ms");
  CHECK(took < bound);
  CHECK(took > s.failure_detector.acceptable_heartbeat_pause / 2);
}

TEST_CASE("cluster daemon (tcp): a blackholed node becomes unreachable and "
          "reachable again when healed") {
  auto xs = start_cluster(3);
  REQUIRE(eventually([&] { return everyone_sees_all_up(xs, 3); }, 20s));
  auto& isolated = *xs[2];
  auto set_all = [&](cluster::link_fault fault) {
    for (size_t i = 0; i < 2; ++i)
      for (auto dir :
           {cluster::direction::outbound, cluster::direction::inbound})
        isolated.base->remoting.transport().set_fault(xs[i]->ep(), dir, fault);
  };
  set_all(cluster::link_fault{true});
  CHECK(eventually(
    [&] {
      return xs[0]->events->has("unreachable_member",
                                to_string(isolated.addr()));
    },
    20s));
  set_all(cluster::link_fault{});
  CHECK(eventually(
    [&] {
      return xs[0]->events->has("reachable_member", to_string(isolated.addr()))
             && xs[0]->state().unreachable.empty();
    },
    20s));
  CHECK(all_up(xs[0]->state(), 3));
}

TEST_CASE("cluster daemon (tcp): a restart on the same host and port with a "
          "new uid removes the old member and the new one joins") {
  auto xs = start_cluster(3);
  REQUIRE(eventually([&] { return everyone_sees_all_up(xs, 3); }, 20s));
  auto old = xs[2]->addr();
  xs[2]->stop();
  xs[2] = std::make_unique<cluster_node>(
    std::vector<cluster::endpoint>{xs[0]->ep()}, old.port);
  auto fresh = xs[2]->addr();
  REQUIRE(fresh.port == old.port);
  REQUIRE(fresh.uid != old.uid);
  CHECK(eventually(
    [&] {
      auto s = xs[0]->state();
      return all_up(s, 3) && status_in(s, old).empty()
             && status_in(s, fresh) == "up";
    },
    30s));
  CHECK(xs[0]->events->has("member_removed", to_string(old)));
}

TEST_CASE("cluster daemon (tcp): a node with an incompatible join "
          "configuration is refused and gives up with the reason") {
  auto xs = start_cluster(1);
  REQUIRE(eventually([&] { return everyone_sees_all_up(xs, 1); }, 20s));
  cluster_node odd{{xs[0]->ep()}, 0, test_join_config("2")};
  CHECK(eventually([&] { return odd.stops->count() == 1; }, 20s));
  CHECK_THAT(odd.stops->first(), Catch::Contains("troupe.protocol_major"));
  CHECK(all_up(xs[0]->state(), 1));
}

TEST_CASE("cluster daemon (tcp): nodes started from configuration join "
          "through cluster.seed_nodes, and a downed node's hook runs") {
  auto first = configured_node({});
  auto first_remoting = cluster::remoting_handle::start(*first);
  REQUIRE(first_remoting);
  auto first_stops = std::make_shared<shutdown_log>();
  auto c1 = cluster_handle::start(*first, *first_remoting, first_stops->hook());
  REQUIRE(c1);
  // No seed nodes configured: join through the API (founds the cluster).
  c1->join({cluster::endpoint_of(c1->self_address())});
  auto seed = to_string(cluster::endpoint_of(c1->self_address()));
  auto second = configured_node({"--cluster.seed_nodes=" + seed});
  auto second_remoting = cluster::remoting_handle::start(*second);
  REQUIRE(second_remoting);
  auto second_stops = std::make_shared<shutdown_log>();
  auto c2
    = cluster_handle::start(*second, *second_remoting, second_stops->hook());
  REQUIRE(c2);
  CHECK(eventually(
    [&] {
      auto s1 = c1->state();
      auto s2 = c2->state();
      return s1 && s2 && all_up(*s1, 2) && all_up(*s2, 2);
    },
    20s));
  auto me = c2->self_member();
  REQUIRE(me);
  CHECK(me->address == c2->self_address());
  CHECK(me->status == cluster::member_status::up);
  c1->down(c2->self_address());
  CHECK(eventually([&] { return second_stops->count() == 1; }, 20s));
  CHECK(first_stops->count() == 0);
  // The downed node's coordinated shutdown started with the cluster's
  // reason (its process would exit 1), and skipped the leave.
  auto& downed = second->coordinated_shutdown();
  CHECK(downed.reason() == runtime::shutdown_reason::cluster_downing);
  CHECK_FALSE(first->coordinated_shutdown().started());
  auto report = second->shutdown();
  CHECK(report.reason == runtime::shutdown_reason::cluster_downing);
  CHECK(runtime::exit_code(report.reason) == 1);
  first->shutdown();
}
