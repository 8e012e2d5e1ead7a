#include "troupe/sharding/sharding_settings.hpp"

#include <utility>

#include <fmt/format.h>

#include "troupe/runtime/settings_check.hpp"
#include "troupe/sharding/errc.hpp"

namespace troupe::sharding {

namespace {

using runtime::config_type;

constexpr int64_t max_shards = 1'000'000;
constexpr int64_t max_absolute_limit = 1'000'000;
constexpr int64_t max_buffer_size = 10'000'000;
constexpr uint64_t max_active_entity_limit = 100'000'000;

runtime::error invalid(std::string what) {
  return runtime::make_error(errc::invalid_settings, std::move(what));
}

// A shared rule's violation (runtime/settings_check.hpp), filed under this
// module's errc.
runtime::error refile(runtime::error err) {
  if (!err)
    return err;
  return invalid(std::move(err.message));
}

// The integer rules are checked where the value still fits (from_config
// reads 64 bits, the fields are narrower), so the message shows the value
// given, not a wrapped one.
runtime::error check_shards(int64_t value) {
  return refile(runtime::check_integer_in("sharding.number_of_shards", value, 1,
                                          max_shards));
}

runtime::error check_absolute_limit(int64_t value) {
  return refile(
    runtime::check_integer_in("sharding.least_shard_allocation_absolute_limit",
                              value, 1, max_absolute_limit));
}

} // namespace

runtime::error validate(const sharding_settings& s) {
  if (auto err = check_shards(s.number_of_shards))
    return err;
  if (auto err = refile(runtime::check_integer_in(
        "sharding.buffer_size", static_cast<int64_t>(s.buffer_size), 1,
        max_buffer_size)))
    return err;
  std::pair<std::string_view, timespan> intervals[] = {
    {"sharding.retry_interval", s.retry_interval},
    {"sharding.hand_off_timeout", s.hand_off_timeout},
    {"sharding.entity_stop_timeout", s.entity_stop_timeout},
    {"sharding.rebalance_interval", s.rebalance_interval},
  };
  for (const auto& [key, value] : intervals)
    if (auto err = refile(runtime::check_interval(key, value)))
      return err;
  if (auto err = check_absolute_limit(s.least_shard_allocation_absolute_limit))
    return err;
  // Written so that NaN fails too.
  auto relative = s.least_shard_allocation_relative_limit;
  if (!(relative > 0.0 && relative <= 1.0))
    return invalid(fmt::format("sharding.least_shard_allocation_relative_"
                               "limit must be in (0, 1], got {}",
                               relative));
  if (auto err = refile(runtime::check_duration_up_to_a_day(
        "sharding.passivation_idle_timeout", s.passivation_idle_timeout)))
    return err;
  if (auto err = refile(runtime::check_count_at_most(
        "sharding.passivation_active_entity_limit",
        s.passivation_active_entity_limit, max_active_entity_limit)))
    return err;
  if (auto err = refile(runtime::check_duration_up_to_a_day(
        "sharding.down_removal_margin", s.down_removal_margin)))
    return err;
  return {};
}

void declare_sharding_config(runtime::config_schema& schema) {
  runtime::add_integer_key(
    schema, "sharding.number_of_shards", "1000",
    "Shards per entity type, in [1, 1000000]; the default shard id is the "
    "entity id's hash modulo this.",
    1, max_shards);
  schema.check_on_join("sharding.number_of_shards");
  runtime::add_non_negative_key(
    schema, "sharding.role", config_type::string, "",
    "Only members with this role host shards and the coordinator (empty: "
    "all); regions elsewhere are proxy-only.");
  runtime::add_integer_key(
    schema, "sharding.buffer_size", "100000",
    "Messages a region keeps (all shards together) while a shard's home "
    "is unknown or it is handed off; when full a new message is dropped "
    "and counted.",
    1, max_buffer_size);
  runtime::add_duration_key(
    schema, "sharding.retry_interval", "2s",
    "How often a region repeats get_shard_home and its registration, and "
    "the coordinator its coordinator_hello.",
    runtime::min_setting_interval);
  runtime::add_duration_key(
    schema, "sharding.hand_off_timeout", "60s",
    "How long the hand-off of one shard may take before the coordinator "
    "gives it up.",
    runtime::min_setting_interval);
  runtime::add_duration_key(
    schema, "sharding.entity_stop_timeout", "10s",
    "How long a region waits for an entity to terminate after its stop "
    "message before it kills it.",
    runtime::min_setting_interval);
  runtime::add_duration_key(
    schema, "sharding.rebalance_interval", "10s",
    "How often the coordinator asks the allocation strategy for shards to "
    "move.",
    runtime::min_setting_interval);
  runtime::add_integer_key(
    schema, "sharding.least_shard_allocation_absolute_limit", "20",
    "The default allocation strategy's most shards moved per rebalance "
    "round, in [1, 1000000].",
    1, max_absolute_limit);
  runtime::add_non_negative_key(
    schema, "sharding.least_shard_allocation_relative_limit", config_type::real,
    "0.5",
    "The default allocation strategy's most shards moved per round as a "
    "fraction of all shards, in (0, 1].");
  auto idle = runtime::make_config_key(
    "sharding.passivation_idle_timeout", config_type::duration, "120s",
    "An entity that got no message for this long is passivated; off "
    "turns idle passivation off.");
  idle.min_duration = runtime::min_setting_interval;
  idle.off_allowed = true;
  schema.add(std::move(idle));
  runtime::add_non_negative_key(
    schema, "sharding.passivation_active_entity_limit", config_type::integer,
    "0",
    "The most active entities of one type on one region; above it the "
    "least recently used one is passivated (0: no limit).");
  runtime::add_non_negative_key(
    schema, "sharding.down_removal_margin", config_type::string, "auto",
    "How long after a member was downed or removed the coordinator still "
    "counts its shards as living there: auto (downing.stable_after + "
    "downing.down_all_when_unstable, ADR 0007) or a duration.");
  runtime::add_non_negative_key(
    schema, "sharding.use_lease", config_type::boolean, "false",
    "Run the coordinator under a lease (lease.* settings): it allocates and "
    "rebalances only while it holds the lease.");
  runtime::add_non_negative_key(
    schema, "sharding.lease_name", config_type::string, "",
    "The coordinator's lease name (empty: <cluster name>-shard-"
    "coordinator-<type name>); shared by every entity type, so leave it "
    "empty when a node runs several types with use_lease.");
}

runtime::expected<sharding_settings>
sharding_settings_from_config(const runtime::config& cfg,
                              timespan decision_bound) {
  sharding_settings s;
  auto shards = cfg.get<int64_t>("sharding.number_of_shards");
  if (auto err = check_shards(shards))
    return err;
  s.number_of_shards = static_cast<uint32_t>(shards);
  s.role = cfg.get<std::string>("sharding.role");
  s.buffer_size = static_cast<size_t>(cfg.get<int64_t>("sharding.buffer_size"));
  s.retry_interval = cfg.get<timespan>("sharding.retry_interval");
  s.hand_off_timeout = cfg.get<timespan>("sharding.hand_off_timeout");
  s.entity_stop_timeout = cfg.get<timespan>("sharding.entity_stop_timeout");
  s.rebalance_interval = cfg.get<timespan>("sharding.rebalance_interval");
  auto absolute
    = cfg.get<int64_t>("sharding.least_shard_allocation_absolute_limit");
  if (auto err = check_absolute_limit(absolute))
    return err;
  s.least_shard_allocation_absolute_limit = static_cast<int>(absolute);
  s.least_shard_allocation_relative_limit
    = cfg.get<double>("sharding.least_shard_allocation_relative_limit");
  s.passivation_idle_timeout
    = cfg.get<timespan>("sharding.passivation_idle_timeout");
  s.passivation_active_entity_limit = static_cast<size_t>(
    cfg.get<int64_t>("sharding.passivation_active_entity_limit"));
  auto margin = runtime::auto_or_duration(
    "sharding.down_removal_margin",
    cfg.get<std::string>("sharding.down_removal_margin"), decision_bound);
  if (!margin)
    return invalid(margin.error().message);
  s.down_removal_margin = *margin;
  s.use_lease = cfg.get<bool>("sharding.use_lease");
  if (auto err = validate(s))
    return err;
  return s;
}

std::string coordinator_lease_name(const std::string& configured,
                                   const std::string& cluster_name,
                                   const std::string& type_name) {
  if (!configured.empty())
    return configured;
  return fmt::format("{}-shard-coordinator-{}", cluster_name, type_name);
}

} // namespace troupe::sharding
