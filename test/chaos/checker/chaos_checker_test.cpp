// The chaos checker's planted-bug tests: a clean synthetic run passes; each
// planted violation fails exactly its check and names the offending line;
// the overlaps the rules allow (a pause, a kill) and a cut last line pass.
// The store's and the client's lines are written with their own
// formatters; times are seconds from run_start.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chaos_checker.hpp"
#include "chaos_intervals.hpp"
#include "chaos_run_dir.hpp"
#include "chaos_test_clock.hpp"
#include "chaos_timeline.hpp"
#include "client/client_log.hpp"
#include "store/demo_store_core.hpp"
#include "view_log.hpp"

using namespace troupe;
using namespace troupe::chaos;

namespace {

using test_clock::ns;

// A file's lines by stamp: tests add them in any order.
class log_file {
public:
  void add(double s, std::string line) {
    if (line.ends_with('\n'))
      line.pop_back();
    lines_.emplace_back(s, std::move(line));
  }

  void remove(double s) {
    std::erase_if(lines_, [s](auto& l) { return l.first == s; });
  }

  std::string text() const {
    auto sorted = lines_;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](auto& a, auto& b) { return a.first < b.first; });
    std::string out;
    for (auto& [s, line] : sorted)
      out += line + "\n";
    return out;
  }

private:
  std::vector<std::pair<double, std::string>> lines_;
};

// `,"name":value` pairs of one line, without the leading comma.
struct event {
  std::string name;
  std::string fields;
};

event lease_acquired(uint64_t token) {
  return {"lease_acquired",
          fmt::format(R"("lease":"scheduler","token":{})", token)};
}

event lease_lost(uint64_t token) {
  return {"lease_lost",
          fmt::format(R"("lease":"scheduler","token":{},"reason":"renewal )"
                      R"(deadline passed")",
                      token)};
}

event singleton(const char* what, uint64_t incarnation, uint64_t token) {
  return {what, fmt::format(R"("type":"scheduler","incarnation":{},"token":{})",
                            incarnation, token)};
}

event singleton_started(uint64_t incarnation, uint64_t token) {
  return singleton("singleton_started", incarnation, token);
}

event singleton_stopped(uint64_t incarnation, uint64_t token) {
  return singleton("singleton_stopped", incarnation, token);
}

event ledger_write(uint64_t incarnation, uint64_t token, uint64_t seq) {
  return {"ledger_write", fmt::format(R"("incarnation":{},"token":{},"seq":{})",
                                      incarnation, token, seq)};
}

event entity(const char* what, const char* account, const char* shard,
             uint64_t incarnation) {
  return {what, fmt::format(R"("account":"{}","shard":"{}","incarnation":{})",
                            account, shard, incarnation)};
}

event entity_started(const char* account, const char* shard,
                     uint64_t incarnation) {
  return entity("entity_started", account, shard, incarnation);
}

event entity_stopped(const char* account, const char* shard,
                     uint64_t incarnation) {
  return entity("entity_stopped", account, shard, incarnation);
}

event deposit_write(const char* account, const char* shard,
                    uint64_t incarnation, const char* deposit,
                    uint64_t expected_seq) {
  auto e = entity("deposit_write", account, shard, incarnation);
  e.fields += fmt::format(R"(,"deposit":"{}","expected_seq":{})", deposit,
                          expected_seq);
  return e;
}

// One node process' history file.
struct node_log {
  std::string node;
  uint64_t start = 1;
  std::string address;
  log_file lines;
  // Written after the last line, without a newline (a cut write).
  std::string cut_tail;

  node_log& at(double s, const event& e) {
    lines.add(s, fmt::format(R"({{"mono_ns":{},"node":"{}","address":"{}",)"
                             R"("event":"{}"{}{}}})",
                             ns(s), node, address, e.name,
                             e.fields.empty() ? "" : ",", e.fields));
    return *this;
  }
};

// nemesis.jsonl.
struct nemesis_log {
  log_file lines;

  nemesis_log& at(double s, const char* op, std::string fields = "") {
    lines.add(s, fmt::format(R"({{"mono_ns":{},"op":"{}"{}{}}})", ns(s), op,
                             fields.empty() ? "" : ",", fields));
    return *this;
  }
};

std::string proc(const char* node, int pid) {
  return fmt::format(R"("node":"{}","pid":{})", node, pid);
}

struct client_file {
  log_file lines;

  void add(double s, demo::client::client_event e) {
    e.mono_ns = ns(s);
    lines.add(s, demo::client::format_client_event(e));
  }

  void sent(double s, std::string d, std::string a, int64_t amount) {
    add(s, {0,
            demo::client::client_event_kind::sent,
            std::move(d),
            std::move(a),
            amount,
            0,
            {},
            {}});
  }

  void acked(double s, std::string d, std::string a, int64_t amount,
             uint64_t seq) {
    add(s, {0,
            demo::client::client_event_kind::acked,
            std::move(d),
            std::move(a),
            amount,
            seq,
            {},
            {}});
  }

  void failed(double s, std::string d) {
    add(s, {0,
            demo::client::client_event_kind::failed,
            std::move(d),
            {},
            0,
            0,
            "timeout",
            {}});
  }
};

struct ledger_file {
  log_file lines;

  void record(double s, uint64_t token, uint64_t seq, std::string owner) {
    demo::store::ledger_decision d;
    d.accepted = true;
    lines.add(
      s, demo::store::format_ledger_line({ns(s), {}}, {token, seq, owner}, d));
  }
};

struct journal_file {
  log_file lines;

  // A deposit at `expected` (seq and balance: the account after it).
  void entry(double s, demo::store::deposit_outcome outcome,
             std::string account, std::string deposit, int64_t amount,
             uint64_t expected, uint64_t seq, int64_t balance,
             std::string writer) {
    demo::store::deposit_result r;
    r.outcome = outcome;
    r.account = {balance, seq};
    auto line = demo::store::format_journal_line(
      {ns(s), {}}, account, {deposit, amount, expected}, r);
    // The store's line with the deposit request's writer added.
    line.insert(line.rfind('}'), fmt::format(R"(,"writer":"{}")", writer));
    lines.add(s, line);
  }

