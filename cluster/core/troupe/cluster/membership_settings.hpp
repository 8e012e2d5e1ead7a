#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/cluster/join_protocol.hpp"
#include "troupe/cluster/phi_accrual_detector.hpp"
#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The membership settings (`cluster.*` keys besides the transport's) with
/// Akka's defaults (akka-cluster reference.conf), their configuration keys
/// and validation. docs/design/cluster.md lists every key
/// with its meaning.
///
/// Key names are the snake_case of Akka's, except
/// `cluster.shutdown_when_downed` (Akka's run-coordinated-shutdown-when-
/// down), named after what troupe does. Not (yet) carried over:
/// per-role min-nr-of-members, data centers, publish stats.
/// `cluster.name`, `cluster.host` and `cluster.port` are the transport's
/// keys (transport_config.hpp); they are not declared here.
///
/// The settings are plain values (thread-safe as any value); the functions
/// are pure.

namespace troupe::cluster {

/// `cluster.failure_detector.*` (field: default; meaning).
///
/// - threshold: 8.0; phi at which a node is suspected.
/// - max_sample_size: 1000; heartbeat intervals kept.
/// - min_std_deviation: 100ms; lower bound of the interval deviation.
/// - acceptable_heartbeat_pause: 3s; pause tolerated before phi rises fast;
///   must be at least heartbeat_interval.
/// - heartbeat_interval: 1s; how often each monitor sends a heartbeat (also
///   the detector's first estimate).
/// - monitored_by_nr_of_members: 9; monitors per node on the ring.
/// - expected_response_after: 1s; after this long without a first
///   response the detector of a new receiver starts anyway.
struct failure_detector_settings {
  double threshold = 8.0;
  size_t max_sample_size = 1000;
  timespan min_std_deviation = std::chrono::milliseconds{100};
  timespan acceptable_heartbeat_pause = std::chrono::seconds{3};
  timespan heartbeat_interval = std::chrono::seconds{1};
  size_t monitored_by_nr_of_members = 9;
  timespan expected_response_after = std::chrono::seconds{1};

  /// The detector settings (heartbeat_interval as the first estimate).
  phi_accrual_settings phi_accrual() const;
};

/// Every membership setting (field: default; meaning). Optional durations
/// are "off" when empty.
///
/// - seed_nodes: none; contact points to join, the first founds the cluster.
/// - roles: none; this node's roles (placement of singletons and shards).
/// - app_version: 0.0.0; the version of the application this node runs
///   (Akka's app-version; app_version.hpp): singletons and new shards go
///   to the members with the highest one during a rolling update.
/// - min_nr_of_members: 1; members needed before the leader moves joining
///   members to up.
/// - gossip_interval: 1s; how often a node gossips to one other.
/// - gossip_time_to_live: 2s; received gossip not handled within this
///   time is discarded.
/// - gossip_different_view_probability: 0.8; chance to prefer a node with a
///   different view as gossip target.
/// - reduce_gossip_different_view_probability: 400; with more members than
///   this, that chance is reduced (Akka's GossipTargetSelector).
/// - leader_actions_interval: 1s; how often the leader acts.
/// - unreachable_nodes_reaper_interval: 1s; how often the failure detector
///   verdicts are moved into the reachability table.
/// - seed_node_timeout: 5s; see join_protocol.hpp.
/// - first_seed_founds_on_timeout: false (ADR 0010): the first seed founds
///   a cluster only when every other seed answered that it is not a member,
///   never because some stayed silent; true is Akka's rule (also on
///   seed_node_timeout); see join_protocol.hpp.
/// - retry_unsuccessful_join_after: 10s; see join_protocol.hpp.
/// - shutdown_after_unsuccessful_join_seed_nodes: off; see join_protocol.hpp.
/// - allow_weakly_up_members: 7s; joining members become weakly up after
///   this long without convergence.
/// - prune_gossip_tombstones_after: 24h; how long removed members are
///   remembered in the gossip (a removed uid never returns).
/// - shutdown_when_downed: true; a node that learns it was downed or
///   removed shuts itself down (coordinated shutdown).
/// - incarnation_probe_interval: 10s; how often each member probes the
///   endpoints of its contact list (seed nodes and the contact endpoints
///   handed to it) that are not members of its view for another cluster
///   of its name (cluster_merge.hpp); off: never (other clusters are then
///   met only in handshakes and gossip).
/// - failure_detector: see failure_detector_settings.
struct membership_settings {
  std::vector<endpoint> seed_nodes;
  std::set<std::string> roles;
  cluster::app_version app_version;
  size_t min_nr_of_members = 1;
  timespan gossip_interval = std::chrono::seconds{1};
  timespan gossip_time_to_live = std::chrono::seconds{2};
  double gossip_different_view_probability = 0.8;
  size_t reduce_gossip_different_view_probability = 400;
  timespan leader_actions_interval = std::chrono::seconds{1};
  timespan unreachable_nodes_reaper_interval = std::chrono::seconds{1};
  timespan seed_node_timeout = std::chrono::seconds{5};
  bool first_seed_founds_on_timeout = false;
  std::optional<timespan> retry_unsuccessful_join_after
    = std::chrono::seconds{10};
  std::optional<timespan> shutdown_after_unsuccessful_join_seed_nodes;
  std::optional<timespan> allow_weakly_up_members = std::chrono::seconds{7};
  timespan prune_gossip_tombstones_after = std::chrono::hours{24};
  bool shutdown_when_downed = true;
  std::optional<timespan> incarnation_probe_interval = std::chrono::seconds{10};
  failure_detector_settings failure_detector;

  /// The join process settings.
  join_settings join() const;
};

/// Checks `s`: the first violated rule as an errc::invalid_settings error
/// naming the configuration key and the value, e.g.
/// `cluster.failure_detector.threshold 0 must be greater than 0`. Rules:
/// every duration > 0 (set optional ones too), min_nr_of_members >= 1,
/// 0 <= gossip_different_view_probability <= 1,
/// reduce_gossip_different_view_probability >= 1, threshold > 0,
/// max_sample_size >= 1, monitored_by_nr_of_members >= 1,
/// acceptable_heartbeat_pause >= heartbeat_interval (a shorter pause makes
/// one late heartbeat look like a failure), no empty role, seed nodes with
/// a host and a port other than 0.
runtime::error validate(const membership_settings& s);

/// Parses a seed node, `host:port` (IPv6 hosts in brackets:
/// `[::1]:2552`). Errors (errc::invalid_settings) quote the text and say
/// what is missing.
runtime::expected<endpoint> parse_seed_node(std::string_view text);

/// Declares the membership keys with Akka's defaults.
void declare_membership_config(runtime::config_schema& schema);

/// The settings from a configuration whose schema
/// `declare_membership_config` filled, validated; errors name the key and
/// the value (errc::invalid_settings), e.g. `cluster.app_version (from
/// env TROUPE_CLUSTER__APP_VERSION): "1.x" is not a version: ...`.
runtime::expected<membership_settings>
membership_settings_from_config(const runtime::config& cfg);

} // namespace troupe::cluster
