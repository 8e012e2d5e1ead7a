// hello-cluster: an application built against the installed troupe
// package as a project of its own (examples/CMakeLists.txt:
// find_package(troupe)). One node forms a cluster of one member on
// loopback, starts a cluster singleton (a greeter) and a sharded entity
// type (counters), asks each of them once, prints the answers, leaves the
// cluster and exits 0; 1 if an answer does not come within 30 s, 2 on a
// configuration error. Flags (`--key=value`) override the defaults below
// (docs/reference/configuration.md).

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <caf/after.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include "troupe/cluster_system.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/stop_signal.hpp"
#include "troupe/version.hpp"

using namespace troupe;
using namespace std::chrono_literals;

namespace {

// The singleton: one greeter in the cluster, on the oldest member. What a
// proxy forwards arrives as (sender's reply reference, payload).
caf::behavior greeter(caf::event_based_actor*,
                      const singleton::instance_context& ctx) {
  return {
    [ctx](const cluster::remote_ref& from, const std::string& name) {
      if (from.is_addressable())
        ctx.remoting.tell(from, "hello, " + name + ", from the singleton on "
                                  + runtime::to_string(ctx.node));
    },
  };
}

// The sharded entity: a counter per id, wherever its shard lives. An entity
// gets no CAF sender: the reply reference travels in the message.
caf::behavior counter(caf::event_based_actor*,
                      const sharding::entity_context& ctx) {
  auto total = std::make_shared<int64_t>(0);
  return {
    [ctx, total](const cluster::remote_ref& reply_to, int64_t n) {
      *total += n;
      ctx.remoting.tell(reply_to, "counter " + ctx.entity + " is at "
                                    + std::to_string(*total) + " (shard "
                                    + ctx.shard + ")");
    },
  };
}

// A cluster of one on loopback: an ephemeral port, the management API on a
// free port, and a random secret (no other process can join).
std::vector<std::string> one_member_defaults() {
  std::random_device random;
  std::string secret;
  for (int i = 0; i < 32; ++i)
    secret += "0123456789abcdef"[random() % 16];
  return {"--cluster.host=127.0.0.1", "--cluster.port=0",
          "--cluster.secret=" + secret, "--management.port=0"};
}

// Asks the greeter and the counter once each; prints each answer. False if
// both did not answer within `timeout` each.
bool ask(cluster_system& app, const singleton::singleton_proxy& greeters,
         const sharding::shard_region& counters, runtime::timespan timeout) {
  caf::scoped_actor self{app.actors()};
  // The greeter answers the proxy's sender (`self`); the counter answers
  // the reference in the message.
  self->send(greeters.actor(), std::string{"troupe"});
  if (auto err = counters.tell("counter-1", app.remoting().reply_ref(self),
                               int64_t{42})) {
    std::fprintf(stderr, "hello-cluster: %s\n", err.message.c_str());
    return false;
  }
  for (int answers = 0; answers < 2; ++answers) {
    auto answered = false;
    self->receive(
      [&](const cluster::remote_ref&, const std::string& answer) {
        std::printf("%s\n", answer.c_str());
        answered = true;
      },
      caf::after(timeout) >> [] {});
    if (!answered) {
      std::fprintf(
        stderr, "hello-cluster: no answer within %lld s\n",
        static_cast<long long>(
          std::chrono::duration_cast<std::chrono::seconds>(timeout).count()));
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char** argv) {
  runtime::install_stop_signal_handlers();
  auto args = one_member_defaults();
  args.insert(args.end(), argv + 1, argv + argc); // flags override
  runtime::node_options opts;
  opts.sources = runtime::sources_from_process(args, nullptr);
  auto sys = cluster_system::start(std::move(opts));
  if (!sys)
    return fail(sys.error(), "hello-cluster");
  auto& app = **sys;
  auto self = app.cluster().self_address();
  std::printf("troupe %s: node %s\n", library_version().text,
              runtime::to_string(self).c_str());
  // The only seed is this node itself: it founds the cluster at once.
  app.cluster().join({cluster::endpoint{self.host, self.port}});

  auto greeter_manager = app.start_singleton("greeter", greeter);
  if (!greeter_manager)
    return fail(greeter_manager.error(), "hello-cluster");
  auto greeters = app.singleton_proxy("greeter");
  if (!greeters)
    return fail(greeters.error(), "hello-cluster");
  auto counters = app.start_sharding("counter", counter);
  if (!counters)
    return fail(counters.error(), "hello-cluster");

  // Both are asked at once: the proxy and the region hold the messages
  // until the member is up and the singleton and the shard run.
  auto answered = ask(app, *greeters, *counters, 30s);
  std::fflush(stdout);
  // The coordinated shutdown, as after SIGTERM: the shards are handed off
  // and the singleton handed over (here to nobody), the node leaves, the
  // leases are released, the node stops.
  runtime::request_stop();
  auto rc = app.run();
  return answered ? rc : 1;
}