  void applied(double s, std::string account, std::string deposit,
               int64_t amount, uint64_t seq, int64_t balance,
               std::string writer) {
    entry(s, demo::store::deposit_outcome::applied, std::move(account),
          std::move(deposit), amount, seq - 1, seq, balance, std::move(writer));
  }
};

const std::string a1 = "10.77.0.1:2552#1";
const std::string a2 = "10.77.0.2:2552#2";
const std::string a3 = "10.77.0.1:2552#3";

// views.jsonl, written with the driver's writer.
struct views_file {
  log_file lines;

  // `node`'s process `pid` (start `start`, address `self`) answered round
  // `round`, asked at `s`, with `members` all up.
  void view(double s, uint64_t round, bool final, std::string node,
            uint64_t pid, uint64_t start, std::string self,
            std::vector<std::string> members) {
    members_answer a{std::move(self), std::nullopt, {}};
    for (auto& m : members)
      a.members.push_back({m, "up", true});
    lines.add(s, view_line({ns(s),
                            ns(s + 0.02),
                            round,
                            final,
                            std::move(node),
                            pid,
                            start,
                            std::move(a),
                            {}}));
  }
};

// node-1 holds the singleton (token 5) and acct-1 (shard 1) until it is
// killed at 5 s; node-2 runs acct-2 (shard 2) throughout, takes acct-1 at
// 5.5 s and the singleton (token 8) at 6.01 s; node-1 restarts at 6 s. A
// partition and a heal; the probe at 10 s finds every account and the
// ledger back. d6 is applied but its ack lost (in doubt). Both nodes see
// one cluster at 3 s and in the final round at 11.5 s.
struct run {
  node_log n1{"node-1", 1, a1, {}, {}};
  node_log n2{"node-2", 1, a2, {}, {}};
  node_log n1b{"node-1", 2, a3, {}, {}};
  nemesis_log nemesis;
  client_file client;
  ledger_file ledger;
  journal_file journal;
  views_file views;

  run() {
    nemesis
      .at(0, "run_start",
          R"("seed":7,"nodes":2,"mechanism":"netns","duration_s":60,)"
          R"("quiet_after_ms":2000)")
      .at(0.01, "node_start", proc("node-1", 101) + R"(,"start":1)")
      .at(0.02, "node_start", proc("node-2", 102) + R"(,"start":1)")
      .at(5.0, "kill", proc("node-1", 101))
      .at(5.05, "node_exit", proc("node-1", 101) + R"(,"status":"killed")")
      .at(6.0, "node_start", proc("node-1", 111) + R"(,"start":2)")
      .at(7.0, "partition",
          R"("id":1,"kind":"symmetric","from":["node-1"],"to":["node-2"],)"
          R"("mechanism":"netns")")
      .at(8.0, "heal", R"("id":1)")
      .at(9.0, "nemesis_end")
      .at(10.0, "probe_start")
      .at(12.0, "run_end");
    n1.at(0.1, {"node_started", ""})
      .at(0.5, lease_acquired(5))
      .at(0.51, singleton_started(1, 5))
      .at(0.6, entity_started("acct-1", "1", 1))
      .at(1.0, ledger_write(1, 5, 1))
      .at(1.1, deposit_write("acct-1", "1", 1, "d1", 0))
      .at(3.0, ledger_write(1, 5, 2));
    n2.at(0.2, {"node_started", ""})
      .at(0.7, entity_started("acct-2", "2", 1))
      .at(1.2, deposit_write("acct-2", "2", 1, "d2", 0))
      .at(5.5, entity_started("acct-1", "1", 2))
      .at(6.0, lease_acquired(8))
      .at(6.01, singleton_started(1, 8))
      .at(6.5, ledger_write(1, 8, 1))
      .at(10.2, deposit_write("acct-1", "1", 2, "d3", 1))
      .at(10.3, deposit_write("acct-2", "2", 1, "d4", 1))
      .at(10.4, deposit_write("acct-2", "2", 1, "d6", 2))
      .at(11.0, ledger_write(1, 8, 2));
    n1b.at(6.1, {"node_started", ""});
    client.sent(1.0, "d1", "acct-1", 5);
    client.sent(1.1, "d2", "acct-2", 3);
    client.acked(1.15, "d1", "acct-1", 5, 1);
    client.acked(1.25, "d2", "acct-2", 3, 1);
    client.sent(10.1, "d3", "acct-1", 2);
    client.sent(10.15, "d4", "acct-2", 4);
    client.acked(10.25, "d3", "acct-1", 2, 2);
    client.acked(10.35, "d4", "acct-2", 4, 2);
    client.sent(10.38, "d6", "acct-2", 10);
    client.failed(10.6, "d6");
    ledger.record(1.01, 5, 1, a1);
    ledger.record(3.01, 5, 2, a1);
    ledger.record(6.51, 8, 1, a2);
    ledger.record(11.01, 8, 2, a2);
    journal.applied(1.11, "acct-1", "d1", 5, 1, 5, a1 + "/1");
    journal.applied(1.21, "acct-2", "d2", 3, 1, 3, a2 + "/1");
    journal.applied(10.21, "acct-1", "d3", 2, 2, 7, a2 + "/2");
    journal.applied(10.31, "acct-2", "d4", 4, 2, 7, a2 + "/1");
    journal.applied(10.41, "acct-2", "d6", 10, 3, 17, a2 + "/1");
    views.view(3.0, 1, false, "node-1", 101, 1, a1, {a1, a2});
    views.view(3.0, 1, false, "node-2", 102, 1, a2, {a1, a2});
    views.view(11.5, 2, true, "node-1", 111, 2, a3, {a2, a3});
    views.view(11.5, 2, true, "node-2", 102, 1, a2, {a2, a3});
  }

  // node-1 is frozen from 4 s to 7 s instead of killed; on resuming it
  // finds its lease gone and stops, writing nothing, and exits (downed).
  void pause_node_1(double pause_s = 4.0) {
    nemesis.lines.remove(5.0);
    nemesis.lines.remove(5.05);
    nemesis.at(pause_s, "pause", proc("node-1", 101))
      .at(7.0, "resume", proc("node-1", 101))
      .at(7.5, "node_exit", proc("node-1", 101) + R"(,"status":"exit 1")");
    n1.at(7.01, lease_lost(5))
      .at(7.02, singleton_stopped(1, 5))
      .at(7.03, entity_stopped("acct-1", "1", 1));
  }

