// Unit tests of the demo store's pure parts: the fenced ledger, the account
// journal, request parsing (errors name the field), rendering, and the HTTP
// API as a function (store_service).

#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "store/demo_store_core.hpp"
#include "store/store_service.hpp"

using namespace troupe;
using namespace troupe::demo::store;

namespace {

ledger_record rec(uint64_t token, uint64_t seq = 1) {
  return {token, seq, "node-1"};
}

deposit_request dep(std::string id, int64_t amount, uint64_t expected) {
  return {std::move(id), amount, expected};
}

const log_time at{42, std::chrono::system_clock::time_point{
                        std::chrono::milliseconds{1'700'000'000'123}}};

management::http_request req(std::string method, std::string target,
                             std::string body = {}) {
  management::http_request r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  return r;
}

} // namespace

TEST_CASE("fenced ledger: accepts tokens that do not decrease, rejects a "
          "stale one naming both tokens") {
  // Offered tokens in order; what each gets.
  auto [tokens, accepted, reason]
    = GENERATE(table<std::vector<uint64_t>, std::vector<bool>, std::string>({
      {{1}, {true}, ""},
      {{0}, {true}, ""},
      {{1, 1, 1}, {true, true, true}, ""},
      {{1, 2, 5}, {true, true, true}, ""},
      {{2, 1}, {true, false}, "stale token 1 < 2"},
      {{3, 5, 4}, {true, true, false}, "stale token 4 < 5"},
      {{7, 3, 7}, {true, false, true}, "stale token 3 < 7"},
      {{7, 3, 8, 7}, {true, false, true, false}, "stale token 7 < 8"},
    }));
  CAPTURE(tokens);
  fenced_ledger l;
  std::string last_reason;
  uint64_t rejected = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    auto d = l.offer(rec(tokens[i], i));
    CHECK(d.accepted == accepted[i]);
    if (!d.accepted) {
      last_reason = d.reason;
      ++rejected;
    } else {
      CHECK(d.reason.empty());
    }
  }
  CHECK(last_reason == reason);
  CHECK(l.rejected() == rejected);
  CHECK(l.accepted() == tokens.size() - rejected);
}

TEST_CASE("fenced ledger: the decision names the highest token before it") {
  fenced_ledger l;
  CHECK_FALSE(l.highest_token());
  CHECK_FALSE(l.offer(rec(4)).highest_before);
  CHECK(l.offer(rec(2)).highest_before == 4u);
  CHECK(l.offer(rec(6)).highest_before == 4u);
  CHECK(l.highest_token() == 6u);
}

TEST_CASE("account journal: a deposit applies iff expected_seq is the "
          "account's seq, a deposit id applied before is a duplicate") {
  using o = deposit_outcome;
  struct step {
    std::string account;
    deposit_request d;
    o outcome;
    account_state after;
    std::string reason;
  };
  auto [steps] = GENERATE(table<std::vector<step>>({
    {{{"a", dep("d1", 5, 0), o::applied, {5, 1}, ""},
      {"a", dep("d2", 7, 1), o::applied, {12, 2}, ""}}},
    // Two writers expect the same seq: the second is a conflict.
    {{{"a", dep("d1", 5, 0), o::applied, {5, 1}, ""},
      {"a",
       dep("d2", 7, 0),
       o::conflict,
       {5, 1},
       "expected seq 0 but the account is at seq 1"}}},
    // A writer ahead of the account.
    {{{"a",
       dep("d1", 5, 3),
       o::conflict,
       {0, 0},
       "expected seq 3 but the account is at seq 0"}}},
    // A retry with the right seq is still a duplicate.
    {{{"a", dep("d1", 5, 0), o::applied, {5, 1}, ""},
      {"a",
       dep("d1", 5, 1),
       o::duplicate,
       {5, 1},
       "deposit d1 was applied at seq 1"}}},
    // A retry with a stale seq: duplicate is checked first.
    {{{"a", dep("d1", 5, 0), o::applied, {5, 1}, ""},
      {"a", dep("d2", 1, 1), o::applied, {6, 2}, ""},
      {"a",
       dep("d1", 5, 0),
       o::duplicate,
       {6, 2},
       "deposit d1 was applied at seq 1"}}},
    // Deposit ids are per account; accounts are independent.
    {{{"a", dep("d1", 5, 0), o::applied, {5, 1}, ""},
      {"b", dep("d1", 9, 0), o::applied, {9, 1}, ""},
      {"b", dep("d2", 1, 1), o::applied, {10, 2}, ""}}},
  }));
  account_journal j;
  for (auto& s : steps) {
    CAPTURE(s.account, s.d.deposit);
    auto r = j.deposit(s.account, s.d);
    CHECK(r.outcome == s.outcome);
    CHECK(r.account == s.after);
    CHECK(r.reason == s.reason);
    CHECK(j.account(s.account) == s.after);
  }
}

