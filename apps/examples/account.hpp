#pragma once

// The entity of docs/guides/sharding-with-lease.md: a bank account that
// adds each deposit (an int64_t amount, in cents) to its balance. One
// incarnation per account id lives in the cluster at a time, wherever its
// shard is; its balance lives in memory only (an application keeps it in a
// store, see the guide).

#include <cstdint>
#include <cstdio>
#include <memory>

#include <caf/event_based_actor.hpp>

#include "troupe/sharding/sharding.hpp"

inline caf::behavior account(caf::event_based_actor*,
                             const troupe::sharding::entity_context& ctx) {
  auto balance = std::make_shared<int64_t>(0);
  return {
    [ctx, balance](int64_t amount) {
      *balance += amount;
      std::printf("account %s (shard %s on %s): balance %lld\n",
                  ctx.entity.c_str(), ctx.shard.c_str(),
                  to_string(ctx.node).c_str(),
                  static_cast<long long>(*balance));
      std::fflush(stdout);
    },
  };
}
