// The chaos checks beside the interval checks (chaos_checks.hpp).

#include "chaos_checks.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace troupe::chaos {

namespace {

using demo::verdict::counted;

// ` (writer W)` when the journal line names one.
std::string writer_words(const chaos_history& h, size_t line) {
  auto i = h.journal_writers.find(line);
  return i == h.journal_writers.end()
           ? ""
           : fmt::format(" (writer {})", printable(i->second));
}

const nemesis_event* first_op(const chaos_history& h, nemesis_op op) {
  auto i = std::find_if(h.nemesis.begin(), h.nemesis.end(),
                        [op](auto& e) { return e.op == op; });
  return i == h.nemesis.end() ? nullptr : &*i;
}

} // namespace

std::string format_seconds(std::chrono::nanoseconds d) {
  return fmt::format("{:.3f} s", std::chrono::duration<double>(d).count());
}

event_ref ref(const demo::verdict::ledger_entry& e) {
  return {std::string{file_names::ledger}, e.line, e.mono_ns};
}

event_ref ref(const demo::verdict::journal_entry& e) {
  return {std::string{file_names::journal}, e.line, e.mono_ns};
}

event_ref ref(const client_record& e) {
  return {std::string{file_names::client}, e.line, e.event.mono_ns};
}

event_ref ref(const nemesis_event& e) {
  return {std::string{file_names::nemesis}, e.line, e.mono_ns};
}

check_result
check_history_records(const chaos_history& h,
                      const std::vector<std::string>& process_problems,
                      chaos_summary& s) {
  check_builder c{"history records"};
  for (auto* problems : {&h.problems, &process_problems})
    for (auto& p : *problems)
      c.fail(p);
  s.history_files = h.files.size();
  s.cut_lines = h.cut_lines();
  auto summary = fmt::format(
    "every line of {} and {} parses ({} ignored), each file has its "
    "node_start and each node_start its file",
    counted(s.history_files, "history file", "history files"),
    file_names::nemesis,
    counted(s.cut_lines, "cut last line", "cut last lines"));
  if (!c.ok())
    summary = counted(c.violations(), "problem", "problems");
  return std::move(c).finish(std::move(summary));
}

check_result check_token_owners(const chaos_history& h, chaos_summary& s) {
  check_builder c{"I1(a) one owner per token"};
  std::map<uint64_t, const demo::verdict::ledger_entry*> first;
  size_t accepted = 0;
  for (auto& e : h.ledger) {
    if (!e.accepted)
      continue;
    ++accepted;
    auto [i, fresh] = first.emplace(e.token, &e);
    if (!fresh && i->second->owner != e.owner)
      c.fail(fmt::format("{} line {}: token {} accepted from {} but line {} "
                         "had it from {}",
                         file_names::ledger, e.line, e.token,
                         printable(e.owner), i->second->line,
                         printable(i->second->owner)),
             ref(e));
  }
  s.tokens = first.size();
  auto summary = fmt::format(
    "{} over {}, each with one owner", counted(s.tokens, "token", "tokens"),
    counted(accepted, "accepted record", "accepted records"));
  if (!c.ok())
    summary = fmt::format("{} accepted from a second owner",
                          counted(c.violations(), "record", "records"));
  return std::move(c).finish(std::move(summary));
}

