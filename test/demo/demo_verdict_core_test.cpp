// The demo verdict's planted-bug tests: a clean history passes; each bad
// history (a stale token accepted, an acked deposit lost, a seq twice, ...)
// fails exactly the checks that name its bug. The histories are written
// with the store's and the client's own line formatters.

#include <catch2/catch.hpp>

#include <functional>
#include <set>
#include <string>

#include "client/client_log.hpp"
#include "store/demo_store_core.hpp"
#include "verdict/verdict_core.hpp"

using namespace std::chrono_literals;
using namespace troupe::demo;
using namespace troupe::demo::verdict;

namespace {

const store::log_time at{1000, {}};

std::string led(uint64_t token, bool accepted) {
  store::ledger_decision d;
  d.accepted = accepted;
  if (!accepted)
    d.reason = "stale";
  return store::format_ledger_line(at, {token, 1, "node-1"}, d);
}

std::string jrn(std::string account, std::string deposit, int64_t amount,
                store::deposit_outcome outcome, uint64_t seq, int64_t balance) {
  store::deposit_result r;
  r.outcome = outcome;
  r.account = {balance, seq};
  return store::format_journal_line(at, account, {deposit, amount, seq - 1}, r);
}

std::string applied(std::string account, std::string deposit, int64_t amount,
                    uint64_t seq, int64_t balance) {
  return jrn(std::move(account), std::move(deposit), amount,
             store::deposit_outcome::applied, seq, balance);
}

std::string sent(std::string d, std::string a, int64_t amount) {
  return client::format_client_event({1,
                                      client::client_event_kind::sent,
                                      std::move(d),
                                      std::move(a),
                                      amount,
                                      0,
                                      {}});
}

std::string acked(std::string d, std::string a, int64_t amount, uint64_t seq) {
  return client::format_client_event({2,
                                      client::client_event_kind::acked,
                                      std::move(d),
                                      std::move(a),
                                      amount,
                                      seq,
                                      {}});
}

std::string failed(std::string d, std::string why) {
  return client::format_client_event({3,
                                      client::client_event_kind::failed,
                                      std::move(d),
                                      {},
                                      0,
                                      0,
                                      std::move(why)});
}

std::string unfinished(std::string d, std::string why) {
  return client::format_client_event({4,
                                      client::client_event_kind::unfinished,
                                      std::move(d),
                                      {},
                                      0,
                                      0,
                                      std::move(why)});
}

// Deposits d0..d2 acked, d3 failed at the client but applied (in doubt), d4
// unfinished when the client stopped, a conflict and a duplicate refused; a
// takeover from token 1 to 2 with one stale record rejected.
struct history {
  std::string client = sent("d0", "acct-0", 5) + acked("d0", "acct-0", 5, 1)
                       + sent("d1", "acct-1", 3) + acked("d1", "acct-1", 3, 1)
                       + sent("d2", "acct-0", 2) + sent("d3", "acct-1", 4)
                       + acked("d2", "acct-0", 2, 2)
                       + failed("d3", "127.0.0.1:8081 answered 504: {}")
                       + sent("d4", "acct-2", 1)
                       + unfinished("d4", "the client stopped before attempt "
                                          "2; attempt 1: cannot connect");
  std::string ledger
    = led(1, true) + led(1, true) + led(2, true) + led(1, false) + led(2, true);
  std::string journal_head
    = applied("acct-0", "d0", 5, 1, 5) + applied("acct-1", "d1", 3, 1, 3)
      + jrn("acct-0", "d2", 2, store::deposit_outcome::conflict, 1, 5);
  std::string d2 = applied("acct-0", "d2", 2, 2, 7);
  std::string d3 = applied("acct-1", "d3", 4, 2, 7);
  std::string tail
    = jrn("acct-1", "d3", 4, store::deposit_outcome::duplicate, 2, 7);

  verdict_input input() const {
    return {client, ledger, journal_head + d2 + d3 + tail, {}};
  }
};

std::set<std::string> failing(const report& r) {
  std::set<std::string> out;
  for (auto& c : r.checks)
    if (!c.ok)
      out.insert(c.name);
  return out;
}

std::string problems_of(const report& r) {
  std::string out;
  for (auto& c : r.checks)
    for (auto& p : c.problems)
      out += p + "\n";
  return out;
}

} // namespace

