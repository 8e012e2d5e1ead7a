// The demo's load driver against fake nodes (management::http_server with a
// handler) on real loopback sockets: client.log lines, counters, retries on
// the next node with the same deposit id, a dead node skipped, failures,
// deposits unfinished at stop, the rate limit.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "client/client_log.hpp"
#include "client/demo_client.hpp"
#include "demo_fake_node.hpp"
#include "troupe/test/child_process.hpp"
#include "troupe/test/eventually.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::demo::client;
using namespace troupe::demo::test_support;
using troupe::test::temp_dir;

namespace {

// A node's app API: answers `status` to every deposit and records them;
// 200s carry the account's seq.
struct fake_node {
  unsigned status = 200;
  std::mutex mtx;
  std::vector<std::string> deposits;
  std::map<std::string, uint64_t> seqs;
  std::unique_ptr<management::http_server> server;

  explicit fake_node(unsigned answer = 200) : status(answer) {
    server = start_fake_server(
      [this](const management::http_request& r) { return handle(r); });
  }

  management::http_response handle(const management::http_request& r) {
    std::lock_guard<std::mutex> guard{mtx};
    if (r.method != "POST" || !r.target.starts_with("/deposit?"))
      return {404, "application/json", R"({"error":"no"})", {}};
    deposits.push_back(query_value(r.target, "deposit"));
    if (status != 200)
      return {status, "application/json", R"({"error":"not now"})", {}};
    auto seq = ++seqs[query_value(r.target, "account")];
    return {200, "application/json", fmt::format(R"({{"seq":{}}})", seq), {}};
  }

  endpoint ep() const {
    return {"127.0.0.1", server->port()};
  }

  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> guard{mtx};
    return deposits;
  }
};

// An endpoint whose port refuses connections, as a SIGKILLed node's.
endpoint closed_endpoint() {
  auto gone = std::make_unique<fake_node>();
  auto ep = gone->ep();
  gone.reset();
  return ep;
}

std::vector<client_event> read_log(const std::filesystem::path& p) {
  std::ifstream in{p};
  std::vector<client_event> out;
  for (std::string line; std::getline(in, line);) {
    auto ev = parse_client_event(line);
    REQUIRE(ev);
    out.push_back(*ev);
  }
  return out;
}

// Runs `s` until it finished; returns the driver (stopped).
std::unique_ptr<load_driver> run(load_settings s,
                                 const std::filesystem::path& log) {
  auto d = load_driver::start(std::move(s), log);
  REQUIRE(d);
  REQUIRE(test::eventually([&] { return (*d)->finished(); }, 20s));
  (*d)->stop();
  return std::move(*d);
}

size_t count_kind(const std::vector<client_event>& evs, client_event_kind k) {
  return static_cast<size_t>(std::count_if(
    evs.begin(), evs.end(), [k](auto& e) { return e.kind == k; }));
}

} // namespace

TEST_CASE("demo client: every deposit is sent once and acked, round-robin "
          "over the nodes, with its amount and the node's seq") {
  temp_dir tmp;
  fake_node a;
  fake_node b;
  load_settings s;
  s.nodes = {a.ep(), b.ep()};
  s.accounts = 3;
  s.workers = 2;
  s.max_deposits = 20;
  auto log = tmp.path / "client.log";
  auto d = run(s, log);
  auto evs = read_log(log);
  CHECK(count_kind(evs, client_event_kind::sent) == 20);
  CHECK(count_kind(evs, client_event_kind::acked) == 20);
  std::set<std::string> acked;
  for (auto& e : evs) {
    if (e.kind != client_event_kind::acked)
      continue;
    auto n = std::stoull(e.deposit.substr(1));
    CHECK(e.account == fmt::format("acct-{}", n % 3));
    CHECK(e.amount == deposit_amount(n));
    CHECK(e.seq > 0);
    acked.insert(e.deposit);
  }
  CHECK(acked.size() == 20);
  CHECK(a.seen().size() == 10);
  CHECK(b.seen().size() == 10);
  auto c = d->counters();
  CHECK(c.sent == 20);
  CHECK(c.acked == 20);
  CHECK(c.failed == 0);
  CHECK(c.in_flight == 0);
  CHECK(c.attempts == 20);
  CHECK(c.p50.count() > 0);
  CHECK(c.p50 <= c.p90);
  CHECK(c.p90 <= c.p99);
  CHECK(c.p99 <= c.max);
}

TEST_CASE("demo client: a refusing node's deposits are retried on the next "
          "node with the same deposit id") {
  temp_dir tmp;
  fake_node good;
  fake_node bad{503};
  load_settings s;
  s.nodes = {good.ep(), bad.ep()};
  s.max_deposits = 10;
  s.retry_delay = 1ms;
  auto log = tmp.path / "client.log";
  auto d = run(s, log);
  auto c = d->counters();
  CHECK(c.acked == 10);
  CHECK(c.attempts == 15);
  auto refused = bad.seen();
  CHECK(refused.size() == 5);
  auto retried = good.seen();
  for (auto& id : refused)
    CHECK(std::count(retried.begin(), retried.end(), id) == 1);
  CHECK(count_kind(read_log(log), client_event_kind::acked) == 10);
}

