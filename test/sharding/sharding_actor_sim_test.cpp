#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cluster_daemon_support.hpp"
#include "sim_remoting.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/in_memory_lease_backend.hpp"
#include "troupe/sharding/errc.hpp"
#include "troupe/sharding/sharding.hpp"
#include "troupe/singleton/caf_glue.hpp"

// The region and coordinator actors on CAF's deterministic coordinator and
// the simulated transport: cluster daemons, regions, the coordinator as a
// singleton, on simulated time. The journal is written by the entities
// themselves (one shared vector: the world is single-threaded).

using namespace troupe;
using namespace troupe::test;
using cluster::cluster_handle;
using sharding::entity_context;
using sharding::region_options;
using sharding::shard_region;
using sharding::sharding_settings;

namespace {

const std::vector<unique_address> nodes{{"10.0.0.1", 2552, 11},
                                        {"10.0.0.2", 2552, 22},
                                        {"10.0.0.3", 2552, 33},
                                        {"10.0.0.4", 2552, 44}};

cluster::endpoint ep(const unique_address& x) {
  return cluster::endpoint_of(x);
}

/// What the entities did: "start <entity> <host>", "recv <entity> <host>
/// <text>", "exit <entity> <host>".
struct journal {
  std::vector<std::string> lines;
  // entity -> hosts where an incarnation is alive now
  std::map<std::string, std::multiset<std::string>> live;
  size_t max_live = 0;

  size_t count(const std::string& prefix) const {
    return static_cast<size_t>(
      std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
        return l.rfind(prefix, 0) == 0;
      }));
  }
};

sharding_settings test_settings() {
  sharding_settings s;
  s.number_of_shards = 30;
  s.retry_interval = 500ms;
  s.hand_off_timeout = 10s;
  s.rebalance_interval = 2s;
  s.entity_stop_timeout = 2s;
  s.passivation_idle_timeout = 0s;
  s.down_removal_margin = 3s;
  return s;
}

std::string entity(int i) {
  return "e" + std::to_string(i);
}

class sharding_world {
public:
  sharding_world() = default;

  ~sharding_world() {
    for (auto& r : regions_)
      if (r.actor())
        caf::anon_send_exit(r.actor(), caf::exit_reason::user_shutdown);
    for (auto& r : regions_)
      if (auto m = r.coordinator_manager())
        caf::anon_send_exit(m->actor(), caf::exit_reason::user_shutdown);
    for (auto& h : clusters_)
      h.stop();
    w.det().run();
  }

  void start_node(size_t i) {
    auto remoting = w.start(nodes.at(i));
    cluster::cluster_daemon_settings s;
    s.membership = short_settings();
    s.membership.seed_nodes = {ep(nodes.front())};
    s.config = test_join_config();
    s.on_shutdown = stops->hook();
    auto h = cluster_handle::start(w.sys(), remoting, std::move(s));
    REQUIRE(h);
    clusters_.resize(std::max(clusters_.size(), i + 1));
    remotings_.resize(std::max(remotings_.size(), i + 1));
    clusters_[i] = *h;
    remotings_[i] = remoting;
  }

  void start_cluster(size_t n) {
    for (size_t i = 0; i < n; ++i)
      start_node(i);
    w.advance(10s);
    REQUIRE(all_up(state(0), n));
  }

  sharding::entity_factory factory() {
    auto j = log;
    return [j](caf::event_based_actor* self,
               const entity_context& ctx) -> caf::behavior {
      auto host = ctx.node.host;
      auto id = ctx.entity;
      j->lines.push_back("start " + id + " " + host);
      auto& live = j->live[id];
      live.insert(host);
      j->max_live = std::max(j->max_live, live.size());
      self->attach_functor([j, id, host] {
        j->lines.push_back("exit " + id + " " + host);
        auto& l = j->live[id];
        l.erase(l.find(host));
      });
      return {
        [j, id, host](const std::string& text) {
          j->lines.push_back("recv " + id + " " + host + " " + text);
        },
      };
    };
  }

