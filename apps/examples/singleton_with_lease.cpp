#include "job_scheduler.hpp"
#include "troupe/cluster_system.hpp"

using namespace troupe;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  auto sys = cluster_system::start(argc, argv); // node, cluster, downing
  if (!sys)
    return fail(sys.error());
  // The backend is lease.backend: kubernetes in the pod, file on one host.
  auto lease = (*sys)->lease({.name = "my-app-singleton-lease",
                              .owner = (*sys)->owner_name(), // POD_NAME
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
