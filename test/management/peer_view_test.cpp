// The cluster-wide singleton and lease views merged from the members' own
// reports (peer_view.hpp): the host is who runs it, the holder is who holds
// it, never who should.

#include <catch2/catch.hpp>

#include "troupe/management/peer_view.hpp"

using namespace troupe::management;

namespace {

peer_view node(std::string name, std::vector<peer_singleton> s,
               std::vector<peer_lease> l = {},
               std::vector<peer_region> r = {}) {
  return peer_view{std::move(name), std::move(s), std::move(l), std::move(r)};
}

} // namespace

TEST_CASE("management: the singleton host is the member that runs it") {
  struct row {
    const char* what;
    std::vector<peer_view> peers;
    std::optional<std::string> host;
    std::optional<uint64_t> token;
    bool here;
  };
  std::vector<row> rows{
    {"nobody runs it",
     {node("a", {{"jobs", false, 0}}), node("b", {{"jobs", false, 0}})},
     std::nullopt,
     std::nullopt,
     false},
    {"b runs it under token 4",
     {node("a", {{"jobs", false, 0}}), node("b", {{"jobs", true, 4}})},
     "b",
     4,
     false},
    {"this node runs it without a lease",
     {node("a", {{"jobs", true, 0}}), node("b", {{"jobs", false, 0}})},
     "a",
     std::nullopt,
     true},
    {"two claim it: the newer token wins",
     {node("a", {{"jobs", true, 7}}), node("b", {{"jobs", true, 6}})},
     "a",
     7,
     true},
    {"two claim it with one token: the lower address, deterministically",
     {node("c", {{"jobs", true, 2}}), node("b", {{"jobs", true, 2}})},
     "b",
     2,
     false},
    {"the same, listed the other way round",
     {node("b", {{"jobs", true, 2}}), node("c", {{"jobs", true, 2}})},
     "b",
     2,
     false},
  };
  for (auto& r : rows) {
    INFO(r.what);
    auto v = merge_singletons(r.peers, "a");
    REQUIRE(v.size() == 1);
    CHECK(v[0].type == "jobs");
    CHECK(v[0].host == r.host);
    CHECK(v[0].fencing_token == r.token);
    CHECK(v[0].running_here == r.here);
  }
}

TEST_CASE("management: every singleton type any member manages is listed, "
          "sorted") {
  auto v = merge_singletons(
    {node("a", {{"z", false, 0}, {"sharding.acct", true, 3}}),
     node("b", {{"m", true, 0}})},
    "b");
  REQUIRE(v.size() == 3);
  CHECK(v[0].type == "m");
  CHECK(v[0].running_here);
  CHECK(v[1].type == "sharding.acct");
  CHECK(v[1].host == "a");
  CHECK(v[2].type == "z");
  CHECK_FALSE(v[2].host);
}

TEST_CASE("management: the lease holder is the member that holds it") {
  using std::chrono::milliseconds;
  struct row {
    const char* what;
    std::vector<peer_view> peers;
    std::string holder;
    std::optional<uint64_t> token;
    bool here;
  };
  std::vector<row> rows{
    {"free",
     {node("a", {}, {{"l", "a-owner", false, 3, 15000}})},
     "",
     std::nullopt,
     false},
    {"held by b's owner",
     {node("a", {}, {{"l", "a-owner", false, 3, 15000}}),
      node("b", {}, {{"l", "b-owner", true, 4, 15000}})},
     "b-owner",
     4,
     false},
    {"held here",
     {node("a", {}, {{"l", "a-owner", true, 9, 15000}})},
     "a-owner",
     9,
     true},
    {"two local deadlines overlap: the newer token is the holder",
     {node("a", {}, {{"l", "a-owner", true, 5, 15000}}),
      node("b", {}, {{"l", "b-owner", true, 6, 15000}})},
     "b-owner",
     6,
     false},
  };
  for (auto& r : rows) {
    INFO(r.what);
    auto v = merge_leases(r.peers, "a");
    REQUIRE(v.size() == 1);
    CHECK(v[0].name == "l");
    CHECK(v[0].holder == r.holder);
    CHECK(v[0].fencing_token == r.token);
    CHECK(v[0].held_here == r.here);
    CHECK(v[0].ttl == milliseconds{15000});
  }
}

TEST_CASE("management: entities per node come from that node's report") {
  std::vector<peer_view> peers{node("a", {}, {}, {{"acct", 12}, {"cart", 3}}),
                               node("b", {}, {}, {{"acct", 5}})};
  CHECK(entities_of(peers, "a", "acct") == 12);
  CHECK(entities_of(peers, "a", "cart") == 3);
  CHECK(entities_of(peers, "b", "acct") == 5);
  CHECK(entities_of(peers, "b", "cart") == 0);
  CHECK(entities_of(peers, "c", "acct") == 0);
}
