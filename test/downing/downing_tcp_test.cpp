#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "cluster_daemon_support.hpp"
#include "tcp_remoting.hpp"
#include "troupe/downing/downing_actor.hpp"
#include "troupe/lease/file_lease_backend.hpp"
#include "troupe/test/child_process.hpp"
#include "troupe/test/eventually.hpp"

// The split brain resolver on the real TCP transport on loopback: one actor
// system per node in this process, DESIGN.md §10's shortened membership
// settings, stable_after 2s, partitions made with the transport's
// blackhole faults. Real time: every wait polls with a deadline.

using namespace troupe;
using namespace troupe::test;
using cluster::cluster_handle;
using cluster::current_cluster_state;

namespace {

/// The resolver settings of these tests: `strategy`, stable_after 2s,
/// down_all_when_unstable 10s (a loaded machine may detect slowly).
downing::downing_actor_settings sbr_settings(downing::strategy strategy) {
  downing::downing_actor_settings ds;
  ds.engine.downing.active_strategy = std::move(strategy);
  ds.engine.downing.stability.stable_after = 2s;
  ds.engine.downing.stability.down_all_when_unstable = 10s;
  return ds;
}

/// One node: remoting on loopback, the daemon, its resolver, the shutdown
/// hook's log.
struct sbr_node {
  std::unique_ptr<real_node> base;
  cluster_handle handle;
  downing::downing_handle resolver;
  /// The resolver's lease (lease_majority); stopped with the node.
  std::optional<lease::lease_handle> lease;
  std::shared_ptr<shutdown_log> stops = std::make_shared<shutdown_log>();

  /// Starts joining through `seeds` (empty: founds the cluster) with
  /// `ds`; `lease_dir` non-empty: a file lease there for the resolver.
  sbr_node(std::vector<cluster::endpoint> seeds,
           downing::downing_actor_settings ds,
           const std::string& lease_dir = {}) {
    base = std::make_unique<real_node>(loopback());
    if (seeds.empty())
      seeds.push_back(cluster::endpoint_of(addr()));
    cluster::cluster_daemon_settings s;
    s.membership = short_settings();
    s.membership.seed_nodes = std::move(seeds);
    s.config = test_join_config();
    s.on_shutdown = stops->hook();
    s.quarantine_removed_after = 1s;
    auto h = cluster_handle::start(base->sys(), base->remoting, std::move(s));
    REQUIRE(h);
    handle = *h;
    if (!lease_dir.empty()) {
      lease::file_lease_backend_options opts;
      opts.directory = lease_dir;
      auto backend = lease::file_lease_backend::make(opts);
      REQUIRE(backend);
      lease::lease_settings ls;
      ls.name = downing::resolver_lease_name("", "test");
      ls.owner = to_string(addr());
      auto made = lease::lease_handle::spawn(base->sys(), ls, *backend);
      REQUIRE(made);
      lease = *made;
      ds.lease = *made;
    }
    auto d = downing::downing_handle::start(base->sys(), handle, std::move(ds));
    REQUIRE(d);
    REQUIRE(d->active());
    resolver = *d;
  }

