// The lease.etcd.* keys, the etcd backend's construction checks and its
// settings rules (no etcd needed: nothing here sends a request).

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>

#include "troupe/lease/errc.hpp"
#include "troupe/lease/etcd_lease_backend.hpp"
#include "troupe/lease/etcd_lease_config.hpp"
#include "troupe/lease/lease_config.hpp"
#include "troupe/runtime/config_loader.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;

namespace {

runtime::expected<runtime::config> load(const runtime::config_schema& schema,
                                        std::vector<std::string> args) {
  return runtime::load_config(schema, runtime::make_config_sources(args, {}));
}

runtime::expected<std::shared_ptr<lease_backend>>
etcd_from(std::vector<std::string> args) {
  runtime::config_schema schema;
  declare_lease_config(schema);
  args.insert(args.begin(), "--lease.backend=etcd");
  auto cfg = load(schema, std::move(args));
  REQUIRE(cfg);
  runtime::manual_clock clock;
  return backend_from_config(*cfg, clock);
}

lease_settings settings(timespan ttl, timespan renewal = timespan{0},
                        timespan operation = timespan{0}) {
  lease_settings s;
  s.name = "jobs";
  s.owner = "a";
  s.ttl = ttl;
  s.renewal_interval = renewal;
  s.operation_timeout = operation;
  return s.with_defaults();
}

} // namespace

TEST_CASE("etcd config: lease.backend=etcd builds the backend from "
          "lease.etcd.* with the documented defaults") {
  auto b = etcd_from({});
  REQUIRE(b);
  CHECK((*b)->describe()
        == "etcd http://127.0.0.1:2379 (key prefix /troupe/leases/)");
  runtime::config_schema schema;
  declare_lease_config(schema);
  auto cfg
    = load(schema, {"--lease.etcd.endpoints=https://etcd-1:2379,"
                    "http://10.0.0.2:2379/",
                    "--lease.etcd.key_prefix=/app/", "--lease.etcd.user=app",
                    "--lease.etcd.password=s3cret-pw",
                    "--lease.etcd.request_timeout=800ms"});
  REQUIRE(cfg);
  auto o = etcd_options_from_config(*cfg);
  CHECK(o.endpoints
        == std::vector<std::string>{"https://etcd-1:2379",
                                    "http://10.0.0.2:2379/"});
  CHECK(o.key_prefix == "/app/");
  CHECK(o.user == "app");
  CHECK(o.password.reveal() == "s3cret-pw");
  CHECK(o.request_timeout == 800ms);
  CHECK(o.min_ttl == 2s);
  CHECK(cfg->render("lease.etcd.password") == "<redacted>");
  auto backend = etcd_backend_from_config(*cfg);
  REQUIRE(backend);
  CHECK((*backend)->describe()
        == "etcd https://etcd-1:2379,http://10.0.0.2:2379 (key prefix "
           "/app/)");
  CHECK_THAT((*backend)->describe(), !Catch::Contains("s3cret"));
}

TEST_CASE("etcd config: bad options are errors naming the key") {
  auto [args, expected]
    = GENERATE(table<std::vector<std::string>, std::string>({
      {{"--lease.etcd.endpoints=ftp://x:1"}, "lease.etcd.endpoints: "},
      {{"--lease.etcd.endpoints=http://x:2379/v3"}, "has a path"},
      {{"--lease.etcd.endpoints=http://user:pw@x:2379"}, "<redacted>@"},
      {{"--lease.etcd.password=pw"}, "lease.etcd.user is empty"},
      {{"--lease.etcd.user=app", "--lease.etcd.password=pw",
        "--lease.etcd.password_file=/etc/x"},
       "both set"},
      {{"--lease.etcd.user=app",
        "--lease.etcd.password_file=/nonexistent/etcd.pw"},
       "lease.etcd.password_file /nonexistent/etcd.pw: cannot read"},
      {{"--lease.etcd.endpoints=https://127.0.0.1:2379",
        "--lease.etcd.ca_file=/nonexistent/ca.pem"},
       "/nonexistent/ca.pem"},
    }));
  auto b = etcd_from(args);
  REQUIRE_FALSE(b);
  CHECK(b.error().code == static_cast<uint8_t>(errc::invalid_settings));
  CHECK_THAT(b.error().message, Catch::Contains(expected));
  CHECK_THAT(b.error().message, !Catch::Contains(":pw@"));
}

TEST_CASE("etcd config: validate refuses ttls etcd would change and request "
          "timeouts that do not fit the renewal") {
  auto b = etcd_from({"--lease.etcd.request_timeout=400ms"});
  REQUIRE(b);
  auto& backend = **b;
  CHECK_FALSE(backend.validate(settings(3s)));
  CHECK_FALSE(backend.validate(settings(15s)));
  auto [s, expected] = GENERATE_COPY(table<lease_settings, std::string>({
    {settings(2500ms), "lease.ttl 2500ms is not a whole number of seconds"},
    {settings(1s, 300ms, 100ms), "lease.ttl 1s is below etcd's minimum TTL "
                                 "2s (lease.etcd.min_ttl)"},
    {settings(3s, 400ms, 200ms), "lease.etcd.request_timeout 400ms must be "
                                 "shorter than lease.renewal_interval 400ms"},
    {settings(3s, 1s, 300ms), "lease.etcd.request_timeout 400ms must not "
                              "exceed operation_timeout 300ms"},
  }));
  auto err = backend.validate(s);
  REQUIRE(err);
  CHECK(err.code == static_cast<uint8_t>(errc::invalid_settings));
  CHECK_THAT(err.message, Catch::StartsWith("lease \"jobs\": "));
  CHECK_THAT(err.message, Catch::Contains(expected));
}

TEST_CASE("etcd config: the key must be valid UTF-8 without NUL") {
  auto bad = etcd_from(
    {"--lease.etcd.key_prefix=/l\xff/", "--lease.etcd.request_timeout=400ms"});
  REQUIRE(bad);
  auto err = (*bad)->validate(settings(3s));
  REQUIRE(err);
  CHECK_THAT(err.message, Catch::Contains("\"/l\\xff/jobs\" "
                                          "(lease.etcd.key_prefix + name) is "
                                          "not valid UTF-8"));
  etcd_lease_backend_options o;
  o.key_prefix = std::string{"/a\0/", 4};
  o.request_timeout = 400ms;
  auto nul = etcd_lease_backend::make(o);
  REQUIRE(nul);
  auto nul_err = (*nul)->validate(settings(3s));
  REQUIRE(nul_err);
  CHECK_THAT(nul_err.message, Catch::Contains("NUL"));
  o.key_prefix.clear();
  auto empty_prefix = etcd_lease_backend::make(o);
  REQUIRE(empty_prefix);
  CHECK_FALSE((*empty_prefix)->validate(settings(3s)));
  CHECK((*empty_prefix)->key_of("jobs") == "jobs");
}
