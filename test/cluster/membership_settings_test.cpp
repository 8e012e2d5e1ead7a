#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/membership_settings.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::cluster;

namespace {

const runtime::config_schema& schema() {
  static const runtime::config_schema result = [] {
    runtime::config_schema s;
    declare_membership_config(s);
    return s;
  }();
  return result;
}

runtime::config_origin by_test() {
  return runtime::config_origin{"flag --test"};
}

} // namespace

TEST_CASE("membership keys: every key with Akka's default") {
  using row = std::tuple<std::string, std::string>;
  auto [key, rendered] = GENERATE(table<std::string, std::string>({
    row{"cluster.seed_nodes", ""},
    row{"cluster.roles", ""},
    row{"cluster.app_version", "0.0.0"},
    row{"cluster.min_nr_of_members", "1"},
    row{"cluster.gossip_interval", "1s"},
    row{"cluster.gossip_time_to_live", "2s"},
    row{"cluster.gossip_different_view_probability", "0.8"},
    row{"cluster.reduce_gossip_different_view_probability", "400"},
    row{"cluster.leader_actions_interval", "1s"},
    row{"cluster.unreachable_nodes_reaper_interval", "1s"},
    row{"cluster.seed_node_timeout", "5s"},
    row{"cluster.first_seed_founds_on_timeout", "false"},
    row{"cluster.retry_unsuccessful_join_after", "10s"},
    row{"cluster.shutdown_after_unsuccessful_join_seed_nodes", "off"},
    row{"cluster.allow_weakly_up_members", "7s"},
    row{"cluster.prune_gossip_tombstones_after", "24h"},
    row{"cluster.shutdown_when_downed", "true"},
    row{"cluster.incarnation_probe_interval", "10s"},
    row{"cluster.failure_detector.threshold", "8"},
    row{"cluster.failure_detector.max_sample_size", "1000"},
    row{"cluster.failure_detector.min_std_deviation", "100ms"},
    row{"cluster.failure_detector.acceptable_heartbeat_pause", "3s"},
    row{"cluster.failure_detector.heartbeat_interval", "1s"},
    row{"cluster.failure_detector.monitored_by_nr_of_members", "9"},
    row{"cluster.failure_detector.expected_response_after", "1s"},
  }));
  runtime::config cfg{schema()};
  REQUIRE(schema().find(key) != nullptr);
  CHECK_FALSE(schema().find(key)->description.empty());
  CHECK(cfg.render(key) == rendered);
  CHECK(schema().keys().size() == 25);
}

TEST_CASE("membership keys: the transport's keys are not declared again") {
  for (auto key : {"cluster.name", "cluster.host", "cluster.port"})
    CHECK(schema().find(key) == nullptr);
}

TEST_CASE("membership_settings_from_config: the defaults are the struct's") {
  runtime::config cfg{schema()};
  auto s = membership_settings_from_config(cfg);
  REQUIRE(s);
  membership_settings d;
  CHECK(s->seed_nodes.empty());
  CHECK(s->roles.empty());
  CHECK(s->app_version == app_version{});
  CHECK(s->min_nr_of_members == d.min_nr_of_members);
  CHECK(s->gossip_interval == 1s);
  CHECK(s->gossip_time_to_live == 2s);
  CHECK(s->gossip_different_view_probability == 0.8);
  CHECK(s->reduce_gossip_different_view_probability == 400);
  CHECK(s->leader_actions_interval == 1s);
  CHECK(s->unreachable_nodes_reaper_interval == 1s);
  CHECK(s->seed_node_timeout == 5s);
  CHECK(s->retry_unsuccessful_join_after == 10s);
  CHECK_FALSE(s->shutdown_after_unsuccessful_join_seed_nodes);
  CHECK(s->allow_weakly_up_members == d.allow_weakly_up_members);
  CHECK(s->prune_gossip_tombstones_after == 24h);
  CHECK(s->shutdown_when_downed);
  CHECK(s->incarnation_probe_interval == 10s);
  CHECK(d.incarnation_probe_interval == 10s);
  auto& fd = s->failure_detector;
  CHECK(fd.threshold == 8.0);
  CHECK(fd.max_sample_size == 1000);
  CHECK(fd.min_std_deviation == 100ms);
  CHECK(fd.acceptable_heartbeat_pause == 3s);
  CHECK(fd.heartbeat_interval == 1s);
  CHECK(fd.monitored_by_nr_of_members == 9);
  CHECK(fd.expected_response_after == 1s);
  CHECK_FALSE(validate(d));
}