  shard_region start_region(size_t i, region_options opts = {},
                            bool proxy_only = false) {
    if (!opts.settings)
      opts.settings = test_settings();
    auto r = shard_region::start(w.sys(), clusters_.at(i), remotings_.at(i),
                                 "account", factory(), std::move(opts),
                                 proxy_only, !proxy_only);
    REQUIRE(r);
    regions_.push_back(*r);
    w.det().run();
    return *r;
  }

  // Asks and lets simulated time pass until the answer came (a query the
  // region forwards to the coordinator crosses the simulated network).
  template <class T, class Handle, class... Ts>
  T ask(const Handle& h, Ts... xs) {
    probe p{w.sys()};
    p.send(h, xs...);
    w.det().run();
    auto got = p.poll<T>();
    for (int i = 0; i < 50 && !got; ++i) {
      w.advance(100ms);
      got = p.poll<T>();
    }
    REQUIRE(got);
    REQUIRE(*got);
    return **got;
  }

  sharding::region_status status(const shard_region& r) {
    return ask<sharding::region_status>(r.actor(),
                                        sharding::status_atom::value);
  }

  sharding::shard_map_reply shard_map(const shard_region& r) {
    return ask<sharding::shard_map_reply>(r.actor(),
                                          sharding::shard_map_atom::value);
  }

  cluster::current_cluster_state state(size_t i) {
    return ask<cluster::current_cluster_state>(clusters_.at(i).actor(),
                                               cluster::state_atom::value);
  }

  const cluster_handle& cluster(size_t i) const {
    return clusters_.at(i);
  }

  const remoting_handle& remoting(size_t i) const {
    return remotings_.at(i);
  }

  /// Regions started outside start_region, stopped with the world.
  void track(const std::vector<shard_region>& rs) {
    regions_.insert(regions_.end(), rs.begin(), rs.end());
    w.det().run();
  }

  template <class Pred>
  bool advance_until(Pred pred, runtime::timespan limit,
                     runtime::timespan step = 100ms) {
    auto end = w.det().now() + limit;
    while (!pred() && w.det().now() < end)
      w.advance(step);
    return pred();
  }

  /// A coordinator lease of `owner` over the shared in-memory store.
  lease::lease_handle make_lease(const unique_address& owner) {
    lease::lease_settings ls;
    ls.name = "test-shard-coordinator-account";
    ls.owner = to_string(owner);
    ls.ttl = 15s;
    ls.renewal_interval = 5s;
    ls.safety_margin = 1500ms;
    ls.operation_timeout = 2s;
    ls.acquire_retries = 3;
    ls.acquire_retry_delay = 100ms;
    auto h = lease::lease_handle::spawn(
      w.sys(), ls, std::make_shared<lease::in_memory_lease_backend>(store));
    REQUIRE(h);
    w.det().track(h->actor());
    w.det().run();
    return *h;
  }

  /// Sends "<tag>" to entities e0..e<n-1> through `r`.
  void send_all(const shard_region& r, int n, const std::string& tag) {
    for (int i = 0; i < n; ++i)
      REQUIRE_FALSE(r.tell(entity(i), tag));
  }

  sim_remoting w{1,
                 {},
                 {lease::add_lease_types, singleton::add_singleton_types,
                  sharding::add_sharding_types}};
  std::shared_ptr<journal> log = std::make_shared<journal>();
  std::shared_ptr<lease::in_memory_lease_store> store
    = std::make_shared<lease::in_memory_lease_store>(w.det().clock());
  std::shared_ptr<shutdown_log> stops = std::make_shared<shutdown_log>();

private:
  std::vector<cluster_handle> clusters_;
  std::vector<remoting_handle> remotings_;
  std::vector<shard_region> regions_;
};

} // namespace

