#include <catch2/catch.hpp>

#include "troupe/lease/errc.hpp"
#include "troupe/lease/lease_settings.hpp"

using namespace std::chrono_literals;
using troupe::lease::lease_settings;

namespace {

lease_settings valid() {
  lease_settings s;
  s.name = "jobs";
  s.owner = "node-a";
  s.ttl = 15s;
  return s;
}

} // namespace

TEST_CASE("lease_settings: defaults follow the seed and DESIGN.md §10") {
  auto s = valid().with_defaults();
  CHECK(s.renewal_interval == 5s);      // ttl / 3
  CHECK(s.safety_margin == 1500ms);     // max(ttl / 10, 200ms)
  CHECK(s.operation_timeout == 2500ms); // min(5s, renewal_interval / 2)
  CHECK(s.acquire_retries == 3);
  CHECK(s.acquire_retry_delay == 200ms);
  auto small = valid();
  small.ttl = 1s;
  auto d = small.with_defaults();
  CHECK(d.safety_margin == 200ms);
  CHECK(d.operation_timeout == d.renewal_interval / 2);
  CHECK_FALSE(validate(d));
  CHECK_FALSE(validate(s));
}

TEST_CASE("lease_settings: explicit values are kept by with_defaults") {
  auto s = valid();
  s.renewal_interval = 2s;
  s.safety_margin = 300ms;
  s.operation_timeout = 1s;
  auto d = s.with_defaults();
  CHECK(d.renewal_interval == 2s);
  CHECK(d.safety_margin == 300ms);
  CHECK(d.operation_timeout == 1s);
}

TEST_CASE("lease_settings: invalid settings name the field and the value") {
  using mutate = void (*)(lease_settings&);
  using row = std::tuple<std::string, mutate, std::string>;
  auto [label, change, needle]
    = GENERATE(table<std::string, mutate, std::string>({
      row{"empty name", [](lease_settings& s) { s.name.clear(); },
          "name must not be empty"},
      row{"long name",
          [](lease_settings& s) { s.name = std::string(254, 'x'); },
          "name is 254 bytes long"},
      row{"control char", [](lease_settings& s) { s.name = "a\nb"; },
          "name contains a control character"},
      row{"empty owner", [](lease_settings& s) { s.owner.clear(); },
          "owner must not be empty"},
      row{"owner newline", [](lease_settings& s) { s.owner = "x\n"; },
          "owner contains a control character"},
      row{"zero ttl", [](lease_settings& s) { s.ttl = 0s; },
          "ttl 0s must be positive"},
      row{"renewal >= ttl", [](lease_settings& s) { s.renewal_interval = 20s; },
          "renewal_interval 20s must be shorter than ttl 15s"},
      row{"renewal + margin >= ttl",
          [](lease_settings& s) {
            s.renewal_interval = 14s;
            s.safety_margin = 1s;
          },
          "renewal_interval 14s plus safety_margin 1s"},
      row{"negative margin", [](lease_settings& s) { s.safety_margin = -1s; },
          "safety_margin -1s must not be negative"},
      row{"zero retries", [](lease_settings& s) { s.acquire_retries = 0; },
          "acquire_retries must be at least 1"},
      row{"negative delay",
          [](lease_settings& s) { s.acquire_retry_delay = -5ms; },
          "acquire_retry_delay"},
      row{"huge ttl (overflow guard)",
          [](lease_settings& s) { s.ttl = std::chrono::hours{2562047}; },
          "is longer than 24h"},
      row{"no room for a renewal retry",
          [](lease_settings& s) {
            s.ttl = 1s;
            s.renewal_interval = 500ms;
            s.operation_timeout = 200ms;
            s.safety_margin = 200ms;
          },
          "would leave no time for a retry"},
      row{"timeout > renewal",
          [](lease_settings& s) { s.operation_timeout = 6s; },
          "operation_timeout 6s must not exceed renewal_interval 5s"},
    }));
  INFO(label);
  auto s = valid();
  change(s);
  auto err = validate(s.with_defaults());
  REQUIRE(err);
  CHECK(err.category == "lease");
  CHECK(err.code
        == static_cast<uint8_t>(troupe::lease::errc::invalid_settings));
  CHECK_THAT(err.message, Catch::Contains(needle));
}
