#include <catch2/catch.hpp>

#include "troupe/lease/lease_config.hpp"
#include "troupe/runtime/config_loader.hpp"

using namespace std::chrono_literals;
using namespace troupe;

namespace {

runtime::expected<runtime::config> load(const runtime::config_schema& schema,
                                        std::vector<std::string> args) {
  return runtime::load_config(schema, runtime::make_config_sources(args, {}));
}

} // namespace

TEST_CASE("lease_config: settings come from the lease.* keys") {
  runtime::config_schema schema;
  lease::declare_lease_config(schema);
  auto cfg = load(schema, {"--lease.ttl=20s", "--lease.acquire_retries=7",
                           "--lease.acquire_retry_delay=300ms"});
  REQUIRE(cfg);
  auto s = lease::settings_from_config(*cfg, "jobs", "a");
  CHECK(s.name == "jobs");
  CHECK(s.owner == "a");
  CHECK(s.ttl == 20s);
  CHECK(s.acquire_retries == 7);
  CHECK(s.acquire_retry_delay == 300ms);
  CHECK(s.with_defaults().renewal_interval
        == runtime::timespan{20s} / 3); // 0s = default
}

TEST_CASE("lease_config: backend selection names bad directories") {
  runtime::config_schema schema;
  lease::declare_lease_config(schema);
  auto cfg = load(schema, {"--lease.file.directory=/dev/null/leases"});
  REQUIRE(cfg);
  runtime::manual_clock clock;
  auto backend = lease::backend_from_config(*cfg, clock);
  REQUIRE_FALSE(backend);
  CHECK_THAT(backend.error().message, Catch::Contains("/dev/null/leases"));
  auto mem = load(schema, {"--lease.backend=in_memory"});
  REQUIRE(mem);
  auto in_memory = lease::backend_from_config(*mem, clock);
  REQUIRE(in_memory);
  CHECK((*in_memory)->describe() == "in-memory store");
}