  chaos_input input() const {
    chaos_input in;
    for (auto* n : {&n1, &n2, &n1b})
      in.history[fmt::format("{}.{}.jsonl", n->node, n->start)]
        = n->lines.text() + n->cut_tail;
    in.nemesis_jsonl = nemesis.lines.text();
    in.client_log = client.lines.text();
    in.ledger_jsonl = ledger.lines.text();
    in.journal_jsonl = journal.lines.text();
    in.views_jsonl = views.lines.text();
    return in;
  }
};

std::set<std::string> failing(const chaos_report& r) {
  std::set<std::string> out;
  for (auto& c : r.verdict.checks)
    if (!c.ok)
      out.insert(c.name);
  return out;
}

std::string problems_of(const chaos_report& r) {
  std::string out;
  for (auto& c : r.verdict.checks)
    for (auto& p : c.problems)
      out += p + "\n";
  return out;
}

// The report of the clean run with `plant` applied.
chaos_report check_planted(const std::function<void(run&)>& plant) {
  run r;
  plant(r);
  return check_run(r.input());
}

const demo::verdict::check& check_named(const chaos_report& r,
                                        std::string_view name) {
  auto i = std::find_if(r.verdict.checks.begin(), r.verdict.checks.end(),
                        [&](auto& c) { return c.name == name; });
  REQUIRE(i != r.verdict.checks.end());
  return *i;
}

} // namespace

TEST_CASE("chaos checker: a clean run passes every check") {
  auto r = check_run(run{}.input());
  INFO(render(r));
  CHECK(r.passed());
  CHECK(r.verdict.checks.size() == 24);
  CHECK(r.offenses.empty());
  CHECK_FALSE(r.first_offense());
  auto& s = r.summary;
  CHECK(s.violations == 0);
  CHECK(s.history_files == 3);
  CHECK(s.tokens == 2);
  CHECK(s.singleton_instances == 2);
  CHECK(s.entity_instances == 3);
  CHECK(s.accounts == 2);
  CHECK(s.shards == 2);
  CHECK(s.writer_runs == 3);
  CHECK(s.ledger_writes == 4);
  CHECK(s.deposit_writes == 5);
  CHECK(s.probed_accounts == 2);
  CHECK(s.store_records == 9);
  CHECK(s.unmatched_cut == 0);
  REQUIRE(s.recovery);
  CHECK(*s.recovery == std::chrono::milliseconds{2010});
  auto text = render(r);
  CHECK_THAT(
    text, Catch::Contains("PASS I1(c) singleton acting intervals: 2 singleton "
                          "instances over 1 type: no two acting intervals "
                          "[started, last write] overlap\n"));
  CHECK_THAT(text, Catch::Contains(
                     "PASS I1(d) singleton lifetimes: 2 singleton instances "
                     "over 1 type (1 cut short by a pause, kill or "
                     "node_exit): none started while another ran unpaused, "
                     "unkilled and unstopped\n"));
  CHECK_THAT(text, Catch::Contains("PASS I1(b) fencing: no stale token"));
  CHECK_THAT(text,
             Catch::Contains("operations: client 5 sent, 4 acked, 1 failed, 0 "
                             "unfinished; ledger 4 accepted, 0 rejected; nodes "
                             "stamped 4 ledger writes and 5 deposit writes\n"));
  CHECK_THAT(text, Catch::Contains("faults injected: kill 1, partition "
                                   "symmetric 1\nnode processes: 3 started, "
                                   "1 ended\n"));
  CHECK_THAT(text, Catch::Contains(
                     "invariants checked: I1 over 2 tokens and 2 singleton "
                     "instances; I2 over 3 entity incarnations of 2 accounts "
                     "and 2 shards, 3 store writer runs; I3 over 4 ledger "
                     "writes, 5 deposit writes and 9 store records; I4 over "
                     "2 probed accounts\n"));
  CHECK_THAT(text, Catch::Contains(
                     "PASS I3 stamped store writes: 4 accepted ledger records "
                     "and 5 applied deposits with a writer, each stamped by "
                     "its writer's process no later than the store's line (0 "
                     "unmatched because the history was cut)\n"));
  CHECK_THAT(text, Catch::Contains("recovery: 2.010 s\n"));
  CHECK_THAT(text, Catch::Contains(
                     "PASS I4 one membership view: final round 2 at "
                     "+11.500s: 2 live nodes, each a member of the one view "
                     "{node-2.1 up, node-1.2 up}\n"));
  CHECK_THAT(
    text, Catch::Contains("membership views: 4 samples in 2 rounds, 2 rounds "
                          "judged in 2 quiet periods (4.500 s quiet), 2 live "
                          "nodes at the end\n"));
  CHECK_THAT(text, Catch::EndsWith("violations: 0\nverdict: PASS\n"));
  CHECK(render_first_violation(r).empty());
}