  ~sbr_node() {
    resolver.stop();
    handle.stop();
    if (lease)
      caf::anon_send_exit(lease->actor(), caf::exit_reason::user_shutdown);
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

using nodes = std::vector<std::unique_ptr<sbr_node>>;

nodes start_cluster(size_t n, const downing::downing_actor_settings& ds,
                    const std::string& lease_dir = {}) {
  nodes xs;
  xs.push_back(std::make_unique<sbr_node>(std::vector<cluster::endpoint>{}, ds,
                                          lease_dir));
  for (size_t i = 1; i < n; ++i)
    xs.push_back(std::make_unique<sbr_node>(
      std::vector<cluster::endpoint>{xs.front()->ep()}, ds, lease_dir));
  return xs;
}

bool everyone_sees_all_up(const nodes& xs, size_t n) {
  for (auto& x : xs)
    if (!all_up(x->state(), n))
      return false;
  return true;
}

/// Sets `fault` on every link between `left` and `right`, both ways.
void set_links(nodes& xs, const std::vector<size_t>& left,
               const std::vector<size_t>& right, cluster::link_fault fault) {
  for (auto l : left)
    for (auto r : right)
      for (auto dir :
           {cluster::direction::outbound, cluster::direction::inbound}) {
        xs[l]->base->remoting.transport().set_fault(xs[r]->ep(), dir, fault);
        xs[r]->base->remoting.transport().set_fault(xs[l]->ep(), dir, fault);
      }
}

/// True if every node of `side` had its shutdown hook called.
bool all_stopped(const nodes& xs, const std::vector<size_t>& side) {
  for (auto i : side)
    if (xs[i]->stops->count() == 0)
      return false;
  return true;
}

/// True if every node of `side` sees exactly the members of `side`, up.
bool side_all_up(const nodes& xs, const std::vector<size_t>& side) {
  for (auto i : side) {
    auto s = xs[i]->state();
    if (!all_up(s, side.size()))
      return false;
    for (auto j : side)
      if (status_in(s, xs[j]->addr()) != "up")
        return false;
  }
  return true;
}

/// Partitions 5 nodes 3|2 and waits for keep_majority's decision.
void partition_and_resolve(nodes& xs) {
  REQUIRE(eventually([&] { return everyone_sees_all_up(xs, 5); }, 30s));
  set_links(xs, {0, 1, 2}, {3, 4}, cluster::link_fault{true});
  REQUIRE(eventually([&] { return all_stopped(xs, {3, 4}); }, 40s));
  REQUIRE(eventually([&] { return side_all_up(xs, {0, 1, 2}); }, 30s));
}

} // namespace

TEST_CASE("downing (tcp): keep_majority on a 3|2 blackhole downs the "
          "minority, which shuts down, and the majority goes on with 3 up") {
  auto xs = start_cluster(5, sbr_settings(downing::keep_majority{}));
  partition_and_resolve(xs);
  for (size_t i = 0; i < 3; ++i) {
    INFO(to_string(xs[i]->addr()));
    CHECK(xs[i]->stops->count() == 0);
    auto s = xs[i]->state();
    CHECK(status_in(s, xs[3]->addr()).empty());
    CHECK(status_in(s, xs[4]->addr()).empty());
  }
  for (size_t i = 3; i < 5; ++i)
    CHECK(xs[i]->stops->first().find("down") != std::string::npos);
}

TEST_CASE("downing (tcp): lease_majority over the file lease on a 2|2 "
          "blackhole: exactly one side survives") {
  temp_dir dir;
  downing::lease_majority lm;
  lm.acquire_lease_delay_for_minority = 1s;
  auto xs = start_cluster(4, sbr_settings(lm), dir.path.string());
  REQUIRE(eventually([&] { return everyone_sees_all_up(xs, 4); }, 30s));
  set_links(xs, {0, 1}, {2, 3}, cluster::link_fault{true});
  auto decided = [&] {
    return all_stopped(xs, {0, 1}) || all_stopped(xs, {2, 3});
  };
  REQUIRE(eventually(decided, 40s));
  bool left_lost = all_stopped(xs, {0, 1});
  std::vector<size_t> survivors
    = left_lost ? std::vector<size_t>{2, 3} : std::vector<size_t>{0, 1};
  INFO((left_lost ? "left side downed" : "right side downed"));
  CHECK(eventually([&] { return side_all_up(xs, survivors); }, 30s));
  for (auto i : survivors)
    CHECK(xs[i]->stops->count() == 0);
}

TEST_CASE("downing (tcp): after the decision a healed partition does not "
          "bring the downed nodes back with their old uids") {
  auto xs = start_cluster(5, sbr_settings(downing::keep_majority{}));
  partition_and_resolve(xs);
  auto old_d = xs[3]->addr();
  auto old_e = xs[4]->addr();
  set_links(xs, {0, 1, 2}, {3, 4}, cluster::link_fault{});
  // The transport quarantined the removed uids (quarantine_removed_after
  // 1s): nothing more is exchanged with them.
  CHECK(eventually(
    [&] {
      for (size_t i = 0; i < 3; ++i)
        if (!xs[i]->base->remoting.transport().is_quarantined(old_d)
            || !xs[i]->base->remoting.transport().is_quarantined(old_e))
          return false;
      return true;
    },
    20s));
  // The downed nodes keep trying (their daemons still run here, the hook
  // only logged): for 5s they never show up again on the majority.
  bool came_back = eventually(
    [&] {
      for (size_t i = 0; i < 3; ++i) {
        auto s = xs[i]->state();
        if (!status_in(s, old_d).empty() || !status_in(s, old_e).empty())
          return true;
      }
      return false;
    },
    5s);
  CHECK(!came_back);
  CHECK(side_all_up(xs, {0, 1, 2}));
}
