// The chaos report and the time line for people (chaos_checker.hpp,
// chaos_timeline.hpp).

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

#include "chaos_checker.hpp"
#include "chaos_checks.hpp"
#include "chaos_membership.hpp"
#include "chaos_timeline.hpp"

namespace troupe::chaos {

namespace {

using demo::verdict::counted;

std::string ledger_words(const demo::verdict::ledger_entry& e) {
  return fmt::format("ledger token={} seq={} owner={} {}", e.token, e.seq,
                     printable(e.owner), e.accepted ? "accepted" : "rejected");
}

std::string journal_words(const demo::verdict::journal_entry& e,
                          const chaos_history& h) {
  auto out
    = fmt::format("journal {} {} +{} expected_seq={} {} seq={} "
                  "balance={}",
                  printable(e.account), printable(e.deposit), e.amount,
                  e.expected_seq, printable(e.outcome), e.seq, e.balance);
  if (auto w = h.journal_writers.find(e.line); w != h.journal_writers.end())
    out += fmt::format(" writer={}", printable(w->second));
  return out;
}

// client.log's own words for the event: its line without the stamp.
std::string client_words(const demo::client::client_event& e) {
  auto line = demo::client::format_client_event(e);
  auto sp = line.find(' ');
  auto text = line.substr(sp + 1);
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  return printable(text);
}

// `view round=7 final {node-1.1 up, ...}` or `view round=7 no view:
// <error>` (the round's `final` only for final rounds).
std::string view_event_words(const view_record& v,
                             const std::map<std::string, std::string>& names) {
  auto head = fmt::format("view round={}{}", v.round, v.final ? " final" : "");
  if (!v.answered)
    return fmt::format("{} no view: {}", head, printable(v.error));
  return fmt::format("{} {}", head, view_words(v, names));
}

std::string relative(int64_t mono_ns, int64_t origin) {
  return fmt::format("{:+.3f}s", static_cast<double>(mono_ns - origin) / 1e9);
}

std::string fault_words(const chaos_summary& s) {
  if (s.faults.empty())
    return "none";
  std::string out;
  for (auto& [op, n] : s.faults)
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", op, n);
  return out;
}

// The summary lines (see render).
std::string summary_lines(const chaos_report& r) {
  auto& s = r.summary;
  auto& t = r.verdict.totals;
  auto out = fmt::format(
    "operations: client {} sent, {} acked, {} failed, {} unfinished; ledger "
    "{} accepted, {} rejected; nodes stamped {} and {}\n",
    t.deposits_sent, t.deposits_acked, t.deposits_failed, t.deposits_unfinished,
    t.ledger_accepted, t.ledger_rejected,
    counted(s.ledger_writes, "ledger write", "ledger writes"),
    counted(s.deposit_writes, "deposit write", "deposit writes"));
  out += fmt::format("faults injected: {}\n", fault_words(s));
  out += fmt::format("node processes: {} started, {} ended\n", s.node_starts,
                     s.node_exits);
  out += fmt::format(
    "invariants checked: I1 over {} and {}; I2 over {} of {} and {}, {}; I3 "
    "over {}, {} and {}; I4 over {}\n",
    counted(s.tokens, "token", "tokens"),
    counted(s.singleton_instances, "singleton instance", "singleton instances"),
    counted(s.entity_instances, "entity incarnation", "entity incarnations"),
    counted(s.accounts, "account", "accounts"),
    counted(s.shards, "shard", "shards"),
    counted(s.writer_runs, "store writer run", "store writer runs"),
    counted(s.ledger_writes, "ledger write", "ledger writes"),
    counted(s.deposit_writes, "deposit write", "deposit writes"),
    counted(s.store_records, "store record", "store records"),
    counted(s.probed_accounts, "probed account", "probed accounts"));
  out += fmt::format(
    "history: {}, {} ignored, {} unmatched because the history was cut\n",
    counted(s.history_files, "file", "files"),
    counted(s.cut_lines, "cut last line", "cut last lines"),
    counted(s.unmatched_cut, "store record", "store records"));
  out += s.recovery ? fmt::format("recovery: {}\n", format_seconds(*s.recovery))
                    : std::string{"recovery: not reached\n"};
  out += fmt::format(
    "membership views: {} in {}, {} judged in {} ({} quiet), {} at the "
    "end\n",
    counted(s.view_samples, "sample", "samples"),
    counted(s.view_rounds, "round", "rounds"),
    counted(s.quiet_rounds, "round", "rounds"),
    counted(s.quiet_periods, "quiet period", "quiet periods"),
    format_seconds(s.quiet_time),
    counted(s.final_live, "live node", "live nodes"));
  out += fmt::format("violations: {}\n", s.violations);
  return out;
}

} // namespace

std::string render(const chaos_report& r) {
  // The demo verdict's rendering, with the summary before its last line.
  auto out = demo::verdict::render(r.verdict);
  auto last = out.rfind("verdict: ");
  out.insert(last, summary_lines(r));
  return out;
}

std::vector<timeline_entry> merge_events(const chaos_history& h) {
  std::vector<timeline_entry> out;
  for (auto& f : h.files)
    for (auto& e : f.events)
      out.push_back({f.ref(e), printable(f.node), describe(e)});
  for (auto& e : h.nemesis)
    out.push_back({ref(e), "nemesis", describe(e)});
  for (auto& e : h.client)
    out.push_back({ref(e), "client", client_words(e.event)});
  for (auto& e : h.ledger)
    out.push_back({ref(e), "store", ledger_words(e)});
  for (auto& e : h.journal)
    out.push_back({ref(e), "store", journal_words(e, h)});
  auto names = process_names(h);
  for (auto& v : h.views)
    out.push_back({ref(v), printable(v.node), view_event_words(v, names)});
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) {
    return std::tie(a.at.mono_ns, a.at.file, a.at.line)
           < std::tie(b.at.mono_ns, b.at.file, b.at.line);
  });
  return out;
}

