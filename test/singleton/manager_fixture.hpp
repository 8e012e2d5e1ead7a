#pragma once

// Drives manager engines of several nodes by hand: views in the membership
// fixtures' notation (test/cluster/membership_fixtures.hpp), hand-over
// messages routed between engines, simulated time, and the instance and
// lease reports a shell would make.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "membership_fixtures.hpp"
#include "troupe/singleton/manager_engine.hpp"

namespace singleton_test {

using membership_test::make_gossip;
using membership_test::node;
using troupe::cluster::membership_state;
using troupe::runtime::timestamp;
using namespace troupe::singleton;
using namespace std::chrono_literals;

/// One node's engine and what it was told to do.
struct managed_node {
  manager_engine engine;
  /// Every effect set the engine returned, in order.
  std::vector<manager_effects> effects;
  /// Messages sent and not yet delivered (by `deliver`).
  std::vector<outgoing> outbox;
  bool instance_running = false;
  uint64_t incarnation = 0;
  uint64_t token = 0;
  bool acquire_pending = false;
  bool release_pending = false;
  bool stop_pending = false;
  /// Kill requests (instance_stop_timeout) seen.
  int kills = 0;
  bool exit_held = false;
  bool stopped = false;

  managed_node(char self, manager_settings s,
               manager_bug bug = manager_bug::none)
    : engine(node(self), std::move(s), bug) {}

  const manager_effects& apply(manager_effects fx) {
    if (fx.stop_instance) {
      REQUIRE(instance_running);
      stop_pending = true;
    }
    if (fx.kill_instance) {
      REQUIRE(instance_running);
      REQUIRE(stop_pending);
      ++kills;
    }
    if (fx.release_lease)
      release_pending = true;
    if (fx.start) {
      REQUIRE_FALSE(instance_running);
      instance_running = true;
      incarnation = fx.start->incarnation;
      token = fx.start->fencing_token;
    }
    if (fx.acquire_lease)
      acquire_pending = true;
    if (fx.hold_exit)
      exit_held = *fx.hold_exit;
    if (fx.stopped)
      stopped = true;
    outbox.insert(outbox.end(), fx.send.begin(), fx.send.end());
    effects.push_back(std::move(fx));
    return effects.back();
  }

  /// Sent messages of kind T to `to` still in the outbox.
  template <class T>
  size_t sent(char to) const {
    return static_cast<size_t>(
      std::count_if(outbox.begin(), outbox.end(), [&](const outgoing& x) {
        return x.to == node(to) && std::holds_alternative<T>(x.message);
      }));
  }
};

/// A few nodes, their views and the clock.
struct manager_world {
  timestamp now{};
  std::map<char, managed_node> nodes;

  managed_node& add(char self, manager_settings s = {},
                    manager_bug bug = manager_bug::none) {
    return nodes.try_emplace(self, self, std::move(s), bug).first->second;
  }

  managed_node& operator[](char self) {
    return nodes.at(self);
  }

  /// Gives `self` the view `specs` (membership fixture notation).
  /// `observations` marks members unreachable ("a>b": a finds b
  /// unreachable).
  const manager_effects& view(char self, std::string_view specs,
                              std::string_view observations = "") {
    auto& n = nodes.at(self);
    return n.apply(n.engine.on_membership(
      membership_state{make_gossip(specs, "", observations), node(self)}, now));
  }

  /// Gives every node the same view.
  void view_all(std::string_view specs) {
    for (auto& [self, n] : nodes)
      view(self, specs);
  }

  /// Delivers `from`'s outbox to the engines it names (messages to nodes
  /// that are not in the world are dropped). Returns how many were
  /// delivered.
  size_t deliver(char from) {
    auto& n = nodes.at(from);
    auto out = std::move(n.outbox);
    n.outbox.clear();
    size_t count = 0;
    for (auto& msg : out) {
      auto to = msg.to.host.at(0);
      auto i = nodes.find(to);
      if (i == nodes.end())
        continue;
      i->second.apply(
        i->second.engine.on_message(node(from), msg.message, now));
      ++count;
    }
    return count;
  }

  /// Delivers every outbox until all are empty (at most `rounds` rounds).
  void settle(int rounds = 10) {
    for (int k = 0; k < rounds; ++k) {
      size_t count = 0;
      for (auto& [self, n] : nodes)
        count += deliver(self);
      if (count == 0)
        return;
    }
  }

  /// Drops every undelivered message.
  void drop_all() {
    for (auto& [self, n] : nodes)
      n.outbox.clear();
  }

  /// Reports that `self`'s instance terminated (after a stop request or by
  /// itself).
  const manager_effects& terminated(char self) {
    auto& n = nodes.at(self);
    REQUIRE(n.instance_running);
    n.instance_running = false;
    n.stop_pending = false;
    return n.apply(n.engine.on_instance_terminated(n.incarnation, now));
  }

  const manager_effects& acquired(char self, bool ok, uint64_t token) {
    auto& n = nodes.at(self);
    REQUIRE(n.acquire_pending);
    n.acquire_pending = false;
    return n.apply(n.engine.on_lease_acquired(ok, token, now));
  }

  const manager_effects& released(char self) {
    auto& n = nodes.at(self);
    REQUIRE(n.release_pending);
    n.release_pending = false;
    return n.apply(n.engine.on_lease_released(now));
  }

  const manager_effects& lost(char self) {
    auto& n = nodes.at(self);
    return n.apply(n.engine.on_lease_lost(n.token, now));
  }

  /// Advances the clock by `d`, ticking every engine at each of its due
  /// times on the way.
  void advance(troupe::runtime::timespan d) {
    auto until = now + d;
    for (;;) {
      std::optional<timestamp> next;
      for (auto& [self, n] : nodes)
        if (auto t = n.engine.next_tick(); t && *t <= until)
          if (!next || *t < *next)
            next = t;
      if (!next)
        break;
      now = std::max(now, *next);
      for (auto& [self, n] : nodes)
        if (auto t = n.engine.next_tick(); t && *t <= now)
          n.apply(n.engine.tick(now));
    }
    now = until;
  }

  /// How many nodes run an instance.
  int running() const {
    int count = 0;
    for (auto& [self, n] : nodes)
      count += n.instance_running ? 1 : 0;
    return count;
  }
};

inline manager_settings with_lease(manager_settings s = {}) {
  s.use_lease = true;
  return s;
}

/// One node 'a', alone and up, running its instance under the lease's
/// acquisition with fencing token `token`.
inline manager_world leased_oldest(uint64_t token,
                                   manager_settings s = with_lease()) {
  manager_world w;
  w.add('a', std::move(s));
  w.view('a', "a:up:1");
  w.acquired('a', true, token);
  return w;
}

} // namespace singleton_test
