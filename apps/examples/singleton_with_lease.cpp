#include <cstdlib>

#include "job_scheduler.hpp"
#include "troupe/cluster_system.hpp"

using namespace troupe;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  auto sys = cluster_system::start(argc, argv); // node, cluster, downing
  if (!sys)
    return fail(sys.error());
  const char* pod = std::getenv("POD_NAME"); // from the downward API
  auto lease = (*sys)->kubernetes_lease({.name = "my-app-singleton-lease",
                                         .owner = pod ? pod : "local",
                                         .ttl = 30s,
                                         .renewal_interval = 10s});
  if (!lease)
    return fail(lease.error());
  auto scheduler = (*sys)->start_singleton("job-scheduler", job_scheduler,
                                           {.lease = *lease});
  if (!scheduler)
    return fail(scheduler.error());
  return (*sys)->run(); // until SIGTERM: hand over, release, stop
}