int64_t run_origin(const chaos_history& h) {
  for (auto& e : h.nemesis)
    if (e.op == nemesis_op::run_start)
      return e.mono_ns;
  auto all = merge_events(h);
  return all.empty() ? 0 : all.front().at.mono_ns;
}

std::string render_timeline(const chaos_history& h, const event_ref& at,
                            timeline_window w) {
  auto origin = run_origin(h);
  auto from = at.mono_ns - std::chrono::nanoseconds{w.before}.count();
  auto to = at.mono_ns + std::chrono::nanoseconds{w.after}.count();
  auto out = fmt::format(
    "timeline: {} before to {} after {} line {} ({}), times from run_start\n",
    format_seconds(w.before), format_seconds(w.after), at.file, at.line,
    relative(at.mono_ns, origin));
  for (auto& e : merge_events(h))
    if (e.at.mono_ns >= from && e.at.mono_ns <= to)
      out += fmt::format("{}{} {} {}\n", e.at == at ? ">> " : "   ",
                         relative(e.at.mono_ns, origin), e.who, e.what);
  return out;
}

std::string render_first_violation(const chaos_report& r, timeline_window w) {
  auto first = r.first_offense();
  if (first)
    return fmt::format("first violation: {}\n", first->check)
           + render_timeline(r.history, first->at, w);
  auto failed = std::find_if(r.verdict.checks.begin(), r.verdict.checks.end(),
                             [](auto& c) { return !c.ok; });
  if (failed == r.verdict.checks.end())
    return {};
  // Only the records checks name lines that did not parse; the others'
  // unlocated violations name no line at all (no probe_start, a sum).
  auto records
    = failed->name == "history records" || failed->name == "store records";
  return fmt::format(
    "first violation: {}\n{}\n", failed->name,
    records ? "(the violation is at an unparseable line: no stamped events "
              "around it)"
            : "(the violation names no stamped event: no timeline around "
              "it)");
}

std::string render_replay(const chaos_history& h, uint64_t seed) {
  auto start = std::find_if(h.nemesis.begin(), h.nemesis.end(), [](auto& e) {
    return e.op == nemesis_op::run_start;
  });
  if (start == h.nemesis.end())
    return fmt::format("no replay: {} has no run_start (the run's seed, "
                       "nodes and duration)\n",
                       file_names::nemesis);
  return fmt::format("replay the same schedule: troupe-chaos --seed {} "
                     "--nodes {} --duration {}s --dir <a new directory>\n",
                     seed != 0 ? seed : start->seed, start->nodes,
                     start->duration_s);
}

} // namespace troupe::chaos
