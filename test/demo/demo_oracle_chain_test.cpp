// The oracle end to end on real sockets: the load driver sends deposits to
// a fake node that persists them in a real troupe-demo-store process (as
// the demo node's entities do: expected_seq, duplicates taken as done), a
// fake singleton writes fenced ledger records, and the verdict over
// client.log and the store's files says PASS; a node that acknowledges a
// deposit without persisting it is caught (FAIL: acked deposits).

#include <catch2/catch.hpp>

#include <map>
#include <string>

#include <fmt/format.h>

#include "client/demo_client.hpp"
#include "demo_fake_node.hpp"
#include "demo_process_support.hpp"
#include "verdict/verdict_core.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::demo;
using namespace troupe::demo::test_support;
using troupe::test::child;
using troupe::test::temp_dir;
namespace fs = std::filesystem;

namespace {

// The seq in a store answer (`"seq":N`).
uint64_t seq_in(const std::string& body) {
  auto at = body.find("\"seq\":");
  return at == std::string::npos ? 0 : std::stoull(body.substr(at + 6));
}

// A node's app API over the store: every deposit is persisted with the
// account's expected seq before it is acknowledged (a conflict re-reads the
// account once), unless `lie_every` says to acknowledge the n-th without
// persisting it.
struct fake_node {
  client::http_connection store;
  int lie_every = 0;
  int count = 0;
  std::map<std::string, uint64_t> seqs;
  std::unique_ptr<management::http_server> server;

  fake_node(client::endpoint store_ep, int lie) : store(store_ep, 5s) {
    lie_every = lie;
    server = start_fake_server(
      [this](const management::http_request& r) { return handle(r); });
  }

  management::http_response handle(const management::http_request& r) {
    auto account = query_value(r.target, "account");
    auto deposit = query_value(r.target, "deposit");
    auto amount = query_value(r.target, "amount");
    if (lie_every > 0 && ++count % lie_every == 0)
      return {200, "application/json", R"({"seq":0})", {}};
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto res = store.request(
        "POST", "/accounts/" + account + "/deposits",
        fmt::format(R"({{"deposit":"{}","amount":{},"expected_seq":{}}})",
                    deposit, amount, seqs[account]));
      if (!res)
        break;
      auto ok = res->status == 200
                || res->body.find("\"duplicate\"") != std::string::npos;
      seqs[account] = seq_in(res->body);
      if (ok)
        return {200, "application/json", res->body, {}};
    }
    return {503, "application/json", R"({"error":"not persisted"})", {}};
  }
};

// One run: a store process, a fake node (lying every `lie_every`-th time),
// ledger records, 60 deposits; the verdict over the files.
verdict::report run_chain(int lie_every) {
  temp_dir tmp;
  auto out = tmp.path / "store.out";
  child store{
    "store",
    {TROUPE_DEMO_STORE, "--port", "0", "--dir", (tmp.path / "run").string()},
    out};
  auto ep = wait_listening(out);
  REQUIRE(ep);
  client::http_connection singleton{*ep, 5s};
  // A takeover from token 1 to 2, then the old holder's late write.
  std::pair<int, int> records[] = {{1, 1}, {1, 2}, {2, 1}, {1, 3}};
  for (auto [token, seq] : records) {
    auto r = singleton.request(
      "POST", "/ledger",
      fmt::format(R"({{"token":{},"seq":{},"owner":"n{}"}})", token, seq,
                  token));
    REQUIRE(r);
    CHECK(r->status == (token == 1 && seq == 3 ? 409u : 200u));
  }
  fake_node node{*ep, lie_every};
  client::load_settings s;
  s.nodes = {{"127.0.0.1", node.server->port()}};
  s.accounts = 4;
  s.workers = 3;
  s.max_deposits = 60;
  auto d = client::load_driver::start(s, tmp.path / "run" / "client.log");
  REQUIRE(d);
  REQUIRE(test::eventually([&] { return (*d)->finished(); }, 30s));
  (*d)->stop();
  node.server->stop();
  store.signal(SIGTERM);
  REQUIRE(exit_code(store) == 0);
  return verdict::judge({slurp(tmp.path / "run" / "client.log"),
                         slurp(tmp.path / "run" / "ledger.jsonl"),
                         slurp(tmp.path / "run" / "journal.jsonl"),
                         {}});
}

} // namespace

TEST_CASE("demo oracle chain: client, node and store on real sockets, the "
          "verdict over their files passes") {
  auto r = run_chain(0);
  auto text = verdict::render(r);
  INFO(text);
  CHECK(r.passed());
  CHECK(r.totals.deposits_acked == 60);
  CHECK(r.totals.journal_applied == 60);
  CHECK(r.totals.ledger_rejected == 1);
  CHECK_THAT(text, Catch::EndsWith("verdict: PASS\n"));
}

TEST_CASE("demo oracle chain: a node that acknowledges without persisting is "
          "caught") {
  auto r = run_chain(7);
  auto text = verdict::render(r);
  INFO(text);
  CHECK_FALSE(r.passed());
  CHECK_THAT(text, Catch::Contains("FAIL acked deposits: 8 acknowledged "
                                   "deposits lost or altered"));
  CHECK_THAT(text, Catch::Contains("PASS fencing"));
  CHECK_THAT(text, Catch::Contains("PASS journal sequence"));
}
