#include "troupe/sharding/shard_id.hpp"

#include <fmt/format.h>

#include "troupe/sharding/errc.hpp"

namespace troupe::sharding {

uint64_t stable_hash(std::string_view bytes) noexcept {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

runtime::expected<std::string> default_shard_id(std::string_view entity_id,
                                                uint32_t number_of_shards) {
  if (number_of_shards == 0)
    return runtime::make_error(errc::invalid_settings,
                               "sharding.number_of_shards must be at least 1, "
                               "got 0");
  return std::to_string(stable_hash(entity_id) % number_of_shards);
}

} // namespace troupe::sharding
