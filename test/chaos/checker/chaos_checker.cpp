// The chaos verdict: every check in report order (chaos_checker.hpp).

#include "chaos_checker.hpp"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "chaos_checks.hpp"
#include "chaos_intervals.hpp"
#include "chaos_membership.hpp"

namespace troupe::chaos {

namespace {

namespace verdict = demo::verdict;

// The stamp of `file` line `line` of the demo's files; nullopt if that
// line did not parse.
std::optional<event_ref> demo_line(const chaos_history& h,
                                   std::string_view file, size_t line) {
  auto at = [&](const auto& records) -> std::optional<event_ref> {
    auto i = std::find_if(records.begin(), records.end(),
                          [&](auto& r) { return r.line == line; });
    if (i == records.end())
      return std::nullopt;
    return ref(*i);
  };
  if (file == file_names::ledger)
    return at(h.ledger);
  if (file == file_names::journal)
    return at(h.journal);
  return at(h.client);
}

// The offending event of one of the demo verdict's problems: the first
// `<file> line N` it names, else (an acked deposit missing) the client's
// ack of the deposit its first word names.
std::optional<event_ref> locate(const chaos_history& h,
                                std::string_view problem) {
  for (auto file :
       {file_names::ledger, file_names::journal, file_names::client}) {
    auto prefix = std::string{file} + " line ";
    auto pos = problem.find(prefix);
    if (pos == std::string_view::npos)
      continue;
    auto digits = problem.substr(pos + prefix.size());
    size_t line = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), line);
    return demo_line(h, file, line);
  }
  auto deposit = problem.substr(0, problem.find(' '));
  for (auto& r : h.client)
    if (r.event.kind == demo::client::client_event_kind::acked
        && r.event.deposit == deposit)
      return ref(r);
  return std::nullopt;
}

// How many violations a demo verdict check found: its problems, with
// `... and N more` read back; a failure without problems is one.
size_t violations_of(const verdict::check& c) {
  if (c.ok)
    return 0;
  size_t n = c.problems.size();
  constexpr std::string_view more = "... and ";
  if (n > 0 && c.problems.back().starts_with(more)) {
    auto& last = c.problems.back();
    size_t extra = 0;
    std::from_chars(last.data() + more.size(), last.data() + last.size(),
                    extra);
    n += extra - 1;
  }
  return std::max<size_t>(n, 1);
}

// The demo verdict's checks, taken out one by one under their chaos names.
class verdict_checks {
public:
  verdict_checks(verdict::report r, const chaos_history& h)
    : checks_(std::move(r.checks)), h_(h) {}

  // Takes the check named `name`, renamed `label`.
  check_result take(std::string_view name, std::string label) {
    auto i = std::find_if(checks_.begin(), checks_.end(),
                          [&](auto& c) { return c.name == name; });
    if (i == checks_.end())
      return {{std::move(label), true, "not run", {}}, 0, {}};
    auto out = wrap(std::move(*i));
    out.check.name = std::move(label);
    checks_.erase(i);
    return out;
  }

  // The checks not taken, in the demo verdict's order.
  std::vector<check_result> rest() {
    std::vector<check_result> out;
    for (auto& c : checks_)
      out.push_back(wrap(std::move(c)));
    checks_.clear();
    return out;
  }

private:
  check_result wrap(verdict::check c) {
    check_result out{std::move(c), 0, {}};
    out.violations = violations_of(out.check);
    // The demo verdict may quote a line's bytes (a malformed client.log
    // line); its problems reach a terminal, so they are made printable.
    for (auto& p : out.check.problems) {
      if (auto at = locate(h_, p))
        out.offenses.push_back(std::move(*at));
      p = printable(p);
    }
    out.check.summary = printable(out.check.summary);
    return out;
  }

  std::vector<verdict::check> checks_;
  const chaos_history& h_;
};

// The fault counts: the ops that start a fault (partitions by shape).
std::map<std::string, uint64_t> count_faults(const chaos_history& h) {
  std::map<std::string, uint64_t> out;
  for (auto& e : h.nemesis) {
    using op = nemesis_op;
    switch (e.op) {
      case op::kill:
      case op::pause:
      case op::etcd_stop:
      case op::etcd_slow:
      case op::lease_delete:
      case op::majority_restart:
      case op::links_slow:
        ++out[to_string(e.op)];
        break;
      case op::partition:
        ++out["partition " + e.direction];
        break;
      default:
        break;
    }
  }
  return out;
}

// The demo verdict's `records` check `c` with the chaos side's malformed
// lines of its files added (unlocated, listed after its own).
check_result with_problems(check_result c,
                           const std::vector<std::string>& problems) {
  if (problems.empty())
    return c;
  auto& listed = c.check.problems;
  // Reopens a list closed with `... and N more`.
  if (!listed.empty() && listed.back().starts_with("... and "))
    listed.pop_back();
  c.violations += problems.size();
  for (auto& p : problems)
    if (listed.size() < verdict::max_problems)
      listed.push_back(p);
  if (c.violations > listed.size())
    listed.push_back(
      fmt::format("... and {} more", c.violations - listed.size()));
  c.check.ok = false;
  c.check.summary
    = verdict::counted(c.violations, "malformed line", "malformed lines");
  return c;
}

