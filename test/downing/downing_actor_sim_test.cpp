#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "cluster_daemon_support.hpp"
#include "sim_remoting.hpp"
#include "troupe/downing/downing_actor.hpp"

// The downing actor's wiring on CAF's deterministic coordinator and the
// simulated transport: cluster daemons and their resolvers on simulated
// time, a partition made with the transport's blackhole faults.

using namespace troupe;
using namespace troupe::test;
using cluster::cluster_handle;
using cluster::current_cluster_state;

namespace {

const std::vector<unique_address> five{{"10.0.0.1", 2552, 11},
                                       {"10.0.0.2", 2552, 22},
                                       {"10.0.0.3", 2552, 33},
                                       {"10.0.0.4", 2552, 44},
                                       {"10.0.0.5", 2552, 55}};

cluster::endpoint ep(const unique_address& x) {
  return cluster::endpoint_of(x);
}

/// Daemons with a resolver each on a sim_remoting world.
class downing_world {
public:
  ~downing_world() {
    for (auto& d : resolvers_)
      d.stop();
    for (auto& h : handles_)
      h.stop();
    w.det().run();
  }

  /// Starts `addr` joining through the first node, with keep_majority and
  /// `stable_after`.
  void start(const unique_address& addr, runtime::timespan stable_after) {
    auto remoting = w.start(addr);
    cluster::cluster_daemon_settings s;
    s.membership = short_settings();
    s.membership.seed_nodes = {ep(five.front())};
    s.config = test_join_config();
    auto stops = std::make_shared<shutdown_log>();
    s.on_shutdown = stops->hook();
    auto h = cluster_handle::start(w.sys(), remoting, std::move(s));
    REQUIRE(h);
    downing::downing_actor_settings ds;
    ds.engine.downing.stability.stable_after = stable_after;
    ds.engine.downing.stability.down_all_when_unstable = stable_after;
    auto d = downing::downing_handle::start(w.sys(), *h, std::move(ds));
    REQUIRE(d);
    REQUIRE(d->active());
    handles_.push_back(*h);
    resolvers_.push_back(*d);
    stops_.push_back(stops);
  }

  current_cluster_state state(size_t i) {
    probe p{w.sys()};
    p.send(handles_.at(i).actor(), cluster::state_atom::value);
    w.det().run();
    auto got = p.poll<current_cluster_state>();
    REQUIRE(got);
    REQUIRE(*got);
    return **got;
  }

  size_t stops(size_t i) const {
    return stops_.at(i)->count();
  }

  /// Blackholes every link between `left` and `right`, both directions.
  void partition(const std::vector<size_t>& left,
                 const std::vector<size_t>& right) {
    for (auto l : left)
      for (auto r : right)
        for (auto dir :
             {cluster::direction::outbound, cluster::direction::inbound}) {
          w.net()
            .find(ep(five[l]))
            ->set_fault(ep(five[r]), dir, cluster::link_fault{true});
          w.net()
            .find(ep(five[r]))
            ->set_fault(ep(five[l]), dir, cluster::link_fault{true});
        }
  }

  sim_remoting w;

private:
  std::vector<cluster_handle> handles_;
  std::vector<downing::downing_handle> resolvers_;
  std::vector<std::shared_ptr<shutdown_log>> stops_;
};

bool has_down_or_gone(const current_cluster_state& s,
                      const unique_address& node) {
  auto status = status_in(s, node);
  return status.empty() || status == "down";
}

} // namespace

TEST_CASE("downing actor (sim): keep_majority on a 3|2 partition downs the "
          "minority after detection plus stable_after, the majority stays "
          "with 3 up") {
  downing_world x;
  auto stable_after = 3s;
  for (auto& n : five)
    x.start(n, stable_after);
  x.w.advance(15s);
  REQUIRE(all_up(x.state(0), 5));
  x.partition({0, 1, 2}, {3, 4});
  // Detection: the majority's leader sees both minority nodes unreachable.
  auto detected = [&] { return x.state(0).unreachable.size() == 2; };
  auto deadline = x.w.det().now() + 20s;
  while (!detected() && x.w.det().now() < deadline)
    x.w.advance(100ms);
  REQUIRE(detected());
  // Nothing is downed before stable_after has passed.
  x.w.advance(stable_after - 500ms);
  for (size_t i = 0; i < 5; ++i)
    CHECK(status_in(x.state(0), five[i]) == "up");
  // Then the majority downs the minority and removes it; the minority
  // downs itself and stops (shutdown_when_downed).
  x.w.advance(20s);
  auto majority = x.state(0);
  CHECK(all_up(majority, 3));
  for (size_t i = 3; i < 5; ++i) {
    INFO(to_string(five[i]));
    CHECK(has_down_or_gone(majority, five[i]));
    CHECK(x.stops(i) == 1);
  }
  for (size_t i = 0; i < 3; ++i) {
    INFO(to_string(five[i]));
    CHECK(all_up(x.state(i), 3));
    CHECK(x.stops(i) == 0);
  }
}

TEST_CASE("downing actor (sim): with active_strategy off no actor starts") {
  sim_remoting w;
  auto remoting = w.start(five[0]);
  cluster::cluster_daemon_settings s;
  s.membership = short_settings();
  s.membership.seed_nodes = {ep(five[0])};
  s.config = test_join_config();
  auto h = cluster_handle::start(w.sys(), remoting, std::move(s));
  REQUIRE(h);
  downing::downing_actor_settings ds;
  ds.engine.downing.active_strategy.reset();
  auto d = downing::downing_handle::start(w.sys(), *h, std::move(ds));
  REQUIRE(d);
  CHECK(!d->active());
  h->stop();
  w.det().run();
}
