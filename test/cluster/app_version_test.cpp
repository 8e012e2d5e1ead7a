#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include <fmt/format.h>

#include "troupe/cluster/app_version.hpp"

using namespace troupe::cluster;

namespace {

app_version v(std::string_view text) {
  auto x = parse_app_version(text);
  REQUIRE(x);
  return *x;
}

} // namespace

TEST_CASE("app_version: versions parse into numbers and a qualifier") {
  using row = std::tuple<std::string, std::string>;
  // text, canonical form
  auto [text, canonical] = GENERATE(table<std::string, std::string>({
    row{"0.0.0", "0.0.0"},
    row{"1", "1.0.0"},
    row{"1.2", "1.2.0"},
    row{"1.2.3", "1.2.3"},
    row{"10.20.30", "10.20.30"},
    row{"007.1", "7.1.0"},
    row{"4294967295", "4294967295.0.0"},
    row{"1.2.3-RC1", "1.2.3-RC1"},
    row{"2-SNAPSHOT", "2.0.0-SNAPSHOT"},
    row{"1.2-rc.1_b-2", "1.2.0-rc.1_b-2"},
  }));
  INFO(text);
  CHECK(to_string(v(text)) == canonical);
}

TEST_CASE("app_version: a malformed version is an error naming the text and "
          "what is wrong") {
  using row = std::tuple<std::string, std::string>;
  // text, what the message says is wrong
  auto [text, why] = GENERATE(table<std::string, std::string>({
    row{"", "it is empty"},
    row{"abc", "\"abc\" is not a number"},
    row{"1.x", "\"x\" is not a number"},
    row{"1..2", "\"\" is not a number"},
    row{"1.2.", "\"\" is not a number"},
    row{".1", "\"\" is not a number"},
    row{"v1.2", "\"v1\" is not a number"},
    row{"1.2.3.4", "it has more than three numbers"},
    row{"1.2.3-", "the qualifier after '-' is empty"},
    row{"1.2.3-RC 1", "the qualifier \"RC 1\" may only hold letters"},
    row{"1.0.0+3-73475dce26", "\"0+3\" is not a number"},
    row{"4294967296", "4294967296 is larger than 4294967295"},
    row{" 1", "\" 1\" is not a number"},
  }));
  INFO(text);
  auto x = parse_app_version(text);
  REQUIRE_FALSE(x);
  auto& msg = x.error().message;
  CHECK(msg.find(fmt::format("\"{}\" is not a version: ", text)) == 0);
  CHECK(msg.find(why) != std::string::npos);
  CHECK(msg.find("e.g. \"1.2.3\"") != std::string::npos);
}

TEST_CASE("app_version: compared segment by segment numerically, a release "
          "newer than its pre-releases (Akka's Version)") {
  using row = std::tuple<std::string, std::string, int>;
  // x, y, sign of x <=> y
  auto [x, y, sign] = GENERATE(table<std::string, std::string, int>({
    row{"1.2.3", "1.2.3", 0},
    row{"1.2", "1.2.0", 0},
    row{"1", "1.0.0", 0},
    row{"2", "1.9.9", 1},
    row{"1.10", "1.9", 1},
    row{"1.2.10", "1.2.9", 1},
    row{"0.0.1", "0.0.0", 1},
    row{"1.2.3", "1.2.3-RC1", 1},
    row{"1.2.3-RC2", "1.2.3-RC1", 1},
    row{"1.2.4-RC1", "1.2.3", 1},
    row{"1.2.3-RC10", "1.2.3-RC2", -1}, // bytewise qualifiers (Akka too)
    row{"0.0.0", "1", -1},
  }));
  INFO(x << " vs " << y);
  auto c = v(x) <=> v(y);
  CHECK((c < 0 ? -1 : c > 0 ? 1 : 0) == sign);
  auto back = v(y) <=> v(x);
  CHECK((back < 0 ? -1 : back > 0 ? 1 : 0) == -sign);
  CHECK((v(x) == v(y)) == (sign == 0));
}

TEST_CASE("app_version: the default is 0.0.0, the oldest release") {
  CHECK(app_version{} == v("0.0.0"));
  CHECK(app_version{} < v("0.0.1"));
  CHECK(to_string(app_version{}) == "0.0.0");
}
