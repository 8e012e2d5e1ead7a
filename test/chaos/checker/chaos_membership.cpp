// I4's membership checks (chaos_membership.hpp).

#include "chaos_membership.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "chaos_checks.hpp"
#include "chaos_timeline.hpp"

namespace troupe::chaos {

namespace {

using demo::verdict::counted;
using names_map = std::map<std::string, std::string>;
using records = std::vector<const view_record*>;

std::string name_of(const names_map& names, const std::string& address) {
  auto i = names.find(address);
  return i == names.end() ? printable(address) : i->second;
}

// `a`, `a and b`, `a, b and c`.
std::string listing(const std::vector<std::string>& xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i)
    out += (i == 0 ? "" : i + 1 == xs.size() ? " and " : ", ") + xs[i];
  return out;
}

bool linked(const view_record& a, const view_record& b) {
  if (!a.incarnation.empty() && !b.incarnation.empty()
      && a.incarnation != b.incarnation)
    return false;
  auto x = a.cluster();
  auto y = b.cluster();
  return std::any_of(x.begin(), x.end(),
                     [&](auto& m) { return y.contains(m); });
}

bool is_node_event(nemesis_op op) {
  using o = nemesis_op;
  switch (op) {
    case o::node_start:
    case o::kill:
    case o::node_exit:
    case o::pause:
    case o::resume:
    case o::partition:
    case o::heal:
    case o::links_slow:
    case o::links_fast:
    case o::majority_restart:
      return true;
    default:
      return false;
  }
}

// The node faults active between node events.
struct active_faults {
  std::set<std::string> killed;
  std::set<std::string> slowed;
  std::set<int64_t> paused;
  std::set<uint64_t> partitions;

  bool none() const {
    return killed.empty() && slowed.empty() && paused.empty()
           && partitions.empty();
  }

  void apply(const nemesis_event& e) {
    using o = nemesis_op;
    switch (e.op) {
      case o::node_start:
        killed.erase(e.node);
        break;
      case o::kill:
        killed.insert(e.node);
        break;
      case o::pause:
        paused.insert(e.pid);
        break;
      case o::resume:
      case o::node_exit:
        paused.erase(e.pid);
        break;
      case o::partition:
        partitions.insert(e.id);
        break;
      case o::heal:
        if (e.id != 0) {
          partitions.erase(e.id);
          break;
        }
        partitions.clear();
        slowed.clear();
        break;
      case o::links_slow:
        slowed.insert(e.node);
        break;
      case o::links_fast:
        slowed.erase(e.node);
        break;
      default:
        break;
    }
  }
};

bool answered_live(const std::vector<process_life>& lives,
                   const view_record& r) {
  return std::any_of(lives.begin(), lives.end(), [&](auto& p) {
    return p.node == r.node && p.pid == r.pid && p.lives(r.sent_ns, r.mono_ns);
  });
}

std::optional<size_t> period_of(const std::vector<quiet_period>& ps,
                                const view_record& r) {
  for (size_t i = 0; i < ps.size(); ++i)
    if (ps[i].from_ns <= r.sent_ns && r.mono_ns < ps[i].to_ns)
      return i;
  return std::nullopt;
}

} // namespace

std::vector<process_life> process_lives(const chaos_history& h) {
  std::vector<process_life> out;
  for (auto& e : h.nemesis) {
    if (e.op == nemesis_op::node_start) {
      // A second node_start of one node and start is a `history records`
      // problem; the first one counts.
      if (std::none_of(out.begin(), out.end(), [&](auto& p) {
            return p.node == e.node && p.start == e.start;
          }))
        out.push_back({e.node, e.pid, e.start, e.mono_ns});
      continue;
    }
    if (e.op != nemesis_op::kill && e.op != nemesis_op::node_exit)
      continue;
    for (auto& p : out)
      if (p.node == e.node && p.pid == e.pid)
        p.to_ns = std::min(p.to_ns, e.mono_ns);
  }
  return out;
}

names_map process_names(const chaos_history& h) {
  names_map out;
  for (auto& f : h.files)
    if (!f.address.empty())
      out.emplace(f.address, fmt::format("{}.{}", printable(f.node), f.start));
  return out;
}

std::string view_words(const view_record& r, const names_map& names) {
  std::vector<std::string> ms;
  for (auto& m : r.members)
    ms.push_back(fmt::format("{} {}{}", name_of(names, m.address),
                             printable(m.status),
                             m.reachable ? "" : " unreachable"));
  auto out = fmt::format("{{{}}}", fmt::join(ms, ", "));
  if (!r.incarnation.empty())
    out += " incarnation " + printable(r.incarnation);
  return out;
}

