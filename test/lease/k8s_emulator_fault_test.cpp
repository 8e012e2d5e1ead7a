// The Kubernetes Lease API emulator beyond the status-by-status checks of
// k8s_emulator_test.cpp, over real sockets: out-of-band writes, PATCH,
// faults, connection handling and TLS, plus the planted-bug check that shows
// the stale-RV assertion distinguishes a correct emulator from a broken one.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <ctime>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include "k8s_test_client.hpp"
#include "troupe/runtime/errc.hpp"
#include "troupe/test/eventually.hpp"

using namespace k8s_test;
using troupe::runtime::errc;
using troupe::test::eventually;
using troupe::test::k8s_api_emulator;
using troupe::test::k8s_api_emulator_options;
using troupe::test::k8s_fault;
using troupe::test::k8s_planted_bug;

namespace {

using steady = std::chrono::steady_clock;

// Raw HTTP/1.1 over one TCP connection (http_engine always closes).
struct raw_connection {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket sock{ioc};
  boost::asio::streambuf buf;

  explicit raw_connection(uint16_t port) {
    sock.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }

  void send(const std::string& bytes) {
    boost::asio::write(sock, boost::asio::buffer(bytes));
  }

  // Reads one response with a Content-Length body; returns head + body.
  std::string read_response() {
    auto n = boost::asio::read_until(sock, buf, "\r\n\r\n");
    std::string head{boost::asio::buffers_begin(buf.data()),
                     boost::asio::buffers_begin(buf.data()) + n};
    buf.consume(n);
    size_t length = 0;
    if (auto at = head.find("Content-Length: "); at != std::string::npos)
      length = std::stoul(head.substr(at + 16));
    if (buf.size() < length)
      boost::asio::read(sock, buf,
                        boost::asio::transfer_exactly(length - buf.size()));
    std::string body{boost::asio::buffers_begin(buf.data()),
                     boost::asio::buffers_begin(buf.data()) + length};
    buf.consume(length);
    return head + body;
  }

  // True once the server closed the connection (read gives EOF).
  bool closed_by_server() {
    boost::system::error_code ec;
    char c;
    sock.read_some(boost::asio::buffer(&c, 1), ec);
    return ec == boost::asio::error::eof;
  }
};

std::string raw_get(const k8s_api_emulator& emu, bool close) {
  return fmt::format("GET /apis/coordination.k8s.io/v1/namespaces/default/"
                     "leases/abc HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                     "{}\r\n{}\r\n",
                     emu.options().token, close ? "Connection: close\r\n" : "");
}

} // namespace

TEST_CASE("k8s emulator: out-of-band put_lease and delete_lease (kubectl) "
          "change what clients read") {
  fixture f;
  auto put = f.emu.put_lease(
    "default", "abc", R"({"holderIdentity":"kubectl","leaseTransitions":7})");
  REQUIRE(put);
  auto got = json_of(f.c.must("GET", f.url("abc")).body);
  CHECK(str_at(got, "/spec/holderIdentity") == "kubectl");
  CHECK(str_at(got, "/metadata/resourceVersion") == put->resource_version);
  CHECK_FALSE(f.emu.put_lease("default", "abc", R"({"leaseTransitions":"x"})"));
  CHECK(f.emu.delete_lease("default", "abc"));
  CHECK_FALSE(f.emu.delete_lease("default", "abc"));
  CHECK(f.c.must("GET", f.url("abc")).status == 404);
}

TEST_CASE("k8s emulator: PATCH (merge) updates, a resourceVersion in it is a "
          "precondition (§2.3)") {
  fixture f;
  auto rv = f.create("abc", "pod-a");
  const std::vector<rt::http_header> merge{
    {"Content-Type", "application/merge-patch+json"}};
  auto res = f.c.must("PATCH", f.url("abc"),
                      R"({"spec":{"holderIdentity":"pod-b"}})", merge);
  CHECK(res.status == 200);
  auto obj = json_of(res.body);
  CHECK(str_at(obj, "/spec/holderIdentity") == "pod-b");
  CHECK(int_at(obj, "/spec/leaseDurationSeconds") == 15);
  auto stale
    = f.c.must("PATCH", f.url("abc"),
               fmt::format(R"({{"metadata":{{"resourceVersion":"{}"}},)"
                           R"("spec":{{"holderIdentity":"c"}}}})",
                           rv),
               merge);
  CHECK(stale.status == 409);
  CHECK(str_at(json_of(stale.body), "/reason") == "Conflict");
  CHECK(f.c.must("PATCH", f.url("nope"), "{}", merge).status == 404);
}