check_result check_store_writers(const chaos_history& h, chaos_summary& s) {
  check_builder c{"I2 store writers"};
  struct runs {
    std::string current;
    size_t current_line = 0;
    // Earlier writer -> the line of its run's last entry.
    std::map<std::string, size_t> earlier;
  };
  std::map<std::string, runs> accounts;
  size_t applied = 0;
  for (auto& e : h.journal) {
    if (e.outcome != "applied")
      continue;
    ++applied;
    auto w = h.journal_writers.find(e.line);
    if (w == h.journal_writers.end()) {
      ++s.unattributed;
      continue;
    }
    auto& a = accounts[e.account];
    if (a.current != w->second) {
      ++s.writer_runs;
      if (!a.current.empty())
        a.earlier[a.current] = a.current_line;
      if (auto i = a.earlier.find(w->second); i != a.earlier.end())
        c.fail(fmt::format("{} line {}: {} applied from {} again after {} "
                           "(its run ended at line {})",
                           file_names::journal, e.line, printable(e.account),
                           printable(w->second), printable(a.current),
                           i->second),
               ref(e));
      a.current = w->second;
    }
    a.current_line = e.line;
  }
  auto summary = fmt::format(
    "{} over {} in {}, no account back to an earlier writer ({} without a "
    "writer)",
    counted(applied, "applied deposit", "applied deposits"),
    counted(accounts.size(), "account", "accounts"),
    counted(s.writer_runs, "writer run", "writer runs"), s.unattributed);
  if (!c.ok())
    summary = counted(c.violations(), "return to an earlier writer",
                      "returns to earlier writers");
  return std::move(c).finish(std::move(summary));
}

check_result check_conflicts(const chaos_history& h) {
  check_builder c{"I2 no conflicts"};
  for (auto& e : h.journal)
    if (e.outcome == "conflict")
      c.fail(fmt::format("{} line {}: {} refused deposit {} as a conflict "
                         "(expected seq {}, the account at seq {}){}",
                         file_names::journal, e.line, printable(e.account),
                         printable(e.deposit), e.expected_seq, e.seq,
                         writer_words(h, e.line)),
             ref(e));
  auto summary = fmt::format(
    "no conflict among {}",
    counted(h.journal.size(), "journal entry", "journal entries"));
  if (!c.ok())
    summary = fmt::format("{}: two incarnations wrote one account",
                          counted(c.violations(), "conflict", "conflicts"));
  return std::move(c).finish(std::move(summary));
}

check_result check_guarded_writes(const std::vector<process_record>& ps,
                                  const run_instances& xs, chaos_summary& s) {
  check_builder c{"I3 guarded writes"};
  using kind = node_event_kind;
  for (auto& p : ps) {
    auto& f = *p.file;
    std::vector<const node_event*> ends;
    for (auto& e : f.events) {
      if (e.kind == kind::lease_lost || e.kind == kind::lease_released)
        ends.push_back(&e);
      s.deposit_writes += e.kind == kind::deposit_write ? 1 : 0;
      if (e.kind != kind::ledger_write)
        continue;
      ++s.ledger_writes;
      auto end = std::find_if(ends.begin(), ends.end(), [&](auto* x) {
        return x->token == e.token && x->mono_ns < e.mono_ns;
      });
      if (end != ends.end())
        c.fail(fmt::format("{} line {}: {} stamped after line {}: {}", f.path(),
                           e.line, describe(e), (*end)->line, describe(**end)),
               f.ref(e));
    }
  }
  for (auto& w : xs.strays) {
    auto& f = *w.process->file;
    auto why
      = w.after_stop == nullptr
          ? std::string{"names no started instance"}
          : fmt::format("stamped after its instance's {} (line {})",
                        to_string(w.after_stop->kind), w.after_stop->line);
    c.fail(fmt::format("{} line {}: {} {}", f.path(), w.write->line,
                       describe(*w.write), why),
           f.ref(*w.write));
  }
  auto summary = fmt::format(
    "{} and {}: none after its token's lease was lost or released, none "
    "after its instance stopped, none without an instance",
    counted(s.ledger_writes, "ledger write", "ledger writes"),
    counted(s.deposit_writes, "deposit write", "deposit writes"));
  if (!c.ok())
    summary = fmt::format("{} not guarded",
                          counted(c.violations(), "write", "writes"));
  return std::move(c).finish(std::move(summary));
}

namespace {

// The stamps a store record must have (see check_stamped_writes): the
// nodes' ledger_writes by (address, token, seq) and deposit_writes by
// (address, incarnation, deposit), and which cut files excused a record.
class stamp_index {
public:
  using ledger_key = std::tuple<std::string, uint64_t, uint64_t>;
  using deposit_key = std::tuple<std::string, uint64_t, std::string>;

