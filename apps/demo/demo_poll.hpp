#pragma once

#include <set>
#include <string>

#include "cluster_view.hpp"
#include "demo_cluster.hpp"
#include "demo_http.hpp"

/// @file
/// One poll of the demo cluster's management endpoints.

namespace troupe::demo {

/// Asks the running nodes (management HTTP, 1s deadline each, all at once):
/// `/cluster/members` and `/cluster/shards/account` of the first running
/// node that answers, `/singletons` and `/leases` of every running node.
/// Nodes named in `cut_off` (a partitioned minority, whose view is its
/// own) are not asked. Fields nobody answered stay unset. Blocks up to
/// about one second.
cluster_snapshot poll_cluster(demo_cluster& cluster, http_getter& http,
                              const std::set<std::string>& cut_off = {});

} // namespace troupe::demo