TEST_CASE("k8s emulator: a delay fault holds the answer back") {
  fixture f;
  f.create();
  f.emu.add_fault(k8s_fault::delay_by(300ms).on("GET").times(1));
  auto start = steady::now();
  auto res = f.c.must("GET", f.url());
  auto took = steady::now() - start;
  CHECK(res.status == 200);
  CHECK(took >= 300ms);
  CHECK(took < 3s);
  start = steady::now();
  CHECK(f.c.must("GET", f.url()).status == 200);
  CHECK(steady::now() - start < 250ms);
}

TEST_CASE("k8s emulator: 500, 503, 504 faults answer the apiserver's Status "
          "and write nothing (scenario L2)") {
  fixture f;
  auto rv = f.create();
  struct row {
    uint16_t code;
    std::string reason;
    std::string message;
  };
  for (const auto& r : std::vector<row>{
         {500, "InternalError",
          "Internal error occurred: k8s_api_emulator: injected fault"},
         {503, "ServiceUnavailable",
          "the server is currently unable to handle the request"},
         {504, "Timeout",
          "Timeout: request did not complete within requested timeout - "
          "context deadline exceeded"}}) {
    INFO(r.code);
    f.emu.add_fault(k8s_fault::answer_status(r.code).on("PUT").times(1));
    auto res = f.c.must("PUT", f.url(), lease_body("abc", "b", rv));
    CHECK(res.status == r.code);
    auto st = json_of(res.body);
    CHECK(str_at(st, "/reason") == r.reason);
    CHECK(str_at(st, "/message") == r.message);
    CHECK(int_at(st, "/code") == r.code);
    CHECK(f.emu.lease("default", "abc")->resource_version == rv);
  }
  CHECK(f.c.must("PUT", f.url(), lease_body("abc", "b", rv)).status == 200);
}

TEST_CASE("k8s emulator: a persistent 429 fault sends Retry-After and "
          "retryAfterSeconds until cleared (scenario L9)") {
  fixture f;
  f.create();
  auto id = f.emu.add_fault(k8s_fault::too_many_requests(3s).on("GET"));
  for (int i = 0; i < 3; ++i) {
    auto res = f.c.must("GET", f.url());
    CHECK(res.status == 429);
    REQUIRE(res.header("Retry-After"));
    CHECK(*res.header("Retry-After") == "3");
    CHECK(res.body
          == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
             R"("status":"Failure","message":"Too many requests, please try )"
             R"(again later.","reason":"TooManyRequests","details":)"
             R"({"retryAfterSeconds":3},"code":429})"
             "\n");
  }
  f.emu.clear_fault(id);
  CHECK(f.c.must("GET", f.url()).status == 200);
  // Priority and fairness answers 429 as plain text.
  auto plain = k8s_fault::too_many_requests(1s).times(1);
  plain.plain_text = true;
  f.emu.add_fault(plain);
  auto res = f.c.must("GET", f.url());
  CHECK(res.status == 429);
  CHECK(res.body == "Too many requests, please try again later.\n");
  CHECK(f.emu.counters().faults_fired == 4);
}

TEST_CASE("k8s emulator: a 409 fault answers the optimistic-lock Conflict "
          "(scenario L9)") {
  fixture f;
  auto rv = f.create();
  f.emu.add_fault(k8s_fault::answer_status(409).on("PUT", "/apis/*"));
  auto res = f.c.must("PUT", f.url(), lease_body("abc", "b", rv));
  CHECK(res.status == 409);
  CHECK(str_at(json_of(res.body), "/message")
        == R"(Operation cannot be fulfilled on leases.coordination.k8s.io )"
           R"("abc": the object has been modified; please apply your )"
           R"(changes to the latest version and try again)");
}

