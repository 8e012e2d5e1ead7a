#include "troupe/downing/downing_settings.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "troupe/cluster/membership_settings.hpp"
#include "troupe/downing/errc.hpp"

namespace troupe::downing {

namespace {

using runtime::config_type;
using runtime::render_duration;

constexpr std::string_view strategy_names
  = "keep_majority, static_quorum, keep_oldest, down_all, lease_majority, "
    "keep_referee, off";

runtime::error invalid(std::string what) {
  return runtime::make_error(errc::invalid_settings, std::move(what));
}

runtime::expected<strategy> strategy_from_config(const runtime::config& cfg,
                                                 std::string_view name) {
  auto text
    = [&cfg](std::string_view key) { return cfg.get<std::string>(key); };
  auto count = [&cfg](std::string_view key) {
    return static_cast<size_t>(cfg.get<int64_t>(key));
  };
  if (name == "keep_majority")
    return strategy{keep_majority{text("downing.keep_majority.role")}};
  if (name == "static_quorum") {
    auto size = count("downing.static_quorum.quorum_size");
    if (size == 0)
      return invalid("downing.static_quorum.quorum_size must be set (at "
                     "least 1) when downing.active_strategy is static_quorum");
    return strategy{static_quorum{size, text("downing.static_quorum.role")}};
  }
  if (name == "keep_oldest")
    return strategy{
      keep_oldest{cfg.get<bool>("downing.keep_oldest.down_if_alone"),
                  text("downing.keep_oldest.role")}};
  if (name == "down_all")
    return strategy{down_all_nodes{}};
  if (name == "lease_majority")
    return strategy{lease_majority{
      text("downing.lease_majority.role"),
      text("downing.lease_majority.lease_name"),
      cfg.get<timespan>("downing.lease_majority.acquire_lease_delay_for_"
                        "minority"),
      cfg.get<timespan>("downing.lease_majority.release_after")}};
  if (name == "keep_referee") {
    auto address = text("downing.keep_referee.referee_address");
    if (address.empty())
      return invalid("downing.keep_referee.referee_address must be set (the "
                     "referee's host:port) when downing.active_strategy is "
                     "keep_referee");
    auto referee = cluster::parse_seed_node(address);
    if (!referee)
      return invalid(fmt::format("downing.keep_referee.referee_address {:?} "
                                 "is not host:port (e.g. 10.0.0.1:2552)",
                                 address));
    return strategy{keep_referee{
      *referee, count("downing.keep_referee.down_all_if_less_than_nodes")}};
  }
  return invalid(fmt::format("downing.active_strategy {:?} is not a strategy; "
                             "valid: {}",
                             name, strategy_names));
}

// The longest wait the resolver accepts: every deadline is `now` plus a
// few of these, and a day keeps that sum far from timespan's limit (a
// near-maximum duration once wrapped to a past deadline and downed all).
// A resolver that waits longer is off in practice: say so with
// downing.active_strategy=off.
constexpr timespan longest_wait = std::chrono::hours{24};

runtime::error too_long(std::string_view key, timespan value) {
  return invalid(fmt::format("{} {} is longer than {}; for no automatic "
                             "downing set downing.active_strategy=off",
                             key, render_duration(value),
                             render_duration(longest_wait)));
}

runtime::error validate_strategy(const strategy& s) {
  if (auto* x = std::get_if<static_quorum>(&s); x && x->quorum_size < 1)
    return invalid(fmt::format("downing.static_quorum.quorum_size {} must "
                               "be at least 1",
                               x->quorum_size));
  if (auto* x = std::get_if<keep_referee>(&s)) {
    if (x->referee.host.empty() || x->referee.port == 0)
      return invalid(fmt::format("downing.keep_referee.referee_address {:?} "
                                 "needs a host and a port other than 0",
                                 cluster::to_string(x->referee)));
    if (x->down_all_if_less_than_nodes < 1)
      return invalid(fmt::format("downing.keep_referee.down_all_if_less_"
                                 "than_nodes {} must be at least 1",
                                 x->down_all_if_less_than_nodes));
  }
  if (auto* x = std::get_if<lease_majority>(&s)) {
    if (x->acquire_lease_delay_for_minority < timespan{0})
      return invalid(fmt::format(
        "downing.lease_majority.acquire_lease_delay_for_minority {} must "
        "not be negative",
        render_duration(x->acquire_lease_delay_for_minority)));
    if (x->release_after <= timespan{0})
      return invalid(fmt::format("downing.lease_majority.release_after {} "
                                 "must be greater than 0",
                                 render_duration(x->release_after)));
    if (x->acquire_lease_delay_for_minority > longest_wait)
      return too_long("downing.lease_majority.acquire_lease_delay_for_minority",
                      x->acquire_lease_delay_for_minority);
    if (x->release_after > longest_wait)
      return too_long("downing.lease_majority.release_after", x->release_after);
  }
  return {};
}

} // namespace

std::string_view valid_strategy_names() noexcept {
  return strategy_names;
}

runtime::expected<timespan>
parse_down_all_when_unstable(std::string_view text, timespan stable_after) {
  if (text == "on") // a quarter first: no overflow for any stable_after
    return std::max<timespan>(stable_after / 4 * 3, std::chrono::seconds{4});
  if (text == "off")
    return timespan{0};
  auto d = runtime::parse_duration(text);
  if (!d || *d <= timespan{0})
    return invalid(fmt::format("downing.down_all_when_unstable {:?} must be "
                               "on, off or a duration greater than 0 (e.g. "
                               "15s)",
                               text));
  return *d;
}

runtime::error validate(const downing_settings& s) {
  if (s.stability.stable_after <= timespan{0})
    return invalid(fmt::format("downing.stable_after {} must be greater "
                               "than 0",
                               render_duration(s.stability.stable_after)));
  if (s.stability.down_all_when_unstable < timespan{0})
    return invalid(
      fmt::format("downing.down_all_when_unstable {} must not be negative",
                  render_duration(s.stability.down_all_when_unstable)));
  if (s.stability.stable_after > longest_wait)
    return too_long("downing.stable_after", s.stability.stable_after);
  if (s.stability.down_all_when_unstable > longest_wait)
    return too_long("downing.down_all_when_unstable",
                    s.stability.down_all_when_unstable);
  if (s.active_strategy)
    return validate_strategy(*s.active_strategy);
  return {};
}

void declare_downing_config(runtime::config_schema& schema) {
  auto names = runtime::make_config_key(
    "downing.active_strategy", config_type::string, "keep_majority",
    "The split brain resolver's strategy (docs/design/downing.md), or off "
    "for no automatic downing.");
  names.allowed = {"keep_majority",  "static_quorum", "keep_oldest", "down_all",
                   "lease_majority", "keep_referee",  "off"};
  schema.add(std::move(names));
  runtime::add_non_negative_key(
    schema, "downing.stable_after", config_type::duration, "20s",
    "Decide only after membership and reachability have not changed "
    "for this long; size it by cluster size (docs/design/downing.md).");
  runtime::add_non_negative_key(
    schema, "downing.down_all_when_unstable", config_type::string, "on",
    "Down all when no decision was made within stable_after plus "
    "this of the first reachability change: on (3/4 of stable_after, "
    "at least 4s), off, or a duration.");
  runtime::add_non_negative_key(
    schema, "downing.keep_majority.role", config_type::string, "",
    "keep_majority counts only members with this role (empty: all).");
  runtime::add_non_negative_key(
    schema, "downing.static_quorum.quorum_size", config_type::integer, "0",
    "static_quorum: the side with at least this many members survives; "
    "required (at least 1) for static_quorum.");
  runtime::add_non_negative_key(
    schema, "downing.static_quorum.role", config_type::string, "",
    "static_quorum counts only members with this role (empty: all).");
  runtime::add_non_negative_key(
    schema, "downing.keep_oldest.down_if_alone", config_type::boolean, "true",
    "keep_oldest: an oldest member alone against two or more others "
    "downs itself instead.");
  runtime::add_non_negative_key(
    schema, "downing.keep_oldest.role", config_type::string, "",
    "keep_oldest: the oldest among members with this role (empty: "
    "all).");
  runtime::add_non_negative_key(
    schema, "downing.lease_majority.role", config_type::string, "",
    "lease_majority counts only members with this role for the "
    "minority delay (empty: all).");
  runtime::add_non_negative_key(
    schema, "downing.lease_majority.lease_name", config_type::string, "",
    "lease_majority: the lease's name (empty: <cluster name>-troupe-sbr).");
  runtime::add_non_negative_key(
    schema, "downing.lease_majority.acquire_lease_delay_for_minority",
    config_type::duration, "2s",
    "lease_majority: the minority side waits this long before trying "
    "to acquire the lease.");
  runtime::add_non_negative_key(
    schema, "downing.lease_majority.release_after", config_type::duration,
    "40s",
    "lease_majority: the holder releases the lease this long after "
    "the downed members were removed.");
  runtime::add_non_negative_key(
    schema, "downing.keep_referee.referee_address", config_type::string, "",
    "keep_referee: host:port of the referee node; required for "
    "keep_referee.");
  runtime::add_non_negative_key(
    schema, "downing.keep_referee.down_all_if_less_than_nodes",
    config_type::integer, "1",
    "keep_referee: down all when the referee's side has fewer members "
    "than this.");
}

runtime::expected<downing_settings>
downing_settings_from_config(const runtime::config& cfg) {
  downing_settings s;
  s.stability.stable_after = cfg.get<timespan>("downing.stable_after");
  auto unstable = parse_down_all_when_unstable(
    cfg.get<std::string>("downing.down_all_when_unstable"),
    s.stability.stable_after);
  if (!unstable)
    return unstable.error();
  s.stability.down_all_when_unstable = *unstable;
  const auto& name = cfg.get<std::string>("downing.active_strategy");
  if (name == "off") {
    s.active_strategy = std::nullopt;
  } else {
    auto x = strategy_from_config(cfg, name);
    if (!x)
      return x.error();
    s.active_strategy = std::move(*x);
  }
  if (auto err = validate(s))
    return err;
  return s;
}

std::optional<std::string> stable_after_warning(const downing_settings& s,
                                                timespan detection_time,
                                                timespan gossip_interval) {
  if (!s.active_strategy)
    return std::nullopt;
  auto floor = detection_time + gossip_interval;
  if (s.stability.stable_after >= floor)
    return std::nullopt;
  return fmt::format(
    "downing.stable_after ({}) is shorter than the failure detector's "
    "detection time ({}) plus one gossip interval ({}): a side may decide "
    "before it has seen the whole partition; raise downing.stable_after "
    "(docs/guides/downing.md has a sizing table) or shorten "
    "cluster.failure_detector.*",
    runtime::render_duration(s.stability.stable_after),
    runtime::render_duration(
      std::chrono::duration_cast<std::chrono::milliseconds>(detection_time)),
    runtime::render_duration(gossip_interval));
}

std::string resolver_lease_name(const std::string& configured,
                                const std::string& cluster_name) {
  return configured.empty() ? cluster_name + "-troupe-sbr" : configured;
}

} // namespace troupe::downing
