#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "troupe/test/journal_file.hpp"

/// @file
/// The oracle of the multi-process sharding tests (DESIGN.md §10 "Demo and
/// chaos oracles"): the journal cluster_node's entities and coordinator
/// watch append to and the client's acknowledgement log
/// (test/cluster/cluster_node.cpp documents both), read back and judged
/// here, independently of the nodes' own reports. Times are CLOCK_MONOTONIC
/// nanoseconds, one clock for every process of the host.
///
/// A process that died without writing an incarnation's `stopped` line (kill
/// -9) ends that incarnation at its exit time, which the test records after
/// reaping it (`exits`: node address -> ns); an incarnation on a node still
/// running without a `stopped` line is live until the end of time.

namespace troupe::test {

/// One incarnation of an entity (or of the coordinator: `entity` empty).
struct incarnation_window {
  std::string entity;
  std::string node;
  uint64_t incarnation = 0;
  uint64_t start_ns = 0;
  std::optional<uint64_t> stop_ns;
  uint64_t handled = 0;
};

/// The journal, parsed.
struct sharding_journal {
  /// By (entity, node, incarnation).
  std::map<std::tuple<std::string, std::string, uint64_t>, incarnation_window>
    incarnations;
  /// By (node, incarnation).
  std::map<std::pair<std::string, uint64_t>, incarnation_window> coordinators;
  /// Message id -> the incarnations that handled it, and when.
  std::map<uint64_t, std::vector<std::pair<incarnation_window, uint64_t>>>
    handled;
  /// Lines the parser did not understand (must be none).
  std::vector<std::string> malformed;
  uint64_t first_start_ns = std::numeric_limits<uint64_t>::max();
};

inline sharding_journal read_sharding_journal(const std::filesystem::path& p) {
  sharding_journal j;
  for (const auto& text : journal_lines(p)) {
    std::istringstream line{text};
    uint64_t ns = 0;
    std::string kind;
    line >> ns >> kind;
    if (kind == "coordinator_started" || kind == "coordinator_stopped") {
      incarnation_window w;
      line >> w.node >> w.incarnation;
      if (!line) {
        j.malformed.push_back(text);
        continue;
      }
      auto& c = j.coordinators[{w.node, w.incarnation}];
      if (c.node.empty()) {
        c = w;
        c.start_ns = ns;
      }
      if (kind == "coordinator_stopped")
        c.stop_ns = ns;
      continue;
    }
    incarnation_window w;
    line >> w.entity >> w.node >> w.incarnation;
    uint64_t id = 0;
    if (kind == "handled")
      line >> id;
    if (!line
        || (kind != "started" && kind != "stopped" && kind != "handled")) {
      j.malformed.push_back(text);
      continue;
    }
    auto& x = j.incarnations[{w.entity, w.node, w.incarnation}];
    if (x.node.empty()) {
      x = w;
      x.start_ns = ns; // replaced by the started line (which comes first)
    }
    if (kind == "started") {
      x.start_ns = ns;
      j.first_start_ns = std::min(j.first_start_ns, ns);
    } else if (kind == "stopped") {
      x.stop_ns = ns;
    } else {
      ++x.handled;
      j.handled[id].emplace_back(x, ns);
    }
  }
  return j;
}

/// One acknowledgement from the client log: `acked <id> <entity> <node>
/// <incarnation>`.
struct ack_entry {
  uint64_t id = 0;
  std::string entity;
  std::string node;
  uint64_t incarnation = 0;
};

inline std::vector<ack_entry> read_acks(const std::filesystem::path& p) {
  std::vector<ack_entry> result;
  for (const auto& text : journal_lines(p)) {
    std::istringstream line{text};
    std::string kind;
    ack_entry a;
    line >> kind >> a.id >> a.entity >> a.node >> a.incarnation;
    if (kind == "acked" && line)
      result.push_back(std::move(a));
  }
  return result;
}

/// The exit times of the processes that died (node address -> ns).
using exit_times = std::map<std::string, uint64_t>;

/// When `w` ended: its stopped line, else its node's exit, else never.
inline uint64_t end_of(const incarnation_window& w, const exit_times& exits) {
  if (w.stop_ns)
    return *w.stop_ns;
  if (auto i = exits.find(w.node); i != exits.end())
    return i->second;
  return std::numeric_limits<uint64_t>::max();
}

/// The first pair of windows in `ws` (of one entity, or of the coordinator)
/// that overlap, or empty.
inline std::string first_overlap(std::vector<incarnation_window> ws,
                                 const exit_times& exits) {
  std::sort(ws.begin(), ws.end(), [](const auto& x, const auto& y) {
    return x.start_ns < y.start_ns;
  });
  const incarnation_window* latest = nullptr; // the one ending last so far
  for (const auto& w : ws) {
    if (latest && w.start_ns <= end_of(*latest, exits)) {
      std::ostringstream out;
      out << (w.entity.empty() ? "coordinator" : w.entity) << ": "
          << latest->node << " incarnation " << latest->incarnation << " (from "
          << latest->start_ns << " to " << end_of(*latest, exits)
          << ") overlaps " << w.node << " incarnation " << w.incarnation
          << " (from " << w.start_ns << ")";
      return out.str();
    }
    if (!latest || end_of(w, exits) > end_of(*latest, exits))
      latest = &w;
  }
  return {};
}

/// The verdict over a journal and a client log.
struct sharding_verdict {
  size_t incarnations = 0;
  size_t entities = 0;
  size_t handled = 0;
  size_t acked = 0;
  size_t coordinators = 0;
  /// Each a list of the first few violations (empty: none).
  std::vector<std::string> two_live_incarnations;
  std::vector<std::string> handled_outside_window;
  std::vector<std::string> handled_twice;
  std::vector<std::string> ack_not_matching;
  std::vector<std::string> two_coordinators;
  std::vector<std::string> malformed;

