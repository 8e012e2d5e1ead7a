// The management.* keys: defaults, bounds at parse time, the rules of
// validate (bind, token), and that a token never shows in an error.

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "troupe/management/errc.hpp"
#include "troupe/management/management_settings.hpp"

using namespace troupe;
using namespace troupe::management;
using namespace std::chrono_literals;

namespace {

using pairs = std::vector<std::pair<std::string, std::string>>;

runtime::expected<management_settings> load(const pairs& values) {
  runtime::config_schema schema;
  declare_management_config(schema);
  runtime::config cfg{schema};
  for (const auto& [key, value] : values)
    if (auto err = cfg.set(key, value, runtime::config_origin{"test"}))
      return err;
  return management_settings_from_config(cfg);
}

} // namespace

TEST_CASE("management settings: the defaults of the header and of the keys "
          "agree, and validate") {
  management_settings d;
  CHECK(d.enabled);
  CHECK(d.bind == "127.0.0.1");
  CHECK(d.port == 8558);
  CHECK(d.token.empty());
  CHECK(d.query_timeout == 2s);
  CHECK(d.max_connections == 64);
  CHECK_FALSE(d.fault_injection);
  CHECK(d.loopback());
  CHECK_FALSE(validate(d));
  auto s = load({});
  REQUIRE(s);
  CHECK(s->enabled == d.enabled);
  CHECK(s->bind == d.bind);
  CHECK(s->port == d.port);
  CHECK(s->token.empty());
  CHECK(s->query_timeout == d.query_timeout);
  CHECK(s->max_connections == d.max_connections);
  CHECK(s->fault_injection == d.fault_injection);
  auto r = router_settings_of(*s, "<html/>");
  CHECK_FALSE(r.require_token);
  CHECK_FALSE(r.fault_injection);
  auto chaos = load({{"management.fault_injection", "true"}});
  REQUIRE(chaos);
  CHECK(router_settings_of(*chaos, "").fault_injection);
  CHECK(r.dashboard_html == "<html/>");
}

TEST_CASE("management settings: loopback is 127.0.0.0/8 and ::1") {
  auto x = GENERATE(table<std::string, bool>({
    {"127.0.0.1", true},
    {"127.8.9.10", true},
    {"::1", true},
    {"0.0.0.0", false},
    {"10.0.0.7", false},
    {"::", false},
    {"fe80::1", false},
    {"localhost", false}, // not an IP literal: validate refuses it
  }));
  management_settings s;
  s.bind = std::get<0>(x);
  INFO(s.bind);
  CHECK(s.loopback() == std::get<1>(x));
}

TEST_CASE("management settings: bad values are errors naming the key and "
          "never the token") {
  struct row {
    pairs values;
    std::string says;
  };
  auto x = GENERATE(values<row>({
    {{{"management.bind", "0.0.0.0"}},
     "management.bind = 0.0.0.0 is not loopback: set management.token"},
    {{{"management.bind", "localhost"}},
     "management.bind must be an IPv4 or IPv6 address, got \"localhost\""},
    {{{"management.token", "short-secret"}},
     "management.token must have at least 16 bytes, got 12"},
    {{{"management.port", "65536"}}, "management.port"},
    {{{"management.port", "-1"}}, "management.port"},
    {{{"management.max_connections", "0"}}, "management.max_connections"},
    {{{"management.query_timeout", "0s"}}, "management.query_timeout"},
    {{{"management.query_timeout", "soon"}}, "management.query_timeout"},
    {{{"management.bind", "0.0.0.0"},
      {"management.token", "0123456789abcdef"},
      {"management.fault_injection", "true"}},
     "management.fault_injection needs a loopback management.bind, got "
     "0.0.0.0"},
    {{{"management.fault_injection", "maybe"}}, "management.fault_injection"},
  }));
  auto s = load(x.values);
  REQUIRE_FALSE(s);
  INFO(s.error().message);
  CHECK(s.error().message.find(x.says) != std::string::npos);
  CHECK(s.error().message.find("short-secret") == std::string::npos);
}

TEST_CASE("management settings: off loopback with a token, PUT needs it") {
  auto s = load({{"management.bind", "0.0.0.0"},
                 {"management.token", "0123456789abcdef"},
                 {"management.port", "0"}});
  REQUIRE(s);
  CHECK_FALSE(s->loopback());
  CHECK(s->port == 0);
  auto r = router_settings_of(*s, "");
  CHECK(r.require_token);
  CHECK(r.token == "0123456789abcdef");
  // Disabled, a non-loopback bind needs no token.
  CHECK(
    load({{"management.enabled", "false"}, {"management.bind", "0.0.0.0"}}));
}
