#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "troupe/cluster/caf_glue.hpp"
#include "troupe/downing/caf_glue.hpp"
#include "troupe/downing/downing_actor.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/test/child_process.hpp"

// downing_handle::start from a node's configuration: off starts nothing,
// the default (keep_majority) starts the resolver, lease_majority gets its
// lease from the lease.* keys, a bad setting is refused naming the key.

using namespace troupe;

namespace {

std::unique_ptr<runtime::node> start_node(std::vector<std::string> args) {
  runtime::node_options opts;
  opts.modules = {lease::lease_module(), cluster::cluster_module(),
                  downing::downing_module()};
  opts.sources = runtime::make_config_sources(args, {});
  auto n = runtime::node::start(std::move(opts));
  REQUIRE(n);
  return std::move(*n);
}

} // namespace

TEST_CASE("downing node: active_strategy off starts no resolver, the "
          "default keep_majority does") {
  auto off = start_node({"--downing.active_strategy=off"});
  auto d = downing::downing_handle::start(*off, cluster::cluster_handle{});
  REQUIRE(d);
  CHECK(!d->active());
  auto on = start_node({});
  auto e = downing::downing_handle::start(*on, cluster::cluster_handle{});
  REQUIRE(e);
  CHECK(e->active());
  on->shutdown();
}

TEST_CASE("downing node: lease_majority takes its lease from the lease.* "
          "keys, and a bad setting is refused naming the key") {
  test::temp_dir dir;
  auto n = start_node({"--downing.active_strategy=lease_majority",
                       "--lease.backend=file",
                       "--lease.file.directory=" + dir.path.string()});
  auto d = downing::downing_handle::start(*n, cluster::cluster_handle{});
  REQUIRE(d);
  CHECK(d->active());
  n->shutdown();
  auto bad = start_node({"--downing.active_strategy=static_quorum"});
  auto e = downing::downing_handle::start(*bad, cluster::cluster_handle{});
  REQUIRE(!e);
  CHECK(e.error().message.find("downing.static_quorum.quorum_size")
        != std::string::npos);
  CHECK(downing::resolver_lease_name("", "shop") == "shop-troupe-sbr");
  CHECK(downing::resolver_lease_name("mine", "shop") == "mine");
}
