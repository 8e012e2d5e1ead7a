#include <map>
#include <string>

#include <catch2/catch.hpp>

#include "troupe/sharding/errc.hpp"
#include "troupe/sharding/shard_id.hpp"

using namespace troupe::sharding;

TEST_CASE("shard id: FNV-1a 64 of the entity id's bytes, the published test "
          "vectors") {
  // From the FNV reference (Fowler/Noll/Vo): "" and "a" and "foobar".
  CHECK(stable_hash("") == 0xcbf29ce484222325ull);
  CHECK(stable_hash("a") == 0xaf63dc4c8601ec8cull);
  CHECK(stable_hash("foobar") == 0x85944171f73967e8ull);
}

TEST_CASE("shard id: the default shard is the hash modulo number_of_shards, "
          "as a decimal") {
  CHECK(*default_shard_id("foobar", 100)
        == std::to_string(0x85944171f73967e8ull % 100));
  CHECK(*default_shard_id("account-42", 1) == "0");
  auto bad = default_shard_id("x", 0);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message
        == "sharding.number_of_shards must be at least 1, got 0");
}

TEST_CASE("shard id: 100,000 entity ids spread evenly over 100 shards") {
  std::map<std::string, int> per_shard;
  for (int k = 0; k < 100000; ++k)
    ++per_shard[*default_shard_id("account-" + std::to_string(k), 100)];
  CHECK(per_shard.size() == 100);
  for (auto& [shard, n] : per_shard) {
    INFO("shard " << shard);
    CHECK(n > 800); // 1000 expected
    CHECK(n < 1200);
  }
}
