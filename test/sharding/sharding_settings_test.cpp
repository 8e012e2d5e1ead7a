#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/errc.hpp"
#include "troupe/sharding/coordinator_protocol.hpp"
#include "troupe/sharding/errc.hpp"
#include "troupe/sharding/sharding_settings.hpp"

using namespace troupe;
using namespace troupe::sharding;
using namespace std::chrono_literals;

namespace {

using pairs = std::vector<std::pair<std::string, std::string>>;

runtime::config_schema sharding_schema() {
  runtime::config_schema schema;
  declare_sharding_config(schema);
  return schema;
}

struct fixture {
  runtime::config_schema schema = sharding_schema();

  /// The settings from `values` set on the defaults (as the loader does).
  runtime::expected<sharding_settings>
  load(pairs values, runtime::timespan stable_after = 20s) {
    runtime::config cfg{schema};
    for (const auto& [key, value] : values)
      if (auto err = cfg.set(key, value, runtime::config_origin{"test"}))
        return err;
    return sharding_settings_from_config(cfg, stable_after);
  }
};

uint8_t invalid_settings_code() {
  return static_cast<uint8_t>(errc::invalid_settings);
}

} // namespace

TEST_CASE("sharding settings: the defaults of the header and of the keys "
          "agree, and validate") {
  sharding_settings d;
  CHECK(d.number_of_shards == 1000);
  CHECK(d.role.empty());
  CHECK(d.buffer_size == 100000);
  CHECK(d.retry_interval == 2s);
  CHECK(d.hand_off_timeout == 60s);
  CHECK(d.entity_stop_timeout == 10s);
  CHECK(d.rebalance_interval == 10s);
  CHECK(d.least_shard_allocation_absolute_limit == 20);
  CHECK(d.least_shard_allocation_relative_limit == 0.5);
  CHECK(d.passivation_idle_timeout == 120s);
  CHECK(d.passivation_active_entity_limit == 0);
  CHECK(d.down_removal_margin == 0s);
  CHECK_FALSE(d.use_lease);
  CHECK_FALSE(validate(d));
  fixture f;
  auto s = f.load({}, 7s);
  REQUIRE(s);
  CHECK(s->number_of_shards == d.number_of_shards);
  CHECK(s->role == d.role);
  CHECK(s->buffer_size == d.buffer_size);
  CHECK(s->retry_interval == d.retry_interval);
  CHECK(s->hand_off_timeout == d.hand_off_timeout);
  CHECK(s->entity_stop_timeout == d.entity_stop_timeout);
  CHECK(s->rebalance_interval == d.rebalance_interval);
  CHECK(s->least_shard_allocation_absolute_limit
        == d.least_shard_allocation_absolute_limit);
  CHECK(s->least_shard_allocation_relative_limit
        == d.least_shard_allocation_relative_limit);
  CHECK(s->passivation_idle_timeout == d.passivation_idle_timeout);
  CHECK(s->passivation_active_entity_limit
        == d.passivation_active_entity_limit);
  CHECK(s->use_lease == d.use_lease);
  // The key's default is auto: the resolver's stable_after.
  CHECK(s->down_removal_margin == 7s);
  runtime::config cfg{f.schema};
  CHECK(cfg.get<std::string>("sharding.lease_name").empty());
  CHECK(cfg.render("sharding.down_removal_margin") == "auto");
}

