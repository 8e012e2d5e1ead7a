#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/meta/type_name.hpp>

/// @file
/// Message types of the remoting tests: registered ones (a struct with a
/// string and a vector, and an acknowledgement) and one never registered.

namespace troupe::test {

struct order {
  std::string symbol;
  int64_t qty = 0;
  std::vector<double> prices;

  friend bool operator==(const order&, const order&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, order& x) {
  return f(caf::meta::type_name("order"), x.symbol, x.qty, x.prices);
}

struct ack {
  int64_t total = 0;
  std::string who;

  friend bool operator==(const ack&, const ack&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, ack& x) {
  return f(caf::meta::type_name("ack"), x.total, x.who);
}

/// Never registered with add_message_type.
struct unregistered_thing {
  int32_t x = 0;
};

template <class Inspector>
auto inspect(Inspector& f, unregistered_thing& x) {
  return f(x.x);
}

inline void add_test_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<order>("troupe.test.order");
  cfg.add_message_type<ack>("troupe.test.ack");
}

} // namespace troupe::test
