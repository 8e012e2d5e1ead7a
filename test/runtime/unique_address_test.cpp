#include <catch2/catch.hpp>

#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/unique_address.hpp"

using troupe::runtime::parse_unique_address;
using troupe::runtime::unique_address;

TEST_CASE("unique_address: ordering is host bytewise, then port, then uid") {
  using row = std::tuple<unique_address, unique_address>;
  auto [lo, hi] = GENERATE(table<unique_address, unique_address>({
    row{{"10.0.0.1", 2552, 9}, {"10.0.0.2", 1, 1}},
    row{{"10.0.0.10", 9999, 9}, {"10.0.0.2", 1, 1}}, // bytewise, not numeric
    row{{"a", 1, 9}, {"a", 2, 1}}, row{{"a", 1, 1}, {"a", 1, 2}},
    row{{"B", 1, 1}, {"a", 1, 1}}, // 'B' < 'a' in bytes
  }));
  CHECK(lo < hi);
  CHECK_FALSE(hi < lo);
  CHECK(lo != hi);
}

TEST_CASE("unique_address: to_string and parse round-trip") {
  auto x = GENERATE(unique_address{"127.0.0.1", 2552, 42},
                    unique_address{"node-a.troupe.svc", 1, 0},
                    unique_address{"::1", 65535, 18446744073709551615ull});
  auto text = to_string(x);
  auto parsed = parse_unique_address(text);
  REQUIRE(parsed);
  CHECK(*parsed == x);
}

TEST_CASE("unique_address: IPv6 hosts are bracketed") {
  CHECK(to_string(unique_address{"::1", 2552, 7}) == "[::1]:2552#7");
}

TEST_CASE("unique_address: bad input names what was wrong") {
  using row = std::tuple<std::string, std::string>;
  auto [text, why] = GENERATE(table<std::string, std::string>({
    row{"host:1", "missing '#uid'"},
    row{"host:1#x", "uid is not"},
    row{"host#1", "missing ':port'"},
    row{"host:70000#1", "port is not"},
    row{":1#1", "empty host"},
    row{"host:#1", "port is not"},
  }));
  auto parsed = parse_unique_address(text);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().category == "runtime");
  CHECK(parsed.error().code
        == static_cast<uint8_t>(troupe::runtime::errc::bad_address));
  CHECK_THAT(parsed.error().message, Catch::Contains(why));
  CHECK_THAT(parsed.error().message, Catch::Contains(text));
}
