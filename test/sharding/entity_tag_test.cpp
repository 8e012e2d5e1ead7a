#include <catch2/catch.hpp>

#include "troupe/sharding/entity_tag.hpp"
#include "troupe/sharding/errc.hpp"

using namespace troupe::sharding;

TEST_CASE("entity tag: entity and shard round-trip, any bytes in the ids") {
  auto [entity, shard] = GENERATE(table<std::string, std::string>({
    {"user-42", "17"},
    {"a", "0"},
    {std::string("nul\0inside", 10), "shard\xff"},
    {std::string(300, 'e'), "1023"},
  }));
  std::string tag;
  REQUIRE(!make_entity_tag(tag, entity, shard));
  CHECK(tag.size() == 2 + entity.size() + shard.size());
  CHECK(static_cast<uint8_t>(tag[0]) == entity.size() >> 8);
  CHECK(static_cast<uint8_t>(tag[1]) == (entity.size() & 0xFF));
  auto x = parse_entity_tag(tag);
  REQUIRE(x);
  CHECK(x->entity == entity);
  CHECK(x->shard == shard);
}

TEST_CASE("entity tag: ids too long for a tag are refused, naming lengths") {
  std::string tag = "old";
  auto err
    = make_entity_tag(tag, std::string(65000, 'e'), std::string(534, 's'));
  REQUIRE(err);
  CHECK(err.code == static_cast<uint8_t>(errc::unmappable_message));
  CHECK(err.message.find("65000 bytes") != std::string::npos);
  CHECK(err.message.find("534 bytes") != std::string::npos);
  CHECK(tag == "old");
  CHECK(!make_entity_tag(tag, std::string(65000, 'e'), std::string(533, 's')));
}

TEST_CASE("entity tag: malformed tags are errors naming the fault") {
  auto [tag, says] = GENERATE(table<std::string, std::string>({
    {"", "shorter than its length field"},
    {std::string("\0", 1), "shorter than its length field"},
    {std::string("\0\5abc", 5), "entity length 5 exceeds the 3 bytes left"},
    {std::string("\1\0abc", 5), "entity length 256 exceeds the 3 bytes left"},
    {std::string("\0\0abc", 5), "empty entity id"},
    {std::string("\0\3abc", 5), "empty shard id"},
  }));
  auto x = parse_entity_tag(tag);
  REQUIRE_FALSE(x);
  CHECK(x.error().code == static_cast<uint8_t>(errc::unmappable_message));
  INFO(x.error().message);
  CHECK(x.error().message.find(says) != std::string::npos);
}
