#include "demo_timing.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "troupe/cluster/phi_accrual_detector.hpp"
#include "troupe/runtime/config.hpp"

namespace troupe::demo {

namespace {

std::string flag(const char* key, runtime::timespan d) {
  return fmt::format("--{}={}", key, runtime::render_duration(d));
}

} // namespace

std::vector<std::string> demo_timing::node_flags() const {
  return {
    flag("cluster.failure_detector.heartbeat_interval", heartbeat_interval),
    flag("cluster.failure_detector.acceptable_heartbeat_pause",
         acceptable_heartbeat_pause),
    flag("cluster.failure_detector.min_std_deviation", min_std_deviation),
    fmt::format("--cluster.failure_detector.threshold={}", threshold),
    "--cluster.failure_detector.expected_response_after=500ms",
    flag("cluster.gossip_interval", gossip_interval),
    flag("cluster.leader_actions_interval", leader_actions_interval),
    flag("cluster.unreachable_nodes_reaper_interval", heartbeat_interval),
    "--cluster.seed_node_timeout=1s",
    "--cluster.retry_unsuccessful_join_after=1s",
    "--cluster.transport.reconnect_backoff_min=20ms",
    "--cluster.transport.reconnect_backoff_max=200ms",
    "--cluster.transport.handshake_timeout=2s",
    "--downing.active_strategy=keep_majority",
    flag("downing.stable_after", stable_after),
    flag("downing.down_all_when_unstable", down_all_when_unstable),
    flag("lease.ttl", lease_ttl),
    "--singleton.use_lease=true",
    flag("singleton.lease_retry_interval", lease_retry_interval),
    "--sharding.use_lease=true",
    fmt::format("--sharding.number_of_shards={}", number_of_shards),
    "--sharding.retry_interval=500ms",
    flag("demo.tick_interval", tick_interval),
    // Below the client's 2s request timeout: a node answers 504 and the
    // client retries elsewhere on the same connection.
    "--demo.deposit_timeout=1500ms",
    // Peers answer over loopback in milliseconds; a member that was just
    // killed (not yet unreachable) holds /singletons and /leases this long,
    // below the launcher's 1s poll deadline.
    "--management.query_timeout=500ms",
  };
}

failover_floor floor_of(const demo_timing& t) {
  cluster::phi_accrual_settings phi;
  phi.threshold = t.threshold;
  phi.min_std_deviation = t.min_std_deviation;
  phi.acceptable_heartbeat_pause = t.acceptable_heartbeat_pause;
  // A steady history: every interval equals the heartbeat interval, so
  // the deviation is min_std_deviation's bound.
  auto suspect
    = cluster::detection_time(phi, cluster::fractional_ms{t.heartbeat_interval},
                              cluster::fractional_ms{0});
  failover_floor f;
  f.detection = suspect - t.heartbeat_interval;
  f.downed = f.detection + t.stable_after;
  f.lease_expiry = t.lease_ttl - t.renewal_interval();
  if (t.lease_expiry_observed)
    f.lease_expiry = f.downed + t.lease_ttl;
  f.singleton = std::max(f.downed, f.lease_expiry);
  // The shard coordinator is a singleton under its own lease: it must have
  // moved too.
  f.shards = std::max(f.downed + t.removal_margin(), f.singleton);
  return f;
}

std::string seconds_text(runtime::timespan d) {
  return fmt::format("{:.2f}s", std::chrono::duration<double>(d).count());
}

std::string explain_singleton_floor(const demo_timing& t,
                                    const failover_floor& f) {
  auto lease
    = t.lease_expiry_observed
        ? fmt::format(" + ttl {}: the new holder must see the dead holder's "
                      "Lease unchanged for a full ttl (client-go's rule)",
                      runtime::render_duration(t.lease_ttl))
      : f.lease_expiry > f.downed
        ? fmt::format("; the lease (ttl {}, renewed every {}) "
                      "expires at {} at the earliest and decides",
                      runtime::render_duration(t.lease_ttl),
                      runtime::render_duration(t.renewal_interval()),
                      seconds_text(f.lease_expiry))
        : fmt::format("; the lease (ttl {}, renewed every {}) "
                      "may expire from {} on, before the host is downed, so "
                      "it does not lengthen the floor",
                      runtime::render_duration(t.lease_ttl),
                      runtime::render_duration(t.renewal_interval()),
                      seconds_text(f.lease_expiry));
  return fmt::format("floor {} = detection {} (heartbeat {}, acceptable "
                     "pause {}, phi threshold {}) + stable_after {}{}",
                     seconds_text(f.singleton), seconds_text(f.detection),
                     runtime::render_duration(t.heartbeat_interval),
                     runtime::render_duration(t.acceptable_heartbeat_pause),
                     t.threshold, runtime::render_duration(t.stable_after),
                     lease);
}

std::string explain_shard_floor(const demo_timing& t, const failover_floor& f) {
  return fmt::format("floor {} = downed {} + removal margin {} (stable_after "
                     "{} + down_all_when_unstable {})",
                     seconds_text(f.shards), seconds_text(f.downed),
                     seconds_text(t.removal_margin()),
                     runtime::render_duration(t.stable_after),
                     runtime::render_duration(t.down_all_when_unstable));
}

} // namespace troupe::demo
