#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/bootstrap/bootstrap_settings.hpp"
#include "troupe/bootstrap/errc.hpp"
#include "troupe/cluster/membership_settings.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::bootstrap;

namespace {

const runtime::config_schema& schema() {
  static const runtime::config_schema result = [] {
    runtime::config_schema s;
    cluster::declare_membership_config(s);
    declare_bootstrap_config(s);
    return s;
  }();
  return result;
}

runtime::config_origin by_test() {
  return runtime::config_origin{"flag --test"};
}

} // namespace

TEST_CASE("bootstrap keys: the defaults are Akka's and the struct's") {
  runtime::config cfg{schema()};
  auto s = bootstrap_settings_from_config(cfg);
  REQUIRE(s);
  bootstrap_settings d;
  CHECK(s->method == discovery_method::off);
  CHECK(s->new_cluster_enabled);
  CHECK(s->required_contact_point_nr == 2);
  CHECK(s->stable_margin == 5s);
  CHECK(s->discovery_interval == 1s);
  CHECK(s->discovery_timeout == 3s);
  CHECK(s->probe_interval == 1s);
  CHECK(s->probing_failure_timeout == 3s);
  CHECK(s->contact_point_port == 0);
  CHECK(s->config_contact_points.empty());
  CHECK(d.stable_margin == s->stable_margin);
  CHECK(d.required_contact_point_nr == s->required_contact_point_nr);
}

TEST_CASE("bootstrap keys: values that were set") {
  runtime::config cfg{schema()};
  auto set = [&](std::string_view key, std::string_view value) {
    REQUIRE(cfg.set(key, value, by_test()).message == "");
  };
  set("cluster.bootstrap.discovery_method", "config");
  set("cluster.bootstrap.config.contact_points",
      "10.0.0.2:8558,10.0.0.1:8558,[::1]:9000");
  set("cluster.bootstrap.required_contact_point_nr", "5");
  set("cluster.bootstrap.stable_margin", "2s");
  set("cluster.bootstrap.new_cluster_enabled", "false");
  set("cluster.bootstrap.contact_point_port", "8600");
  auto s = bootstrap_settings_from_config(cfg);
  REQUIRE(s);
  CHECK(s->method == discovery_method::config);
  CHECK(s->config_contact_points
        == std::vector<contact_point>{
          {"10.0.0.2", 8558}, {"10.0.0.1", 8558}, {"::1", 9000}});
  CHECK(s->required_contact_point_nr == 5);
  CHECK(s->stable_margin == 2s);
  CHECK_FALSE(s->new_cluster_enabled);
  CHECK(s->contact_point_port == 8600);
}

TEST_CASE("bootstrap keys: bad values name the key and the value") {
  using row = std::tuple<std::string, std::string, std::string, std::string,
                         std::string>;
  auto [key1, value1, key2, value2, message] = GENERATE(
    table<std::string, std::string, std::string, std::string, std::string>({
      row{"cluster.bootstrap.discovery_method", "config",
          "cluster.bootstrap.config.contact_points", "10.0.0.1",
          "cluster.bootstrap.config.contact_points (from flag --test), item "
          "1: bad contact point \"10.0.0.1\": missing \":port\" (expected "
          "host:port, e.g. 10.0.0.1:2552 or [::1]:2552)"},
      row{"cluster.bootstrap.discovery_method", "config",
          "cluster.bootstrap.stable_margin", "5s",
          "cluster.bootstrap.config.contact_points is empty, but "
          "cluster.bootstrap.discovery_method is config"},
      row{"cluster.bootstrap.discovery_method", "dns", "cluster.seed_nodes",
          "10.0.0.1:2552",
          "cluster.bootstrap.discovery_method is dns (from flag --test) and "
          "cluster.seed_nodes is set (from flag --test): use one way to "
          "join, not both"},
      row{"cluster.bootstrap.probe_interval", "5s",
          "cluster.bootstrap.probing_failure_timeout", "2s",
          "cluster.bootstrap.probing_failure_timeout 2s must be at least "
          "cluster.bootstrap.probe_interval 5s (an answer slower than the "
          "interval would never count)"},
    }));
  CAPTURE(message);
  runtime::config cfg{schema()};
  REQUIRE(cfg.set(key1, value1, by_test()).message == "");
  REQUIRE(cfg.set(key2, value2, by_test()).message == "");
  auto s = bootstrap_settings_from_config(cfg);
  REQUIRE_FALSE(s);
  CHECK(s.error().category == "bootstrap");
  CHECK(s.error().code == static_cast<uint8_t>(errc::invalid_settings));
  CHECK(s.error().message == message);
}

TEST_CASE("bootstrap keys: the schema refuses an unknown method and a zero "
          "count") {
  runtime::config cfg{schema()};
  CHECK_FALSE(cfg.set("cluster.bootstrap.discovery_method", "consul", by_test())
                .message.empty());
  CHECK_FALSE(
    cfg.set("cluster.bootstrap.required_contact_point_nr", "0", by_test())
      .message.empty());
  CHECK_FALSE(cfg.set("cluster.bootstrap.stable_margin", "0s", by_test())
                .message.empty());
  CHECK_FALSE(
    cfg.set("cluster.bootstrap.contact_point_port", "70000", by_test())
      .message.empty());
}
