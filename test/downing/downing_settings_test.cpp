#include <catch2/catch.hpp>

#include "troupe/downing/downing_settings.hpp"
#include "troupe/downing/errc.hpp"

using namespace troupe;
using namespace troupe::downing;
using namespace std::chrono_literals;

namespace {

struct fixture {
  runtime::config_schema schema;
  fixture() {
    declare_downing_config(schema);
  }
  runtime::expected<downing_settings>
  load(std::vector<std::pair<std::string, std::string>> values) {
    runtime::config cfg{schema};
    for (const auto& [key, value] : values) {
      auto err = cfg.set(key, value, runtime::config_origin{"test"});
      if (err)
        return err;
    }
    return downing_settings_from_config(cfg);
  }
};

} // namespace

TEST_CASE("downing settings: defaults are keep_majority, 20s, on = 15s") {
  fixture f;
  auto s = f.load({});
  REQUIRE(s);
  REQUIRE(s->active_strategy);
  CHECK(std::holds_alternative<keep_majority>(*s->active_strategy));
  CHECK(s->stability.stable_after == 20s);
  CHECK(s->stability.down_all_when_unstable == 15s);
}

TEST_CASE("downing settings: down_all_when_unstable on, off and explicit") {
  CHECK(*parse_down_all_when_unstable("on", 20s) == 15s);
  CHECK(*parse_down_all_when_unstable("on", 5s) == 4s);
  CHECK(*parse_down_all_when_unstable("off", 20s) == 0s);
  CHECK(*parse_down_all_when_unstable("7s", 20s) == 7s);
  auto bad = parse_down_all_when_unstable("soon", 20s);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("downing.down_all_when_unstable \"soon\"")
        != std::string::npos);
  CHECK_FALSE(parse_down_all_when_unstable("0s", 20s));
}

TEST_CASE("downing settings: every strategy from its keys") {
  fixture f;
  auto sq = f.load({{"downing.active_strategy", "static_quorum"},
                    {"downing.static_quorum.quorum_size", "3"},
                    {"downing.static_quorum.role", "seed"}});
  REQUIRE(sq);
  CHECK(std::get<static_quorum>(*sq->active_strategy)
        == static_quorum{3, "seed"});
  auto ko = f.load({{"downing.active_strategy", "keep_oldest"},
                    {"downing.keep_oldest.down_if_alone", "false"}});
  REQUIRE(ko);
  CHECK(std::get<keep_oldest>(*ko->active_strategy) == keep_oldest{false, ""});
  auto lm = f.load(
    {{"downing.active_strategy", "lease_majority"},
     {"downing.lease_majority.lease_name", "sbr"},
     {"downing.lease_majority.acquire_lease_delay_for_minority", "3s"}});
  REQUIRE(lm);
  CHECK(std::get<lease_majority>(*lm->active_strategy)
        == lease_majority{"", "sbr", 3s, 40s});
  auto kr = f.load({{"downing.active_strategy", "keep_referee"},
                    {"downing.keep_referee.referee_address", "10.0.0.1:2552"},
                    {"downing.keep_referee.down_all_if_less_than_nodes", "2"}});
  REQUIRE(kr);
  CHECK(std::get<keep_referee>(*kr->active_strategy)
        == keep_referee{{"10.0.0.1", 2552}, 2});
  auto da = f.load({{"downing.active_strategy", "down_all"}});
  REQUIRE(da);
  CHECK(std::holds_alternative<down_all_nodes>(*da->active_strategy));
  auto off = f.load({{"downing.active_strategy", "off"}});
  REQUIRE(off);
  CHECK_FALSE(off->active_strategy.has_value());
}

