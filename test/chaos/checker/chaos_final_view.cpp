// I4's view at the end (chaos_membership.hpp, check_final_view).

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "chaos_checks.hpp"
#include "chaos_membership.hpp"

namespace troupe::chaos {

namespace {

using demo::verdict::counted;
using names_map = std::map<std::string, std::string>;
using records = std::vector<const view_record*>;

// The answers grouped by identical views (members with their status and
// reachability, incarnation), in order of first appearance.
std::vector<records> alike(const records& rs) {
  std::vector<records> out;
  auto key = [](const view_record& r) {
    return std::tuple{r.by_address(), r.incarnation};
  };
  for (auto* r : rs) {
    auto i = std::find_if(out.begin(), out.end(),
                          [&](auto& g) { return key(*g.front()) == key(*r); });
    if (i == out.end())
      out.push_back({r});
    else
      i->push_back(r);
  }
  return out;
}

// The last final round's records; empty if there is none.
records final_round(const chaos_history& h) {
  std::optional<uint64_t> last;
  for (auto& r : h.views)
    if (r.final)
      last = std::max(last.value_or(0), r.round);
  records out;
  for (auto& r : h.views)
    if (last && r.round == *last)
      out.push_back(&r);
  return out;
}

// The common view's own faults: a member not up or unreachable, or one
// that is no live process (`live`: the live processes' addresses).
void judge_members(const view_record& common, const std::set<std::string>& live,
                   const names_map& names, check_builder& c) {
  auto at = fmt::format("{} line {}", file_names::views, common.line);
  for (auto& m : common.members) {
    auto who
      = names.contains(m.address)
          ? fmt::format("{} ({})", names.at(m.address), printable(m.address))
          : printable(m.address);
    if (m.status != "up")
      c.fail(fmt::format("{}: every live node sees {} {}, not up", at, who,
                         printable(m.status)),
             ref(common));
    if (!m.reachable)
      c.fail(fmt::format("{}: every live node sees {} unreachable", at, who),
             ref(common));
    if (!live.contains(m.address))
      c.fail(fmt::format("{}: every live node lists {}, which is no live "
                         "process",
                         at, who),
             ref(common));
  }
}

// The answers of the live processes share one view, which lists each of
// them, all up and reachable, and nothing else.
void judge_views(const records& answered, const std::set<std::string>& live,
                 const names_map& names, check_builder& c) {
  if (answered.empty())
    return;
  auto groups = alike(answered);
  auto& first = *answered.front();
  if (groups.size() > 1) {
    auto clusters = clusters_of(answered).size();
    c.fail(fmt::format("{} line {}: the live nodes do not share one view "
                       "({}): {}",
                       file_names::views, first.line,
                       clusters > 1 ? fmt::format("{} clusters", clusters)
                                    : std::string{"one cluster, not settled"},
                       groups_words(groups, names)),
           ref(first));
  }
  for (auto* r : answered)
    if (!r->in_cluster())
      c.fail(fmt::format("{} line {}: {} ({}) is outside: its view {} does not "
                         "list it as a member",
                         file_names::views, r->line, asked(*r),
                         printable(r->self), view_words(*r, names)),
             ref(*r));
  if (groups.size() == 1)
    judge_members(first, live, names, c);
}

} // namespace

check_result check_final_view(const chaos_history& h, chaos_summary& s) {
  check_builder c{"I4 one membership view"};
  std::set<uint64_t> rounds;
  for (auto& r : h.views)
    rounds.insert(r.round);
  s.view_samples = h.views.size();
  s.view_rounds = rounds.size();
  auto round = final_round(h);
  if (round.empty()) {
    c.fail(fmt::format("{} has no final round: the live nodes' views after "
                       "the probe were not asked",
                       file_names::views));
    return std::move(c).finish("no final round");
  }
  auto started = (*std::min_element(
                    round.begin(), round.end(),
                    [](auto* a, auto* b) { return a->sent_ns < b->sent_ns; }))
                   ->sent_ns;
  auto names = process_names(h);
  std::set<std::string> live;
  records answered;
  s.final_live = 0;
  for (auto& p : process_lives(h)) {
    if (p.from_ns > started || started >= p.to_ns)
      continue;
    ++s.final_live;
    for (auto& [address, name] : names)
      if (name == fmt::format("{}.{}", printable(p.node), p.start))
        live.insert(address);
    auto r = std::find_if(round.begin(), round.end(), [&](auto* x) {
      return x->node == p.node && x->pid == p.pid;
    });
    if (r == round.end()) {
      c.fail(fmt::format("{}: {}.{} (pid {}) was live when final round {} "
                         "started, but the round has no answer of it",
                         file_names::views, printable(p.node), p.start, p.pid,
                         round.front()->round));
    } else if (!(*r)->answered) {
      c.fail(fmt::format("{} line {}: {} (pid {}) gave no view in the final "
                         "round: {}",
                         file_names::views, (*r)->line, asked(**r), p.pid,
                         printable((*r)->error)),
             ref(**r));
    } else {
      live.insert((*r)->self);
      answered.push_back(*r);
    }
  }
  if (s.final_live == 0)
    c.fail(fmt::format("{}: no node process was live when final round {} "
                       "started",
                       file_names::nemesis, round.front()->round));
  judge_views(answered, live, names, c);
  if (!c.ok())
    return std::move(c).finish(fmt::format(
      "{} in final round {}", counted(c.violations(), "failure", "failures"),
      round.front()->round));
  return std::move(c).finish(
    fmt::format("final round {} at {}: {}, each a member of the one view {}",
                round.front()->round, at_words(h, started),
                counted(s.final_live, "live node", "live nodes"),
                view_words(*answered.front(), names)));
}

} // namespace troupe::chaos
