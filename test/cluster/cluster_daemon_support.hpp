#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include <caf/event_based_actor.hpp>

#include "troupe/cluster/cluster_handle.hpp"

/// @file
/// What the cluster daemon's tests share: an event recorder (a subscriber)
/// and the shortened settings of DESIGN.md §10.

namespace troupe::test {

using namespace std::chrono_literals;

/// What a subscriber received, in order: "snapshot <n members>" first,
/// then `to_string(event)` per event. Written under `mtx`.
struct event_log {
  std::vector<std::string> lines;
  std::vector<cluster::current_cluster_state> snapshots;
  mutable std::mutex mtx;

  std::vector<std::string> copy() const {
    std::lock_guard guard{mtx};
    return lines;
  }

  /// True if a line starts with `prefix` and contains `text`.
  bool has(const std::string& prefix, const std::string& text = "") const {
    std::lock_guard guard{mtx};
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.rfind(prefix, 0) == 0 && l.find(text) != std::string::npos;
    });
  }

  /// Index of the first line that starts with `prefix` and contains `text`
  /// (lines.size() if none).
  size_t index_of(const std::string& prefix,
                  const std::string& text = "") const {
    std::lock_guard guard{mtx};
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].rfind(prefix, 0) == 0
          && lines[i].find(text) != std::string::npos)
        return i;
    return lines.size();
  }
};

namespace detail {

template <class... Ts>
caf::behavior event_recorder_impl(std::shared_ptr<event_log> log,
                                  std::variant<Ts...>*) {
  return {
    [log](const cluster::current_cluster_state& s) {
      std::lock_guard guard{log->mtx};
      log->lines.push_back("snapshot " + std::to_string(s.members.size()));
      log->snapshots.push_back(s);
    },
    [log](const Ts& e) {
      std::lock_guard guard{log->mtx};
      log->lines.push_back(cluster::to_string(cluster::cluster_event{e}));
    }...,
  };
}

} // namespace detail

/// A subscriber that records into `log`.
inline caf::behavior event_recorder(caf::event_based_actor*,
                                    std::shared_ptr<event_log> log) {
  return detail::event_recorder_impl(
    std::move(log), static_cast<cluster::cluster_event*>(nullptr));
}

/// DESIGN.md §10's shortened settings: heartbeat 100 ms, acceptable pause
/// 1 s, gossip 200 ms, leader actions 200 ms, reaper 200 ms, seed node
/// timeout 1 s, join retry 1 s.
inline cluster::membership_settings short_settings() {
  cluster::membership_settings s;
  s.failure_detector.heartbeat_interval = 100ms;
  s.failure_detector.acceptable_heartbeat_pause = 1s;
  s.failure_detector.expected_response_after = 500ms;
  s.gossip_interval = 200ms;
  s.leader_actions_interval = 200ms;
  s.unreachable_nodes_reaper_interval = 200ms;
  s.seed_node_timeout = 1s;
  s.retry_unsuccessful_join_after = 1s;
  return s;
}

/// The join configuration of a node of cluster "test".
inline cluster::join_config test_join_config(std::string protocol = "1") {
  return {{"cluster.name", "test"},
          {"troupe.protocol_major", std::move(protocol)}};
}

/// Shutdown reasons a node's hook received.
struct shutdown_log {
  std::vector<std::string> reasons;
  mutable std::mutex mtx;

  cluster::shutdown_hook hook() {
    return [this](const cluster::self_stop& stop) {
      std::lock_guard guard{mtx};
      reasons.push_back(stop.text);
    };
  }

  size_t count() const {
    std::lock_guard guard{mtx};
    return reasons.size();
  }

  std::string first() const {
    std::lock_guard guard{mtx};
    return reasons.empty() ? std::string{} : reasons.front();
  }
};

/// The status of `node` in `s` ("" if not a member).
inline std::string status_in(const cluster::current_cluster_state& s,
                             const runtime::unique_address& node) {
  for (auto& m : s.members)
    if (m.address == node)
      return cluster::to_string(m.status);
  return "";
}

/// True if `s` has exactly `n` members, all up.
inline bool all_up(const cluster::current_cluster_state& s, size_t n) {
  return s.members.size() == n
         && std::all_of(s.members.begin(), s.members.end(), [](auto& m) {
              return m.status == cluster::member_status::up;
            });
}

} // namespace troupe::test
