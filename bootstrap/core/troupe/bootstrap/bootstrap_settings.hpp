#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "troupe/bootstrap/contact_point.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The `cluster.bootstrap.*` settings: Akka Management's Cluster Bootstrap
/// (`akka.management.cluster.bootstrap.*`) in troupe's snake_case, with
/// Akka's defaults. docs/design/bootstrap.md explains each rule and
/// docs/reference/configuration.md lists every key.
///
/// Not carried over from Akka, and why:
/// - `contact-with-all-contact-points` (Akka: on, may be turned off):
///   always on. A node that founds without having heard "not in a cluster"
///   from every discovered contact point can found beside a cluster it
///   could not reach; troupe offers no switch for that.
/// - `exponential-backoff-*` of discovery: discovery runs every
///   `discovery_interval`; the methods are cheap (one DNS or API call).
/// - `probe-interval-jitter`: probes are not synchronised across nodes by
///   anything but their start; a fixed interval keeps the core free of
///   randomness.
///
/// Plain values; the functions are pure.

namespace troupe::bootstrap {

using runtime::timespan;
using runtime::timestamp;

/// How contact points are discovered (`cluster.bootstrap.discovery_method`).
enum class discovery_method : uint8_t {
  /// Bootstrap is off: the node joins through `cluster.seed_nodes`.
  off = 0,
  /// A static list, `cluster.bootstrap.config.contact_points`.
  config,
  /// DNS records of a (headless) service, `cluster.bootstrap.dns.*`.
  dns,
  /// Pods of the namespace by label selector,
  /// `cluster.bootstrap.kubernetes_api.*`.
  kubernetes_api,
};

/// "", "config", "dns", "kubernetes_api" (the configuration's spelling).
const char* to_string(discovery_method x) noexcept;

/// The bootstrap settings (field: default; key under cluster.bootstrap.).
struct bootstrap_settings {
  /// off; discovery_method. Bootstrap runs only when set, and then
  /// `cluster.seed_nodes` must be empty.
  bootstrap::discovery_method method = discovery_method::off;
  /// true; new_cluster_enabled. false: this node never founds a cluster,
  /// it only joins one a contact point reports (for restarts after the
  /// first formation).
  bool new_cluster_enabled = true;
  /// 2; required_contact_point_nr. Contact points that must be discovered
  /// (and all probed) before the lowest of them founds a cluster. Set it to
  /// the initial number of nodes for the safest first formation.
  size_t required_contact_point_nr = 2;
  /// 5s; stable_margin. How long the discovered set must stay unchanged
  /// before a node may found a cluster.
  timespan stable_margin = std::chrono::seconds{5};
  /// 1s; discovery_interval. How often discovery runs.
  timespan discovery_interval = std::chrono::seconds{1};
  /// 3s; discovery_timeout. Deadline of one discovery (Akka's
  /// resolve-timeout).
  timespan discovery_timeout = std::chrono::seconds{3};
  /// 1s; probe_interval. How often each contact point is probed.
  timespan probe_interval = std::chrono::seconds{1};
  /// 3s; probing_failure_timeout. Deadline of one probe, and how long a
  /// probe's answer counts: an answer to a probe sent longer ago is stale.
  timespan probing_failure_timeout = std::chrono::seconds{3};
  /// 0; contact_point_port (0: this node's management.port). The
  /// management port of records that carry none (A/AAAA records, pods
  /// without the named port).
  uint16_t contact_point_port = 0;
  /// (empty); config.contact_points. The static list of the config method.
  std::vector<contact_point> config_contact_points;
};

/// Checks `s`: the first violated rule as an errc::invalid_settings error
/// naming the key and the value. Rules: every duration > 0,
/// required_contact_point_nr >= 1, probing_failure_timeout >=
/// probe_interval (else a contact point answering slower than the interval
/// never counts), the config method with at least one contact point.
runtime::error validate(const bootstrap_settings& s);

/// Declares the `cluster.bootstrap.*` keys of this file (the methods'
/// own keys are declared by their edges).
void declare_bootstrap_config(runtime::config_schema& schema);

/// The settings from `cfg` (declared by declare_bootstrap_config),
/// validated; errors name the key, its origin and the value. Fails when a
/// method is set and `cluster.seed_nodes` is not empty (two ways to join).
runtime::expected<bootstrap_settings>
bootstrap_settings_from_config(const runtime::config& cfg);

} // namespace troupe::bootstrap