TEST_CASE("account journal: totals count applied, conflicts and duplicates, "
          "a refused deposit creates no account") {
  account_journal j;
  j.deposit("a", dep("d1", 5, 0));
  j.deposit("a", dep("d1", 5, 1));
  j.deposit("b", dep("d2", 3, 2));
  j.deposit("c", dep("d3", 4, 0));
  auto t = j.totals();
  CHECK(t.accounts == 2);
  CHECK(t.applied == 2);
  CHECK(t.duplicates == 1);
  CHECK(t.conflicts == 1);
  CHECK(t.balance_sum == 9);
  CHECK(j.account("b") == account_state{});
}

TEST_CASE("ledger request: parses, or the error names the field") {
  auto [body, error] = GENERATE(table<std::string, std::string>({
    {R"({"token":3,"seq":9,"owner":"n1"})", ""},
    {R"({"token":3,"seq":9,"owner":"n1","extra":[1]})", ""},
    {R"({"seq":9,"owner":"n1"})", "field \"token\": missing"},
    {R"({"token":-3,"seq":9,"owner":"n1"})",
     "field \"token\": must be an unsigned integer"},
    {R"({"token":"3","seq":9,"owner":"n1"})",
     "field \"token\": must be an unsigned integer"},
    {R"({"token":3.5,"seq":9,"owner":"n1"})",
     "field \"token\": must be an unsigned integer"},
    {R"({"token":3,"owner":"n1"})", "field \"seq\": missing"},
    {R"({"token":3,"seq":9})", "field \"owner\": missing"},
    {R"({"token":3,"seq":9,"owner":7})", "field \"owner\": must be a string"},
    {R"({"token":3,"seq":9,"owner":""})",
     "field \"owner\": must be 1 to 256 bytes long (is 0)"},
    {R"([1,2])", "the body must be a JSON object"},
    {"", "the body is not JSON: The document is empty. (at byte 0)"},
    {R"({"token":3,)",
     "the body is not JSON: Missing a name for object member. (at byte 11)"},
  }));
  CAPTURE(body);
  auto r = parse_ledger_record(body);
  if (error.empty()) {
    REQUIRE(r);
    CHECK(*r == ledger_record{3, 9, "n1"});
  } else {
    REQUIRE_FALSE(r);
    CHECK(r.error().message == error);
    CHECK(r.error().category == "demo.store");
  }
}

TEST_CASE("deposit request: parses, or the error names the field") {
  auto [body, error] = GENERATE(table<std::string, std::string>({
    {R"({"deposit":"d1","amount":5,"expected_seq":2})", ""},
    {R"({"amount":5,"expected_seq":2})", "field \"deposit\": missing"},
    {R"({"deposit":"","amount":5,"expected_seq":2})",
     "field \"deposit\": must be 1 to 128 bytes long (is 0)"},
    {R"({"deposit":"d1","expected_seq":2})", "field \"amount\": missing"},
    {R"({"deposit":"d1","amount":0,"expected_seq":2})",
     "field \"amount\": must be an integer from 1 to 1000000000"},
    {R"({"deposit":"d1","amount":-5,"expected_seq":2})",
     "field \"amount\": must be an integer from 1 to 1000000000"},
    {R"({"deposit":"d1","amount":1000000001,"expected_seq":2})",
     "field \"amount\": must be an integer from 1 to 1000000000"},
    {R"({"deposit":"d1","amount":"5","expected_seq":2})",
     "field \"amount\": must be an integer from 1 to 1000000000"},
    {R"({"deposit":"d1","amount":5})", "field \"expected_seq\": missing"},
    {R"({"deposit":"d1","amount":5,"expected_seq":null})",
     "field \"expected_seq\": must be an unsigned integer"},
    {R"({"deposit":"d1","amount":5,"expected_seq":2,"writer":7})",
     "field \"writer\": must be a string"},
    {R"({"deposit":"d1","amount":5,"expected_seq":2,"writer":""})",
     "field \"writer\": must be 1 to 256 bytes long (is 0)"},
  }));
  CAPTURE(body);
  auto r = parse_deposit_request(body);
  if (error.empty()) {
    REQUIRE(r);
    CHECK(*r == dep("d1", 5, 2));
  } else {
    REQUIRE_FALSE(r);
    CHECK(r.error().message == error);
  }
}

