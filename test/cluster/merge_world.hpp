#pragma once

// A few membership engines wired by host, for the engine tests of "a second
// cluster is detected and healed": messages are delivered every 100 ms
// step (uid 0: whoever lives at the host; another uid: dropped unless it is
// the live incarnation), a node can be cut off from a group, and a node
// whose engine stopped can be restarted with a new uid.

#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "troupe/cluster/membership_engine.hpp"

namespace merge_test {

using namespace std::chrono_literals;
using namespace troupe::cluster;

inline clock_reading at(std::chrono::milliseconds ms) {
  return {troupe::runtime::timestamp{std::chrono::hours{1} + ms},
          wall_time{std::chrono::milliseconds{1'700'000'000'000} + ms}};
}

/// Short timers (as the multi-process tests use), the probe every 2 s.
inline membership_settings short_settings() {
  membership_settings s;
  s.gossip_interval = 200ms;
  s.leader_actions_interval = 200ms;
  s.unreachable_nodes_reaper_interval = 200ms;
  s.seed_node_timeout = 1s;
  s.retry_unsuccessful_join_after = 1s;
  s.failure_detector.heartbeat_interval = 100ms;
  s.failure_detector.acceptable_heartbeat_pause = 1s;
  s.failure_detector.expected_response_after = 500ms;
  s.incarnation_probe_interval = 2s;
  return s;
}

struct merge_world {
  struct node {
    unique_address self;
    std::unique_ptr<membership_engine> engine;
    std::optional<self_stop> stopped;
    std::vector<std::string> errors;
  };

  std::map<std::string, node> nodes; // by host
  std::chrono::milliseconds t = 0ms;
  std::vector<std::pair<unique_address, outbound_message>> in_flight;
  /// Hosts that cannot talk to each other (both directions).
  std::set<std::pair<std::string, std::string>> cut;
  uint64_t next_uid = 100;
  planted_bug bug = planted_bug::none;

  static endpoint ep(const std::string& host) {
    return endpoint{host, 2552};
  }

  node& start(const std::string& host, std::vector<std::string> seeds,
              membership_settings s = short_settings()) {
    s.seed_nodes.clear();
    for (auto& h : seeds)
      s.seed_nodes.push_back(ep(h));
    auto& n = nodes[host];
    n.self = unique_address{host, 2552, ++next_uid};
    n.stopped.reset();
    join_config config{{"cluster.name", "t"}, {"troupe.protocol_major", "2"}};
    n.engine = std::make_unique<membership_engine>(
      n.self, std::set<std::string>{}, s, config, default_join_config_checker(),
      next_uid * 7919, bug);
    take(n, n.engine->start(at(t)));
    return n;
  }

  void take(node& n, membership_effects fx) {
    for (auto& line : fx.errors)
      n.errors.push_back(line);
    for (auto& s : fx.send)
      in_flight.emplace_back(n.self, std::move(s));
    if (fx.shutdown)
      n.stopped = fx.shutdown;
  }

  bool blocked(const std::string& x, const std::string& y) const {
    return cut.count({x, y}) > 0 || cut.count({y, x}) > 0;
  }

  /// Cuts every host of `xs` off from every host of `ys`.
  void partition(const std::vector<std::string>& xs,
                 const std::vector<std::string>& ys) {
    for (auto& x : xs)
      for (auto& y : ys)
        cut.insert({x, y});
  }

  void step() {
    t += 100ms;
    auto batch = std::move(in_flight);
    in_flight.clear();
    for (auto& [from, m] : batch) {
      auto i = nodes.find(m.to.host);
      if (i == nodes.end() || blocked(from.host, m.to.host))
        continue;
      auto& n = i->second;
      if (n.stopped || (m.to.uid != 0 && m.to.uid != n.self.uid))
        continue;
      take(n, n.engine->receive(from, m.message, at(t)));
    }
    for (auto& [host, n] : nodes)
      if (!n.stopped)
        take(n, n.engine->tick(at(t)));
  }

  template <class Pred>
  bool run_until(Pred pred, std::chrono::milliseconds limit = 30s) {
    for (auto end = t + limit; t < end; step())
      if (pred())
        return true;
    return pred();
  }

  const membership_engine& engine(const std::string& host) const {
    return *nodes.at(host).engine;
  }

  /// True when every host of `hosts` is a live member and sees exactly
  /// `hosts` as up members.
  bool all_up(const std::vector<std::string>& hosts) const {
    for (auto& h : hosts) {
      auto& n = nodes.at(h);
      if (n.stopped || !n.engine->is_member())
        return false;
      auto& g = n.engine->state().latest_gossip();
      if (g.members().size() != hosts.size())
        return false;
      for (auto& m : g.members())
        if (m.status != member_status::up)
          return false;
    }
    return true;
  }
};

} // namespace merge_test
