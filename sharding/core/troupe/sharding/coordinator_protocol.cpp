#include "troupe/sharding/coordinator_protocol.hpp"

#include <iterator>

namespace troupe::sharding {

const char* message_name(const to_coordinator& x) noexcept {
  static constexpr const char* names[]
    = {"register_region",    "get_shard_home", "shard_started",
       "begin_hand_off_ack", "shard_stopped",  "graceful_shutdown_request"};
  static_assert(std::size(names) == std::variant_size_v<to_coordinator>);
  return names[x.index()];
}

const char* message_name(const to_region& x) noexcept {
  static constexpr const char* names[] = {
    "coordinator_hello", "register_ack", "shard_home",           "host_shard",
    "begin_hand_off",    "hand_off",     "graceful_shutdown_ack"};
  static_assert(std::size(names) == std::variant_size_v<to_region>);
  return names[x.index()];
}

} // namespace troupe::sharding
