#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "remoting_test_types.hpp"
#include "troupe/cluster/remoting.hpp"

/// @file
/// Actors of the remoting tests: a recorder of what arrives and an acker
/// that answers orders.

namespace troupe::test {

using cluster::remote_down;
using cluster::remote_ref;
using cluster::remoting_handle;
using runtime::unique_address;

/// What a recorder actor received, in order. The recorder writes under
/// `mtx`; real-time tests read through `read` (deterministic ones may read
/// the fields directly: one thread).
struct recorded {
  std::vector<std::pair<remote_ref, order>> orders;
  std::vector<std::pair<remote_ref, ack>> acks;
  std::vector<remote_down> downs;
  // Every message in arrival order: "order 3", "ack 7", "down <cause>".
  std::vector<std::string> sequence;
  mutable std::mutex mtx;

  template <class F>
  auto read(F f) const {
    std::lock_guard guard{mtx};
    return f(*this);
  }

  size_t order_count() const {
    return read([](const recorded& r) { return r.orders.size(); });
  }

  size_t ack_count() const {
    return read([](const recorded& r) { return r.acks.size(); });
  }

  size_t down_count() const {
    return read([](const recorded& r) { return r.downs.size(); });
  }
};

/// Records orders, acks and remote_down messages.
inline caf::behavior recorder(caf::event_based_actor*,
                              std::shared_ptr<recorded> log) {
  return {
    [log](const remote_ref& from, const order& o) {
      std::lock_guard guard{log->mtx};
      log->orders.emplace_back(from, o);
      log->sequence.push_back("order " + std::to_string(o.qty));
    },
    [log](const remote_ref& from, const ack& a) {
      std::lock_guard guard{log->mtx};
      log->acks.emplace_back(from, a);
      log->sequence.push_back("ack " + std::to_string(a.total));
    },
    [log](const remote_ref&, int32_t x) {
      std::lock_guard guard{log->mtx};
      log->sequence.push_back("int " + std::to_string(x));
    },
    [log](const remote_down& d) {
      std::lock_guard guard{log->mtx};
      log->downs.push_back(d);
      log->sequence.push_back(std::string{"down "} + to_string(d.cause));
    },
  };
}

/// Answers each order with ack{qty * 10, name} to the sender's reply-to.
inline caf::behavior acker(caf::event_based_actor*, remoting_handle remoting,
                           std::string name) {
  return {
    [=](const remote_ref& from, const order& o) {
      if (from.is_addressable())
        remoting.tell(from, ack{o.qty * 10, name});
    },
  };
}

} // namespace troupe::test
