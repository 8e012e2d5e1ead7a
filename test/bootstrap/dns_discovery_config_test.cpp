// The cluster.bootstrap.dns.* keys and the dns_discovery they build (no
// DNS server needed: nothing here sends a query).

#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "troupe/bootstrap/dns_discovery.hpp"
#include "troupe/bootstrap/dns_discovery_config.hpp"
#include "troupe/bootstrap/errc.hpp"
#include "troupe/runtime/config_loader.hpp"

using namespace troupe;
using namespace troupe::bootstrap;

namespace {

// The configuration of `args` (`--key=value`), or the error of loading it.
runtime::expected<runtime::config> load(const runtime::config_schema& schema,
                                        std::vector<std::string> args) {
  return runtime::load_config(schema, runtime::make_config_sources(args, {}));
}

} // namespace

TEST_CASE("dns discovery: config: every key is declared with its default") {
  using row = std::tuple<std::string, std::string>;
  auto [key, value] = GENERATE(table<std::string, std::string>({
    row{"cluster.bootstrap.dns.service_name", ""},
    row{"cluster.bootstrap.dns.record_type", "a"},
    row{"cluster.bootstrap.dns.port_name", "management"},
    row{"cluster.bootstrap.dns.protocol", "tcp"},
    row{"cluster.bootstrap.dns.server", ""},
  }));
  runtime::config_schema schema;
  declare_dns_discovery_config(schema);
  CAPTURE(key);
  REQUIRE(schema.find(key) != nullptr);
  runtime::config cfg{schema};
  CHECK(cfg.render(key) == value);
  CHECK(cfg.origin(key).text == "default");
}

TEST_CASE("dns discovery: config: bad settings are refused naming the key, "
          "its origin and the problem") {
  using row = std::tuple<std::vector<std::string>, uint16_t, std::string>;
  auto [args, fallback, expected]
    = GENERATE(table<std::vector<std::string>, uint16_t, std::string>({
      row{{},
          8558,
          "cluster.bootstrap.dns.service_name (from default) is empty: set "
          "the DNS name of the headless service"},
      row{{"--cluster.bootstrap.dns.service_name=" + std::string(254, 'a')},
          8558,
          "has 254 characters, more than a DNS name may have (253)"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test"},
          0,
          "cluster.bootstrap.contact_point_port (from the caller) is 0: "
          "A/AAAA records carry no port"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.record_type=aaaa"},
          8558,
          "cluster.bootstrap.dns.record_type"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.record_type=srv",
           "--cluster.bootstrap.dns.port_name="},
          8558,
          "cluster.bootstrap.dns.port_name (from flag "
          "--cluster.bootstrap.dns.port_name) \"\" is not one DNS label"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.record_type=srv",
           "--cluster.bootstrap.dns.protocol=t.cp"},
          8558,
          "cluster.bootstrap.dns.protocol (from flag "
          "--cluster.bootstrap.dns.protocol) \"t.cp\" is not one DNS label"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.server=dns.test:53"},
          8558,
          "cluster.bootstrap.dns.server (from flag "
          "--cluster.bootstrap.dns.server) \"dns.test:53\": \"dns.test\" is "
          "not an IP address"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.server=10.96.0.10"},
          8558,
          "\"10.96.0.10\" has no \":port\""},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.server=10.96.0.10:0"},
          8558,
          "port \"0\" is not a number in 1..65535"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.server=10.96.0.10:dns"},
          8558,
          "port \"dns\" is not a number in 1..65535"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.server=::1:53"},
          8558,
          "\"::1\" is not an IP address (the DNS server is named by "
          "address; IPv6 in brackets"},
    }));
  CAPTURE(args, fallback);
  runtime::config_schema schema;
  declare_dns_discovery_config(schema);
  auto cfg = load(schema, args);
  std::string message;
  if (!cfg) {
    message = cfg.error().message;
  } else {
    auto d = dns_discovery_from_config(*cfg, fallback);
    REQUIRE_FALSE(d);
    CHECK(d.error().category == "bootstrap");
    CHECK(d.error().code == static_cast<uint8_t>(errc::invalid_settings));
    message = d.error().message;
  }
  CAPTURE(message);
  CHECK(message.find(expected) != std::string::npos);
}

TEST_CASE("dns discovery: config: good settings build the discovery that "
          "describes what it asks where") {
  using row = std::tuple<std::vector<std::string>, std::string>;
  auto [args, described]
    = GENERATE(table<std::vector<std::string>, std::string>({
      row{{"--cluster.bootstrap.dns.service_name=troupe.default.svc"},
          "DNS A/AAAA troupe.default.svc at the system resolver"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test",
           "--cluster.bootstrap.dns.record_type=srv",
           "--cluster.bootstrap.dns.server=[::1]:5353"},
          "DNS SRV _management._tcp.troupe.test at [::1]:5353"},
      row{{"--cluster.bootstrap.dns.service_name=troupe.test.",
           "--cluster.bootstrap.dns.record_type=srv",
           "--cluster.bootstrap.dns.port_name=http",
           "--cluster.bootstrap.dns.protocol=udp",
           "--cluster.bootstrap.dns.server=127.0.0.1:53"},
          "DNS SRV _http._udp.troupe.test. at 127.0.0.1:53"},
    }));
  CAPTURE(args);
  runtime::config_schema schema;
  declare_dns_discovery_config(schema);
  auto cfg = load(schema, args);
  REQUIRE(cfg);
  auto d = dns_discovery_from_config(*cfg, 8558);
  REQUIRE(d);
  CHECK((*d)->describe() == described);
}

TEST_CASE("dns discovery: make refuses bad options naming the option") {
  dns_discovery_options opts;
  opts.service_name = "troupe.test";
  opts.record_type = dns_record_type::srv;
  auto ok = dns_discovery::make(opts);
  REQUIRE(ok);
  CHECK((*ok)->describe()
        == "DNS SRV _management._tcp.troupe.test at the system resolver");
  opts.server = "localhost:53";
  auto bad = dns_discovery::make(opts);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == static_cast<uint8_t>(errc::invalid_settings));
  CHECK(bad.error().message
        == "dns discovery: server \"localhost:53\": \"localhost\" is not an IP "
           "address (the DNS server is named by address; IPv6 in brackets: "
           "[fd00::a]:53)");
}

TEST_CASE("dns discovery: record types parse and print as the config key "
          "writes them") {
  CHECK(parse_dns_record_type("a") == dns_record_type::a);
  CHECK(parse_dns_record_type("srv") == dns_record_type::srv);
  CHECK_FALSE(parse_dns_record_type("SRV").has_value());
  CHECK_FALSE(parse_dns_record_type("aaaa").has_value());
  CHECK(std::string{to_string(dns_record_type::a)} == "a");
  CHECK(std::string{to_string(dns_record_type::srv)} == "srv");
}
