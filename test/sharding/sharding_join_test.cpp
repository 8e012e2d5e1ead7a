#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster_daemon_support.hpp"
#include "configured_node.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/sharding/sharding_settings.hpp"
#include "troupe/test/eventually.hpp"

// The join check of sharding.number_of_shards (issue 8): nodes started from
// configuration, as an application's main() does, on the real TCP transport
// on loopback (real time, short settings): cluster_handle::start(node, ...)
// sends every key a module marked with check_on_join.

using namespace troupe;
using namespace troupe::test;
using namespace std::chrono_literals;

namespace {

// The sharding module's keys (its shell, with the CAF registrations, comes
// with the region actor).
runtime::module sharding_keys() {
  return runtime::module{"sharding", sharding::declare_sharding_config, {}};
}

/// One node started from configuration with the cluster daemon.
struct member_node {
  std::unique_ptr<runtime::node> node;
  cluster::cluster_handle handle;
  std::shared_ptr<shutdown_log> stops = std::make_shared<shutdown_log>();

  member_node(std::vector<std::string> args, bool with_sharding) {
    std::vector<runtime::module> modules{cluster::cluster_module()};
    if (with_sharding)
      modules.push_back(sharding_keys());
    node = configured_node(std::move(args), std::move(modules));
    auto remoting = cluster::remoting_handle::start(*node);
    REQUIRE(remoting);
    auto h = cluster::cluster_handle::start(*node, *remoting, stops->hook());
    REQUIRE(h);
    handle = *h;
  }

  ~member_node() {
    node->shutdown();
  }

  std::string seed() const {
    return to_string(cluster::endpoint_of(handle.self_address()));
  }

  bool sees_all_up(size_t n) const {
    auto s = handle.state();
    return s && all_up(*s, n);
  }
};

} // namespace

TEST_CASE("sharding join check (tcp): a node with another "
          "sharding.number_of_shards is refused with the key and both "
          "values, and equal values and a node without sharding join") {
  member_node first{{"--sharding.number_of_shards=100"}, true};
  first.handle.join({cluster::endpoint_of(first.handle.self_address())});
  REQUIRE(eventually([&] { return first.sees_all_up(1); }, 20s));
  auto seed = "--cluster.seed_nodes=" + first.seed();
  {
    member_node odd{{seed, "--sharding.number_of_shards=200"}, true};
    REQUIRE(eventually([&] { return odd.stops->count() == 1; }, 20s));
    CHECK_THAT(odd.stops->first(),
               Catch::Contains("sharding.number_of_shards is \"100\" on the "
                               "seed node but \"200\" on this node"));
    CHECK(first.sees_all_up(1));
  }
  member_node same{{seed, "--sharding.number_of_shards=100"}, true};
  member_node plain{{seed}, false};
  CHECK(eventually(
    [&] {
      return first.sees_all_up(3) && same.sees_all_up(3)
             && plain.sees_all_up(3);
    },
    20s));
  CHECK(first.stops->count() == 0);
  CHECK(same.stops->count() == 0);
  CHECK(plain.stops->count() == 0);
}