TEST_CASE("verdict: a clean history passes every check, in doubt counted") {
  auto r = judge(history{}.input());
  INFO(render(r));
  CHECK(r.passed());
  CHECK(failing(r).empty());
  CHECK(r.checks.size() == 9);
  auto& t = r.totals;
  CHECK(t.ledger_accepted == 4);
  CHECK(t.ledger_rejected == 1);
  CHECK(t.highest_token == 2);
  CHECK(t.deposits_sent == 5);
  CHECK(t.deposits_acked == 3);
  CHECK(t.deposits_failed == 1);
  CHECK(t.deposits_unfinished == 1);
  CHECK(t.deposits_unanswered == 0);
  CHECK(t.journal_applied == 4);
  CHECK(t.journal_conflicts == 1);
  CHECK(t.journal_duplicates == 1);
  CHECK(t.in_doubt == 1);
  CHECK(t.in_doubt_sum == 4);
  CHECK(t.acked_sum == 10);
  CHECK(t.balance_sum == 14);
  auto text = render(r);
  CHECK_THAT(text, Catch::Contains("PASS fencing: no stale token accepted (4 "
                                   "records accepted, highest token 2; 1 "
                                   "record rejected as stale)\n"));
  CHECK_THAT(text, Catch::Contains("PASS rejections: the one rejected record "
                                   "was stale\n"));
  CHECK_THAT(text, Catch::Contains("PASS sums: acknowledged 10 <= balances "
                                   "14; in doubt 1 deposit (sum 4)"));
  CHECK_THAT(text, Catch::Contains("deposits: 5 sent, 3 acked, 1 failed "
                                   "(every attempt refused or unanswered by "
                                   "the cluster), 1 unfinished at stop (never "
                                   "acknowledged, not counted against the "
                                   "run); store: 1 conflict refused, 1 "
                                   "duplicate refused\n"));
  CHECK_THAT(text, Catch::EndsWith("verdict: PASS\n"));
}

TEST_CASE("verdict: planted bugs are each caught by their check") {
  using edit = std::function<void(history&)>;
  auto [bug, plant, caught, problem]
    = GENERATE(table<std::string, edit, std::set<std::string>, std::string>({
      {"a stale token accepted",
       [](history& h) { h.ledger += led(1, true); },
       {"fencing"},
       "ledger.jsonl line 6: accepted token 1 after token 2 (line 5)"},
      {"a fresh record rejected",
       [](history& h) { h.ledger += led(3, false); },
       {"rejections"},
       "ledger.jsonl line 6: rejected token 3 although the highest accepted "
       "was 2"},
      {"no ledger record",
       [](history& h) { h.ledger.clear(); },
       {"ledger activity"},
       ""},
      {"an acked deposit lost",
       [](history& h) { h.d2.clear(); },
       {"acked deposits"},
       "d2 (acct-0 +2) was acked but is not in the journal"},
      {"an acked deposit applied with another amount",
       [](history& h) { h.d2 = applied("acct-0", "d2", 1, 2, 6); },
       {"acked deposits", "no phantom deposits"},
       "d2 was acked as acct-0 +2 but journal.jsonl line 4 has acct-0 +1"},
      {"a seq applied twice",
       [](history& h) { h.d3 = applied("acct-1", "d3", 4, 1, 7); },
       {"journal sequence"},
       "journal.jsonl line 5: acct-1 applied at seq 1 after seq 1 (a seq "
       "twice)"},
      {"a seq gap",
       [](history& h) { h.d3 = applied("acct-1", "d3", 4, 3, 7); },
       {"journal sequence"},
       "journal.jsonl line 5: acct-1 applied at seq 3 after seq 1 (a gap)"},
      {"a deposit applied twice",
       [](history& h) { h.tail = applied("acct-1", "d1", 3, 3, 10); },
       {"journal sequence"},
       "journal.jsonl line 6: deposit d1 applied to acct-1 again"},
      {"a balance off",
       [](history& h) { h.d2 = applied("acct-0", "d2", 2, 2, 8); },
       {"balances"},
       "journal.jsonl line 4: acct-0 balance 8 but its applied deposits sum "
       "to 7"},
      {"balances below the acknowledged sum",
       [](history& h) { h.d2 = applied("acct-0", "d2", 2, 2, 1); },
       {"balances", "sums"},
       ""},
      {"a deposit nobody sent",
       [](history& h) { h.tail = applied("acct-1", "d77", 1, 3, 8); },
       {"no phantom deposits"},
       "journal.jsonl line 6: d77 (acct-1 +1) was never sent"},
      {"a sent deposit id applied again to another account",
       [](history& h) { h.tail = applied("acct-2", "d1", 3, 1, 3); },
       {"no phantom deposits"},
       "journal.jsonl line 6: d1 applied as acct-2 +3 but sent as acct-1 +3"},
      {"an amount beyond what the store accepts",
       [](history& h) {
         h.tail = applied("acct-1", "d9", 9223372036854775807, 3,
                          9223372036854775807);
       },
       {"records"},
       "journal.jsonl line 6: amount 9223372036854775807 is outside 1 to "
       "1000000000"},
      {"a line nested too deep to parse recursively",
       [](history& h) { h.ledger += std::string(200000, '[') + "\n"; },
       {"records"},
       "ledger.jsonl line 6: not JSON"},
      {"a line cut short",
       [](history& h) { h.ledger += R"({"mono_ns":1,"tok)"; },
       {"records"},
       "ledger.jsonl line 6: not JSON"},
      {"a client line garbled",
       [](history& h) { h.client += "17 acked d9\n"; },
       {"records"},
       "client.log line 11: malformed: \"17 acked d9\""},
    }));
  CAPTURE(bug);
  history h;
  plant(h);
  auto r = judge(h.input());
  INFO(render(r));
  CHECK_FALSE(r.passed());
  CHECK(failing(r) == caught);
  CHECK_THAT(problems_of(r), Catch::Contains(problem));
  CHECK_THAT(render(r), Catch::Contains("verdict: FAIL ("));
}