TEST_CASE("deposit request: a body nested too deep is refused, not a crash") {
  // RapidJSON's recursive parser would overflow the stack on this.
  auto r = parse_deposit_request(std::string(200000, '['));
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::StartsWith("the body is not JSON"));
  auto l = parse_ledger_record(std::string(200000, '{') + "\"a\":");
  REQUIRE_FALSE(l);
  CHECK_THAT(l.error().message, Catch::StartsWith("the body is not JSON"));
}

TEST_CASE("deposit request: the optional writer is kept and journalled") {
  auto r = parse_deposit_request(
    R"({"deposit":"d1","amount":5,"expected_seq":0,"writer":"h:1#2/7"})");
  REQUIRE(r);
  CHECK(r->writer == "h:1#2/7");
  account_journal j;
  CHECK(format_journal_line(at, "a", *r, j.deposit("a", *r))
        == R"({"mono_ns":42,"wall":"2023-11-14T22:13:20.123Z","account":"a",)"
           R"("deposit":"d1","amount":5,"expected_seq":0,)"
           R"("outcome":"applied","seq":1,"balance":5,"writer":"h:1#2/7"})"
           "\n");
}

TEST_CASE("account ids: 1 to 64 bytes of [A-Za-z0-9._-]") {
  auto [id, ok] = GENERATE(table<std::string, bool>({
    {"a", true},
    {"acct-17", true},
    {"A.b_c-9", true},
    {std::string(64, 'x'), true},
    {std::string(65, 'x'), false},
    {"", false},
    {"a/b", false},
    {"a b", false},
    {"\xc3\xa9", false},
  }));
  CAPTURE(id);
  CHECK(is_valid_account_id(id) == ok);
}

TEST_CASE("rendering: log lines and answers") {
  fenced_ledger l;
  auto d1 = l.offer(rec(5, 1));
  auto d2 = l.offer(rec(4, 2));
  CHECK(format_wall_time(at.wall) == "2023-11-14T22:13:20.123Z");
  CHECK(format_ledger_line(at, rec(5, 1), d1)
        == R"({"mono_ns":42,"wall":"2023-11-14T22:13:20.123Z","token":5,)"
           R"("seq":1,"owner":"node-1","accepted":true,"highest":null})"
           "\n");
  CHECK(format_ledger_line(at, rec(4, 2), d2)
        == R"({"mono_ns":42,"wall":"2023-11-14T22:13:20.123Z","token":4,)"
           R"("seq":2,"owner":"node-1","accepted":false,"highest":5,)"
           R"("reason":"stale token 4 < 5"})"
           "\n");
  CHECK(render_ledger_answer(d1) == R"({"accepted":true})");
  CHECK(render_ledger_answer(d2)
        == R"({"accepted":false,"reason":"stale token 4 < 5","highest":5})");
  account_journal j;
  auto r1 = j.deposit("a", dep("d1", 5, 0));
  auto r2 = j.deposit("a", dep("d2", 5, 0));
  CHECK(format_journal_line(at, "a", dep("d1", 5, 0), r1)
        == R"({"mono_ns":42,"wall":"2023-11-14T22:13:20.123Z","account":"a",)"
           R"("deposit":"d1","amount":5,"expected_seq":0,)"
           R"("outcome":"applied","seq":1,"balance":5})"
           "\n");
  CHECK(format_journal_line(at, "a", dep("d2", 5, 0), r2)
        == R"({"mono_ns":42,"wall":"2023-11-14T22:13:20.123Z","account":"a",)"
           R"("deposit":"d2","amount":5,"expected_seq":0,)"
           R"("outcome":"conflict","seq":1,"balance":5,)"
           R"("reason":"expected seq 0 but the account is at seq 1"})"
           "\n");
  CHECK(render_deposit_answer(r1) == R"({"seq":1,"balance":5})");
  CHECK(render_deposit_answer(r2)
        == R"({"seq":1,"balance":5,"outcome":"conflict",)"
           R"("reason":"expected seq 0 but the account is at seq 1",)"
           R"("error":"expected seq 0 but the account is at seq 1"})");
  CHECK(render_account(j.account("a")) == R"({"balance":5,"seq":1})");
  CHECK(render_summary(l, j)
        == R"({"ledger":{"accepted":1,"rejected":1,"highest_token":5},)"
           R"("journal":{"accounts":1,"applied":1,"conflicts":1,)"
           R"("duplicates":0,"balance_sum":5},)"
           R"("accounts":{"a":{"balance":5,"seq":1}}})");
  CHECK(render_error("x \"y\"") == R"({"error":"x \"y\""})");
}

