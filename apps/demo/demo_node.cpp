// troupe-demo-node: one node of the demo cluster (README: scripts/demo;
// /work/demo-contract.md).
//
// A troupe::cluster_system node (membership, the split brain resolver,
// management HTTP) that runs
// - the singleton `scheduler` (scheduler.hpp): under its lease when
//   `singleton.use_lease=true` (the demo's setting), it writes a fenced
//   record to the store's ledger every `demo.tick_interval`;
// - the sharded entity type `account` (account_entity.hpp): each deposit
//   persisted in the store before it is acknowledged;
// - the app API on `demo.api_bind`:`demo.api_port` (deposit_api.hpp).
// Prints `api listening on HOST:PORT` on stdout once everything runs.
// Every flag is a configuration key (`--cluster.port=2552`,
// `--demo.store_url=http://127.0.0.1:7070`, docs/reference/configuration.md
// plus the demo.* keys of node_settings.hpp). SIGTERM/SIGINT: leave the
// cluster (the singleton and the shards hand over), stop, exit 0. Exit 2:
// a bad flag or setup error, named on stderr.

#include <cstdio>

#include "account_entity.hpp"
#include "deposit_api.hpp"
#include "history_log.hpp"
#include "node_settings.hpp"
#include "scheduler.hpp"
#include "troupe/cluster_system.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/http_client.hpp"
#include "troupe/singleton/singleton_settings.hpp"

using namespace troupe;

int main(int argc, char** argv) {
  constexpr const char* program = "troupe-demo-node";
  auto sys = cluster_system::start(argc, argv, {demo::demo_module()});
  if (!sys)
    return fail(sys.error(), program);
  auto settings = demo::node_settings_from_config((*sys)->node().cfg());
  if (!settings)
    return fail(settings.error(), program);
  auto& node = (*sys)->node();
  auto address = runtime::to_string((*sys)->cluster().self_address());
  auto history = demo::history_log::open(
    settings->history_file,
    settings->node_name.empty() ? address : settings->node_name, address);
  if (!history)
    return fail(history.error(), program);
  (*history)->record("node_started");
  auto http = runtime::spawn_http_client((*sys)->actors());
  demo::scheduler_config sched{http,
                               settings->store_url,
                               settings->tick_interval,
                               settings->store_timeout,
                               (*sys)->owner_name(),
                               *history};
  // The node owns the scheduler's lease (instead of the manager making it
  // from the same keys) to record its losses in the history.
  singleton::manager_options sched_options;
  if (node.cfg().get<bool>("singleton.use_lease")) {
    auto name = singleton::singleton_lease_name(
      node.cfg().get<std::string>("singleton.lease_name"),
      node.cfg().get<std::string>("cluster.name"), "scheduler");
    auto lease = lease::lease_handle::spawn_from_config(node, name,
                                                        (*sys)->owner_name());
    if (!lease)
      return fail(lease.error(), program);
    // Kept registered for the lease's lifetime (the subscription is
    // discarded on purpose).
    (void)lease->on_lost([h = *history](const lease::lease_lost& x) {
      h->record("lease_lost",
                {{"lease", x.name}, {"token", x.token}, {"reason", x.reason}});
    });
    sched_options.lease = std::move(*lease);
  }
  auto scheduler = (*sys)->start_singleton(
    "scheduler",
    [sched](caf::event_based_actor* self,
            const singleton::instance_context& ctx) {
      return demo::scheduler(self, ctx, sched);
    },
    std::move(sched_options));
  if (!scheduler)
    return fail(scheduler.error(), program);
  demo::account_config acc{http, settings->store_url, settings->store_timeout,
                           *history};
  auto accounts = (*sys)->start_sharding(
    "account",
    [acc](caf::event_based_actor* self, const sharding::entity_context& ctx) {
      return demo::account_entity(self, ctx, acc);
    });
  if (!accounts)
    return fail(accounts.error(), program);
  auto api = demo::deposit_api::start((*sys)->actors(), (*sys)->remoting(),
                                      *accounts, *settings);
  if (!api)
    return fail(api.error(), program);
  std::printf("api listening on %s:%u\n", settings->api_bind.c_str(),
              static_cast<unsigned>((*api)->port()));
  std::fflush(stdout);
  // The API stops taking deposits when the node stops taking work (the
  // client sends them to another node), while the actor system its
  // handlers and its reply actor use still runs; deposits it accepted are
  // answered first. Stopping it after run() sent to an actor of a stopped
  // system: a partitioned node that downed itself crashed on exit
  // (SIGSEGV).
  node.add_shutdown_task(
    runtime::shutdown_phase::service_unbind, "demo deposit API",
    [a = api->get()](const runtime::shutdown_context&) { a->stop(); });
  // Until SIGTERM, a leave or a down: the coordinated shutdown hands off
  // the shards, leaves, hands the singleton over and releases the leases.
  return (*sys)->run();
}