TEST_CASE("sharding settings: validate names the key and the value of "
          "every rule it checks, one violation at a time") {
  struct row {
    const char* what;
    void (*spoil)(sharding_settings&);
    const char* message;
  };
  const row rows[] = {
    {"no shards", [](sharding_settings& s) { s.number_of_shards = 0; },
     "sharding.number_of_shards must be in [1, 1000000], got 0"},
    {"too many shards",
     [](sharding_settings& s) { s.number_of_shards = 1'000'001; },
     "sharding.number_of_shards must be in [1, 1000000], got 1000001"},
    {"buffer too large",
     [](sharding_settings& s) { s.buffer_size = 10'000'001; },
     "sharding.buffer_size must be in [1, 10000000], got 10000001"},
    // A buffer of 0 would drop every message whose shard's home is not
    // known yet, and with it the request for the home.
    {"no buffer", [](sharding_settings& s) { s.buffer_size = 0; },
     "sharding.buffer_size must be in [1, 10000000], got 0"},
    {"retry interval 0", [](sharding_settings& s) { s.retry_interval = 0s; },
     "sharding.retry_interval must be greater than 0, got 0s"},
    {"retry interval below 1ms",
     [](sharding_settings& s) { s.retry_interval = 999us; },
     "sharding.retry_interval must be at least 1ms, got 999us"},
    {"hand-off timeout above a day",
     [](sharding_settings& s) { s.hand_off_timeout = 25h; },
     "sharding.hand_off_timeout must be at most 24h, got 25h"},
    {"entity stop timeout below 1ms",
     [](sharding_settings& s) { s.entity_stop_timeout = 10us; },
     "sharding.entity_stop_timeout must be at least 1ms, got 10us"},
    {"rebalance interval 0",
     [](sharding_settings& s) { s.rebalance_interval = 0s; },
     "sharding.rebalance_interval must be greater than 0, got 0s"},
    {"absolute limit 0",
     [](sharding_settings& s) { s.least_shard_allocation_absolute_limit = 0; },
     "sharding.least_shard_allocation_absolute_limit must be in [1, "
     "1000000], got 0"},
    {"absolute limit too large",
     [](sharding_settings& s) {
       s.least_shard_allocation_absolute_limit = 1'000'001;
     },
     "sharding.least_shard_allocation_absolute_limit must be in [1, "
     "1000000], got 1000001"},
    {"relative limit 0",
     [](sharding_settings& s) {
       s.least_shard_allocation_relative_limit = 0.0;
     },
     "sharding.least_shard_allocation_relative_limit must be in (0, 1], "
     "got 0"},
    {"relative limit above 1",
     [](sharding_settings& s) {
       s.least_shard_allocation_relative_limit = 1.5;
     },
     "sharding.least_shard_allocation_relative_limit must be in (0, 1], "
     "got 1.5"},
    {"relative limit NaN",
     [](sharding_settings& s) {
       s.least_shard_allocation_relative_limit
         = std::numeric_limits<double>::quiet_NaN();
     },
     "sharding.least_shard_allocation_relative_limit must be in (0, 1], "
     "got nan"},
    {"idle timeout above a day",
     [](sharding_settings& s) { s.passivation_idle_timeout = 25h; },
     "sharding.passivation_idle_timeout must be in [0, 24h], got 25h"},
    {"idle timeout negative",
     [](sharding_settings& s) { s.passivation_idle_timeout = -1s; },
     "sharding.passivation_idle_timeout must be in [0, 24h], got -1s"},
    {"active entity limit too large",
     [](sharding_settings& s) {
       s.passivation_active_entity_limit = 100'000'001;
     },
     "sharding.passivation_active_entity_limit must be at most 100000000, "
     "got 100000001"},
    {"margin above a day",
     [](sharding_settings& s) { s.down_removal_margin = 25h; },
     "sharding.down_removal_margin must be in [0, 24h], got 25h"},
    {"margin negative",
     [](sharding_settings& s) { s.down_removal_margin = -1ms; },
     "sharding.down_removal_margin must be in [0, 24h], got -1ms"},
  };
  for (const auto& r : rows) {
    INFO(r.what);
    sharding_settings s;
    r.spoil(s);
    auto err = validate(s);
    CHECK(err.code == invalid_settings_code());
    CHECK(err.category == "sharding");
    CHECK(err.message == r.message);
  }
}

TEST_CASE("sharding settings: the edges of every rule are accepted") {
  sharding_settings s;
  s.number_of_shards = 1;
  s.buffer_size = 1;
  s.retry_interval = 1ms;
  s.hand_off_timeout = 24h;
  s.entity_stop_timeout = 1ms;
  s.rebalance_interval = 24h;
  s.least_shard_allocation_absolute_limit = 1;
  s.least_shard_allocation_relative_limit = 1.0;
  s.passivation_idle_timeout = 0s;
  s.passivation_active_entity_limit = 100'000'000;
  s.down_removal_margin = 24h;
  CHECK_FALSE(validate(s));
  s.number_of_shards = 1'000'000;
  s.buffer_size = 10'000'000;
  s.least_shard_allocation_absolute_limit = 1'000'000;
  s.least_shard_allocation_relative_limit = 1e-9;
  s.passivation_idle_timeout = 24h;
  s.down_removal_margin = 0s;
  CHECK_FALSE(validate(s));
}