TEST_CASE("chaos checker: planted violations are each caught by their check "
          "naming the offending line") {
  using edit = std::function<void(run&)>;
  using demo::store::deposit_outcome;
  auto [bug, plant, caught, problem]
    = GENERATE(table<std::string, edit, std::set<std::string>, std::string>({
      {"two singletons overlapping",
       [](run& r) { r.n1b.at(11.5, singleton_started(1, 9)); },
       {"I1(d) singleton lifetimes"},
       "history/node-1.2.jsonl line 2: singleton_started type=scheduler "
       "incarnation=1 token=9, while the instance of history/node-2.1.jsonl "
       "line 6 ran, neither paused nor killed, until the end of the run: two "
       "instances of scheduler live"},
      {"a paused singleton writes after its successor started",
       [](run& r) {
         r.pause_node_1();
         r.n1.at(7.005, ledger_write(1, 5, 3));
       },
       {"I1(c) singleton acting intervals"},
       "history/node-1.1.jsonl line 8: ledger_write incarnation=1 token=5 "
       "seq=3, stamped at or after history/node-2.1.jsonl line 6: "
       "singleton_started type=scheduler incarnation=1 token=8: two "
       "instances of scheduler acting"},
      {"same token two owners",
       [](run& r) { r.ledger.record(11.02, 8, 3, a3); },
       {"I1(a) one owner per token", "I3 stamped store writes"},
       "ledger.jsonl line 5: token 8 accepted from 10.77.0.1:2552#3 but line "
       "3 had it from 10.77.0.2:2552#2"},
      {"stale token accepted",
       [](run& r) { r.ledger.record(11.5, 5, 3, a1); },
       {"I1(b) fencing", "I3 stamped store writes"},
       "ledger.jsonl line 5: accepted token 5 after token 8 (line 4)"},
      {"ledger_write after lease_lost",
       [](run& r) { r.n2.at(10.5, lease_lost(8)); },
       {"I3 guarded writes"},
       "history/node-2.1.jsonl line 12: ledger_write incarnation=1 token=8 "
       "seq=2 stamped after line 11: lease_lost lease=scheduler token=8 "
       "reason=renewal deadline passed"},
      {"deposit_write after its entity stopped",
       [](run& r) { r.n2.at(10.0, entity_stopped("acct-1", "1", 2)); },
       {"I3 guarded writes"},
       "history/node-2.1.jsonl line 9: deposit_write account=acct-1 shard=1 "
       "incarnation=2 deposit=d3 expected_seq=1 stamped after its "
       "instance's entity_stopped (line 8)"},
      {"a ledger_write with a token its instance did not start with",
       [](run& r) { r.n2.at(7.0, ledger_write(1, 9, 5)); },
       {"I3 guarded writes"},
       "history/node-2.1.jsonl line 8: ledger_write incarnation=1 token=9 "
       "seq=5 names no started instance"},
      {"entity acting intervals overlapping",
       [](run& r) {
         r.nemesis.at(2.0, "pause", proc("node-2", 102))
           .at(3.0, "resume", proc("node-2", 102));
         r.n2.at(4.0, entity_started("acct-2", "2", 3));
       },
       {"I2 entity acting intervals"},
       "history/node-2.1.jsonl line 10: deposit_write account=acct-2 shard=2 "
       "incarnation=1 deposit=d4 expected_seq=1, stamped at or after "
       "history/node-2.1.jsonl line 4: entity_started account=acct-2 "
       "shard=2 incarnation=3: two incarnations of acct-2 acting"},
      {"shard start-stop overlap with no pause or kill",
       [](run& r) { r.n1b.at(11.5, entity_started("acct-5", "2", 1)); },
       {"I2 shard lifetimes"},
       "history/node-1.2.jsonl line 2: entity_started account=acct-5 "
       "shard=2 incarnation=1, while the instance of history/node-2.1.jsonl "
       "line 2 ran, neither paused nor killed, until the end of the run: "
       "shard 2 live on two processes"},
      {"a pause after the successor started excuses nothing",
       [](run& r) { r.pause_node_1(6.5); },
       {"I1(d) singleton lifetimes", "I2 entity lifetimes",
        "I2 shard lifetimes"},
       "history/node-2.1.jsonl line 6: singleton_started type=scheduler "
       "incarnation=1 token=8, while the instance of history/node-1.1.jsonl "
       "line 3 ran, neither paused nor killed, until a pause (nemesis.jsonl "
       "line 5)"},
      {"a late node_exit without a kill",
       [](run& r) {
         r.nemesis.lines.remove(5.0);
         r.nemesis.lines.remove(5.05);
         r.nemesis.at(6.5, "node_exit",
                      proc("node-1", 101) + R"(,"status":"exit 1")");
       },
       {"I1(d) singleton lifetimes", "I2 entity lifetimes",
        "I2 shard lifetimes"},
       "until a node_exit (nemesis.jsonl line 5)"},
      {"store writer returning to an earlier writer",
       [](run& r) {
         r.client.sent(11.5, "d5", "acct-1", 1);
         r.journal.applied(11.6, "acct-1", "d5", 1, 3, 8, a1 + "/1");
       },
       {"I2 store writers", "I3 stamped store writes"},
       "journal.jsonl line 6: acct-1 applied from 10.77.0.1:2552#1/1 again "
       "after 10.77.0.2:2552#2/2 (its run ended at line 1)"},
      {"a conflict",
       [](run& r) {
         r.journal.entry(10.32, deposit_outcome::conflict, "acct-2", "d4", 4, 1,
                         2, 7, a3 + "/1");
       },
       {"I2 no conflicts"},
       "journal.jsonl line 5: acct-2 refused deposit d4 as a conflict "
       "(expected seq 1, the account at seq 2) (writer "
       "10.77.0.1:2552#3/1)"},
      {"acked deposit missing",
       [](run& r) {
         r.client.sent(11.0, "d7", "acct-1", 1);
         r.client.acked(11.1, "d7", "acct-1", 1, 3);
       },
       {"I3 acked deposits"},
       "d7 (acct-1 +1) was acked but is not in the journal"},
      {"probe missing an account",
       [](run& r) {
         r.client.sent(2.0, "d8", "acct-3", 1);
         r.client.failed(2.5, "d8");
       },
       {"I4 recovery"},
       "nemesis.jsonl line 10: probe_start, but acct-3 got no acknowledged "
       "deposit sent after it"},
      {"singleton not back",
       [](run& r) { r.ledger.lines.remove(11.01); },
       {"I4 recovery"},
       "nemesis.jsonl line 10: probe_start, but the ledger accepted no "
       "record after it (the singleton is not back)"},
      {"no probe",
       [](run& r) { r.nemesis.lines.remove(10.0); },
       {"I4 recovery"},
       "nemesis.jsonl: no probe_start, so recovery was not probed"},
      {"malformed history line",
       [](run& r) { r.n2.lines.add(3.5, R"({"mono_ns":1,"node":"node-2")"); },
       {"history records"},
       "history/node-2.1.jsonl line 4: not JSON"},
      {"malformed nemesis line",
       [](run& r) { r.nemesis.at(6.5, "explode"); },
       {"history records"},
       "nemesis.jsonl line 7: unknown op \"explode\""},
      {"a history line of another node",
       [](run& r) {
         r.n2.lines.add(3.5, R"({"mono_ns":1,"node":"node-9",)"
                             R"("address":"x","event":)"
                             R"("node_started"})");
       },
       {"history records"},
       "history/node-2.1.jsonl line 4: node \"node-9\" in a file of node-2"},
      {"a malformed last line with its newline",
       [](run& r) { r.n2.lines.add(13.0, R"({"mono_ns":1)"); },
       {"history records"},
       "history/node-2.1.jsonl line 12: not JSON"},
      {"an unterminated last line that is JSON but wrong",
       [](run& r) {
         r.n2.cut_tail = R"({"mono_ns":1,"node":"node-2","address":"x",)"
                         R"("event":"explode"})";
       },
       {"history records"},
       "history/node-2.1.jsonl line 12: unknown event \"explode\""},
      // node-1.2 is then no live process by the driver's records, though
      // every view lists it.
      {"a history file without its node_start",
       [](run& r) { r.nemesis.lines.remove(6.0); },
       {"history records", "I4 one membership view"},
       "history/node-1.2.jsonl: no node_start of node-1 start 2 in "
       "nemesis.jsonl"},
      {"a node_start without its history file",
       [](run& r) {
         r.nemesis.at(11.8, "node_start", proc("node-3", 131) + R"(,"start":1)");
       },
       {"history records"},
       "nemesis.jsonl line 11: node_start of node-3 start 1, but "
       "history/node-3.1.jsonl is missing"},
      {"a node_start of the same node and start twice",
       [](run& r) {
         r.nemesis.at(6.5, "node_start", proc("node-1", 121) + R"(,"start":2)");
       },
       {"history records"},
       "nemesis.jsonl line 7: node_start of node-1 start 2 again (line 6 had "
       "it)"},
      {"a history line of 200000 brackets",
       [](run& r) { r.n2.lines.add(3.5, std::string(200000, '[')); },
       {"history records"},
       "history/node-2.1.jsonl line 4: not JSON (Invalid value.)"},
      {"a nemesis line of 200000 nested arrays",
       [](run& r) {
         r.nemesis.lines.add(6.5, std::string(200000, '[')
                                    + std::string(200000, ']'));
       },
       {"history records"},
       "nemesis.jsonl line 7: not a JSON object"},
      {"a negative stamp in a history file",
       [](run& r) {
         r.n2.lines.add(3.5, R"({"mono_ns":-5,"node":"node-2",)"
                             R"("address":"10.77.0.2:2552#2",)"
                             R"("event":"node_started"})");
       },
       {"history records"},
       "history/node-2.1.jsonl line 4: mono_ns -5 is not a CLOCK_MONOTONIC "
       "stamp (> 0)"},
      {"a negative stamp in nemesis.jsonl",
       [](run& r) {
         r.nemesis.lines.add(6.5, R"({"mono_ns":-1,"op":"etcd_stop"})");
       },
       {"history records"},
       "nemesis.jsonl line 7: mono_ns -1 is not a CLOCK_MONOTONIC stamp (> "
       "0)"},
      {"a negative stamp in ledger.jsonl",
       [](run& r) {
         demo::store::ledger_decision d;
         d.accepted = true;
         r.ledger.lines.add(
           11.5, demo::store::format_ledger_line({-7, {}}, {8, 3, a2}, d));
       },
       {"store records"},
       "ledger.jsonl line 5: mono_ns -7 is not a CLOCK_MONOTONIC stamp (> "
       "0)"},
      {"an escape sequence and a CR in a history line",
       [](run& r) {
         r.n2.lines.add(3.5, R"({"mono_ns":1,"node":"node-2",)"
                             R"("address":"x","event":"\u001b[2J\r"})");
       },
       {"history records"},
       R"(history/node-2.1.jsonl line 4: unknown event "\x1b[2J\r")"},
      {"a C1 control and a byte that is not UTF-8 in a history line",
       [](run& r) {
         r.n2.lines.add(3.5, "{\"mono_ns\":1,\"node\":\"node-\xc2\x9b\xff\","
                             "\"address\":\"x\",\"event\":\"node_started\"}");
       },
       {"history records"},
       R"(history/node-2.1.jsonl line 4: node "node-\xc2\x9b\xff" in a file )"
       R"(of node-2)"},
      {"an escape sequence and a CR in client.log",
       [](run& r) { r.client.lines.add(3.5, "\x1b[2Jboom\r"); },
       {"store records"},
       R"(client.log line 5: malformed: "\x1b[2Jboom\r")"},
      {"a ledger record no node stamped",
       [](run& r) {
         r.ledger.record(11.5, 8, 3, a2);
       },
       {"I3 stamped store writes"},
       "ledger.jsonl line 5: accepted token 8 seq 3 of 10.77.0.2:2552#2, "
       "which no node stamped"},
      {"a ledger record stamped only after the store's line",
       [](run& r) {
         r.ledger.lines.remove(11.01);
         r.ledger.record(10.9, 8, 2, a2);
       },
       {"I3 stamped store writes"},
       "ledger.jsonl line 4: accepted token 8 seq 2 of 10.77.0.2:2552#2, "
       "which its node stamped only after it (history/node-2.1.jsonl line "
       "11)"},
      {"an applied deposit no node stamped",
       [](run& r) {
         r.client.sent(11.5, "d9", "acct-2", 1);
         r.client.acked(11.7, "d9", "acct-2", 1, 4);
         r.journal.applied(11.6, "acct-2", "d9", 1, 4, 18, a2 + "/1");
       },
       {"I3 stamped store writes"},
       "journal.jsonl line 6: applied d9 of acct-2 from "
       "10.77.0.2:2552#2/1, which no node stamped"},
      {"an applied deposit stamped by another incarnation",
       [](run& r) {
         r.journal.lines.remove(10.21);
         r.journal.applied(10.21, "acct-1", "d3", 2, 2, 7, a2 + "/1");
       },
       {"I3 stamped store writes"},
       "journal.jsonl line 3: applied d3 of acct-1 from "
       "10.77.0.2:2552#2/1, which no node stamped"},
    }));
  CAPTURE(bug);
  auto report = check_planted(plant);
  INFO(render(report));
  CHECK_FALSE(report.passed());
  CHECK(failing(report) == caught);
  CHECK_THAT(problems_of(report), Catch::Contains(problem));
  CHECK(report.summary.violations >= 1);
  CHECK_THAT(render(report), Catch::Contains("verdict: FAIL ("));
}

TEST_CASE("chaos checker: overlaps the rules allow pass") {
  auto [what, plant] = GENERATE(table<std::string, std::function<void(run&)>>({
    {"a pause of the earlier process, no write after the later start",
     [](run& r) { r.pause_node_1(); }},
    {"a kill of the earlier process, its node_exit logged after the later "
     "start",
     [](run& r) {
       r.nemesis.lines.remove(5.05);
       r.nemesis.at(6.5, "node_exit",
                    proc("node-1", 101) + R"(,"status":"killed")");
     }},
    {"a cut last line",
     [](run& r) { r.n2.cut_tail = R"({"mono_ns":112000000000,"node":"no)"; }},
  }));
  CAPTURE(what);
  auto report = check_planted(plant);
  INFO(render(report));
  CHECK(report.passed());
  CHECK(report.summary.violations == 0);
}

TEST_CASE("chaos checker: a cut last line is counted, not reported") {
  run r;
  r.n2.cut_tail = R"({"mono_ns":112000000000,"no)";
  auto report = check_run(r.input());
  CHECK(report.summary.cut_lines == 1);
  CHECK(check_named(report, "history records").summary
        == "every line of 3 history files and nemesis.jsonl parses (1 cut "
           "last line ignored), each file has its node_start and each "
           "node_start its file");
  CHECK_THAT(render(report),
             Catch::Contains("history: 3 files, 1 cut last line ignored, 0 "
                             "store records unmatched because the history "
                             "was cut\n"));
}

TEST_CASE("chaos intervals: an uninterrupted lifetime ends at the stop or "
          "the first pause, kill or node_exit of its process") {
  auto [what, plant, node_1_end, node_2_end] = GENERATE(
    table<std::string, std::function<void(run&)>, std::string, std::string>({
      {"killed", [](run&) {}, "a kill (nemesis.jsonl line 4)",
       "the end of the run"},
      {"paused, then stopped", [](run& r) { r.pause_node_1(); },
       "a pause (nemesis.jsonl line 4)", "the end of the run"},
      {"stopped, then killed",
       [](run& r) {
         r.n1.at(4.0, singleton_stopped(1, 5));
         r.n2.at(11.5, singleton_stopped(1, 8));
       },
       "its singleton_stopped (line 8)", "its singleton_stopped (line 12)"},
    }));
  CAPTURE(what);
  run r;
  plant(r);
  auto h = parse_run(r.input());
  std::vector<std::string> problems;
  auto processes = match_processes(h, problems);
  CHECK(problems.empty());
  auto xs = collect_instances(processes);
  REQUIRE(xs.singletons.size() == 2);
  CHECK(uninterrupted_end(xs.singletons[0]).why == node_1_end);
  CHECK(uninterrupted_end(xs.singletons[1]).why == node_2_end);
  CHECK(uninterrupted_end(xs.singletons[1]).interrupted == false);
}

TEST_CASE("chaos checker: the timeline shows the window around the first "
          "violation, the offending event marked") {
  run r;
  r.n1b.at(11.5, singleton_started(1, 9));
  r.ledger.record(11.6, 5, 3, a3);
  auto report = check_run(r.input());
  auto first = report.first_offense();
  REQUIRE(first);
  CHECK(first->check == "I1(d) singleton lifetimes");
  CHECK(first->at == event_ref{"history/node-1.2.jsonl", 2, ns(11.5)});
  auto text = render_first_violation(report);
  INFO(text);
  CHECK_THAT(text,
             Catch::StartsWith(
               "first violation: I1(d) singleton lifetimes\ntimeline: 3.000 "
               "s before to 1.000 s after history/node-1.2.jsonl line 2 "
               "(+11.500s), times from run_start\n"));
  CHECK_THAT(
    text, Catch::Contains(">> +11.500s node-1 singleton_started type=scheduler "
                          "incarnation=1 token=9\n"));
  CHECK_THAT(text, Catch::Contains("   +9.000s nemesis nemesis_end\n"));
  CHECK_THAT(text, Catch::Contains("   +10.250s client acked d3 acct-1 2 2\n"));
  CHECK_THAT(text, Catch::Contains("   +10.410s store journal acct-2 d6 +10 "
                                   "expected_seq=2 applied seq=3 balance=17 "
                                   "writer=10.77.0.2:2552#2/1\n"));
  CHECK_THAT(text, Catch::Contains("   +11.600s store ledger token=5 seq=3 "
                                   "owner=10.77.0.1:2552#3 accepted\n"));
  CHECK_THAT(text, Catch::Contains("   +12.000s nemesis run_end\n"));
  CHECK_THAT(text, !Catch::Contains("nemesis heal"));
  CHECK_THAT(text, !Catch::Contains("+6.010s"));
}

TEST_CASE("chaos checker: a verdict problem without a line is located at "
          "the client's ack") {
  run r;
  r.client.sent(11.0, "d7", "acct-1", 1);
  r.client.acked(11.1, "d7", "acct-1", 1, 3);
  auto report = check_run(r.input());
  auto first = report.first_offense();
  REQUIRE(first);
  CHECK(first->check == "I3 acked deposits");
  CHECK(first->at == event_ref{"client.log", 12, ns(11.1)});
}

TEST_CASE("chaos history: each event kind and nemesis op parses and is "
          "described with its fields in file order") {
  auto [line, words] = GENERATE(table<std::string, std::string>({
    {R"({"mono_ns":5,"node":"n","address":"a","event":"lease_lost",)"
     R"("lease":"scheduler","token":3,"reason":"expired"})",
     "lease_lost lease=scheduler token=3 reason=expired"},
    {R"({"mono_ns":5,"node":"n","address":"a","event":"deposit_write",)"
     R"("account":"acct-1","shard":"7","incarnation":2,"deposit":"d9",)"
     R"("expected_seq":4})",
     "deposit_write account=acct-1 shard=7 incarnation=2 deposit=d9 "
     "expected_seq=4"},
    {R"({"mono_ns":5,"op":"partition","id":2,"kind":"asymmetric",)"
     R"("from":["node-1","node-2"],"to":["node-3"],"mechanism":"transport"})",
     "partition id=2 kind=asymmetric from=[node-1,node-2] to=[node-3] "
     "mechanism=transport"},
    {R"({"mono_ns":5,"op":"etcd_slow","delay_ms":300})",
     "etcd_slow delay_ms=300"},
    {R"({"mono_ns":5,"op":"lease_delete","key":"/troupe/scheduler"})",
     "lease_delete key=/troupe/scheduler"},
  }));
  CAPTURE(line);
  std::vector<std::string> problems;
  std::string described;
  if (line.find("\"op\"") != std::string::npos) {
    auto events = parse_nemesis(line + "\n", problems);
    REQUIRE(events.size() == 1);
    described = describe(events[0]);
  } else {
    auto f = parse_history_file("n.1.jsonl", line + "\n", problems);
    REQUIRE(f.events.size() == 1);
    described = describe(f.events[0]);
  }
  CHECK(described == words);
}

TEST_CASE("chaos history: a field of the wrong type or missing is named") {
  std::vector<std::string> problems;
  parse_nemesis(R"({"mono_ns":5,"op":"kill","node":"node-1","pid":"x"})"
                "\n"
                R"({"mono_ns":6,"op":"pause","node":"node-1"})"
                "\n",
                problems);
  CHECK(problems
        == std::vector<std::string>{
          "nemesis.jsonl line 1: field \"pid\" has the wrong type",
          "nemesis.jsonl line 2: field \"pid\" missing"});
  problems.clear();
  parse_history_file("node-1.x.jsonl", "", problems);
  CHECK(problems
        == std::vector<std::string>{
          "history/node-1.x.jsonl: the name is not <node>.<start>.jsonl"});
}

TEST_CASE("chaos checker: a store record whose stamp a cut last line may "
          "hold is counted, not a violation") {
  auto [what, plant, passes, unmatched]
    = GENERATE(table<std::string, std::function<void(run&)>, bool, uint64_t>({
      {"one record after the cut line",
       [](run& r) {
         r.ledger.record(11.5, 8, 3, a2);
         r.n2.cut_tail = R"({"mono_ns":111400000000,"node":"no)";
       },
       true, 1},
      {"a deposit after the cut line",
       [](run& r) {
         r.client.sent(11.5, "d9", "acct-2", 1);
         r.client.acked(11.7, "d9", "acct-2", 1, 4);
         r.journal.applied(11.6, "acct-2", "d9", 1, 4, 18, a2 + "/1");
         r.n2.cut_tail = R"({"mono_ns":111400000000,"node":"no)";
       },
       true, 1},
      {"two records, one cut line",
       [](run& r) {
         r.ledger.record(11.5, 8, 3, a2);
         r.ledger.record(11.6, 8, 4, a2);
         r.n2.cut_tail = R"({"mono_ns":111400000000,"node":"no)";
       },
       false, 1},
      {"a record before the file's last whole line",
       [](run& r) {
         r.ledger.lines.remove(11.01);
         r.ledger.record(10.9, 8, 2, a2);
         r.n2.cut_tail = R"({"mono_ns":111400000000,"node":"no)";
       },
       false, 0},
      {"the cut file is another process'",
       [](run& r) {
         r.ledger.record(11.5, 8, 3, a2);
         r.n1b.cut_tail = R"({"mono_ns":111400000000,"node":"no)";
       },
       false, 0},
    }));
  CAPTURE(what);
  auto report = check_planted(plant);
  INFO(render(report));
  CHECK(check_named(report, "I3 stamped store writes").ok == passes);
  CHECK(report.summary.unmatched_cut == unmatched);
  CHECK_THAT(render(report), Catch::Contains(fmt::format(
                               "{} unmatched because the history was cut",
                               demo::verdict::counted(unmatched, "store record",
                                                      "store records"))));
}

