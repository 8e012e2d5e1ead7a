#include "troupe/sharding/entity_tag.hpp"

#include <fmt/format.h>

#include "troupe/sharding/errc.hpp"

namespace troupe::sharding {

runtime::error make_entity_tag(std::string& out, std::string_view entity,
                               std::string_view shard) {
  if (entity.size() + shard.size() + 2 > max_entity_tag_size)
    return runtime::make_error(
      errc::unmappable_message,
      fmt::format("an entity id of {} bytes and a shard id of {} bytes "
                  "exceed the {} bytes a message between regions can carry",
                  entity.size(), shard.size(), max_entity_tag_size - 2));
  out.clear();
  out.push_back(static_cast<char>(entity.size() >> 8));
  out.push_back(static_cast<char>(entity.size() & 0xFF));
  out.append(entity);
  out.append(shard);
  return {};
}

runtime::expected<entity_tag> parse_entity_tag(std::string_view tag) {
  auto bad = [&](std::string why) {
    return runtime::make_error(errc::unmappable_message,
                               "entity tag: " + std::move(why));
  };
  if (tag.size() < 2)
    return bad(
      fmt::format("{} bytes, shorter than its length field", tag.size()));
  auto n = (static_cast<size_t>(static_cast<uint8_t>(tag[0])) << 8)
           | static_cast<uint8_t>(tag[1]);
  if (n > tag.size() - 2)
    return bad(fmt::format("entity length {} exceeds the {} bytes left", n,
                           tag.size() - 2));
  entity_tag x{tag.substr(2, n), tag.substr(2 + n)};
  if (x.entity.empty())
    return bad("empty entity id");
  if (x.shard.empty())
    return bad("empty shard id");
  return x;
}

} // namespace troupe::sharding
