// The application of docs/guides/writing-a-cluster-app.md: a page-view
// counter. Every member runs this same program. It joins the cluster, hosts
// a share of the sharded `page` entities (one view counter per page), and
// the oldest member runs the `view-generator` singleton, which records one
// view per second while it holds its lease and stamps each with its fencing
// token. A counter accepts views only under a token at least as high as
// any it accepted before, so a generator that lost its lease and has not
// noticed yet cannot count twice.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include <caf/atom.hpp>
#include <caf/event_based_actor.hpp>

#include "troupe/cluster_system.hpp"

using namespace troupe;
using namespace std::chrono_literals;

namespace {

// A sharded entity: the view counter of one page. One incarnation per page
// lives in the cluster at a time, wherever the page's shard is. It keeps
// its state in memory only: a real application loads it from its store
// when the entity starts and writes it there before acknowledging.
caf::behavior page_counter(caf::event_based_actor*,
                           const sharding::entity_context& ctx) {
  auto views = std::make_shared<int64_t>(0);
  auto highest_token = std::make_shared<uint64_t>(0);
  return {
    [ctx, views, highest_token](uint64_t token, int64_t n) {
      if (token < *highest_token) {
        std::printf("%s: refused a view under stale token %llu < %llu\n",
                    ctx.entity.c_str(), static_cast<unsigned long long>(token),
                    static_cast<unsigned long long>(*highest_token));
        std::fflush(stdout);
        return;
      }
      *highest_token = token;
      *views += n;
      std::printf("%s: %lld views (token %llu, shard %s on %s)\n",
                  ctx.entity.c_str(), static_cast<long long>(*views),
                  static_cast<unsigned long long>(token), ctx.shard.c_str(),
                  to_string(ctx.node).c_str());
      std::fflush(stdout);
    },
  };
}

using generate_atom = caf::atom_constant<caf::atom("generate")>;

// The cluster singleton: one view per second for one of five pages, sent to
// the page's entity wherever it lives, while the lease holds.
singleton::instance_factory view_generator(sharding::shard_region pages) {
  return [pages](caf::event_based_actor* self,
                 const singleton::instance_context& ctx) -> caf::behavior {
    std::printf("view generator %llu started under fencing token %llu\n",
                static_cast<unsigned long long>(ctx.incarnation),
                static_cast<unsigned long long>(ctx.fencing_token));
    std::fflush(stdout);
    auto count = std::make_shared<uint64_t>(0);
    self->send(self, generate_atom::value);
    return {
      [self, ctx, pages, count](generate_atom) {
        // Re-check the lease before every side effect, and pass the token
        // on: the counter refuses a stale one.
        if (ctx.lease_alive()) {
          auto page = "page-" + std::to_string((*count)++ % 5);
          if (auto err = pages.tell(page, ctx.fencing_token, int64_t{1}))
            std::fprintf(stderr, "%s\n", err.message.c_str());
        }
        self->delayed_send(self, 1s, generate_atom::value);
      },
    };
  };
}

} // namespace

int main(int argc, char** argv) {
  // Join: the node, remoting, the cluster daemon (cluster.seed_nodes) and
  // the split brain resolver, all from flags, TROUPE_* variables or a file.
  auto sys = cluster_system::start(argc, argv);
  if (!sys)
    return fail(sys.error());
  auto& app = **sys;
  // Leases on the backend lease.backend selects (file on one host,
  // kubernetes in a pod), owned by this pod (POD_NAME) or node, released
  // when the node shuts down.
  auto make_lease = [&app](std::string name) {
    return app.lease({.name = std::move(name),
                      .owner = app.owner_name(),
                      .ttl = 15s,
                      .renewal_interval = 5s});
  };

  // Sharded entities: this node hosts a share of the pages. The shard
  // coordinator allocates shards only while it holds its lease.
  auto coordinator_lease = make_lease("cluster-app-page-coordinator");
  if (!coordinator_lease)
    return fail(coordinator_lease.error());
  auto pages = app.start_sharding("page", page_counter,
                                  {.coordinator_lease = *coordinator_lease});
  if (!pages)
    return fail(pages.error());

  // The singleton, under a lease of its own: every instance gets a new,
  // greater fencing token.
  auto generator_lease = make_lease("cluster-app-view-generator");
  if (!generator_lease)
    return fail(generator_lease.error());
  auto generator = app.start_singleton("view-generator", view_generator(*pages),
                                       {.lease = *generator_lease});
  if (!generator)
    return fail(generator.error());

  // Until SIGTERM: the singleton hands over, the shards are handed off, the
  // node leaves the cluster and releases its leases.
  return app.run();
}