TEST_CASE("chaos checker: a violation at an unparseable line is said to have "
          "no timeline") {
  auto [what, plant, words]
    = GENERATE(table<std::string, std::function<void(run&)>, std::string>({
      {"a history line that is not JSON",
       [](run& r) { r.n2.lines.add(3.5, std::string(200000, '[')); },
       "first violation: history records\n(the violation is at an "
       "unparseable line: no stamped events around it)\n"},
      {"a client.log line that does not parse",
       [](run& r) { r.client.lines.add(3.5, "boom"); },
       "first violation: store records\n(the violation is at an unparseable "
       "line: no stamped events around it)\n"},
      {"no probe_start", [](run& r) { r.nemesis.lines.remove(10.0); },
       "first violation: I4 recovery\n(the violation names no stamped "
       "event: no timeline around it)\n"},
    }));
  CAPTURE(what);
  auto report = check_planted(plant);
  REQUIRE_FALSE(report.first_offense());
  CHECK(render_first_violation(report) == words);
}

TEST_CASE("chaos checker: the replay line comes from run_start, or says "
          "there is none") {
  run r;
  CHECK(render_replay(parse_run(r.input()))
        == "replay the same schedule: troupe-chaos --seed 7 --nodes 2 "
           "--duration 60s --dir <a new directory>\n");
  CHECK(render_replay(parse_run(r.input()), 9)
        == "replay the same schedule: troupe-chaos --seed 9 --nodes 2 "
           "--duration 60s --dir <a new directory>\n");
  r.nemesis.lines.remove(0);
  CHECK(render_replay(parse_run(r.input()))
        == "no replay: nemesis.jsonl has no run_start (the run's seed, nodes "
           "and duration)\n");
}