size_t count_groups(const std::vector<instance>& xs) {
  std::set<std::string> groups;
  for (auto& x : xs)
    groups.insert(x.group);
  return groups.size();
}

// The words of the interval checks.
const interval_words singleton_acting{"I1(c) singleton acting intervals",
                                      "singleton instance",
                                      "singleton instances",
                                      "type",
                                      "types",
                                      "two instances of {} acting"};
const interval_words singleton_lifetimes{"I1(d) singleton lifetimes",
                                         "singleton instance",
                                         "singleton instances",
                                         "type",
                                         "types",
                                         "two instances of {} live"};
const interval_words entity_acting{"I2 entity acting intervals",
                                   "entity incarnation",
                                   "entity incarnations",
                                   "account",
                                   "accounts",
                                   "two incarnations of {} acting"};
const interval_words entity_lifetimes{"I2 entity lifetimes",
                                      "entity incarnation",
                                      "entity incarnations",
                                      "account",
                                      "accounts",
                                      "two incarnations of {} live"};
const interval_words shard_acting{"I2 shard acting intervals",
                                  "entity incarnation",
                                  "entity incarnations",
                                  "shard",
                                  "shards",
                                  "{} acting on two processes"};
const interval_words shard_lifetimes{"I2 shard lifetimes",
                                     "entity incarnation",
                                     "entity incarnations",
                                     "shard",
                                     "shards",
                                     "{} live on two processes"};

} // namespace

bool chaos_report::passed() const noexcept {
  return verdict.passed();
}

std::optional<offense> chaos_report::first_offense() const {
  auto i = std::min_element(offenses.begin(), offenses.end(),
                            [](const offense& a, const offense& b) {
                              return a.at.mono_ns < b.at.mono_ns;
                            });
  if (i == offenses.end())
    return std::nullopt;
  return *i;
}

chaos_report check_run(const chaos_input& in) {
  chaos_report r;
  r.history = parse_run(in);
  auto& h = r.history;
  auto& s = r.summary;
  auto judged
    = verdict::judge({in.client_log, in.ledger_jsonl, in.journal_jsonl, {}});
  r.verdict.totals = judged.totals;
  verdict_checks demo{std::move(judged), h};
  std::vector<std::string> process_problems;
  auto processes = match_processes(h, process_problems);
  auto xs = collect_instances(processes);
  auto shards = by_shard(xs.entities);
  std::vector<check_result> checks;
  checks.push_back(check_history_records(h, process_problems, s));
  checks.push_back(
    with_problems(demo.take("records", "store records"), h.store_problems));
  checks.push_back(check_token_owners(h, s));
  checks.push_back(demo.take("fencing", "I1(b) fencing"));
  checks.push_back(check_acting(xs.singletons, singleton_acting));
  checks.push_back(check_lifetimes(xs.singletons, singleton_lifetimes));
  checks.push_back(check_acting(xs.entities, entity_acting));
  checks.push_back(check_lifetimes(xs.entities, entity_lifetimes));
  checks.push_back(check_acting(shards, shard_acting));
  checks.push_back(check_lifetimes(shards, shard_lifetimes));
  checks.push_back(check_store_writers(h, s));
  checks.push_back(check_conflicts(h));
  checks.push_back(check_guarded_writes(processes, xs, s));
  checks.push_back(check_stamped_writes(h, s));
  checks.push_back(demo.take("acked deposits", "I3 acked deposits"));
  checks.push_back(demo.take("no phantom deposits", "I3 no phantom deposits"));
  checks.push_back(demo.take("balances", "I3 balances"));
  checks.push_back(check_recovery(h, s));
  checks.push_back(check_final_view(h, s));
  checks.push_back(check_quiet_views(h, s));
  for (auto& c : demo.rest())
    checks.push_back(std::move(c));
  s.faults = count_faults(h);
  for (auto& e : h.nemesis) {
    s.node_starts += e.op == nemesis_op::node_start ? 1 : 0;
    s.node_exits += e.op == nemesis_op::node_exit ? 1 : 0;
  }
  s.singleton_instances = xs.singletons.size();
  s.entity_instances = xs.entities.size();
  s.accounts = count_groups(xs.entities);
  s.shards = count_groups(shards);
  for (auto& c : checks) {
    s.violations += c.violations;
    for (auto& at : c.offenses)
      r.offenses.push_back({c.check.name, std::move(at)});
    r.verdict.checks.push_back(std::move(c.check));
  }
  return r;
}

} // namespace troupe::chaos