TEST_CASE("sharding settings: from_config reports a bad value with the "
          "value given, before it is narrowed to the field") {
  fixture f;
  auto check = [&](pairs values, std::string expected) {
    auto s = f.load(std::move(values));
    REQUIRE_FALSE(s);
    CHECK(s.error().code == invalid_settings_code());
    CHECK(s.error().message == expected);
  };
  // The schema's bounds: refused while parsing, naming the value's source.
  auto check_parse = [&](pairs values, std::string expected) {
    auto s = f.load(std::move(values));
    REQUIRE_FALSE(s);
    CHECK(s.error().code
          == static_cast<uint8_t>(troupe::runtime::errc::bad_config_value));
    CHECK(s.error().message == expected);
  };
  // 2^32 + 5 would wrap to 5 in the uint32 field.
  check_parse({{"sharding.number_of_shards", "4294967301"}},
              "bad value \"4294967301\" for sharding.number_of_shards (from "
              "test): must be at most 1000000");
  check_parse({{"sharding.number_of_shards", "0"}},
              "bad value \"0\" for sharding.number_of_shards (from test): "
              "must be at least 1");
  check_parse({{"sharding.buffer_size", "0"}},
              "bad value \"0\" for sharding.buffer_size (from test): must be "
              "at least 1");
  check_parse(
    {{"sharding.least_shard_allocation_absolute_limit", "4294967297"}},
    "bad value \"4294967297\" for "
    "sharding.least_shard_allocation_absolute_limit (from test): "
    "must be at most 1000000");
  check_parse({{"sharding.retry_interval", "500us"}},
              "bad value \"500us\" for sharding.retry_interval (from test): "
              "must be at least 1ms");
  check({{"sharding.least_shard_allocation_relative_limit", "2"}},
        "sharding.least_shard_allocation_relative_limit must be in (0, 1], "
        "got 2");
  check({{"sharding.down_removal_margin", "soon"}},
        "sharding.down_removal_margin must be auto or a duration with a "
        "unit, got \"soon\"");
  check({{"sharding.down_removal_margin", "30"}},
        "sharding.down_removal_margin must be auto or a duration with a "
        "unit, got \"30\"");
  check({{"sharding.down_removal_margin", "2d"}},
        "sharding.down_removal_margin must be auto or a duration with a "
        "unit, got \"2d\"");
  check({{"sharding.down_removal_margin", "25h"}},
        "sharding.down_removal_margin must be in [0, 24h], got 25h");
}

TEST_CASE("sharding settings: down_removal_margin auto is stable_after "
          "with or without a lease, and an explicit duration wins") {
  fixture f;
  CHECK(f.load({}, 7s)->down_removal_margin == 7s);
  CHECK(
    f.load({{"sharding.down_removal_margin", "auto"}}, 0s)->down_removal_margin
    == 0s);
  CHECK(f.load({{"sharding.use_lease", "true"}}, 7s)->down_removal_margin
        == 7s);
  CHECK(
    f.load({{"sharding.down_removal_margin", "3s"}}, 7s)->down_removal_margin
    == 3s);
  CHECK(
    f.load({{"sharding.down_removal_margin", "0s"}}, 7s)->down_removal_margin
    == 0s);
}

TEST_CASE("sharding settings: passivation_idle_timeout takes off as 0 "
          "(idle passivation off), a duration, never 0s or a bare number") {
  fixture f;
  CHECK(f.load({{"sharding.passivation_idle_timeout", "off"}})
          ->passivation_idle_timeout
        == 0s);
  CHECK(f.load({{"sharding.passivation_idle_timeout", "90s"}})
          ->passivation_idle_timeout
        == 90s);
  CHECK_FALSE(f.load({{"sharding.passivation_idle_timeout", "0s"}}));
  CHECK_FALSE(f.load({{"sharding.passivation_idle_timeout", "120"}}));
}

