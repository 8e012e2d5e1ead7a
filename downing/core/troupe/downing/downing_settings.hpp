#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "troupe/downing/stability_tracker.hpp"
#include "troupe/downing/strategy.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The `downing.*` settings: Akka's `akka.cluster.split-brain-resolver`
/// keys in snake_case (SplitBrainResolverSettings.scala), plus
/// keep_referee. docs/design/downing.md lists every key with its default.
///
/// Differences from Akka: the strategy names are snake_case
/// (`keep_majority`), `off` switches the resolver off (Akka: another
/// downing provider), the lease is named by `lease_name` and comes from
/// the lease module's configuration (Akka: lease-implementation).

namespace troupe::downing {

/// The resolver's settings (field: default; meaning).
///
/// - active_strategy: keep_majority with no role; none = `off` (no
///   automatic downing).
/// - stability: see stability_settings; down_all_when_unstable resolved
///   (zero = off).
struct downing_settings {
  std::optional<strategy> active_strategy = keep_majority{};
  stability_settings stability;
};

/// The valid values of `downing.active_strategy`, in documentation order:
/// keep_majority, static_quorum, keep_oldest, down_all, lease_majority,
/// keep_referee, off.
std::string_view valid_strategy_names() noexcept;

/// Akka's `down-all-when-unstable` from text: "on" = max(3/4 of
/// `stable_after`, 4s), "off" = zero, or a duration with a unit greater
/// than 0. Errors (errc::invalid_settings) quote the text and name the key
/// `downing.down_all_when_unstable`.
runtime::expected<timespan> parse_down_all_when_unstable(std::string_view text,
                                                         timespan stable_after);

/// Checks `s`: the first violated rule as an errc::invalid_settings error
/// naming the key and the value. Rules: stable_after > 0; stable_after,
/// down_all_when_unstable and lease_majority's delays at most 24h (longer
/// is "off" in practice, and keeps every deadline far from overflow);
/// static_quorum.quorum_size >= 1; keep_referee with a referee host and a
/// port other than 0 and down_all_if_less_than_nodes >= 1;
/// lease_majority's delays not negative and release_after > 0.
runtime::error validate(const downing_settings& s);

/// A warning text when `s.stability.stable_after` is shorter than
/// `detection_time` (the failure detector's time to mark a silent member
/// unreachable, cluster::detection_time) plus one `gossip_interval` (to
/// spread the other side's observations): a side may then decide before it
/// has seen the whole partition, which is legal but defeats the point of
/// waiting (Akka's docs size stable_after well above detection). Empty when
/// the resolver is off or stable_after is long enough. Not an error: tests
/// and fast networks shorten both on purpose.
std::optional<std::string> stable_after_warning(const downing_settings& s,
                                                timespan detection_time,
                                                timespan gossip_interval);

/// The lease name the resolver uses: `configured`, or
/// `<cluster_name>-troupe-sbr` when it is empty.
std::string resolver_lease_name(const std::string& configured,
                                const std::string& cluster_name);

/// Declares the `downing.*` keys with their defaults.
void declare_downing_config(runtime::config_schema& schema);

/// The settings from a configuration whose schema `declare_downing_config`
/// filled, validated. Errors (errc::invalid_settings) name the key and the
/// value: an unknown strategy lists the valid names; static_quorum without
/// `downing.static_quorum.quorum_size`, keep_referee without
/// `downing.keep_referee.referee_address` name the missing key.
runtime::expected<downing_settings>
downing_settings_from_config(const runtime::config& cfg);

} // namespace troupe::downing