TEST_CASE("k8s emulator: apply-then-drop performs the write, then the client "
          "sees a connection error (scenario L3)") {
  fixture f;
  auto rv = f.create();
  f.emu.add_fault(k8s_fault::apply_then_drop().on("PUT").times(1));
  auto res = f.c.call("PUT", f.url(), lease_body("abc", "self", rv));
  REQUIRE_FALSE(res);
  CHECK(
    (res.error().code == static_cast<uint8_t>(errc::http_malformed_response)
     || res.error().code == static_cast<uint8_t>(errc::http_connect_failed)));
  auto stored = f.emu.lease("default", "abc");
  CHECK(stored->spec.holder_identity == "self");
  CHECK(stored->resource_version != rv);
  // The client's retry with the old version now conflicts, and a GET shows
  // it as the holder.
  auto retry = f.c.must("PUT", f.url(), lease_body("abc", "self", rv));
  CHECK(retry.status == 409);
  CHECK(str_at(json_of(f.c.must("GET", f.url()).body), "/spec/holderIdentity")
        == "self");
  CHECK(f.emu.requests()[1].status == 0);
  CHECK(f.emu.requests()[1].faulted);
}

TEST_CASE("k8s emulator: drop closes the connection without writing") {
  fixture f;
  auto rv = f.create();
  f.emu.add_fault(k8s_fault::drop_connection().on("PUT").times(1));
  CHECK_FALSE(f.c.call("PUT", f.url(), lease_body("abc", "b", rv)));
  CHECK(f.emu.lease("default", "abc")->resource_version == rv);
}

TEST_CASE("k8s emulator: hang keeps the request unanswered until released, "
          "the client times out (scenario L10)") {
  fixture f;
  auto rv = f.create();
  f.emu.add_fault(k8s_fault::hang().on("PUT").times(1));
  auto start = steady::now();
  auto res = f.c.call("PUT", f.url(), lease_body("abc", "b", rv), {}, 300ms);
  REQUIRE_FALSE(res);
  CHECK(res.error().code == static_cast<uint8_t>(errc::http_timeout));
  CHECK(steady::now() - start >= 300ms);
  CHECK(f.emu.hung_requests() == 1);
  CHECK(f.emu.counters().open_connections >= 1);
  CHECK(f.emu.lease("default", "abc")->resource_version == rv);
  // Released, the hung request is served late: the write lands after the
  // client gave up.
  f.emu.release_hangs();
  CHECK(eventually([&] {
    return f.emu.lease("default", "abc")->spec.holder_identity == "b";
  }));
  CHECK(f.emu.hung_requests() == 0);
}

TEST_CASE("k8s emulator: clock offset shows in creationTimestamp (scenario "
          "L8)") {
  fixture f;
  f.emu.set_clock_offset(90s);
  f.create();
  auto ts = f.emu.lease("default", "abc")->creation_timestamp;
  std::tm tm{};
  REQUIRE(strptime(ts.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) != nullptr);
  auto written = std::chrono::system_clock::from_time_t(timegm(&tm));
  auto skew = written - std::chrono::system_clock::now();
  CHECK(skew > 85s);
  CHECK(skew < 95s);
}

