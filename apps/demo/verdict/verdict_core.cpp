// The verdict's checks and its rendering (verdict_core.hpp).

#include "verdict/verdict_core.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

namespace troupe::demo::verdict {

namespace {

using client::client_event;
using client::client_event_kind;

// Adds a problem to `c` (failing it), naming at most max_problems.
void fail(check& c, std::string problem, size_t& count) {
  c.ok = false;
  if (++count <= max_problems)
    c.problems.push_back(std::move(problem));
}

// Appends "... and N more" when problems were left out.
void close_problems(check& c, size_t count) {
  if (count > max_problems)
    c.problems.push_back(fmt::format("... and {} more", count - max_problems));
}

check check_records(const std::vector<std::string>& problems) {
  check c{"records", true, "every line of the three files parses", {}};
  size_t n = 0;
  for (auto& p : problems)
    fail(c, p, n);
  close_problems(c, n);
  if (!c.ok)
    c.summary = counted(n, "malformed line", "malformed lines");
  return c;
}

void check_ledger(const std::vector<ledger_entry>& ledger, report& r) {
  check fencing{"fencing", true, {}, {}};
  check rejections{"rejections", true, {}, {}};
  size_t bad_accepts = 0;
  size_t bad_rejects = 0;
  // The highest accepted token so far and its line.
  std::optional<uint64_t> highest;
  size_t highest_line = 0;
  auto& t = r.totals;
  for (auto& e : ledger) {
    if (e.accepted) {
      ++t.ledger_accepted;
      if (highest && e.token < *highest)
        fail(fencing,
             fmt::format("ledger.jsonl line {}: accepted token {} after token "
                         "{} (line {})",
                         e.line, e.token, *highest, highest_line),
             bad_accepts);
      if (!highest || e.token >= *highest) {
        highest = e.token;
        highest_line = e.line;
      }
    } else {
      ++t.ledger_rejected;
      if (!highest || e.token >= *highest)
        fail(rejections,
             fmt::format("ledger.jsonl line {}: rejected token {} although "
                         "the highest accepted was {}",
                         e.line, e.token,
                         highest ? fmt::format("{}", *highest) : "none"),
             bad_rejects);
    }
  }
  t.highest_token = highest.value_or(0);
  close_problems(fencing, bad_accepts);
  close_problems(rejections, bad_rejects);
  fencing.summary = fmt::format(
    "no stale token accepted ({} accepted, highest token {}; {} rejected as "
    "stale)",
    counted(t.ledger_accepted, "record", "records"), t.highest_token,
    counted(t.ledger_rejected, "record", "records"));
  if (!fencing.ok)
    fencing.summary = fmt::format("{} accepted with a stale token",
                                  counted(bad_accepts, "record", "records"));
  rejections.summary = rejections_summary(t.ledger_rejected);
  if (!rejections.ok)
    rejections.summary = fmt::format(
      "{} rejected", counted(bad_rejects, "fresh record", "fresh records"));
  check activity{"ledger activity", t.ledger_accepted > 0, {}, {}};
  activity.summary
    = activity.ok ? fmt::format("{} accepted",
                                counted(t.ledger_accepted, "record", "records"))
                  : "the ledger accepted no record";
  r.checks.push_back(std::move(fencing));
  r.checks.push_back(std::move(rejections));
  r.checks.push_back(std::move(activity));
}

// An applied deposit as the journal has it.
struct applied {
  std::string account;
  int64_t amount = 0;
  size_t line = 0;
};

// Replays the applied entries per account; fills `found` (deposit id ->
// its first application), `every` (each application in file order) and the
// accounts' last balances.
void check_journal(const std::vector<journal_entry>& journal, report& r,
                   std::map<std::string, applied>& found,
                   std::vector<std::pair<std::string, applied>>& every) {
  check seq{"journal sequence", true, {}, {}};
  check balances{"balances", true, {}, {}};
  size_t bad_seq = 0;
  size_t bad_balance = 0;
  struct account {
    uint64_t seq = 0;
    int64_t sum = 0;
    int64_t balance = 0;
  };
  std::map<std::string, account> accounts;
  std::set<std::pair<std::string, std::string>> ids;
  auto& t = r.totals;
  for (auto& e : journal) {
    if (e.outcome == "conflict") {
      ++t.journal_conflicts;
      continue;
    }
    if (e.outcome == "duplicate") {
      ++t.journal_duplicates;
      continue;
    }
    ++t.journal_applied;
    auto& a = accounts[e.account];
    if (e.seq != a.seq + 1)
      fail(seq,
           fmt::format("journal.jsonl line {}: {} applied at seq {} after "
                       "seq {} ({})",
                       e.line, e.account, e.seq, a.seq,
                       e.seq <= a.seq ? "a seq twice" : "a gap"),
           bad_seq);
    if (!ids.emplace(e.account, e.deposit).second)
      fail(seq,
           fmt::format("journal.jsonl line {}: deposit {} applied to {} "
                       "again",
                       e.line, e.deposit, e.account),
           bad_seq);
    a.seq = std::max(a.seq, e.seq);
    a.sum += e.amount;
    a.balance = e.balance;
    if (e.balance != a.sum)
      fail(balances,
           fmt::format("journal.jsonl line {}: {} balance {} but its applied "
                       "deposits sum to {}",
                       e.line, e.account, e.balance, a.sum),
           bad_balance);
    found.emplace(e.deposit, applied{e.account, e.amount, e.line});
    every.emplace_back(e.deposit, applied{e.account, e.amount, e.line});
  }
  for (auto& [id, a] : accounts)
    t.balance_sum += a.balance;
  close_problems(seq, bad_seq);
  close_problems(balances, bad_balance);
  seq.summary
    = seq.ok ? fmt::format("{} applied over {}, seq without gaps or repeats",
                           counted(t.journal_applied, "deposit", "deposits"),
                           counted(accounts.size(), "account", "accounts"))
             : counted(bad_seq, "sequence fault", "sequence faults");
  balances.summary
    = balances.ok
        ? fmt::format("every balance is the sum of its "
                      "deposits (total {})",
                      t.balance_sum)
        : fmt::format("{} off", counted(bad_balance, "balance", "balances"));
  r.checks.push_back(std::move(seq));
  r.checks.push_back(std::move(balances));
}

// Checks the client's acks against the journal, the journal against the
// client's sends, and the sums.
void check_deposits(const std::vector<client_event>& events,
                    const std::map<std::string, applied>& found,
                    const std::vector<std::pair<std::string, applied>>& every,
                    report& r) {
  check acked{"acked deposits", true, {}, {}};
  check phantom{"no phantom deposits", true, {}, {}};
  size_t bad_acked = 0;
  size_t bad_phantom = 0;
  auto& t = r.totals;
  std::map<std::string, const client_event*> sent;
  std::set<std::string> acks;
  std::set<std::string> failures;
  for (auto& e : events) {
    if (e.kind == client_event_kind::sent) {
      ++t.deposits_sent;
      sent.emplace(e.deposit, &e);
    } else if (e.kind == client_event_kind::failed) {
      ++t.deposits_failed;
      failures.insert(e.deposit);
    } else if (e.kind == client_event_kind::unfinished) {
      ++t.deposits_unfinished;
      failures.insert(e.deposit);
    } else {
      ++t.deposits_acked;
      acks.insert(e.deposit);
      t.acked_sum += e.amount;
      auto i = found.find(e.deposit);
      if (i == found.end())
        fail(acked,
             fmt::format("{} ({} +{}) was acked but is not in the journal",
                         e.deposit, e.account, e.amount),
             bad_acked);
      else if (i->second.account != e.account || i->second.amount != e.amount)
        fail(acked,
             fmt::format("{} was acked as {} +{} but journal.jsonl line {} "
                         "has {} +{}",
                         e.deposit, e.account, e.amount, i->second.line,
                         i->second.account, i->second.amount),
             bad_acked);
    }
  }
  for (auto& [id, s] : sent)
    if (!acks.contains(id) && !failures.contains(id))
      ++t.deposits_unanswered;
  // Every application is checked, not only a deposit id's first: an id
  // applied again to another account is a phantom there.
  for (auto& [id, a] : every) {
    auto i = sent.find(id);
    if (i == sent.end())
      fail(phantom,
           fmt::format("journal.jsonl line {}: {} ({} +{}) was never sent",
                       a.line, id, a.account, a.amount),
           bad_phantom);
    else if (i->second->account != a.account || i->second->amount != a.amount)
      fail(phantom,
           fmt::format("journal.jsonl line {}: {} applied as {} +{} but sent "
                       "as {} +{}",
                       a.line, id, a.account, a.amount, i->second->account,
                       i->second->amount),
           bad_phantom);
  }
  for (auto& [id, a] : found)
    if (!acks.contains(id)) {
      ++t.in_doubt;
      t.in_doubt_sum += a.amount;
    }
  close_problems(acked, bad_acked);
  close_problems(phantom, bad_phantom);
  acked.summary
    = !acked.ok ? fmt::format(
        "{} lost or altered",
        counted(bad_acked, "acknowledged deposit", "acknowledged deposits"))
      : t.deposits_acked == 0 ? "no deposit was acknowledged"
      : t.deposits_acked == 1 ? "the one acknowledged deposit is in the "
                                "journal with its amount"
                              : fmt::format("all {} acknowledged deposits are "
                                            "in the journal with their "
                                            "amounts",
                                            t.deposits_acked);
  phantom.summary
    = phantom.ok
        ? fmt::format("every applied deposit was sent by the client ({} "
                      "sent)",
                      t.deposits_sent)
        : fmt::format(
          "{} the client did not send",
          counted(bad_phantom, "applied deposit", "applied deposits"));
  check sums{"sums", t.acked_sum <= t.balance_sum, {}, {}};
  sums.summary = fmt::format(
    "acknowledged {} {} balances {}; in doubt {} (sum {}), applied but never "
    "acknowledged: allowed",
    t.acked_sum, sums.ok ? "<=" : ">", t.balance_sum,
    counted(t.in_doubt, "deposit", "deposits"), t.in_doubt_sum);
  r.checks.push_back(std::move(acked));
  r.checks.push_back(std::move(phantom));
  r.checks.push_back(std::move(sums));
}

std::string format_ms(std::chrono::milliseconds d) {
  return fmt::format("{:.2f} s", static_cast<double>(d.count()) / 1000.0);
}

check check_failover(const failover_measure& m) {
  check c{m.name, true, {}, {}};
  if (!m.measured) {
    c.ok = false;
    c.summary = "did not happen";
    return c;
  }
  c.summary = format_ms(*m.measured);
  if (m.floor.count() > 0)
    c.summary += fmt::format(" (floor {}, {:.2f}x)", format_ms(m.floor),
                             static_cast<double>(m.measured->count())
                               / static_cast<double>(m.floor.count()));
  if (m.floor.count() > 0 && *m.measured + floor_tolerance < m.floor) {
    c.ok = false;
    c.summary += fmt::format(", below the floor by more than {}: the "
                             "settings make that impossible, so the measure "
                             "counted the wrong event",
                             format_ms(floor_tolerance));
  }
  if (m.limit) {
    c.ok = c.ok && *m.measured <= *m.limit;
    c.summary += fmt::format(", limit {}", format_ms(*m.limit));
  }
  return c;
}

} // namespace

std::string counted(uint64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

std::string rejections_summary(uint64_t rejected) {
  if (rejected == 0)
    return "no record was rejected";
  if (rejected == 1)
    return "the one rejected record was stale";
  return fmt::format("every one of the {} rejected records was stale",
                     rejected);
}

std::string deposits_line(const verdict_totals& t) {
  auto out = fmt::format(
    "deposits: {} sent, {} acked, {} failed (every attempt refused or "
    "unanswered by the cluster), {} unfinished at stop (never acknowledged, "
    "not counted against the run)",
    t.deposits_sent, t.deposits_acked, t.deposits_failed,
    t.deposits_unfinished);
  if (t.deposits_unanswered > 0)
    out += fmt::format(", {} without an outcome in client.log",
                       t.deposits_unanswered);
  return out
         + fmt::format(
           "; store: {} refused, {} refused",
           counted(t.journal_conflicts, "conflict", "conflicts"),
           counted(t.journal_duplicates, "duplicate", "duplicates"));
}

bool report::passed() const noexcept {
  return std::all_of(checks.begin(), checks.end(),
                     [](const check& c) { return c.ok; });
}

report judge(const verdict_input& in) {
  report r;
  std::vector<std::string> problems;
  auto events = parse_client_log(in.client_log, problems);
  auto ledger = parse_ledger(in.ledger_jsonl, problems);
  auto journal = parse_journal(in.journal_jsonl, problems);
  r.checks.push_back(check_records(problems));
  check_ledger(ledger, r);
  std::map<std::string, applied> found;
  std::vector<std::pair<std::string, applied>> every;
  check_journal(journal, r, found, every);
  check_deposits(events, found, every, r);
  for (auto& m : in.failovers)
    r.checks.push_back(check_failover(m));
  return r;
}

std::string render(const report& r) {
  std::string out;
  size_t failed = 0;
  for (auto& c : r.checks) {
    failed += c.ok ? 0 : 1;
    out
      += fmt::format("{} {}: {}\n", c.ok ? "PASS" : "FAIL", c.name, c.summary);
    for (auto& p : c.problems)
      out += fmt::format("     {}\n", p);
  }
  out += deposits_line(r.totals) + "\n";
  if (failed == 0)
    out += "verdict: PASS\n";
  else
    out += fmt::format("verdict: FAIL ({} of {} checks failed)\n", failed,
                       r.checks.size());
  return out;
}

} // namespace troupe::demo::verdict
