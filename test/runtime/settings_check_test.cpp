#include <catch2/catch.hpp>

#include <string>

#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/settings_check.hpp"

using namespace std::chrono_literals;
using namespace troupe::runtime;

namespace {

std::string message_of(const error& err) {
  CHECK(err.code == static_cast<uint8_t>(errc::bad_config_value));
  return err.message;
}

} // namespace

TEST_CASE("settings checks: each rule's boundaries pass, the values just "
          "beyond fail with the key and the value named") {
  CHECK_FALSE(check_positive_duration("m.t", 1ns));
  CHECK_FALSE(check_positive_duration("m.t", 24h));
  CHECK(message_of(check_positive_duration("m.t", 0s))
        == "m.t must be greater than 0, got 0s");
  CHECK(message_of(check_positive_duration("m.t", 24h + 1ns))
        == "m.t must be at most 24h, got 86400000000001ns");
  CHECK_FALSE(check_interval("m.i", 1ms));
  CHECK_FALSE(check_interval("m.i", 24h));
  CHECK(message_of(check_interval("m.i", 999us))
        == "m.i must be at least 1ms, got 999us");
  CHECK(message_of(check_interval("m.i", 0s))
        == "m.i must be greater than 0, got 0s");
  CHECK(message_of(check_interval("m.i", 25h))
        == "m.i must be at most 24h, got 25h");
  CHECK_FALSE(check_duration_up_to_a_day("m.d", 0s));
  CHECK_FALSE(check_duration_up_to_a_day("m.d", 24h));
  CHECK(message_of(check_duration_up_to_a_day("m.d", 25h))
        == "m.d must be in [0, 24h], got 25h");
  CHECK(message_of(check_duration_up_to_a_day("m.d", -1s))
        == "m.d must be in [0, 24h], got -1s");
  CHECK_FALSE(check_integer_in("m.n", 1, 1, 10));
  CHECK_FALSE(check_integer_in("m.n", 10, 1, 10));
  CHECK(message_of(check_integer_in("m.n", 0, 1, 10))
        == "m.n must be in [1, 10], got 0");
  CHECK(message_of(check_integer_in("m.n", 11, 1, 10))
        == "m.n must be in [1, 10], got 11");
  CHECK_FALSE(check_count_at_most("m.c", 5, 5));
  CHECK(message_of(check_count_at_most("m.c", 6, 5))
        == "m.c must be at most 5, got 6");
}

TEST_CASE("settings checks: auto_or_duration gives the auto value, a "
          "duration, or an error quoting the text") {
  CHECK(*auto_or_duration("m.margin", "auto", 7s) == 7s);
  CHECK(*auto_or_duration("m.margin", "250ms", 7s) == 250ms);
  auto bad = auto_or_duration("m.margin", "soon", 7s);
  REQUIRE_FALSE(bad);
  CHECK(message_of(bad.error())
        == "m.margin must be auto or a duration with a unit, got \"soon\"");
  CHECK_FALSE(auto_or_duration("m.margin", "5", 7s));
}
