#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/cluster/protocol_version.hpp"

using namespace troupe::cluster;

TEST_CASE("protocol version: same major talks whatever the minors, another "
          "major is refused") {
  using row = std::tuple<std::string, protocol_version, protocol_version, bool>;
  // label, this node, the peer, compatible
  auto [label, local, peer, compatible]
    = GENERATE(table<std::string, protocol_version, protocol_version, bool>({
      row{"same version", {1, 0}, {1, 0}, true},
      row{"same major, the peer's minor is newer", {1, 0}, {1, 4}, true},
      row{"same major, the peer's minor is older", {1, 4}, {1, 0}, true},
      row{"the peer's major is newer", {1, 4}, {2, 0}, false},
      row{"the peer's major is older", {2, 0}, {1, 9}, false},
    }));
  INFO(label);
  CHECK(is_compatible(local, peer) == compatible);
  CHECK(is_compatible(peer, local) == compatible);
}

TEST_CASE("protocol version: the refusal names both versions and what to "
          "do") {
  CHECK(to_string(protocol_version{1, 12}) == "1.12");
  auto text = protocol_mismatch({1, 3}, {2, 0}, "10.0.0.2:2552");
  CHECK(text.rfind("10.0.0.2:2552 speaks troupe wire protocol 2.0 and this "
                   "node 1.3: nodes of different protocol majors cannot form "
                   "one cluster.",
                   0)
        == 0);
  CHECK(text.find("run this node with a release of protocol major 2")
        != std::string::npos);
  CHECK(text.find("move the whole cluster to major 2 at once")
        != std::string::npos);
  // From the other side the same pair reads the other way round.
  auto back = protocol_mismatch({2, 0}, {1, 3}, "the dialing node");
  CHECK(back.find("speaks troupe wire protocol 1.3 and this node 2.0")
        != std::string::npos);
  CHECK(back.find("protocol major 1,") != std::string::npos);
  CHECK(back.find("to major 2 at once") != std::string::npos);
}

TEST_CASE("protocol version: this build speaks 2.0 (the cluster incarnation, "
          "ADR 0011)") {
  CHECK(current_protocol == protocol_version{2, 0});
  CHECK(protocol_major == 2);
}
