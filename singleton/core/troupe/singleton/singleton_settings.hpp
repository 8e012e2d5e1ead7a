#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The settings of one singleton's managers and proxies: Akka's
/// `akka.cluster.singleton` and `akka.cluster.singleton-proxy` keys in
/// snake_case, as `singleton.*` and `singleton.proxy.*`
/// (docs/design/singleton.md lists every key with its default), plus the
/// lease and restart keys Akka does not have.
namespace troupe::singleton {

using runtime::timespan;
using runtime::timestamp;

/// The manager's settings (field: default; meaning).
///
/// - role: "" (every node); only members with this role host the
///   singleton, and only their managers take part in hand-over.
/// - hand_over_retry_interval: 1s; how often a new oldest repeats
///   `hand_over_to_me` and an old oldest `take_over_from_me`.
/// - min_number_of_hand_over_retries: 15; the retries before a new oldest
///   that got no answer declares the hand-over stuck (max_hand_over_retries).
/// - use_lease: false; acquire the singleton's lease before starting an
///   instance, stop it when the lease is lost.
/// - lease_retry_interval: 5s; how often an oldest that was refused the
///   lease asks again.
/// - down_removal_margin: 0; how long after a downed (not exited) older
///   member was removed the new oldest still waits before it counts that
///   member as gone (Akka's `down-removal-margin`: the downed side needs
///   the time to stop its instance). The shell resolves the key's default
///   (docs/design/singleton.md): stable_after without a lease, 0 with one.
/// - restart_on_stop: true; restart an instance that stopped by itself
///   (not on request), after a backoff that starts at restart_min_backoff
///   (1s) and doubles up to restart_max_backoff (30s); an instance that ran
///   for restart_max_backoff resets the backoff. Akka never restarts a
///   singleton; false gives that behaviour.
/// - instance_stop_timeout: 10s; how long the manager waits for the
///   instance to terminate after its stop message before it kills it
///   (`caf::exit_reason::kill`, which the instance cannot trap), with an
///   ERROR line. It bounds every hand-over, lease-loss stop and graceful
///   stop of an instance that ignores its stop message, so a node's exit
///   is never held forever (Akka bounds the same wait with the
///   CoordinatedShutdown phase `cluster-exiting`, 10s by default).
struct manager_settings {
  std::string role;
  timespan hand_over_retry_interval = std::chrono::seconds{1};
  int min_number_of_hand_over_retries = 15;
  bool use_lease = false;
  timespan lease_retry_interval = std::chrono::seconds{5};
  timespan down_removal_margin = timespan::zero();
  bool restart_on_stop = true;
  timespan restart_min_backoff = std::chrono::seconds{1};
  timespan restart_max_backoff = std::chrono::seconds{30};
  timespan instance_stop_timeout = std::chrono::seconds{10};
};

/// Akka's `maxHandOverRetries`: max(min_number_of_hand_over_retries,
/// down_removal_margin / hand_over_retry_interval + 3), capped at
/// INT_MAX / 2 (unvalidated settings never wrap).
int max_hand_over_retries(const manager_settings& s) noexcept;

/// Akka's `maxTakeOverRetries`: max(1, max_hand_over_retries - 3).
int max_take_over_retries(const manager_settings& s) noexcept;

/// The proxy's settings (field: default; meaning).
///
/// - role: "" (every node); where the proxy looks for the singleton. Must
///   equal the managers' role.
/// - identification_interval: 1s; how often the proxy asks the expected
///   host for the instance while it does not know it (Akka's
///   `singleton-identification-interval`).
/// - buffer_size: 1000; messages kept while the instance is unknown;
///   when full the oldest is dropped and counted (Akka's
///   `buffer-size`). 0 keeps none: every message sent while unknown is
///   dropped and counted.
struct proxy_settings {
  std::string role;
  timespan identification_interval = std::chrono::seconds{1};
  size_t buffer_size = 1000;
};

/// Checks `s`: the first violated rule as an errc::invalid_settings error
/// naming the key (`singleton.<field>`) and the value. Rules: intervals,
/// backoffs and instance_stop_timeout greater than 0 and at most 24h
/// (intervals at least 1ms); min_number_of_hand_over_retries in [1, 10000];
/// down_removal_margin in [0, 24h]; restart_min_backoff at most
/// restart_max_backoff.
runtime::error validate(const manager_settings& s);

/// Checks `s`: identification_interval in [1ms, 24h];
/// buffer_size at most 10,000,000 (keys `singleton.proxy.<field>`).
runtime::error validate(const proxy_settings& s);

/// Declares the `singleton.*` and `singleton.proxy.*` keys with their
/// defaults (docs/design/singleton.md).
void declare_singleton_config(runtime::config_schema& schema);

/// The manager's settings from a configuration whose schema
/// `declare_singleton_config` filled, validated. `singleton.
/// down_removal_margin = auto` (the default) resolves to 0 with
/// `singleton.use_lease` (the lease closes the window) and to
/// `stable_after` (the resolver's `downing.stable_after`, Akka's advice)
/// without. Errors (errc::invalid_settings) name the key and the value.
runtime::expected<manager_settings>
manager_settings_from_config(const runtime::config& cfg, timespan stable_after);

/// The proxy's settings from the configuration, validated.
runtime::expected<proxy_settings>
proxy_settings_from_config(const runtime::config& cfg);

/// The lease name of the singleton `singleton_name`: `configured`
/// (`singleton.lease_name`), or `<cluster_name>-singleton-<singleton_name>`
/// when it is empty.
std::string singleton_lease_name(const std::string& configured,
                                 const std::string& cluster_name,
                                 const std::string& singleton_name);

} // namespace troupe::singleton