  bool ok() const {
    return two_live_incarnations.empty() && handled_outside_window.empty()
           && handled_twice.empty() && ack_not_matching.empty()
           && two_coordinators.empty() && malformed.empty();
  }
};

inline std::string to_string(const sharding_verdict& v) {
  std::ostringstream out;
  out << v.incarnations << " incarnations of " << v.entities
      << " entities handled " << v.handled << " messages, " << v.acked
      << " acknowledged; " << v.coordinators << " coordinator incarnations";
  auto list = [&](const char* what, const std::vector<std::string>& xs) {
    for (const auto& x : xs)
      out << "\n  " << what << ": " << x;
  };
  list("two live incarnations", v.two_live_incarnations);
  list("handled outside its incarnation", v.handled_outside_window);
  list("handled twice", v.handled_twice);
  list("ack does not match", v.ack_not_matching);
  list("two coordinators", v.two_coordinators);
  list("malformed line", v.malformed);
  return out.str();
}

/// Judges the journal and the client log: at most one live incarnation per
/// entity and one coordinator at any time (I2; with `exits` for the
/// processes that died), every handled line inside its incarnation's
/// window, no message id handled twice, every acknowledged id handled
/// exactly once and by the incarnation its ack names. Reads the client log
/// first: every ack in it was written after its handled line.
inline sharding_verdict judge_sharding(const std::filesystem::path& journal,
                                       const std::filesystem::path& client_log,
                                       const exit_times& exits) {
  constexpr size_t max_listed = 5;
  auto acks = read_acks(client_log);
  auto j = read_sharding_journal(journal);
  sharding_verdict v;
  auto note = [&](std::vector<std::string>& xs, std::string x) {
    if (xs.size() < max_listed)
      xs.push_back(std::move(x));
  };
  for (auto& m : j.malformed)
    note(v.malformed, m);
  std::map<std::string, std::vector<incarnation_window>> by_entity;
  for (auto& [key, w] : j.incarnations)
    by_entity[w.entity].push_back(w);
  v.incarnations = j.incarnations.size();
  v.entities = by_entity.size();
  for (auto& [entity, ws] : by_entity)
    if (auto x = first_overlap(ws, exits); !x.empty())
      note(v.two_live_incarnations, x);
  std::vector<incarnation_window> cs;
  for (auto& [key, w] : j.coordinators)
    cs.push_back(w);
  v.coordinators = cs.size();
  if (auto x = first_overlap(cs, exits); !x.empty())
    note(v.two_coordinators, x);
  for (auto& [id, hs] : j.handled) {
    v.handled += hs.size();
    if (hs.size() > 1)
      note(v.handled_twice, "message " + std::to_string(id) + " by "
                              + hs[0].first.node + " and " + hs[1].first.node);
    for (auto& [w, ns] : hs) {
      auto& x = j.incarnations[{w.entity, w.node, w.incarnation}];
      if (ns < x.start_ns || ns > end_of(x, exits))
        note(v.handled_outside_window,
             "message " + std::to_string(id) + " by " + w.entity + " on "
               + w.node + " incarnation " + std::to_string(w.incarnation));
    }
  }
  v.acked = acks.size();
  for (auto& a : acks) {
    auto i = j.handled.find(a.id);
    auto what = "message " + std::to_string(a.id) + " acked by " + a.entity
                + " on " + a.node + " incarnation "
                + std::to_string(a.incarnation);
    if (i == j.handled.end()) {
      note(v.ack_not_matching, what + ": never handled");
      continue;
    }
    auto& w = i->second.front().first;
    if (i->second.size() != 1 || w.entity != a.entity || w.node != a.node
        || w.incarnation != a.incarnation)
      note(v.ack_not_matching, what + ": handled by " + w.entity + " on "
                                 + w.node + " incarnation "
                                 + std::to_string(w.incarnation));
  }
  return v;
}

/// The node each entity's live incarnation runs on (entities without one
/// are left out).
inline std::map<std::string, std::string> live_homes(const sharding_journal& j,
                                                     const exit_times& exits) {
  std::map<std::string, std::string> result;
  for (auto& [key, w] : j.incarnations)
    if (end_of(w, exits) == std::numeric_limits<uint64_t>::max())
      result[w.entity] = w.node;
  return result;
}

/// The entities with at least one handled message since `since_ns`.
inline std::set<std::string> entities_handled_since(const sharding_journal& j,
                                                    uint64_t since_ns) {
  std::set<std::string> result;
  for (auto& [id, hs] : j.handled)
    for (auto& [w, ns] : hs)
      if (ns >= since_ns)
        result.insert(w.entity);
  return result;
}

} // namespace troupe::test
