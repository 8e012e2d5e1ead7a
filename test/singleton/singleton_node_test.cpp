#include <catch2/catch.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cluster_daemon_support.hpp"
#include "configured_node.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/singleton/caf_glue.hpp"
#include "troupe/singleton/singleton.hpp"
#include "troupe/test/child_process.hpp"
#include "troupe/test/eventually.hpp"

// singleton_manager::start from a node's configuration, on the real TCP
// transport on loopback and the file lease (real time, short settings): the
// lease comes from the lease.* keys, and the node's shutdown stops the
// instance and releases the lease before the lease actor and the cluster go
// (scenario S6's shutdown path: a downed node stops this way too).

using namespace troupe;
using namespace troupe::test;

namespace {

/// What the instances did, written from their threads.
struct journal {
  std::vector<std::string> lines;
  mutable std::mutex mtx;

  void add(std::string line) {
    std::lock_guard guard{mtx};
    lines.push_back(std::move(line));
  }

  size_t size() const {
    std::lock_guard guard{mtx};
    return lines.size();
  }

  std::vector<std::string> copy() const {
    std::lock_guard guard{mtx};
    return lines;
  }
};

std::unique_ptr<runtime::node> leased_node(const temp_dir& dir) {
  return configured_node({"--lease.backend=file", "--singleton.use_lease=true",
                          "--lease.file.directory=" + dir.path.string()},
                         {lease::lease_module(), cluster::cluster_module(),
                          singleton::singleton_module()});
}

} // namespace

TEST_CASE("singleton node (tcp): a manager started from configuration runs "
          "the instance under the configured lease, and the node's shutdown "
          "stops it and releases the lease at once") {
  temp_dir dir;
  auto log = std::make_shared<journal>();
  uint64_t token = 0;
  {
    auto node = leased_node(dir);
    auto remoting = cluster::remoting_handle::start(*node);
    REQUIRE(remoting);
    auto stops = std::make_shared<shutdown_log>();
    auto c = cluster::cluster_handle::start(*node, *remoting, stops->hook());
    REQUIRE(c);
    c->join({cluster::endpoint_of(c->self_address())});
    auto m = singleton::singleton_manager::start(
      *node, *c, *remoting, "jobs",
      [log](caf::event_based_actor* self,
            const singleton::instance_context& ctx) -> caf::behavior {
        log->add("start " + std::to_string(ctx.fencing_token)
                 + " alive=" + (ctx.lease_alive() ? "yes" : "no"));
        // Still held when the instance ends: the release comes after.
        self->attach_functor([log, ctx] {
          log->add(std::string{"exit alive="}
                   + (ctx.lease_alive() ? "yes" : "no"));
        });
        return {[](const cluster::remote_ref&, int32_t) {}};
      });
    REQUIRE(m);
    REQUIRE(eventually([&] { return log->size() == 1; }, 20s));
    auto first = log->copy().front();
    CHECK(first.rfind("start ", 0) == 0);
    CHECK(first.find("alive=yes") != std::string::npos);
    token = std::stoull(first.substr(6));
    CHECK(token > 0);
    node->shutdown();
    CHECK(log->copy() == std::vector<std::string>{first, "exit alive=yes"});
  }
  // Another owner gets the lease at once: it was released, not left to
  // expire (ttl 15s), and the token goes on increasing.
  auto other = leased_node(dir);
  auto lease = lease::lease_handle::spawn_from_config(
    *other, "it-singleton-jobs", "someone-else");
  REQUIRE(lease);
  auto got = lease->acquire(std::chrono::seconds{5});
  REQUIRE(got);
  CHECK(*got);
  CHECK(lease->token() > token);
  other->shutdown();
}