event_ref ref(const view_record& r) {
  return {std::string{file_names::views}, r.line, r.mono_ns};
}

std::string at_words(const chaos_history& h, int64_t mono_ns) {
  return fmt::format("{:+.3f}s",
                     static_cast<double>(mono_ns - run_origin(h)) / 1e9);
}

std::string asked(const view_record& r) {
  return fmt::format("{}.{}", printable(r.node), r.start);
}

std::vector<records> clusters_of(const records& rs) {
  std::vector<size_t> root(rs.size());
  std::iota(root.begin(), root.end(), size_t{0});
  auto find = [&](size_t i) {
    while (root[i] != i)
      i = root[i] = root[root[i]];
    return i;
  };
  for (size_t i = 0; i < rs.size(); ++i)
    for (size_t j = i + 1; j < rs.size(); ++j)
      if (linked(*rs[i], *rs[j]))
        root[find(j)] = find(i);
  std::map<size_t, records> by_root;
  for (size_t i = 0; i < rs.size(); ++i)
    by_root[find(i)].push_back(rs[i]);
  std::vector<records> out;
  for (auto& [r, group] : by_root)
    out.push_back(std::move(group));
  return out;
}

std::string groups_words(const std::vector<records>& groups,
                         const names_map& names) {
  std::vector<std::string> parts;
  for (auto& g : groups) {
    std::vector<std::string> who;
    for (auto* r : g)
      who.push_back(asked(*r));
    parts.push_back(fmt::format("{} {} {}", listing(who),
                                who.size() == 1 ? "sees" : "see",
                                view_words(*g.front(), names)));
  }
  std::string out;
  for (auto& p : parts)
    out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::vector<quiet_period> quiet_periods(const chaos_history& h) {
  auto start = std::find_if(h.nemesis.begin(), h.nemesis.end(), [](auto& e) {
    return e.op == nemesis_op::run_start;
  });
  if (start == h.nemesis.end())
    return {};
  auto quiet = static_cast<int64_t>(start->quiet_after_ms) * 1'000'000;
  active_faults active;
  std::optional<int64_t> last;
  std::vector<quiet_period> out;
  auto close = [&](int64_t until) {
    if (last && active.none() && *last + quiet < until)
      out.push_back({*last + quiet, until});
  };
  for (auto& e : h.nemesis) {
    if (e.op == nemesis_op::run_end) {
      close(e.mono_ns);
      return out;
    }
    if (!is_node_event(e.op))
      continue;
    close(e.mono_ns);
    active.apply(e);
    last = e.mono_ns;
  }
  close(std::numeric_limits<int64_t>::max());
  return out;
}

check_result check_quiet_views(const chaos_history& h, chaos_summary& s) {
  check_builder c{"I4 no two clusters when quiet"};
  auto periods = quiet_periods(h);
  auto lives = process_lives(h);
  auto names = process_names(h);
  // Round -> quiet period -> the answers of members of a cluster.
  std::map<uint64_t, std::map<size_t, records>> rounds;
  int64_t last = 0;
  for (auto& r : h.views) {
    last = std::max(last, r.mono_ns);
    if (!r.in_cluster() || !answered_live(lives, r))
      continue;
    if (auto p = period_of(periods, r))
      rounds[r.round][*p].push_back(&r);
  }
  for (auto& [round, by_period] : rounds)
    for (auto& [p, rs] : by_period) {
      if (rs.size() < 2)
        continue;
      ++s.quiet_rounds;
      auto groups = clusters_of(rs);
      if (groups.size() < 2)
        continue;
      auto& first = *rs.front();
      c.fail(fmt::format("{} line {}: round {} at {}, quiet since {}: {} "
                         "clusters at once: {}",
                         file_names::views, first.line, round,
                         at_words(h, first.sent_ns),
                         at_words(h, periods[p].from_ns), groups.size(),
                         groups_words(groups, names)),
             ref(first));
    }
  std::chrono::nanoseconds quiet{0};
  for (auto& q : periods)
    quiet += std::chrono::nanoseconds{
      std::max<int64_t>(0, std::min(q.to_ns, last) - q.from_ns)};
  s.quiet_periods = periods.size();
  s.quiet_time = quiet;
  if (!c.ok())
    return std::move(c).finish(
      fmt::format("{} with two clusters at once",
                  counted(c.violations(), "quiet round", "quiet rounds")));
  return std::move(c).finish(
    fmt::format("{} judged in {} ({} quiet): the live members never formed two "
                "clusters at once",
                counted(s.quiet_rounds, "round", "rounds"),
                counted(s.quiet_periods, "quiet period", "quiet periods"),
                format_seconds(quiet)));
}

} // namespace troupe::chaos
