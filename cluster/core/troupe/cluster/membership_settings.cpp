#include "troupe/cluster/membership_settings.hpp"

#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "troupe/cluster/errc.hpp"

namespace troupe::cluster {

namespace {

using runtime::config_type;
using runtime::make_config_key;
using runtime::render_duration;
using namespace std::string_view_literals;

runtime::error invalid(std::string what) {
  return runtime::make_error(errc::invalid_settings, std::move(what));
}

std::optional<timespan> unless_off(timespan d) {
  if (d == timespan{0})
    return std::nullopt;
  return d;
}

// --- keys --------------------------------------------------------------------

// Integers count at least 1; durations are at least 1ms and, with
// `off_allowed`, may be "off" (read as a zero duration).
void add_key(runtime::config_schema& schema, std::string_view name,
             config_type type, std::string_view default_value,
             std::string_view description, bool off_allowed = false) {
  auto key
    = make_config_key(std::string{name}, type, std::string{default_value},
                      std::string{description});
  if (type == config_type::integer)
    key.min_integer = 1;
  if (type == config_type::duration)
    key.min_duration = std::chrono::milliseconds{1};
  key.off_allowed = off_allowed;
  schema.add(std::move(key));
}

// --- validation --------------------------------------------------------------

runtime::error check_durations(const membership_settings& s) {
  const auto& fd = s.failure_detector;
  std::pair<std::string_view, std::optional<timespan>> durations[] = {
    {"cluster.gossip_interval", s.gossip_interval},
    {"cluster.gossip_time_to_live", s.gossip_time_to_live},
    {"cluster.leader_actions_interval", s.leader_actions_interval},
    {"cluster.unreachable_nodes_reaper_interval",
     s.unreachable_nodes_reaper_interval},
    {"cluster.seed_node_timeout", s.seed_node_timeout},
    {"cluster.retry_unsuccessful_join_after", s.retry_unsuccessful_join_after},
    {"cluster.shutdown_after_unsuccessful_join_seed_nodes",
     s.shutdown_after_unsuccessful_join_seed_nodes},
    {"cluster.allow_weakly_up_members", s.allow_weakly_up_members},
    {"cluster.incarnation_probe_interval", s.incarnation_probe_interval},
    {"cluster.prune_gossip_tombstones_after", s.prune_gossip_tombstones_after},
    {"cluster.failure_detector.min_std_deviation", fd.min_std_deviation},
    {"cluster.failure_detector.acceptable_heartbeat_pause",
     fd.acceptable_heartbeat_pause},
    {"cluster.failure_detector.heartbeat_interval", fd.heartbeat_interval},
    {"cluster.failure_detector.expected_response_after",
     fd.expected_response_after},
  };
  for (const auto& [key, value] : durations)
    if (value && *value <= timespan{0})
      return invalid(fmt::format("{} {} must be greater than 0", key,
                                 render_duration(*value)));
  return {};
}

runtime::error check_counts(const membership_settings& s) {
  std::pair<std::string_view, size_t> counts[] = {
    {"cluster.min_nr_of_members", s.min_nr_of_members},
    {"cluster.reduce_gossip_different_view_probability",
     s.reduce_gossip_different_view_probability},
    {"cluster.failure_detector.max_sample_size",
     s.failure_detector.max_sample_size},
    {"cluster.failure_detector.monitored_by_nr_of_members",
     s.failure_detector.monitored_by_nr_of_members},
  };
  for (const auto& [key, value] : counts)
    if (value < 1)
      return invalid(fmt::format("{} {} must be at least 1", key, value));
  return {};
}

void declare_failure_detector_config(runtime::config_schema& schema) {
  add_key(schema, "cluster.failure_detector.threshold", config_type::real,
          "8.0",
          "Phi at which a monitored node is suspected (unreachable); lower "
          "detects sooner with more false suspicions.");
  add_key(schema, "cluster.failure_detector.max_sample_size",
          config_type::integer, "1000",
          "Heartbeat intervals kept per monitored node for mean and "
          "deviation.");
  add_key(schema, "cluster.failure_detector.min_std_deviation",
          config_type::duration, "100ms",
          "Lower bound of the interval deviation, so a very regular link "
          "does not make the detector oversensitive.");
  add_key(schema, "cluster.failure_detector.acceptable_heartbeat_pause",
          config_type::duration, "3s",
          "Pause in heartbeats (GC, network) tolerated before phi rises "
          "fast; at least the heartbeat interval.");
  add_key(schema, "cluster.failure_detector.heartbeat_interval",
          config_type::duration, "1s",
          "How often a node sends a heartbeat to each node it monitors.");
  add_key(schema, "cluster.failure_detector.monitored_by_nr_of_members",
          config_type::integer, "9",
          "How many members monitor each member (neighbours on the "
          "heartbeat ring).");
  add_key(schema, "cluster.failure_detector.expected_response_after",
          config_type::duration, "1s",
          "Start judging a newly monitored node this long after the first "
          "heartbeat to it, even without a response.");
}

failure_detector_settings
failure_detector_from_config(const runtime::config& cfg) {
  failure_detector_settings fd;
  fd.threshold = cfg.get<double>("cluster.failure_detector.threshold");
  fd.max_sample_size = static_cast<size_t>(
    cfg.get<int64_t>("cluster.failure_detector.max_sample_size"));
  fd.min_std_deviation
    = cfg.get<timespan>("cluster.failure_detector.min_std_deviation");
  fd.acceptable_heartbeat_pause
    = cfg.get<timespan>("cluster.failure_detector.acceptable_heartbeat_pause");
  fd.heartbeat_interval
    = cfg.get<timespan>("cluster.failure_detector.heartbeat_interval");
  fd.monitored_by_nr_of_members = static_cast<size_t>(
    cfg.get<int64_t>("cluster.failure_detector.monitored_by_nr_of_members"));
  fd.expected_response_after
    = cfg.get<timespan>("cluster.failure_detector.expected_response_after");
  return fd;
}

} // namespace

phi_accrual_settings failure_detector_settings::phi_accrual() const {
  return phi_accrual_settings{threshold, max_sample_size, min_std_deviation,
                              acceptable_heartbeat_pause, heartbeat_interval};
}

join_settings membership_settings::join() const {
  join_settings result;
  result.seed_nodes = seed_nodes;
  result.seed_node_timeout = seed_node_timeout;
  result.first_seed_founds_on_timeout = first_seed_founds_on_timeout;
  result.retry_unsuccessful_join_after = retry_unsuccessful_join_after;
  result.shutdown_after_unsuccessful_join_seed_nodes
    = shutdown_after_unsuccessful_join_seed_nodes;
  return result;
}

runtime::error validate(const membership_settings& s) {
  for (const auto& seed : s.seed_nodes)
    if (seed.host.empty() || seed.port == 0)
      return invalid(fmt::format("cluster.seed_nodes: seed node {:?} needs a "
                                 "host and a port other than 0",
                                 to_string(seed)));
  for (const auto& role : s.roles)
    if (role.empty())
      return invalid("cluster.roles: a role must not be empty");
  if (auto err = check_durations(s))
    return err;
  if (auto err = check_counts(s))
    return err;
  auto p = s.gossip_different_view_probability;
  if (!(p >= 0.0 && p <= 1.0))
    return invalid(fmt::format("cluster.gossip_different_view_probability {} "
                               "must be between 0 and 1",
                               p));
  const auto& fd = s.failure_detector;
  if (!(fd.threshold > 0.0))
    return invalid(fmt::format("cluster.failure_detector.threshold {} must "
                               "be greater than 0",
                               fd.threshold));
  if (fd.acceptable_heartbeat_pause < fd.heartbeat_interval)
    return invalid(fmt::format(
      "cluster.failure_detector.acceptable_heartbeat_pause {} must be at "
      "least cluster.failure_detector.heartbeat_interval {}: a shorter pause "
      "makes a single late heartbeat look like a failure",
      render_duration(fd.acceptable_heartbeat_pause),
      render_duration(fd.heartbeat_interval)));
  return {};
}

runtime::expected<endpoint> parse_seed_node(std::string_view text) {
  auto bad = [text](std::string_view why) {
    return invalid(fmt::format("bad seed node {:?}: {} (expected host:port, "
                               "e.g. 10.0.0.1:2552 or [::1]:2552)",
                               text, why));
  };
  if (text.find("://") != std::string_view::npos)
    return bad("a scheme is not part of a seed node");
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return bad("missing \":port\"");
  auto host = text.substr(0, colon);
  auto port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find_first_of(":[]") != std::string_view::npos)
    return bad("an IPv6 host must be in brackets");
  if (host.empty())
    return bad("empty host");
  uint16_t port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(),
                                   port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || ptr != port_text.data() + port_text.size()
      || port == 0)
    return bad(fmt::format("port {:?} is not a number in 1..65535", port_text));
  return endpoint{std::string{host}, port};
}