  explicit stamp_index(const chaos_history& h) {
    using kind = node_event_kind;
    for (auto& f : h.files) {
      by_address_[f.address].push_back(&f);
      for (auto& e : f.events)
        if (e.kind == kind::ledger_write)
          ledger_[{f.address, e.token, e.seq}].push_back({&f, &e});
        else if (e.kind == kind::deposit_write)
          deposit_[{f.address, e.incarnation, e.deposit}].push_back({&f, &e});
    }
  }

  // Empty when `address`' history has a matching stamp at or before
  // `mono_ns`, or when its cut last line may have held it; else why not.
  std::string ledger_fault(const ledger_key& k, int64_t mono_ns) {
    return fault(ledger_.find(k), ledger_.end(), std::get<0>(k), mono_ns);
  }

  std::string deposit_fault(const deposit_key& k, int64_t mono_ns) {
    return fault(deposit_.find(k), deposit_.end(), std::get<0>(k), mono_ns);
  }

  size_t cut_excused() const noexcept {
    return excused_.size();
  }

private:
  struct stamp {
    const history_file* file;
    const node_event* event;
  };

  template <class Iterator>
  std::string fault(Iterator i, Iterator end, const std::string& address,
                    int64_t mono_ns) {
    const stamp* later = nullptr;
    if (i != end)
      for (auto& x : i->second) {
        if (x.event->mono_ns <= mono_ns)
          return {};
        if (later == nullptr)
          later = &x;
      }
    if (excuse_cut(address, mono_ns))
      return {};
    if (later != nullptr)
      return fmt::format("which its node stamped only after it ({} line {})",
                         later->file->path(), later->event->line);
    return "which no node stamped";
  }

  // A file of `address` whose cut last line, written after its last whole
  // line and before `mono_ns`, may have been the stamp; each excuses one.
  bool excuse_cut(const std::string& address, int64_t mono_ns) {
    auto i = by_address_.find(address);
    if (i == by_address_.end())
      return false;
    for (auto* f : i->second)
      if (f->cut_last_line && !excused_.contains(f)
          && (f->events.empty() || f->events.back().mono_ns <= mono_ns)) {
        excused_.insert(f);
        return true;
      }
    return false;
  }

  std::map<ledger_key, std::vector<stamp>> ledger_;
  std::map<deposit_key, std::vector<stamp>> deposit_;
  std::map<std::string, std::vector<const history_file*>> by_address_;
  std::set<const history_file*> excused_;
};

// Splits a writer id `<address>/<incarnation>`; false for another shape.
bool split_writer(const std::string& writer, std::string& address,
                  uint64_t& incarnation) {
  auto slash = writer.rfind('/');
  if (slash == std::string::npos || slash == 0)
    return false;
  auto digits = std::string_view{writer}.substr(slash + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(),
                                   incarnation);
  if (digits.empty() || ec != std::errc{}
      || end != digits.data() + digits.size())
    return false;
  address = writer.substr(0, slash);
  return true;
}

} // namespace