TEST_CASE("sharding (sim): messages reach their entities on three nodes") {
  sharding_world x;
  x.start_cluster(3);
  std::vector<shard_region> rs;
  for (size_t i = 0; i < 3; ++i)
    rs.push_back(x.start_region(i));
  for (int i = 0; i < 60; ++i)
    REQUIRE_FALSE(rs[i % 3].tell(entity(i), std::string{"m1"}));
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 60; }, 20s));
  for (int i = 0; i < 60; ++i)
    REQUIRE_FALSE(rs[(i + 1) % 3].tell(entity(i), std::string{"m2"}));
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 120; }, 20s));
  // One incarnation per entity, and every region hosts some shards.
  CHECK(x.log->count("start ") == 60);
  CHECK(x.log->max_live == 1);
  size_t shards = 0;
  size_t entities = 0;
  for (auto& r : rs) {
    auto s = x.status(r);
    CHECK(!s.shards.empty());
    shards += s.shards.size();
    // The entities query agrees with the status's counts, shard by shard.
    for (auto& [shard, count] : s.shards) {
      auto ids = x.ask<std::vector<std::string>>(
        r.actor(), sharding::entities_atom::value, shard);
      CHECK(ids.size() == count);
      entities += ids.size();
    }
  }
  CHECK(entities == 60);
  auto map = x.shard_map(rs[1]);
  CHECK(map.active);
  size_t mapped = 0;
  for (auto& [node, xs] : map.regions)
    mapped += xs.size();
  CHECK(mapped == shards);
}

TEST_CASE("sharding (sim): an unmappable message and an empty entity id are "
          "errors naming what was wrong") {
  sharding_world x;
  x.start_cluster(1);
  auto r = x.start_region(0);
  auto err = r.send(caf::make_message(int32_t{42}));
  REQUIRE(err);
  CHECK(err.code == static_cast<uint8_t>(sharding::errc::unmappable_message));
  INFO(err.message);
  CHECK(err.message.find("(@i32)") != std::string::npos); // CAF's name
  auto err2 = r.tell("", std::string{"x"});
  REQUIRE(err2);
  CHECK(err2.message.find("empty entity id") != std::string::npos);
  // The default extractor takes a leading string as the entity id.
  CHECK_FALSE(r.send(caf::make_message(std::string{"e1"})));
  CHECK(x.advance_until([&] { return x.log->count("recv e1") == 1; }, 10s));
}

TEST_CASE("sharding (sim): an unknown type name is an error naming the "
          "types that run") {
  sharding_world x;
  x.start_cluster(1);
  x.start_region(0);
  auto found = sharding::find_region(x.w.sys(), "acount");
  REQUIRE_FALSE(found);
  CHECK(found.error().code
        == static_cast<uint8_t>(sharding::errc::unknown_type));
  CHECK(found.error().message.find("'acount'") != std::string::npos);
  CHECK(found.error().message.find("account") != std::string::npos);
  CHECK(sharding::find_region(x.w.sys(), "account"));
}

TEST_CASE("sharding (sim): a fourth node takes about a quarter of the shards "
          "by rebalance, with one incarnation per entity throughout") {
  sharding_world x;
  x.start_cluster(3);
  std::vector<shard_region> rs;
  for (size_t i = 0; i < 3; ++i)
    rs.push_back(x.start_region(i));
  x.send_all(rs[0], 300, "a");
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 300; }, 20s));
  size_t before = 0;
  for (auto& r : rs)
    before += x.status(r).shards.size();
  REQUIRE(before == 30); // 300 entities cover all 30 shards
  x.start_node(3);
  REQUIRE(x.advance_until([&] { return all_up(x.state(0), 4); }, 10s));
  rs.push_back(x.start_region(3));
  // Rebalance every 2s; traffic goes on meanwhile.
  for (int round = 0; round < 10; ++round) {
    x.send_all(rs[round % 4], 300, "b" + std::to_string(round));
    x.w.advance(1s);
  }
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 3300; }, 30s));
  auto fourth = x.status(rs[3]).shards.size();
  CHECK(fourth >= 7);
  CHECK(fourth <= 8);
  size_t after = 0;
  for (auto& r : rs)
    after += x.status(r).shards.size();
  CHECK(after == 30);
  CHECK(x.log->max_live == 1);
}