TEST_CASE("membership_settings_from_config: values that were set") {
  runtime::config cfg{schema()};
  auto set = [&](std::string_view key, std::string_view value) {
    auto err = cfg.set(key, value, by_test());
    REQUIRE(err.message == "");
  };
  set("cluster.seed_nodes", "10.0.0.1:2552, node-b.example:2553,[::1]:2554");
  set("cluster.roles", "backend,frontend,backend");
  set("cluster.app_version", "1.10.2-RC1");
  set("cluster.retry_unsuccessful_join_after", "off");
  set("cluster.shutdown_after_unsuccessful_join_seed_nodes", "2m");
  set("cluster.allow_weakly_up_members", "off");
  set("cluster.shutdown_when_downed", "false");
  set("cluster.incarnation_probe_interval", "off");
  set("cluster.failure_detector.heartbeat_interval", "100ms");
  set("cluster.failure_detector.acceptable_heartbeat_pause", "1s");
  set("cluster.failure_detector.threshold", "10.5");
  auto s = membership_settings_from_config(cfg);
  REQUIRE(s);
  CHECK(s->seed_nodes
        == std::vector<endpoint>{
          {"10.0.0.1", 2552}, {"node-b.example", 2553}, {"::1", 2554}});
  CHECK(s->roles == std::set<std::string>{"backend", "frontend"});
  CHECK(s->app_version == app_version{1, 10, 2, "RC1"});
  CHECK_FALSE(s->retry_unsuccessful_join_after);
  CHECK(s->shutdown_after_unsuccessful_join_seed_nodes == 2min);
  CHECK_FALSE(s->allow_weakly_up_members);
  CHECK_FALSE(s->shutdown_when_downed);
  CHECK_FALSE(s->incarnation_probe_interval);
  auto phi = s->failure_detector.phi_accrual();
  CHECK(phi.threshold == 10.5);
  CHECK(phi.first_heartbeat_estimate == 100ms);
  CHECK(phi.acceptable_heartbeat_pause == 1s);
  CHECK(phi.min_std_deviation == 100ms);
  CHECK(phi.max_sample_size == 1000);
  auto j = s->join();
  CHECK(j.seed_nodes == s->seed_nodes);
  CHECK(j.seed_node_timeout == 5s);
  CHECK_FALSE(j.retry_unsuccessful_join_after);
  CHECK(j.shutdown_after_unsuccessful_join_seed_nodes == 2min);
  CHECK(j.init_join_interval == 1s);
}

TEST_CASE("membership_settings_from_config: bad values name the key and "
          "the value") {
  using row = std::tuple<std::string, std::string, std::string>;
  auto [key, value, message]
    = GENERATE(table<std::string, std::string, std::string>({
      row{"cluster.seed_nodes", "10.0.0.1:2552,10.0.0.2",
          "cluster.seed_nodes (from flag --test), item 2: bad seed node "
          "\"10.0.0.2\": missing \":port\" (expected host:port, e.g. "
          "10.0.0.1:2552 or [::1]:2552)"},
      row{"cluster.failure_detector.threshold", "0",
          "cluster.failure_detector.threshold 0 must be greater than 0"},
      row{"cluster.failure_detector.threshold", "-2.5",
          "cluster.failure_detector.threshold -2.5 must be greater than 0"},
      row{"cluster.failure_detector.acceptable_heartbeat_pause", "500ms",
          "cluster.failure_detector.acceptable_heartbeat_pause 500ms must be "
          "at least cluster.failure_detector.heartbeat_interval 1s: a shorter "
          "pause makes a single late heartbeat look like a failure"},
      row{"cluster.gossip_different_view_probability", "1.5",
          "cluster.gossip_different_view_probability 1.5 must be between 0 "
          "and 1"},
      row{"cluster.app_version", "1.x",
          "cluster.app_version (from flag --test): \"1.x\" is not a "
          "version: \"x\" is not a number (expected one to three numbers "
          "separated by '.', e.g. \"1.2.3\", optionally followed by a "
          "qualifier after '-', e.g. \"1.2.3-RC1\")"},
      row{"cluster.app_version", "v2",
          "cluster.app_version (from flag --test): \"v2\" is not a "
          "version: \"v2\" is not a number (expected one to three numbers "
          "separated by '.', e.g. \"1.2.3\", optionally followed by a "
          "qualifier after '-', e.g. \"1.2.3-RC1\")"},
    }));
  runtime::config cfg{schema()};
  REQUIRE(cfg.set(key, value, by_test()).message == "");
  auto s = membership_settings_from_config(cfg);
  REQUIRE_FALSE(s);
  CHECK(s.error().category == "cluster");
  CHECK(s.error().code == static_cast<uint8_t>(errc::invalid_settings));
  CHECK(s.error().message == message);
}