TEST_CASE("chaos history: printable escapes control characters and bytes "
          "that are not UTF-8") {
  auto [raw, shown] = GENERATE(table<std::string, std::string>({
    {"acct-1 ok", "acct-1 ok"},
    {"\x1b[31mred\r\n\t", R"(\x1b[31mred\r\n\t)"},
    {"a\\b", R"(a\\b)"},
    {"\x7f\x01", R"(\x7f\x01)"},
    {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82",
     "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"},
    {"\xc2\x9b"
     "2J",
     R"(\xc2\x9b2J)"},
    {"\xff\xc3", R"(\xff\xc3)"},
    {"\xc0\xaf", R"(\xc0\xaf)"},
    {"\xed\xa0\x80", R"(\xed\xa0\x80)"},
    {"\xf4\x90\x80\x80", R"(\xf4\x90\x80\x80)"},
  }));
  CAPTURE(raw);
  CHECK(printable(raw) == shown);
}

namespace {

namespace fs = std::filesystem;

// A fresh run directory with every file a run writes.
struct run_dir {
  fs::path dir = fs::temp_directory_path()
                 / fmt::format("chaos_checker_test_{}", ::getpid());

  run_dir() {
    fs::remove_all(dir);
    fs::create_directories(dir / "history");
    for (auto name : {"nemesis.jsonl", "client.log", "ledger.jsonl",
                      "journal.jsonl", "views.jsonl"})
      std::ofstream{dir / name};
  }

