#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "troupe/test/journal_file.hpp"

/// @file
/// The flags of cluster_node's singleton (--singleton) and the oracle of the
/// multi-process singleton tests (DESIGN.md §10 "Demo and chaos oracles"): the
/// journal that cluster_node's singleton instances and proxy client append to
/// (test/cluster/cluster_node.cpp documents the lines), read back and judged
/// here, independently of the nodes' own event lines. Times are CLOCK_MONOTONIC
/// nanoseconds, one clock for every process of the host.

namespace troupe::test {

/// The singleton "jobs" on a cluster_node, journaling to `journal`: fast
/// hand-over retries, identification and restart; keep_majority downing
/// with stable_after 2 s.
inline std::vector<std::string>
singleton_flags(const std::filesystem::path& journal) {
  return {"--singleton=jobs",
          "--singleton_journal=" + journal.string(),
          "--singleton.hand_over_retry_interval=200ms",
          "--singleton.proxy.identification_interval=200ms",
          "--singleton.restart_min_backoff=200ms",
          "--downing.active_strategy=keep_majority",
          "--downing.stable_after=2s"};
}

/// Adds the file lease in `dir` with `ttl` (a duration, e.g. "3s"; renewal
/// every second) and a lease retry interval of 200 ms.
inline std::vector<std::string>
with_file_lease(std::vector<std::string> flags,
                const std::filesystem::path& dir, const std::string& ttl) {
  for (auto f :
       {"--singleton.use_lease=true", "--singleton.lease_retry_interval=200ms",
        "--lease.backend=file", "--lease.renewal_interval=1s"})
    flags.emplace_back(f);
  flags.push_back("--lease.ttl=" + ttl);
  flags.push_back("--lease.file.directory=" + dir.string());
  return flags;
}

/// The largest `expires_at_ns` (CLOCK_MONOTONIC ns, the time the holder's
/// record expires) in the file lease's record files in `dir` (0: none).
inline uint64_t lease_expiry_ns(const std::filesystem::path& dir) {
  uint64_t result = 0;
  for (auto& f : std::filesystem::directory_iterator{dir}) {
    std::ifstream in{f.path()};
    for (std::string key; in >> key;)
      if (key == "expires_at_ns") {
        uint64_t v = 0;
        in >> v;
        result = std::max(result, v);
      }
  }
  return result;
}

/// One journal line: `<kind> <node> <incarnation> <token> <ns> <seq>
/// [<target>]`.
struct journal_entry {
  std::string kind;
  std::string node;
  uint64_t incarnation = 0;
  uint64_t token = 0;
  uint64_t ns = 0;
  uint64_t seq = 0;
  std::string target;
};

/// One instance's life as the journal shows it: the time of its first and
/// last line (start, effects, receipts, stop), and whether it stopped.
struct instance_window {
  std::string node;
  uint64_t incarnation = 0;
  uint64_t token = 0;
  uint64_t first_ns = 0;
  uint64_t last_ns = 0;
  uint64_t effects = 0;
  std::optional<uint64_t> stop_ns;
};

/// The journal's complete lines (a line still being written is left out).
inline std::vector<journal_entry> read_journal(const std::filesystem::path& p) {
  std::vector<journal_entry> result;
  for (const auto& text : journal_lines(p)) {
    std::istringstream line{text};
    journal_entry e;
    line >> e.kind >> e.node >> e.incarnation >> e.token >> e.ns >> e.seq;
    line >> e.target;
    result.push_back(std::move(e));
  }
  return result;
}

/// Every instance in the order of its start.
inline std::vector<instance_window>
instance_windows(const std::vector<journal_entry>& j) {
  std::map<std::pair<std::string, uint64_t>, instance_window> by_key;
  for (const auto& e : j) {
    if (e.incarnation == 0)
      continue; // a client line
    auto& w = by_key[{e.node, e.incarnation}];
    if (w.node.empty()) {
      w.node = e.node;
      w.incarnation = e.incarnation;
      w.token = e.token;
      w.first_ns = e.ns;
    }
    w.first_ns = std::min(w.first_ns, e.ns);
    w.last_ns = std::max(w.last_ns, e.ns);
    if (e.kind == "effect")
      ++w.effects;
    if (e.kind == "stop")
      w.stop_ns = e.ns;
  }
  std::vector<instance_window> result;
  for (auto& [key, w] : by_key)
    result.push_back(w);
  std::sort(result.begin(), result.end(), [](const auto& x, const auto& y) {
    return x.first_ns < y.first_ns;
  });
  return result;
}

/// The instances started on `node`, in order.
inline std::vector<instance_window>
instances_on(const std::vector<journal_entry>& j, const std::string& node) {
  std::vector<instance_window> result;
  for (auto& w : instance_windows(j))
    if (w.node == node)
      result.push_back(w);
  return result;
}

/// Invariant I1 from the journal: the windows of any two instances (first
/// to last line) are disjoint. Returns the first violation, or empty.
inline std::string overlap_violation(const std::vector<journal_entry>& j) {
  auto ws = instance_windows(j);
  for (size_t i = 1; i < ws.size(); ++i)
    if (ws[i].first_ns <= ws[i - 1].last_ns)
      return ws[i - 1].node + " incarnation "
             + std::to_string(ws[i - 1].incarnation) + " overlaps " + ws[i].node
             + " incarnation " + std::to_string(ws[i].incarnation);
  return {};
}

/// Invariant I1 for effects: the effect windows of any two instances (from
/// the start line to the last effect line; receipts and the stop line, which
/// a frozen instance may write late without any effect, are left out) are
/// disjoint. Returns the first violation, or empty.
inline std::string
effect_overlap_violation(const std::vector<journal_entry>& j) {
  std::map<std::pair<std::string, uint64_t>, std::pair<uint64_t, uint64_t>>
    by_key;
  for (const auto& e : j) {
    if (e.incarnation == 0 || (e.kind != "start" && e.kind != "effect"))
      continue;
    auto [i, added] = by_key.try_emplace({e.node, e.incarnation}, e.ns, e.ns);
    i->second.first = std::min(i->second.first, e.ns);
    i->second.second = std::max(i->second.second, e.ns);
  }
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> ws;
  for (auto& [key, w] : by_key)
    ws.emplace_back(w.first, w.second,
                    key.first + " incarnation " + std::to_string(key.second));
  std::sort(ws.begin(), ws.end());
  for (size_t i = 1; i < ws.size(); ++i)
    if (std::get<0>(ws[i]) <= std::get<1>(ws[i - 1]))
      return std::get<2>(ws[i - 1]) + " has effects after the start of "
             + std::get<2>(ws[i]);
  return {};
}

/// With a lease: tokens strictly increase from one instance to the next in
/// start order. Returns the first violation, or empty.
inline std::string token_violation(const std::vector<journal_entry>& j) {
  auto ws = instance_windows(j);
  for (size_t i = 1; i < ws.size(); ++i)
    if (ws[i].token <= ws[i - 1].token)
      return ws[i].node + " incarnation " + std::to_string(ws[i].incarnation)
             + " has token " + std::to_string(ws[i].token)
             + ", not greater than " + std::to_string(ws[i - 1].token);
  return {};
}

/// The entries of `kind`.
inline std::vector<journal_entry> entries(const std::vector<journal_entry>& j,
                                          const std::string& kind) {
  std::vector<journal_entry> result;
  for (const auto& e : j)
    if (e.kind == kind)
      result.push_back(e);
  return result;
}

/// What the proxy client's messages became.
struct delivery_report {
  /// Sent while the proxy knew no instance and after `old` stopped: must
  /// all arrive at `next`, after its start.
  size_t buffered = 0;
  size_t buffered_arrived_after_start = 0;
  /// Sent while the proxy knew `next`: must all arrive.
  size_t to_next = 0;
  size_t to_next_arrived = 0;
  /// Sent to `old` or buffered before it stopped: at most once (lost if in
  /// flight when it stopped).
  size_t at_risk = 0;
  size_t at_risk_lost = 0;
  /// Received more than once (must be 0), and out of send order at `next`
  /// (must be 0: one proxy sends in order).
  size_t duplicates = 0;
  size_t reordered = 0;
};

/// Judges the sends of the client on node `client` against the receipts of
/// the instances `old` and `next` (consecutive; their windows as `j` shows
/// them now, so stale copies taken earlier will do). The clients' numbers
/// never collide (cluster_node.cpp), so receipts need no sender.
inline delivery_report judge_delivery(const std::vector<journal_entry>& j,
                                      const std::string& client,
                                      instance_window old,
                                      instance_window next) {
  for (auto& w : instance_windows(j)) {
    if (w.node == old.node && w.incarnation == old.incarnation)
      old = w;
    if (w.node == next.node && w.incarnation == next.incarnation)
      next = w;
  }
  std::map<uint64_t, std::vector<journal_entry>> recv;
  uint64_t last_at_next = 0;
  delivery_report r;
  auto sent = entries(j, "send");
  std::erase_if(sent, [&](const auto& e) { return e.node != client; });
  if (sent.empty())
    return {};
  auto first_seq = sent.front().seq;
  auto last_seq = sent.back().seq;
  for (const auto& e : entries(j, "recv")) {
    if (e.seq < first_seq || e.seq > last_seq)
      continue; // another client's
    recv[e.seq].push_back(e);
    if (e.node == next.node && e.incarnation == next.incarnation) {
      if (e.seq < last_at_next)
        ++r.reordered;
      last_at_next = e.seq;
    }
  }
  auto old_stop = old.stop_ns.value_or(old.last_ns);
  for (const auto& s : sent) {
    auto& got = recv[s.seq];
    if (got.size() > 1)
      ++r.duplicates;
    if (s.target == "none" && s.ns > old_stop) {
      ++r.buffered;
      if (got.size() == 1 && got[0].node == next.node
          && got[0].ns >= next.first_ns)
        ++r.buffered_arrived_after_start;
    } else if (s.target == next.node && s.ns > old_stop) {
      ++r.to_next;
      r.to_next_arrived += got.size() == 1 ? 1 : 0;
    } else {
      ++r.at_risk;
      r.at_risk_lost += got.empty() ? 1 : 0;
    }
  }
  return r;
}

inline std::string to_string(const delivery_report& r) {
  std::ostringstream out;
  out << "buffered " << r.buffered << " (arrived after the start "
      << r.buffered_arrived_after_start << "), to the next instance "
      << r.to_next << " (arrived " << r.to_next_arrived << "), at risk "
      << r.at_risk << " (lost " << r.at_risk_lost << "), duplicates "
      << r.duplicates << ", reordered " << r.reordered;
  return out.str();
}

} // namespace troupe::test