TEST_CASE("membership keys: the schema refuses what it can check itself") {
  using row = std::tuple<std::string, std::string, std::string>;
  auto [key, value, reason]
    = GENERATE(table<std::string, std::string, std::string>({
      row{"cluster.failure_detector.monitored_by_nr_of_members", "0",
          "must be at least 1"},
      row{"cluster.failure_detector.max_sample_size", "0",
          "must be at least 1"},
      row{"cluster.min_nr_of_members", "0", "must be at least 1"},
      row{"cluster.gossip_interval", "0s", "must be at least 1ms"},
      row{"cluster.allow_weakly_up_members", "0s", "must be at least 1ms"},
      row{"cluster.seed_node_timeout", "off",
          "expected a number with a unit, e.g. \"20s\""},
    }));
  runtime::config cfg{schema()};
  auto err = cfg.set(key, value, by_test());
  CHECK(err.message
        == "bad value \"" + value + "\" for " + key
             + " (from flag --test): " + reason);
}

TEST_CASE("validate(membership_settings): the rules a struct can break") {
  using mutate = void (*)(membership_settings&);
  using row = std::tuple<mutate, std::string>;
  auto [change, message] = GENERATE(table<mutate, std::string>({
    row{[](membership_settings& s) {
          s.seed_nodes = {{"a", 0}};
        },
        "cluster.seed_nodes: seed node \"a:0\" needs a host and a port other "
        "than 0"},
    row{[](membership_settings& s) { s.roles = {""}; },
        "cluster.roles: a role must not be empty"},
    row{[](membership_settings& s) { s.gossip_interval = 0s; },
        "cluster.gossip_interval 0s must be greater than 0"},
    row{[](membership_settings& s) {
          s.shutdown_after_unsuccessful_join_seed_nodes = -1s;
        },
        "cluster.shutdown_after_unsuccessful_join_seed_nodes -1s must be "
        "greater than 0"},
    row{[](membership_settings& s) {
          s.failure_detector.monitored_by_nr_of_members = 0;
        },
        "cluster.failure_detector.monitored_by_nr_of_members 0 must be at "
        "least 1"},
    row{[](membership_settings& s) { s.min_nr_of_members = 0; },
        "cluster.min_nr_of_members 0 must be at least 1"},
    row{[](membership_settings& s) {
          s.failure_detector.heartbeat_interval = 5s;
        },
        "cluster.failure_detector.acceptable_heartbeat_pause 3s must be at "
        "least cluster.failure_detector.heartbeat_interval 5s: a shorter "
        "pause makes a single late heartbeat look like a failure"},
  }));
  membership_settings s;
  change(s);
  CHECK(validate(s).message == message);
}

TEST_CASE("parse_seed_node: host:port with bracketed IPv6") {
  using row = std::tuple<std::string, std::string, uint16_t, std::string>;
  auto [text, host, port, error]
    = GENERATE(table<std::string, std::string, uint16_t, std::string>({
      row{"10.0.0.1:2552", "10.0.0.1", 2552, ""},
      row{"seed-1.troupe.svc:25520", "seed-1.troupe.svc", 25520, ""},
      row{"[fe80::1]:1", "fe80::1", 1, ""},
      row{"fe80::1:2552", "", 0, "an IPv6 host must be in brackets"},
      row{"node", "", 0, "missing \":port\""},
      row{":2552", "", 0, "empty host"},
      row{"node:0", "", 0, "port \"0\" is not a number in 1..65535"},
      row{"node:65536", "", 0, "port \"65536\" is not a number in 1..65535"},
      row{"node:25x", "", 0, "port \"25x\" is not a number in 1..65535"},
      row{"tcp://node:2552", "", 0, "a scheme is not part of a seed node"},
    }));
  auto result = parse_seed_node(text);
  if (error.empty()) {
    REQUIRE(result);
    CHECK(*result == endpoint{host, port});
  } else {
    REQUIRE_FALSE(result);
    CHECK(result.error().message
          == "bad seed node \"" + text + "\": " + error
               + " (expected host:port, e.g. 10.0.0.1:2552 or [::1]:2552)");
  }
}