TEST_CASE("sharding (sim): a region's graceful stop hands its shards off "
          "before they run elsewhere, and no message is lost") {
  sharding_world x;
  x.start_cluster(3);
  std::vector<shard_region> rs;
  for (size_t i = 0; i < 3; ++i)
    rs.push_back(x.start_region(i));
  x.send_all(rs[0], 90, "a");
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 90; }, 20s));
  auto on_c = x.status(rs[2]).shards.size();
  REQUIRE(on_c > 0);
  rs[2].stop();
  x.send_all(rs[0], 90, "b"); // while the hand-off runs: buffered, not lost
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 180; }, 30s));
  CHECK(x.log->max_live == 1);
  // Every entity that lived on C stopped there before it started elsewhere.
  for (auto& [id, hosts] : x.log->live)
    CHECK(hosts.count(nodes[2].host) == 0);
  size_t total = 0;
  for (size_t i = 0; i < 2; ++i)
    total += x.status(rs[i]).shards.size();
  CHECK(total == 30);
}

TEST_CASE("sharding (sim): a downed member's shards move only after the "
          "removal margin, after its entities stopped") {
  sharding_world x;
  x.start_cluster(3);
  std::vector<shard_region> rs;
  for (size_t i = 0; i < 3; ++i)
    rs.push_back(x.start_region(i));
  x.send_all(rs[0], 90, "a");
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 90; }, 20s));
  std::set<std::string> on_c;
  for (auto& [id, hosts] : x.log->live)
    if (hosts.count(nodes[2].host) > 0)
      on_c.insert(id);
  REQUIRE(!on_c.empty());
  auto downed_at = x.w.det().now();
  x.cluster(0).down(nodes[2]);
  x.send_all(rs[0], 90, "b");
  // Not one entity of C's shards runs elsewhere within the margin (3s),
  // while the other entities answer.
  auto restarted_early = [&] {
    for (auto& id : on_c)
      if (!x.log->live[id].empty() && x.log->live[id].count(nodes[2].host) == 0)
        return true;
    return false;
  };
  while (x.w.det().now() - downed_at < 2900ms) {
    x.w.advance(100ms);
    REQUIRE_FALSE(restarted_early());
  }
  CHECK(x.log->count("recv ") >= 90 + 90 - on_c.size());
  // C learnt it is down and stopped its entities.
  for (auto& id : on_c)
    CHECK(x.log->live[id].count(nodes[2].host) == 0);
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 180; }, 20s));
  CHECK(x.log->max_live == 1);
}