TEST_CASE("k8s emulator: HTTP/1.1 keep-alive serves several requests on one "
          "connection, Connection: close ends it") {
  fixture f;
  f.create();
  raw_connection conn{f.emu.port()};
  conn.send(raw_get(f.emu, false));
  CHECK(conn.read_response().rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  conn.send(raw_get(f.emu, false));
  CHECK(conn.read_response().find("\"holderIdentity\":\"a\"")
        != std::string::npos);
  conn.send(raw_get(f.emu, true));
  CHECK(conn.read_response().rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(conn.closed_by_server());
  CHECK(f.emu.counters().connections == 2);
}

TEST_CASE("k8s emulator: Expect: 100-continue gets the interim answer") {
  fixture f;
  raw_connection conn{f.emu.port()};
  auto body = lease_body("abc", "a");
  conn.send(fmt::format(
    "POST /apis/coordination.k8s.io/v1/namespaces/default/leases HTTP/1.1\r\n"
    "Host: x\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\n"
    "Content-Length: {}\r\nExpect: 100-continue\r\n\r\n",
    f.emu.options().token, body.size()));
  auto interim = conn.read_response();
  CHECK(interim.rfind("HTTP/1.1 100 Continue\r\n", 0) == 0);
  conn.send(body);
  CHECK(conn.read_response().rfind("HTTP/1.1 201 Created\r\n", 0) == 0);
}

TEST_CASE("k8s emulator: many concurrent clients (scenario L13)") {
  k8s_api_emulator_options opts;
  opts.io_threads = 2;
  fixture f{opts};
  f.create();
  // Every client holds its connection open for 200 ms, so they overlap.
  f.emu.add_fault(k8s_fault::delay_by(200ms).on("GET"));
  // One engine serves all threads (its start() is thread-safe; each
  // exchange has its own connection).
  constexpr int n = 24;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  auto start = steady::now();
  for (int i = 0; i < n; ++i)
    threads.emplace_back([&] {
      if (auto r = f.c.call("GET", f.url()); r && r->status == 200)
        ++ok;
    });
  for (auto& t : threads)
    t.join();
  CHECK(ok == n);
  CHECK(f.emu.counters().max_concurrent_connections >= n / 2);
  CHECK(steady::now() - start < 3s);
}

TEST_CASE("k8s emulator: HTTPS with the test CA, a client that does not "
          "trust it is refused") {
  auto pki = make_pki();
  k8s_api_emulator_options opts;
  opts.tls = true;
  opts.cert_file = pki->server_cert;
  opts.key_file = pki->server_key;
  fixture f{opts};
  CHECK(f.emu.base_url().rfind("https://127.0.0.1:", 0) == 0);
  client trusting{f.emu.options().token, {pki->ca_file, "", ""}};
  auto res = trusting.must("POST", f.emu.leases_url("default"),
                           lease_body("abc", "a"));
  CHECK(res.status == 201);
  client stranger{f.emu.options().token, {pki->other_ca_file, "", ""}};
  auto refused = stranger.call("GET", f.url());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == static_cast<uint8_t>(errc::http_tls_failed));
  CHECK(eventually([&] { return f.emu.counters().tls_failures >= 1; }));
}

TEST_CASE("k8s emulator: HTTPS requiring a client certificate") {
  auto pki = make_pki();
  k8s_api_emulator_options opts;
  opts.tls = true;
  opts.cert_file = pki->server_cert;
  opts.key_file = pki->server_key;
  opts.client_ca_file = pki->ca_file;
  fixture f{opts};
  client anonymous{f.emu.options().token, {pki->ca_file, "", ""}};
  CHECK_FALSE(anonymous.call("GET", f.url()));
  client with_cert{f.emu.options().token,
                   {pki->ca_file, pki->client_cert, pki->client_key}};
  CHECK(with_cert.must("GET", f.url()).status == 404);
}

TEST_CASE("k8s emulator: setup errors are values from make_k8s_api_emulator") {
  k8s_api_emulator_options opts;
  opts.tls = true;
  opts.cert_file = "/nonexistent/cert.pem";
  opts.key_file = "/nonexistent/key.pem";
  auto emu = troupe::test::make_k8s_api_emulator(opts);
  REQUIRE_FALSE(emu);
  CHECK(emu.error().message.find("k8s_api_emulator: setup failed")
        != std::string::npos);
}

TEST_CASE("k8s emulator: planted bug (stale resourceVersion accepted) is "
          "caught by the stale-RV check") {
  fixture correct;
  CHECK(stale_put(correct).status == 409);
  k8s_api_emulator_options broken_opts;
  broken_opts.planted_bug = k8s_planted_bug::accept_stale_resource_version;
  fixture broken{broken_opts};
  // The same exchange whose `status == 409` the suite asserts answers 200.
  CHECK(stale_put(broken).status == 200);
  CHECK(broken.emu.lease("default", "abc")->spec.holder_identity == "pod-c");
}