void declare_membership_config(runtime::config_schema& schema) {
  add_key(schema, "cluster.seed_nodes", config_type::string_list, "",
          "Seed nodes as host:port, the same list on every node. The first "
          "founds the cluster when no other seed answers; empty: join by "
          "API.");
  add_key(schema, "cluster.roles", config_type::string_list, "",
          "This node's roles (where singletons and shards may run).");
  add_key(schema, "cluster.app_version", config_type::string, "0.0.0",
          "The version of the application this node runs, as 1 to 3 numbers "
          "(e.g. 1.2.3, optionally -RC1), compared numerically segment by "
          "segment. During a rolling update singletons move to, and new "
          "shards go to, the members with the highest version (Akka's "
          "app-version).");
  add_key(schema, "cluster.min_nr_of_members", config_type::integer, "1",
          "Members needed before the leader moves joining members to up.");
  add_key(schema, "cluster.gossip_interval", config_type::duration, "1s",
          "How often a node gossips its view to one other member.");
  add_key(schema, "cluster.gossip_time_to_live", config_type::duration, "2s",
          "Received gossip not handled within this time is discarded.");
  add_key(schema, "cluster.gossip_different_view_probability",
          config_type::real, "0.8",
          "Probability (0 to 1) of preferring a gossip target whose view "
          "differs.");
  add_key(schema, "cluster.reduce_gossip_different_view_probability",
          config_type::integer, "400",
          "With more members than this, that probability is reduced.");
  add_key(schema, "cluster.leader_actions_interval", config_type::duration,
          "1s", "How often the leader moves members (joining to up, ...).");
  add_key(schema, "cluster.unreachable_nodes_reaper_interval",
          config_type::duration, "1s",
          "How often failure detector verdicts go into the reachability "
          "table.");
  add_key(schema, "cluster.seed_node_timeout", config_type::duration, "5s",
          "How long the first seed waits for another seed before founding "
          "the cluster; the interval of other nodes' join rounds (1s after a "
          "round in which every seed answered that it is not a member yet).");
  add_key(schema, "cluster.first_seed_founds_on_timeout", config_type::boolean,
          "false",
          "Whether the first seed founds a new cluster when another seed "
          "stays silent for seed_node_timeout (true: Akka's rule; ADR 0010). "
          "false: only when "
          "every other seed answered that it is not a member yet, so a first "
          "seed restarted behind a partition waits instead of founding a "
          "second cluster.");
  add_key(schema, "cluster.retry_unsuccessful_join_after",
          config_type::duration, "10s",
          "Start the join over when no welcome came this long after "
          "the join request (off: wait forever).",
          true);
  add_key(schema, "cluster.shutdown_after_unsuccessful_join_seed_nodes",
          config_type::duration, "off",
          "Give up and shut down when not joined within this time (off: "
          "retry forever).",
          true);
  add_key(schema, "cluster.allow_weakly_up_members", config_type::duration,
          "7s",
          "Joining members become weakly up after this long without "
          "convergence (off: only up at convergence).",
          true);
  add_key(schema, "cluster.prune_gossip_tombstones_after",
          config_type::duration, "24h",
          "How long removed members are remembered in the gossip.");
  add_key(schema, "cluster.shutdown_when_downed", config_type::boolean, "true",
          "Shut this node down (coordinated shutdown) when it learns that it "
          "was downed or removed.");
  add_key(schema, "cluster.incarnation_probe_interval", config_type::duration,
          "10s",
          "How often each member asks the nodes of its contact list (the seed "
          "nodes and the bootstrap's contact points) that are not members of "
          "its view which cluster they belong to, to find a second cluster of "
          "this name formed apart; the smaller one then leaves and rejoins "
          "the other (off: never ask; other clusters are then met only in "
          "handshakes and gossip).",
          true);
  declare_failure_detector_config(schema);
}