TEST_CASE("verdict: failover measures are reported next to their floor and "
          "fail when missing, over their limit or impossibly below the "
          "floor") {
  auto in = history{}.input();
  in.failovers = {{"singleton moved", 4200ms, 3500ms, std::nullopt},
                  {"shards moved", std::nullopt, 0ms, std::nullopt},
                  {"deposits resumed", 9000ms, 3000ms, 6000ms},
                  {"just under", 3300ms, 3500ms, 6000ms},
                  {"too fast", 1000ms, 3500ms, 6000ms}};
  auto r = judge(in);
  CHECK(
    failing(r)
    == std::set<std::string>{"shards moved", "deposits resumed", "too fast"});
  CHECK_THAT(render(r),
             Catch::Contains("FAIL too fast: 1.00 s (floor 3.50 s, 0.29x), "
                             "below the floor by more than 0.25 s"));
  auto text = render(r);
  CHECK_THAT(text, Catch::Contains("PASS singleton moved: 4.20 s (floor 3.50 "
                                   "s, 1.20x)\n"));
  CHECK_THAT(text, Catch::Contains("FAIL shards moved: did not happen\n"));
  CHECK_THAT(text, Catch::Contains("FAIL deposits resumed: 9.00 s (floor 3.00 "
                                   "s, 3.00x), limit 6.00 s\n"));
  CHECK_THAT(text, Catch::EndsWith("verdict: FAIL (3 of 14 checks failed)\n"));
}

TEST_CASE("verdict: problems beyond five are counted, not listed") {
  history h;
  for (int i = 0; i < 8; ++i)
    h.ledger += led(0, true);
  auto r = judge(h.input());
  auto& fencing = r.checks[1];
  REQUIRE(fencing.name == "fencing");
  CHECK(fencing.problems.size() == 6);
  CHECK(fencing.problems.back() == "... and 3 more");
}

TEST_CASE("verdict: counts read right for zero, one and many") {
  auto [n, counted_text, rejections]
    = GENERATE(table<uint64_t, std::string, std::string>({
      {0, "0 records", "no record was rejected"},
      {1, "1 record", "the one rejected record was stale"},
      {2, "2 records", "every one of the 2 rejected records was stale"},
      {58, "58 records", "every one of the 58 rejected records was stale"},
    }));
  CAPTURE(n);
  CHECK(counted(n, "record", "records") == counted_text);
  CHECK(rejections_summary(n) == rejections);
}

TEST_CASE("verdict: the deposits line keeps unfinished deposits apart from "
          "failures and names unanswered ones only when there are some") {
  auto [failed_n, unfinished_n, unanswered_n, expected]
    = GENERATE(table<uint64_t, uint64_t, uint64_t, std::string>({
      {0, 0, 0,
       "deposits: 10 sent, 10 acked, 0 failed (every attempt refused or "
       "unanswered by the cluster), 0 unfinished at stop (never "
       "acknowledged, not counted against the run); store: 0 conflicts "
       "refused, 0 duplicates refused"},
      {2, 7, 0,
       "deposits: 10 sent, 10 acked, 2 failed (every attempt refused or "
       "unanswered by the cluster), 7 unfinished at stop (never "
       "acknowledged, not counted against the run); store: 0 conflicts "
       "refused, 0 duplicates refused"},
      {0, 0, 3,
       "deposits: 10 sent, 10 acked, 0 failed (every attempt refused or "
       "unanswered by the cluster), 0 unfinished at stop (never "
       "acknowledged, not counted against the run), 3 without an outcome in "
       "client.log; store: 0 conflicts refused, 0 duplicates refused"},
    }));
  verdict_totals t;
  t.deposits_sent = 10;
  t.deposits_acked = 10;
  t.deposits_failed = failed_n;
  t.deposits_unfinished = unfinished_n;
  t.deposits_unanswered = unanswered_n;
  CHECK(deposits_line(t) == expected);
}
