#include <catch2/catch.hpp>

#include "troupe/singleton/errc.hpp"
#include "troupe/singleton/singleton_settings.hpp"

using namespace troupe;
using namespace troupe::singleton;
using namespace std::chrono_literals;

namespace {

struct fixture {
  runtime::config_schema schema;
  fixture() {
    declare_singleton_config(schema);
  }
  runtime::expected<manager_settings>
  load(std::vector<std::pair<std::string, std::string>> values,
       runtime::timespan stable_after = 20s) {
    runtime::config cfg{schema};
    for (const auto& [key, value] : values)
      if (auto err = cfg.set(key, value, runtime::config_origin{"test"}))
        return err;
    return manager_settings_from_config(cfg, stable_after);
  }
};

std::string message_of(const runtime::error& err) {
  return err.message;
}

} // namespace

TEST_CASE("singleton settings: Akka's defaults") {
  fixture f;
  auto s = f.load({});
  REQUIRE(s);
  CHECK(s->role.empty());
  CHECK(s->hand_over_retry_interval == 1s);
  CHECK(s->min_number_of_hand_over_retries == 15);
  CHECK_FALSE(s->use_lease);
  CHECK(s->lease_retry_interval == 5s);
  CHECK(s->restart_on_stop);
  CHECK(s->restart_min_backoff == 1s);
  CHECK(s->restart_max_backoff == 30s);
  // Akka: maxHandOverRetries = max(15, margin / interval + 3)
  CHECK(max_hand_over_retries(*s) == 23);
  CHECK(max_take_over_retries(*s) == 20);
}

TEST_CASE("singleton settings: down_removal_margin auto is stable_after "
          "without a lease and 0 with one, an explicit value wins") {
  fixture f;
  CHECK(f.load({}, 7s)->down_removal_margin == 7s);
  CHECK(f.load({{"singleton.use_lease", "true"}}, 7s)->down_removal_margin
        == 0s);
  CHECK(f.load({{"singleton.use_lease", "true"},
                {"singleton.down_removal_margin", "3s"}})
          ->down_removal_margin
        == 3s);
  auto bad = f.load({{"singleton.down_removal_margin", "soon"}});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code
        == runtime::make_error(errc::invalid_settings, "").code);
  CHECK(message_of(bad.error())
        == "singleton.down_removal_margin must be auto or a duration with a "
           "unit, got \"soon\"");
}

TEST_CASE("singleton settings: every rule names its key and the value") {
  fixture f;
  auto check = [&](std::vector<std::pair<std::string, std::string>> values,
                   std::string expected) {
    auto s = f.load(std::move(values));
    REQUIRE_FALSE(s);
    CHECK(message_of(s.error()) == expected);
  };
  check({{"singleton.hand_over_retry_interval", "0s"}},
        "singleton.hand_over_retry_interval must be greater than 0, got 0s");
  check({{"singleton.lease_retry_interval", "25h"}},
        "singleton.lease_retry_interval must be at most 24h, got 25h");
  check({{"singleton.min_number_of_hand_over_retries", "0"}},
        "singleton.min_number_of_hand_over_retries must be in [1, 10000], "
        "got 0");
  check({{"singleton.restart_min_backoff", "1m"},
         {"singleton.restart_max_backoff", "30s"}},
        "singleton.restart_min_backoff (1m) must not exceed "
        "singleton.restart_max_backoff (30s)");
  proxy_settings p;
  p.identification_interval = 0s;
  CHECK(validate(p).message
        == "singleton.proxy.identification_interval must be greater than 0, "
           "got 0s");
}

TEST_CASE("singleton settings: the lease name defaults to "
          "<cluster>-singleton-<type>") {
  CHECK(singleton_lease_name("", "shop", "job-scheduler")
        == "shop-singleton-job-scheduler");
  CHECK(singleton_lease_name("my-app-singleton-lease", "shop", "x")
        == "my-app-singleton-lease");
}

TEST_CASE("singleton settings: a huge min_number_of_hand_over_retries is "
          "reported with the value given, not a clamped one") {
  fixture f;
  auto s = f.load({{"singleton.min_number_of_hand_over_retries", "99999999"}});
  REQUIRE_FALSE(s);
  CHECK(message_of(s.error())
        == "singleton.min_number_of_hand_over_retries must be in [1, 10000], "
           "got 99999999");
}

TEST_CASE("singleton settings: intervals below 1ms are refused, and "
          "max_hand_over_retries never overflows into a negative count") {
  fixture f;
  auto s = f.load({{"singleton.hand_over_retry_interval", "1ns"}});
  REQUIRE_FALSE(s);
  CHECK(message_of(s.error())
        == "singleton.hand_over_retry_interval must be at least 1ms, got 1ns");
  auto l = f.load({{"singleton.lease_retry_interval", "10us"}});
  REQUIRE_FALSE(l);
  CHECK(message_of(l.error())
        == "singleton.lease_retry_interval must be at least 1ms, got 10us");
  proxy_settings p;
  p.identification_interval = 1ns;
  CHECK(validate(p).message
        == "singleton.proxy.identification_interval must be at least 1ms, "
           "got 1ns");
  // Unvalidated settings (the engine's own arithmetic): 20s / 1ns + 3 does
  // not fit an int.
  manager_settings raw;
  raw.hand_over_retry_interval = 1ns;
  raw.down_removal_margin = 20s;
  CHECK(max_hand_over_retries(raw) > 0);
  CHECK(max_take_over_retries(raw) > 0);
}

TEST_CASE("singleton settings: instance_stop_timeout defaults to 10s and "
          "must be positive") {
  fixture f;
  CHECK(f.load({})->instance_stop_timeout == 10s);
  CHECK(
    f.load({{"singleton.instance_stop_timeout", "2s"}})->instance_stop_timeout
    == 2s);
  auto s = f.load({{"singleton.instance_stop_timeout", "0s"}});
  REQUIRE_FALSE(s);
  CHECK(message_of(s.error())
        == "singleton.instance_stop_timeout must be greater than 0, got 0s");
}