TEST_CASE("sharding settings: file < environment < flags, as a node loads "
          "them") {
  auto schema = sharding_schema();
  runtime::config_sources sources;
  sources.env = {{"TROUPE_SHARDING__NUMBER_OF_SHARDS", "100"},
                 {"TROUPE_SHARDING__ROLE", "backend"},
                 {"TROUPE_SHARDING__RETRY_INTERVAL", "500ms"},
                 {"TROUPE_SHARDING__USE_LEASE", "true"}};
  sources.args = {"--sharding.number_of_shards=64",
                  "--sharding.passivation_idle_timeout=off",
                  "--sharding.passivation_active_entity_limit=5000",
                  "--sharding.least_shard_allocation_relative_limit=0.25",
                  "--sharding.down_removal_margin=1500ms",
                  "--sharding.lease_name=orders-coordinator"};
  auto cfg = runtime::load_config(schema, sources);
  REQUIRE(cfg);
  CHECK(cfg->origin("sharding.number_of_shards").text
        == "flag --sharding.number_of_shards");
  CHECK(cfg->origin("sharding.role").text == "env TROUPE_SHARDING__ROLE");
  auto s = sharding_settings_from_config(*cfg, 20s);
  REQUIRE(s);
  CHECK(s->number_of_shards == 64);
  CHECK(s->role == "backend");
  CHECK(s->retry_interval == 500ms);
  CHECK(s->use_lease);
  CHECK(s->passivation_idle_timeout == 0s);
  CHECK(s->passivation_active_entity_limit == 5000);
  CHECK(s->least_shard_allocation_relative_limit == 0.25);
  CHECK(s->down_removal_margin == 1500ms);
  CHECK(s->hand_off_timeout == 60s);
  CHECK(coordinator_lease_name(cfg->get<std::string>("sharding.lease_name"),
                               "shop", "orders")
        == "orders-coordinator");
  // A bad value from the environment names the key and where it came from.
  sources.env = {{"TROUPE_SHARDING__HAND_OFF_TIMEOUT", "60"}};
  sources.args.clear();
  auto bad = runtime::load_config(schema, sources);
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message,
             Catch::Contains("sharding.hand_off_timeout")
               && Catch::Contains("env TROUPE_SHARDING__HAND_OFF_TIMEOUT"));
}

TEST_CASE("sharding settings: number_of_shards is the only key checked at "
          "join, and the join configuration carries its rendered value") {
  auto schema = sharding_schema();
  for (const auto* key : schema.keys())
    CHECK(key->checked_on_join == (key->name == "sharding.number_of_shards"));
  runtime::config cfg{schema};
  REQUIRE_FALSE(
    cfg.set("sharding.number_of_shards", "64", runtime::config_origin{"test"}));
  CHECK(
    cfg.join_checked_values()
    == std::map<std::string, std::string>{{"sharding.number_of_shards", "64"}});
}

TEST_CASE("sharding settings: the coordinator's lease name defaults to "
          "<cluster>-shard-coordinator-<type>") {
  CHECK(coordinator_lease_name("", "shop", "orders")
        == "shop-shard-coordinator-orders");
  CHECK(coordinator_lease_name("my-lease", "shop", "orders") == "my-lease");
}

TEST_CASE("sharding errc and protocol: every value has its name") {
  CHECK(std::string{to_string(errc::none)} == "none");
  CHECK(std::string{to_string(errc::invalid_settings)} == "invalid_settings");
  CHECK(std::string{to_string(errc::unknown_type)} == "unknown_type");
  CHECK(std::string{to_string(errc::unmappable_message)}
        == "unmappable_message");
  CHECK(std::string{to_string(errc::registration_refused)}
        == "registration_refused");
  CHECK(std::string{to_string(errc::start_failed)} == "start_failed");
  CHECK(std::string{message_name(to_coordinator{register_region{}})}
        == "register_region");
  CHECK(std::string{message_name(to_coordinator{get_shard_home{}})}
        == "get_shard_home");
  CHECK(std::string{message_name(to_coordinator{shard_started{}})}
        == "shard_started");
  CHECK(std::string{message_name(to_coordinator{begin_hand_off_ack{}})}
        == "begin_hand_off_ack");
  CHECK(std::string{message_name(to_coordinator{shard_stopped{}})}
        == "shard_stopped");
  CHECK(std::string{message_name(to_coordinator{graceful_shutdown_request{}})}
        == "graceful_shutdown_request");
  CHECK(std::string{message_name(to_region{coordinator_hello{}})}
        == "coordinator_hello");
  CHECK(std::string{message_name(to_region{register_ack{}})} == "register_ack");
  CHECK(std::string{message_name(to_region{shard_home{}})} == "shard_home");
  CHECK(std::string{message_name(to_region{host_shard{}})} == "host_shard");
  CHECK(std::string{message_name(to_region{begin_hand_off{}})}
        == "begin_hand_off");
  CHECK(std::string{message_name(to_region{hand_off{}})} == "hand_off");
  CHECK(std::string{message_name(to_region{graceful_shutdown_ack{}})}
        == "graceful_shutdown_ack");
}
