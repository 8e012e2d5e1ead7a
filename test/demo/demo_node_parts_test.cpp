// Unit tests of the demo node's pure parts: the store's request bodies and
// answers, and the app API's query string.

#include <catch2/catch.hpp>

#include <string>

#include "deposit_query.hpp"
#include "store_json.hpp"

using namespace troupe::demo;

TEST_CASE("store_json: the ledger and deposit bodies are the store's JSON") {
  CHECK(ledger_body(7, 3, "127.0.0.1:2552#9")
        == R"({"token":7,"seq":3,"owner":"127.0.0.1:2552#9"})");
  CHECK(ledger_body(1, 1, "a\"b") == R"({"token":1,"seq":1,"owner":"a\"b"})");
  CHECK(deposit_body("d-1", 250, 4)
        == R"({"deposit":"d-1","amount":250,"expected_seq":4})");
  CHECK(deposit_body("d-1", 250, 4, "h:1#2/3")
        == R"({"deposit":"d-1","amount":250,"expected_seq":4,)"
           R"("writer":"h:1#2/3"})");
  CHECK(deposit_answer({1200, 5}) == R"({"seq":5,"balance":1200})");
  CHECK(error_body("no \"x\"") == R"({"error":"no \"x\""})");
}

TEST_CASE("store_json: a history line is one JSON object with its fields") {
  CHECK(history_line(12, "node-1", "10.0.0.1:2552#9", "ledger_write",
                     {{"token", uint64_t{4}}, {"owner", "a\"b"}})
        == R"({"mono_ns":12,"node":"node-1","address":"10.0.0.1:2552#9",)"
           R"("event":"ledger_write","token":4,"owner":"a\"b"})"
           "\n");
  CHECK(history_line(0, "n", "a", "node_started", {})
        == R"({"mono_ns":0,"node":"n","address":"a","event":"node_started"})"
           "\n");
}

TEST_CASE("store_json: an account's state is read from balance and seq") {
  auto st = parse_account_state(R"({"balance":-5,"seq":2,"more":true})");
  REQUIRE(st);
  CHECK(st->balance == -5);
  CHECK(st->seq == 2);
  CHECK_FALSE(parse_account_state(R"({"balance":1})"));
  CHECK_FALSE(parse_account_state(R"({"balance":1,"seq":-1})"));
  CHECK_FALSE(parse_account_state(R"({"balance":"1","seq":1})"));
  CHECK_FALSE(parse_account_state("[1,2]"));
  CHECK_FALSE(parse_account_state("not json"));
}

TEST_CASE("store_json: a store's reason comes from reason, error or the body") {
  CHECK(store_reason(R"({"accepted":false,"reason":"stale token 2 < 3"})")
        == "stale token 2 < 3");
  CHECK(store_reason(R"({"error":"bad body"})") == "bad body");
  CHECK(store_reason("plain text") == "plain text");
  CHECK(store_reason("") == "empty answer");
  CHECK(store_reason(std::string(300, 'x')).size() == 200);
}

TEST_CASE("deposit_query: ids are 1 to 64 URL-safe characters") {
  CHECK(is_demo_id("acc-17"));
  CHECK(is_demo_id("A.b_c-9"));
  CHECK_FALSE(is_demo_id(""));
  CHECK_FALSE(is_demo_id(std::string(65, 'a')));
  CHECK_FALSE(is_demo_id("a/b"));
  CHECK_FALSE(is_demo_id("a b"));
  CHECK_FALSE(is_demo_id("a%2F"));
}

TEST_CASE("deposit_query: a valid query in any order, escapes decoded") {
  auto q = parse_deposit_query(
    "/deposit?amount=250&deposit=d%2D1&account=acc-7&extra=1");
  REQUIRE(q);
  CHECK(q->account == "acc-7");
  CHECK(q->deposit == "d-1");
  CHECK(q->amount == 250);
}

TEST_CASE("deposit_query: bad queries name the parameter") {
  using row = std::pair<const char*, const char*>;
  auto [target, reason] = GENERATE(
    row{"/deposit", "parameter account is missing"},
    row{"/deposit?account=a&deposit=d", "parameter amount is missing"},
    row{"/deposit?account=a&account=b&deposit=d&amount=1",
        "parameter account given twice"},
    row{"/deposit?account=a%2&deposit=d&amount=1",
        "parameter account: a broken %-escape"},
    row{"/deposit?account=a/b&deposit=d&amount=1",
        "parameter account: not 1 to 64 characters"},
    row{"/deposit?account=a&deposit=&amount=1",
        "parameter deposit: not 1 to 64 characters"},
    row{"/deposit?account=a&deposit=d&amount=0",
        "parameter amount: \"0\" is not a whole number of cents"},
    row{"/deposit?account=a&deposit=d&amount=-5",
        "parameter amount: \"-5\" is not"},
    row{"/deposit?account=a&deposit=d&amount=12x",
        "parameter amount: \"12x\" is not"},
    row{"/deposit?account=a&deposit=d&amount=1000000001",
        "in [1, 1000000000]"});
  CAPTURE(target);
  auto q = parse_deposit_query(target);
  REQUIRE_FALSE(q);
  CHECK_THAT(q.error().message, Catch::Contains(reason));
}

TEST_CASE("store_json: what an account does with the store's answer") {
  struct row {
    unsigned status;
    const char* body;
    deposit_verdict want;
    std::optional<uint64_t> seq;
  };
  std::vector<row> rows{
    {200, R"({"seq":4,"balance":10})", deposit_verdict::persisted, 4},
    {409, R"({"seq":4,"balance":10,"outcome":"duplicate"})",
     deposit_verdict::duplicate, 4},
    {409, R"({"seq":7,"balance":30,"outcome":"conflict"})",
     deposit_verdict::conflict, 7},
    {409, R"({"seq":7,"balance":30})", deposit_verdict::conflict, 7},
    {409, R"({"outcome":"duplicate"})", deposit_verdict::unknown, std::nullopt},
    {200, R"({"balance":10})", deposit_verdict::unknown, std::nullopt},
    {500, R"({"seq":4,"balance":10})", deposit_verdict::unknown, std::nullopt},
    {200, "not json", deposit_verdict::unknown, std::nullopt},
  };
  for (auto& r : rows) {
    INFO(r.status << " " << r.body);
    auto [verdict, st] = judge_deposit_answer(r.status, r.body);
    CHECK(verdict == r.want);
    CHECK(st.has_value() == r.seq.has_value());
    if (st && r.seq)
      CHECK(st->seq == *r.seq);
  }
}

TEST_CASE("store_json: the outcome of a refused deposit") {
  CHECK(store_outcome(R"({"seq":3,"balance":9,"outcome":"duplicate"})")
        == "duplicate");
  CHECK(store_outcome(R"({"outcome":"conflict","reason":"x"})") == "conflict");
  CHECK(store_outcome(R"({"seq":3})") == "");
  CHECK(store_outcome("nope") == "");
}