check_result check_stamped_writes(const chaos_history& h, chaos_summary& s) {
  check_builder c{"I3 stamped store writes"};
  stamp_index stamps{h};
  size_t records = 0;
  for (auto& e : h.ledger) {
    if (!e.accepted)
      continue;
    ++records;
    auto why = stamps.ledger_fault({e.owner, e.token, e.seq}, e.mono_ns);
    if (!why.empty())
      c.fail(fmt::format("{} line {}: accepted token {} seq {} of {}, {}",
                         file_names::ledger, e.line, e.token, e.seq,
                         printable(e.owner), why),
             ref(e));
  }
  size_t deposits = 0;
  for (auto& e : h.journal) {
    auto w = h.journal_writers.find(e.line);
    if (e.outcome != "applied" || w == h.journal_writers.end())
      continue;
    ++deposits;
    std::string address;
    uint64_t incarnation = 0;
    auto why
      = split_writer(w->second, address, incarnation)
          ? stamps.deposit_fault({address, incarnation, e.deposit}, e.mono_ns)
          : std::string{"not a writer id <address>/<incarnation>"};
    if (!why.empty())
      c.fail(fmt::format("{} line {}: applied {} of {} from {}, {}",
                         file_names::journal, e.line, printable(e.deposit),
                         printable(e.account), printable(w->second), why),
             ref(e));
  }
  s.store_records = records + deposits;
  s.unmatched_cut = stamps.cut_excused();
  auto summary = fmt::format(
    "{} and {}, each stamped by its writer's process no later than the "
    "store's line ({} unmatched because the history was cut)",
    counted(records, "accepted ledger record", "accepted ledger records"),
    counted(deposits, "applied deposit with a writer",
            "applied deposits with a writer"),
    s.unmatched_cut);
  if (!c.ok())
    summary
      = fmt::format("{} that no node stamped before the store's line",
                    counted(c.violations(), "store record", "store records"));
  return std::move(c).finish(std::move(summary));
}

check_result check_recovery(const chaos_history& h, chaos_summary& s) {
  check_builder c{"I4 recovery"};
  auto* probe = first_op(h, nemesis_op::probe_start);
  if (probe == nullptr) {
    c.fail(fmt::format("{}: no probe_start, so recovery was not probed",
                       file_names::nemesis));
    return std::move(c).finish("not probed");
  }
  auto probe_line
    = fmt::format("{} line {}: probe_start", file_names::nemesis, probe->line);
  std::map<std::string, int64_t> sent_at;
  std::set<std::string> accounts;
  // Account -> the stamp of its first ack of a deposit sent after the probe.
  std::map<std::string, int64_t> recovered;
  for (auto& r : h.client) {
    auto& e = r.event;
    if (e.kind == demo::client::client_event_kind::sent) {
      accounts.insert(e.account);
      sent_at.emplace(e.deposit, e.mono_ns);
    } else if (e.kind == demo::client::client_event_kind::acked) {
      auto i = sent_at.find(e.deposit);
      if (i != sent_at.end() && i->second >= probe->mono_ns)
        recovered.emplace(e.account, e.mono_ns);
    }
  }
  s.probed_accounts = accounts.size();
  if (accounts.empty())
    c.fail(fmt::format("{}, but {} has no deposit sent, so no account was "
                       "probed",
                       probe_line, file_names::client),
           ref(*probe));
  for (auto& a : accounts)
    if (!recovered.contains(a))
      c.fail(fmt::format("{}, but {} got no acknowledged deposit sent after "
                         "it",
                         probe_line, printable(a)),
             ref(*probe));
  auto ledger = std::find_if(h.ledger.begin(), h.ledger.end(), [&](auto& e) {
    return e.accepted && e.mono_ns >= probe->mono_ns;
  });
  if (ledger == h.ledger.end())
    c.fail(fmt::format("{}, but the ledger accepted no record after it (the "
                       "singleton is not back)",
                       probe_line),
           ref(*probe));
  if (!c.ok())
    return std::move(c).finish(fmt::format(
      "{} after probe_start", counted(c.violations(), "failure", "failures")));
  int64_t last = ledger->mono_ns;
  for (auto& [a, t] : recovered)
    last = std::max(last, t);
  auto* end = first_op(h, nemesis_op::nemesis_end);
  s.recovery
    = std::chrono::nanoseconds{last - (end ? end->mono_ns : probe->mono_ns)};
  return std::move(c).finish(fmt::format(
    "after probe_start all {} got an acknowledged deposit and the ledger "
    "accepted a record, {} after {}",
    counted(accounts.size(), "account", "accounts"),
    format_seconds(*s.recovery), end ? "nemesis_end" : "probe_start"));
}

} // namespace troupe::chaos