TEST_CASE("downing settings: errors name the key and the value") {
  fixture f;
  auto message = [&f](std::vector<std::pair<std::string, std::string>> kv) {
    auto s = f.load(std::move(kv));
    REQUIRE_FALSE(s);
    return s.error().message;
  };
  CHECK(message({{"downing.active_strategy", "static_quorum"}})
        == "downing.static_quorum.quorum_size must be set (at least 1) when "
           "downing.active_strategy is static_quorum");
  CHECK(message({{"downing.active_strategy", "keep_referee"}})
        == "downing.keep_referee.referee_address must be set (the referee's "
           "host:port) when downing.active_strategy is keep_referee");
  CHECK(message({{"downing.active_strategy", "keep_referee"},
                 {"downing.keep_referee.referee_address", "nohost"}})
        == "downing.keep_referee.referee_address \"nohost\" is not host:port "
           "(e.g. 10.0.0.1:2552)");
  auto unknown = message({{"downing.active_strategy", "keep_minority"}});
  CHECK(unknown.find("keep_minority") != std::string::npos);
  CHECK(unknown.find("keep_majority, static_quorum, keep_oldest, down_all, "
                     "lease_majority, keep_referee, off")
        != std::string::npos);
  CHECK(message({{"downing.down_all_when_unstable", "maybe"}})
          .find("downing.down_all_when_unstable \"maybe\"")
        != std::string::npos);
  // Near-maximum durations once wrapped a deadline into the past and
  // downed all at the first unreachable member: a day is the limit.
  CHECK(message({{"downing.stable_after", "2562047h"}})
        == "downing.stable_after 2562047h is longer than 24h; for no "
           "automatic downing set downing.active_strategy=off");
  CHECK(message({{"downing.down_all_when_unstable", "2562047h"}})
          .find("downing.down_all_when_unstable 2562047h is longer than 24h")
        != std::string::npos);
  CHECK(message({{"downing.active_strategy", "lease_majority"},
                 {"downing.lease_majority.release_after", "25h"}})
          .find("downing.lease_majority.release_after 25h is longer than 24h")
        != std::string::npos);
  CHECK(f.load({{"downing.stable_after", "24h"},
                {"downing.down_all_when_unstable", "on"}}));
}

TEST_CASE("downing settings: validate checks a hand-built value") {
  downing_settings s;
  s.stability.stable_after = 0s;
  CHECK(validate(s).message
        == "downing.stable_after 0s must be greater than 0");
  s = downing_settings{};
  s.active_strategy = static_quorum{0, ""};
  CHECK(validate(s).message
        == "downing.static_quorum.quorum_size 0 must be at least 1");
  s.active_strategy = keep_referee{{"", 0}, 1};
  CHECK(validate(s).code == static_cast<uint8_t>(errc::invalid_settings));
  s.active_strategy = lease_majority{"", "", 2s, 0s};
  CHECK(validate(s).message
        == "downing.lease_majority.release_after 0s must be greater than 0");
  CHECK(std::string{to_string(errc::invalid_settings)} == "invalid_settings");
}

TEST_CASE("downing settings: stable_after shorter than detection plus one "
          "gossip interval is warned about, longer or off is not") {
  downing_settings s;
  s.stability.stable_after = std::chrono::seconds{3};
  auto w = stable_after_warning(s, std::chrono::milliseconds{4520},
                                std::chrono::seconds{1});
  REQUIRE(w);
  CHECK_THAT(*w, Catch::Contains("downing.stable_after (3s)")
                   && Catch::Contains("detection time (4520ms)"));
  // Exactly at the floor and above it: nothing to say.
  s.stability.stable_after = std::chrono::milliseconds{5520};
  CHECK_FALSE(stable_after_warning(s, std::chrono::milliseconds{4520},
                                   std::chrono::seconds{1}));
  s.stability.stable_after = std::chrono::seconds{20};
  CHECK_FALSE(stable_after_warning(s, std::chrono::milliseconds{4520},
                                   std::chrono::seconds{1}));
  // The resolver off: no warning whatever stable_after is.
  s.active_strategy.reset();
  s.stability.stable_after = std::chrono::seconds{1};
  CHECK_FALSE(stable_after_warning(s, std::chrono::milliseconds{4520},
                                   std::chrono::seconds{1}));
}
