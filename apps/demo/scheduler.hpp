#pragma once

#include <string>

#include <caf/behavior.hpp>
#include <caf/fwd.hpp>

#include "history_log.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/http_client.hpp"
#include "troupe/singleton/singleton.hpp"

/// @file
/// The demo's lease-guarded job scheduler: the instance of the cluster
/// singleton `scheduler` (DESIGN.md §8, /work/demo-contract.md).

namespace troupe::demo {

/// What every scheduler instance of one node shares.
struct scheduler_config {
  /// The node's HTTP client (one io thread for the whole node).
  runtime::http_client_actor http;
  /// The store's base URL, `http://host:port` (node_settings::store_url).
  std::string store_url;
  /// Time between the end of one ledger write and the next.
  runtime::timespan tick_interval = std::chrono::milliseconds{500};
  /// The deadline of one POST to the store.
  runtime::timespan store_timeout = std::chrono::seconds{2};
  /// The ledger's `owner` field: the lease's holder identity.
  std::string owner;
  /// The node's history (history_log.hpp); null: none.
  history_ptr history;
};

/// The scheduler instance's behavior: every `tick_interval` it POSTs
/// `{"token":T,"seq":S,"owner":O}` to `<store_url>/ledger`, T the fencing
/// token of the lease acquisition that guards this instance
/// (`ctx.fencing_token`), S = 1, 2, ... per instance. Each write waits for
/// the previous one's answer (at most one in flight) and is made only
/// after `ctx.lease_alive()` said the lease still holds (DESIGN.md §10: a
/// side effect is re-checked, so a paused process that resumes with an
/// expired lease writes nothing). Logs (component "demo.scheduler") one
/// INFO line per accepted record and a WARNING per rejection (the store's
/// reason, e.g. `stale token 3 < 4`) or failed request; nothing stops the
/// instance but its manager (hand-over, lease loss, shutdown).
///
/// Runs on the instance's own actor (the singleton manager spawns it);
/// needs no message types beyond the runtime's HTTP ones.
caf::behavior scheduler(caf::event_based_actor* self,
                        const singleton::instance_context& ctx,
                        const scheduler_config& cfg);

} // namespace troupe::demo