TEST_CASE("store API: status, body and log line for each route") {
  // Requests in order against one store; each row: method, target, body,
  // status, a substring of the answer, which log gets a line.
  enum logged { none, ledger, journal };
  auto [steps] = GENERATE(
    table<std::vector<std::tuple<std::string, std::string, std::string,
                                 unsigned, std::string, logged>>>({
      {{{"POST", "/ledger", R"({"token":2,"seq":1,"owner":"n"})", 200,
         R"({"accepted":true})", ledger},
        {"POST", "/ledger", R"({"token":1,"seq":1,"owner":"m"})", 409,
         "stale token 1 < 2", ledger},
        {"POST", "/ledger", R"({"token":1})", 400, R"(field \"seq\": missing)",
         none},
        {"GET", "/ledger", "", 405, "method GET not allowed here", none}}},
      {{{"POST", "/accounts/a1/deposits",
         R"({"deposit":"d1","amount":5,"expected_seq":0})", 200,
         R"({"seq":1,"balance":5})", journal},
        {"POST", "/accounts/a1/deposits",
         R"({"deposit":"d2","amount":5,"expected_seq":0})", 409,
         R"("outcome":"conflict")", journal},
        {"POST", "/accounts/a1/deposits",
         R"({"deposit":"d1","amount":5,"expected_seq":1})", 409,
         R"("outcome":"duplicate")", journal},
        {"GET", "/accounts/a1", "", 200, R"({"balance":5,"seq":1})", none},
        {"HEAD", "/accounts/a1?x=1", "", 200, R"({"balance":5,"seq":1})", none},
        {"GET", "/accounts/zz", "", 200, R"({"balance":0,"seq":0})", none},
        {"GET", "/accounts/a1/deposits", "", 405, "not allowed", none},
        {"PUT", "/accounts/a1", "", 405, "not allowed", none},
        {"POST", "/accounts/a%20b/deposits", "{}", 400,
         R"(account id \"a b\": must be 1 to 64 bytes)", none},
        {"POST", "/accounts/a1/deposits", R"({"deposit":"d3"})", 400,
         R"(field \"amount\": missing)", none},
        {"GET", "/accounts/a1/withdrawals", "", 404, "no such path", none},
        {"GET", "/summary", "", 200, R"("applied":1)", none},
        {"POST", "/summary", "", 405, "not allowed", none},
        {"GET", "/", "", 404, R"({"error":"no such path: /"})", none}}},
    }));
  store_service s;
  for (auto& [method, target, body, status, part, log] : steps) {
    CAPTURE(method, target, body);
    auto r = s.handle(req(method, target, body), at);
    CHECK(r.response.status == status);
    CHECK(r.response.content_type == "application/json");
    CHECK_THAT(r.response.body, Catch::Contains(part));
    CHECK(r.ledger_line.empty() == (log != ledger));
    CHECK(r.journal_line.empty() == (log != journal));
    if (status == 405)
      CHECK_FALSE(r.response.allow.empty());
  }
}