TEST_CASE("demo client: a deposit every node refuses is logged failed with "
          "the last reason") {
  temp_dir tmp;
  fake_node bad{503};
  load_settings s;
  // The second node's port is closed: connecting fails.
  s.nodes = {bad.ep(), closed_endpoint()};
  s.max_deposits = 4;
  s.max_attempts = 3;
  s.retry_delay = 1ms;
  s.request_timeout = 2s;
  auto log = tmp.path / "client.log";
  auto d = run(s, log);
  auto c = d->counters();
  CHECK(c.failed == 4);
  CHECK(c.acked == 0);
  CHECK(c.attempts == 12);
  CHECK(c.p50.count() == 0);
  auto evs = read_log(log);
  REQUIRE(count_kind(evs, client_event_kind::failed) == 4);
  for (auto& e : evs) {
    if (e.kind != client_event_kind::failed)
      continue;
    // Once the closed port refused, attempts skip it while it is refusing
    // (node_choice): the last reason is the 503 or, while both refuse in
    // turn, the refusal.
    auto is_503 = e.reason.find("answered 503: {\"error\":\"not now\"}")
                  != std::string::npos;
    auto is_refused
      = e.reason.find("cannot connect to 127.0.0.1:") != std::string::npos;
    CHECK((is_503 || is_refused));
  }
}

TEST_CASE("demo client: a dead node's deposits go to a live node at once, "
          "and every worker skips the dead node") {
  temp_dir tmp;
  fake_node good;
  load_settings s;
  s.nodes = {closed_endpoint(), good.ep()};
  s.workers = 2;
  s.max_deposits = 40;
  // A retry after a refusal must not wait: with this delay, the run could
  // not finish within the bound.
  s.retry_delay = 30s;
  s.refusing_pause = 60s;
  auto log = tmp.path / "client.log";
  auto d = run(s, log);
  auto c = d->counters();
  CHECK(c.acked == 40);
  CHECK(c.failed == 0);
  CHECK(c.unfinished == 0);
  CHECK(c.in_flight == 0);
  // Each worker may meet the dead node once before the other's refusal
  // marks it; after that no attempt goes there.
  CHECK(c.attempts >= 41);
  CHECK(c.attempts <= 42);
  CHECK(good.seen().size() == 40);
}

TEST_CASE("demo client: a deposit waiting for a retry when the client "
          "stops is logged unfinished, not failed") {
  temp_dir tmp;
  fake_node busy{504}; // a node in a failover: answers, not yet served
  load_settings s;
  s.nodes = {busy.ep()};
  s.workers = 1;
  s.max_attempts = 5;
  s.retry_delay = 30s;
  auto log = tmp.path / "client.log";
  auto d = load_driver::start(s, log);
  REQUIRE(d);
  REQUIRE(test::eventually([&] { return busy.seen().size() >= 1; }));
  (*d)->stop();
  auto c = (*d)->counters();
  CHECK(c.sent == 1);
  CHECK(c.unfinished == 1);
  CHECK(c.failed == 0);
  CHECK(c.in_flight == 0);
  auto evs = read_log(log);
  REQUIRE(count_kind(evs, client_event_kind::unfinished) == 1);
  for (auto& e : evs)
    if (e.kind == client_event_kind::unfinished)
      CHECK_THAT(e.reason, Catch::StartsWith("the client stopped before "
                                             "attempt 2; attempt 1: "));
}

TEST_CASE("demo client: a rate spaces the deposits, stop ends an endless "
          "run and flushes the log") {
  temp_dir tmp;
  fake_node a;
  load_settings s;
  s.nodes = {a.ep()};
  s.rate = 50;
  s.workers = 3;
  auto log = tmp.path / "client.log";
  auto start = std::chrono::steady_clock::now();
  auto d = load_driver::start(s, log);
  REQUIRE(d);
  REQUIRE(test::eventually([&] { return (*d)->counters().acked >= 10; }));
  // Deposit 9 was due 180 ms after the start.
  CHECK(std::chrono::steady_clock::now() - start >= 180ms);
  (*d)->stop();
  auto c = (*d)->counters();
  auto evs = read_log(log);
  CHECK(count_kind(evs, client_event_kind::sent) == c.sent);
  CHECK(count_kind(evs, client_event_kind::acked) == c.acked);
  CHECK(c.in_flight == 0);
}

TEST_CASE("demo client: start refuses settings that cannot run") {
  temp_dir tmp;
  load_settings s;
  auto d = load_driver::start(s, tmp.path / "client.log");
  REQUIRE_FALSE(d);
  CHECK(d.error().message == "demo client: no node endpoints");
  s.nodes = {{"127.0.0.1", 1}};
  auto e = load_driver::start(s, tmp.path / "no" / "client.log");
  REQUIRE_FALSE(e);
  CHECK_THAT(e.error().message, Catch::Contains("cannot open"));
}