TEST_CASE("sharding (sim): an entity cut off from every member is no longer "
          "confirmed before its shard can start elsewhere") {
  // The chaos test's SIGSTOP (issue 10): a frozen node resumes and may
  // serve a request before it learns it was downed. Cut off from every
  // member, its entities' member_confirmed() turns false within half the
  // removal margin (1.5s) of the last answered heartbeat, long before the
  // others may start its shards (down + margin).
  sharding_world x;
  x.start_cluster(3);
  std::map<std::string, std::function<bool()>> confirmed_on_c;
  auto factory = x.factory();
  auto c_host = nodes[2].host;
  sharding::entity_factory watching
    = [&confirmed_on_c, factory, c_host](caf::event_based_actor* self,
                                         const entity_context& ctx) {
        if (ctx.node.host == c_host)
          confirmed_on_c[ctx.entity] = ctx.confirmed;
        return factory(self, ctx);
      };
  std::vector<shard_region> rs;
  for (size_t i = 0; i < 3; ++i) {
    auto r = shard_region::start(x.w.sys(), x.cluster(i), x.remoting(i),
                                 "account", watching,
                                 region_options{test_settings()}, false, true);
    REQUIRE(r);
    rs.push_back(*r);
  }
  x.track(rs);
  x.send_all(rs[0], 90, "a");
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 90; }, 20s));
  REQUIRE(!confirmed_on_c.empty());
  auto c_confirmed = confirmed_on_c.begin()->second;
  REQUIRE(c_confirmed);
  CHECK(c_confirmed());
  // Cut C off from A and B, both directions.
  auto* c = x.w.net().find(ep(nodes[2]));
  REQUIRE(c != nullptr);
  cluster::link_fault cut;
  cut.blackhole = true;
  for (size_t i = 0; i < 2; ++i)
    for (auto dir : {cluster::direction::outbound, cluster::direction::inbound})
      c->set_fault(ep(nodes[i]), dir, cut);
  auto cut_at = x.w.det().now();
  x.w.advance(1s);
  CHECK(c_confirmed()); // within the window: a heartbeat may just be late
  REQUIRE(x.advance_until([&] { return !c_confirmed(); }, 3s, 50ms));
  // At most half the margin after the last answered heartbeat (sent at
  // most one heartbeat interval plus a round trip before the cut).
  CHECK(x.w.det().now() - cut_at <= 1500ms + 200ms);
  // The others down C (as their resolver would after stable_after) and
  // start its shards after the margin; C is still not confirmed then, and
  // stays so (A and B no longer answer a downed node).
  x.cluster(0).down(nodes[2]);
  x.send_all(rs[0], 90, "b");
  REQUIRE(
    x.advance_until([&] { return x.log->count("recv ") >= 90 + 60; }, 20s));
  CHECK_FALSE(c_confirmed());
}

TEST_CASE("sharding (sim): an idle entity is passivated and a later message "
          "starts a new incarnation") {
  sharding_world x;
  x.start_cluster(1);
  region_options opts;
  opts.settings = test_settings();
  opts.settings->passivation_idle_timeout = 5s;
  auto r = x.start_region(0, std::move(opts));
  REQUIRE_FALSE(r.tell("e1", std::string{"a"}));
  REQUIRE(x.advance_until([&] { return x.log->count("recv e1") == 1; }, 10s));
  x.w.advance(3s);
  CHECK(x.log->count("exit e1") == 0);
  REQUIRE(x.advance_until([&] { return x.log->count("exit e1") == 1; }, 5s));
  CHECK(x.status(r).passivated == 1);
  REQUIRE_FALSE(r.tell("e1", std::string{"b"}));
  REQUIRE(x.advance_until([&] { return x.log->count("recv e1") == 2; }, 5s));
  CHECK(x.log->count("start e1") == 2);
}

TEST_CASE("sharding (sim): with the coordinator lease held by a stale holder "
          "nothing is allocated until it is free") {
  sharding_world x;
  auto stale = x.make_lease({"10.9.9.9", 2552, 99});
  probe p{x.w.sys()};
  p.send(stale.actor(), lease::acquire_atom::value, runtime::timespan{5s});
  x.w.det().run();
  auto got = p.poll<lease::acquire_result>();
  REQUIRE(got);
  REQUIRE(*got);
  REQUIRE((*got)->acquired);
  x.start_cluster(2);
  std::vector<shard_region> rs;
  for (size_t i = 0; i < 2; ++i) {
    region_options opts;
    opts.coordinator_lease = x.make_lease(nodes[i]);
    rs.push_back(x.start_region(i, std::move(opts)));
  }
  x.send_all(rs[1], 20, "a");
  x.w.advance(20s);
  CHECK(x.log->count("start ") == 0);
  CHECK(x.status(rs[1]).buffered == 20);
  // The stale holder lets go: the coordinator starts and allocates.
  p.send(stale.actor(), lease::release_atom::value);
  x.w.det().run();
  REQUIRE(x.advance_until([&] { return x.log->count("recv ") == 20; }, 20s));
  CHECK(x.store->record("test-shard-coordinator-account")->holder
        == to_string(nodes[0]));
}