runtime::expected<membership_settings>
membership_settings_from_config(const runtime::config& cfg) {
  using strings = std::vector<std::string>;
  membership_settings s;
  const auto& seeds = cfg.get<strings>("cluster.seed_nodes");
  for (size_t i = 0; i < seeds.size(); ++i) {
    auto seed = parse_seed_node(seeds[i]);
    if (!seed)
      return invalid(fmt::format("cluster.seed_nodes (from {}), item {}: {}",
                                 cfg.origin("cluster.seed_nodes").text, i + 1,
                                 seed.error().message));
    s.seed_nodes.push_back(std::move(*seed));
  }
  for (const auto& role : cfg.get<strings>("cluster.roles"))
    s.roles.insert(role);
  auto version = parse_app_version(cfg.get<std::string>("cluster.app_version"));
  if (!version)
    return invalid(fmt::format("cluster.app_version (from {}): {}",
                               cfg.origin("cluster.app_version").text,
                               version.error().message));
  s.app_version = std::move(*version);
  auto count = [&cfg](std::string_view key) {
    return static_cast<size_t>(cfg.get<int64_t>(key));
  };
  auto duration
    = [&cfg](std::string_view key) { return cfg.get<timespan>(key); };
  s.min_nr_of_members = count("cluster.min_nr_of_members");
  s.gossip_interval = duration("cluster.gossip_interval");
  s.gossip_time_to_live = duration("cluster.gossip_time_to_live");
  s.gossip_different_view_probability
    = cfg.get<double>("cluster.gossip_different_view_probability");
  s.reduce_gossip_different_view_probability
    = count("cluster.reduce_gossip_different_view_probability");
  s.leader_actions_interval = duration("cluster.leader_actions_interval");
  s.unreachable_nodes_reaper_interval
    = duration("cluster.unreachable_nodes_reaper_interval");
  s.seed_node_timeout = duration("cluster.seed_node_timeout");
  s.first_seed_founds_on_timeout
    = cfg.get<bool>("cluster.first_seed_founds_on_timeout");
  s.retry_unsuccessful_join_after
    = unless_off(duration("cluster.retry_unsuccessful_join_after"));
  s.shutdown_after_unsuccessful_join_seed_nodes = unless_off(
    duration("cluster.shutdown_after_unsuccessful_join_seed_nodes"));
  s.allow_weakly_up_members
    = unless_off(duration("cluster.allow_weakly_up_members"));
  s.prune_gossip_tombstones_after
    = duration("cluster.prune_gossip_tombstones_after");
  s.shutdown_when_downed = cfg.get<bool>("cluster.shutdown_when_downed");
  s.incarnation_probe_interval
    = unless_off(duration("cluster.incarnation_probe_interval"));
  s.failure_detector = failure_detector_from_config(cfg);
  if (auto err = validate(s))
    return err;
  return s;
}

} // namespace troupe::cluster