  ~run_dir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  std::string named(const std::string& rest) const {
    return (dir / rest).string();
  }
};

} // namespace

TEST_CASE("chaos run dir: the files are read by name") {
  run_dir d;
  std::ofstream{d.dir / "history" / "node-1.1.jsonl"} << "one\n";
  std::ofstream{d.dir / "history" / "notes.txt"} << "skipped\n";
  fs::create_directory(d.dir / "history" / "old");
  std::ofstream{d.dir / "nemesis.jsonl"} << "two\n";
  auto read = read_run_dir(d.dir);
  CHECK(read.errors.empty());
  auto& in = read.input;
  CHECK(in.history
        == std::map<std::string, std::string>{{"node-1.1.jsonl", "one\n"}});
  CHECK(in.nemesis_jsonl == "two\n");
  CHECK(in.client_log.empty());
  CHECK(in.ledger_jsonl.empty());
  CHECK(in.journal_jsonl.empty());
  CHECK(in.views_jsonl.empty());
}

TEST_CASE("chaos run dir: a missing, odd or unreadable input is an error "
          "naming it") {
  run_dir d;
  using setup = std::function<void(const run_dir&)>;
  auto [what, make, error] = GENERATE(table<std::string, setup, std::string>({
    {"client.log missing",
     [](const run_dir& d) { fs::remove(d.dir / "client.log"); },
     "{client.log} is missing (a run writes it; is {} a run directory?)"},
    {"views.jsonl missing",
     [](const run_dir& d) { fs::remove(d.dir / "views.jsonl"); },
     "{views.jsonl} is missing (a run writes it; is {} a run directory?)"},
    {"history missing", [](const run_dir& d) { fs::remove(d.dir / "history"); },
     "{history} is missing (a run writes it; is {} a run directory?)"},
    {"history a file",
     [](const run_dir& d) {
       fs::remove(d.dir / "history");
       std::ofstream{d.dir / "history"};
     },
     "{history} is a regular file, not a directory"},
    {"a directory for ledger.jsonl",
     [](const run_dir& d) {
       fs::remove(d.dir / "ledger.jsonl");
       fs::create_directory(d.dir / "ledger.jsonl");
     },
     "{ledger.jsonl} is a directory, not a regular file"},
    {"a FIFO for journal.jsonl",
     [](const run_dir& d) {
       fs::remove(d.dir / "journal.jsonl");
       REQUIRE(::mkfifo((d.dir / "journal.jsonl").c_str(), 0600) == 0);
     },
     "{journal.jsonl} is a FIFO, not a regular file"},
    {"a link to a FIFO for a history file",
     [](const run_dir& d) {
       REQUIRE(::mkfifo((d.dir / "fifo").c_str(), 0600) == 0);
       fs::create_symlink(d.dir / "fifo", d.dir / "history" / "node-1.1.jsonl");
     },
     "{history/node-1.1.jsonl} is a FIFO, not a regular file"},
    {"a directory for a history file",
     [](const run_dir& d) {
       fs::create_directory(d.dir / "history" / "node-1.1.jsonl");
     },
     "{history/node-1.1.jsonl} is a directory, not a regular file"},
    {"a dangling link for a history file",
     [](const run_dir& d) {
       fs::create_symlink(d.dir / "gone", d.dir / "history" / "node-1.1.jsonl");
     },
     "{history/node-1.1.jsonl} is a link to nothing"},
  }));
  CAPTURE(what);
  make(d);
  auto read = read_run_dir(d.dir);
  // `{name}` is DIR/name, `{}` DIR.
  auto open = error.find('{');
  auto close = error.find('}');
  auto want = error.substr(0, open)
              + d.named(error.substr(open + 1, close - open - 1))
              + error.substr(close + 1);
  if (auto i = want.find("{}"); i != std::string::npos)
    want.replace(i, 2, d.dir.string());
  CHECK(read.errors == std::vector<std::string>{want});
}

TEST_CASE("chaos run dir: a file that cannot be read is an error") {
  run_dir d;
  auto nemesis = d.dir / "nemesis.jsonl";
  std::string why;
  if (::geteuid() == 0) {
    // Root opens any file; /proc/self/mem is a regular file whose offset 0
    // (unmapped) cannot be read.
    fs::remove(nemesis);
    fs::create_symlink("/proc/self/mem", nemesis);
    why = "Input/output error";
  } else {
    fs::permissions(nemesis, fs::perms::none);
    why = "Permission denied";
  }
  auto read = read_run_dir(d.dir);
  CHECK(read.errors
        == std::vector<std::string>{d.named("nemesis.jsonl")
                                    + " cannot be read: " + why});
}

TEST_CASE("chaos run dir: a directory that is not there is named") {
  auto read = read_run_dir("/nonexistent/chaos-run");
  CHECK(read.errors
        == std::vector<std::string>{"/nonexistent/chaos-run is not a "
                                    "directory"});
}
