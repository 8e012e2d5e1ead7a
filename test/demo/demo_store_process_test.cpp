// troupe-demo-store as a process on a real loopback socket: the port line,
// each endpoint's status and body, the log files, SIGTERM's exit 0 and the
// flag and directory errors (exit 2, named).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "demo_process_support.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::demo::client;
using namespace troupe::demo::test_support;
using troupe::test::child;
using troupe::test::temp_dir;
namespace fs = std::filesystem;

namespace {

// A store process on a free port of 127.0.0.1 writing into `dir`.
struct store_process {
  fs::path out;
  child proc;
  std::optional<endpoint> ep;

  store_process(const fs::path& dir, std::vector<std::string> extra = {})
    : out(dir / "store.out"), proc("store", args(dir, std::move(extra)), out) {}

  static std::vector<std::string> args(const fs::path& dir,
                                       std::vector<std::string> extra) {
    std::vector<std::string> a{TROUPE_DEMO_STORE, "--port", "0", "--dir",
                               (dir / "data").string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  bool wait_listening() {
    ep = demo::test_support::wait_listening(out);
    return ep.has_value();
  }

  int exit_code() {
    return demo::test_support::exit_code(proc);
  }
};

} // namespace

TEST_CASE("demo store process: answers each endpoint, logs every decision, "
          "exits 0 on SIGTERM") {
  temp_dir tmp;
  store_process store{tmp.path};
  REQUIRE(store.wait_listening());
  CHECK(store.ep->host == "127.0.0.1");
  http_connection c{*store.ep, 5s};
  struct exchange {
    std::string method, target, body;
    unsigned status;
    std::string answer;
  };
  std::vector<exchange> script{
    {"POST", "/ledger", R"({"token":2,"seq":1,"owner":"n1"})", 200,
     R"({"accepted":true})"},
    {"POST", "/ledger", R"({"token":1,"seq":7,"owner":"n0"})", 409,
     R"({"accepted":false,"reason":"stale token 1 < 2","highest":2})"},
    {"POST", "/ledger", R"({"token":2,"seq":"x","owner":"n1"})", 400,
     R"({"error":"field \"seq\": must be an unsigned integer"})"},
    {"POST", "/accounts/a1/deposits",
     R"({"deposit":"d1","amount":5,"expected_seq":0})", 200,
     R"({"seq":1,"balance":5})"},
    {"POST", "/accounts/a1/deposits",
     R"({"deposit":"d1","amount":5,"expected_seq":1})", 409,
     R"({"seq":1,"balance":5,"outcome":"duplicate",)"
     R"("reason":"deposit d1 was applied at seq 1",)"
     R"("error":"deposit d1 was applied at seq 1"})"},
    {"GET", "/accounts/a1", "", 200, R"({"balance":5,"seq":1})"},
    {"DELETE", "/accounts/a1", "", 405,
     R"x({"error":"method DELETE not allowed here (allowed: GET, HEAD)"})x"},
    {"GET", "/nope", "", 404, R"({"error":"no such path: /nope"})"},
  };
  for (auto& x : script) {
    CAPTURE(x.method, x.target, x.body);
    auto r = c.request(x.method, x.target, x.body);
    REQUIRE(r);
    CHECK(r->status == x.status);
    CHECK(r->body == x.answer);
  }
  auto summary = c.request("GET", "/summary");
  REQUIRE(summary);
  CHECK_THAT(summary->body,
             Catch::Contains(R"("ledger":{"accepted":1,"rejected":1)"));
  auto ledger = lines_of(slurp(tmp.path / "data" / "ledger.jsonl"));
  REQUIRE(ledger.size() == 2);
  CHECK_THAT(ledger[0], Catch::Contains(R"("token":2,"seq":1,"owner":"n1",)"
                                        R"("accepted":true,"highest":null})"));
  CHECK_THAT(ledger[1], Catch::Contains(R"("accepted":false,"highest":2,)"
                                        R"("reason":"stale token 1 < 2"})"));
  CHECK_THAT(ledger[0], Catch::StartsWith(R"({"mono_ns":)"));
  auto journal = lines_of(slurp(tmp.path / "data" / "journal.jsonl"));
  REQUIRE(journal.size() == 2);
  CHECK_THAT(journal[0], Catch::Contains(R"("outcome":"applied")"));
  CHECK_THAT(journal[1], Catch::Contains(R"("outcome":"duplicate")"));
  store.proc.signal(SIGTERM);
  CHECK(store.exit_code() == 0);
  CHECK_THAT(slurp(store.out),
             Catch::Contains("stopped (ledger: 1 accepted, 1 rejected; "
                             "journal: 1 accounts, 1 deposits applied, 0 "
                             "conflicts, 1 duplicates)"));
}

TEST_CASE("demo store process: refuses a --dir with old logs, a bad port and "
          "a missing --dir, naming each (exit 2)") {
  temp_dir tmp;
  fs::create_directories(tmp.path / "data");
  std::ofstream{tmp.path / "data" / "journal.jsonl"} << "{}\n";
  {
    store_process store{tmp.path};
    CHECK(store.exit_code() == 2);
    CHECK_THAT(slurp(store.out),
               Catch::Contains("journal.jsonl already holds 3 bytes: the "
                               "store starts empty, give it a fresh --dir"));
  }
  {
    store_process store{tmp.path, {"--port", "70000"}};
    CHECK(store.exit_code() == 2);
    CHECK_THAT(slurp(store.out), Catch::Contains("--port"));
  }
  {
    auto out = tmp.path / "nodir.out";
    child proc{"store", {TROUPE_DEMO_STORE, "--port", "0"}, out};
    CHECK(demo::test_support::exit_code(proc) == 2);
    CHECK_THAT(slurp(out), Catch::Contains("--dir is required"));
  }
}
