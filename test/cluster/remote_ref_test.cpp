#include <catch2/catch.hpp>

#include "troupe/cluster/remote_ref.hpp"

using namespace troupe::cluster;
using troupe::runtime::unique_address;

TEST_CASE("remote_ref: to_string and parse_remote_ref round-trip") {
  auto [text, ref] = GENERATE(table<std::string, remote_ref>({
    {"jobs@10.0.0.1:2552#1234", {{"10.0.0.1", 2552, 1234}, "jobs"}},
    {"a/b@node-1.svc:7000#0", {{"node-1.svc", 7000, 0}, "a/b"}},
    {"x@[::1]:2552#7", {{"::1", 2552, 7}, "x"}},
    {"@10.0.0.1:1#2", {{"10.0.0.1", 1, 2}, ""}},
  }));
  CHECK(to_string(ref) == text);
  auto parsed = parse_remote_ref(text);
  REQUIRE(parsed);
  CHECK(*parsed == ref);
}

TEST_CASE("remote_ref: parse errors name the input") {
  auto [text, says] = GENERATE(table<std::string, std::string>({
    {"jobs", "bad remote reference \"jobs\": missing '@'"},
    {"jobs@10.0.0.1:2552", "missing '#uid'"},
    {"jobs@:2552#1", "empty host"},
  }));
  auto parsed = parse_remote_ref(text);
  REQUIRE(!parsed);
  CHECK_THAT(parsed.error().message, Catch::Contains(says));
  CHECK_THAT(parsed.error().message, Catch::Contains(text));
}

TEST_CASE("remote_ref: ordering is node (host, port, uid) then name") {
  remote_ref x{{"10.0.0.1", 2552, 9}, "z"};
  remote_ref y{{"10.0.0.2", 2552, 1}, "a"};
  remote_ref z{{"10.0.0.2", 2552, 1}, "b"};
  CHECK(x < y);
  CHECK(y < z);
  CHECK(y == remote_ref{{"10.0.0.2", 2552, 1}, "a"});
  CHECK(y != remote_ref{{"10.0.0.2", 2552, 2}, "a"});
}

TEST_CASE("remote_ref: only a node with host and port and a name is "
          "addressable") {
  CHECK(remote_ref{{"h", 1, 0}, "n"}.is_addressable());
  CHECK(!remote_ref{{"h", 1, 5}, ""}.is_addressable());
  CHECK(!remote_ref{{"", 1, 5}, "n"}.is_addressable());
  CHECK(!remote_ref{{"h", 0, 5}, "n"}.is_addressable());
  CHECK(!remote_ref{}.is_addressable());
}
