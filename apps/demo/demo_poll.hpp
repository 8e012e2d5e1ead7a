#pragma once

#include "cluster_view.hpp"
#include "demo_cluster.hpp"
#include "demo_http.hpp"

/// @file
/// One poll of the demo cluster's management endpoints.

namespace troupe::demo {

/// Asks the running nodes (management HTTP, 1s deadline each, all at once):
/// `/cluster/members` and `/cluster/shards/account` of the first running
/// node that answers, `/singletons` and `/leases` of every running node.
/// Fields nobody answered stay unset. Blocks up to about one second.
cluster_snapshot poll_cluster(demo_cluster& cluster, http_getter& http);

} // namespace troupe::demo
