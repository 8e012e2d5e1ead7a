// Real-socket tests of the HTTP(S) client: the http_client actor (and its
// http_engine) against the scriptable loopback server of test/support.

#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/error.hpp>
#include <caf/exit_reason.hpp>
#include <caf/scoped_actor.hpp>

#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/http_client.hpp"
#include "troupe/runtime/http_engine.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/test/eventually.hpp"
#include "troupe/test/http_test_server.hpp"

using namespace std::chrono_literals;
using troupe::runtime::errc;
using troupe::runtime::http_client_actor;
using troupe::runtime::http_header;
using troupe::runtime::http_request;
using troupe::runtime::http_response;
using troupe::runtime::http_tls_settings;
using troupe::test::eventually;
using troupe::test::http_behaviour;
using troupe::test::http_test_server;
using troupe::test::http_test_server_tls;

namespace rt = troupe::runtime;

namespace {

using steady = std::chrono::steady_clock;

/// The outcome of one request through the actor.
struct outcome {
  std::optional<http_response> response;
  caf::error error;
  std::string rendered; // sys.render(error), for failure output
  std::chrono::milliseconds elapsed{0};

  // CAF 0.17: category(), code() and context() of an empty error crash.
  errc code() const {
    if (!error || error.category() != caf::atom("runtime"))
      return errc::none;
    return static_cast<errc>(error.code());
  }

  std::string message() const {
    if (!error)
      return {};
    auto& ctx = error.context();
    if (!ctx.empty() && ctx.match_element<std::string>(0))
      return ctx.get_as<std::string>(0);
    return {};
  }
};

/// A real actor system (2 workers) with the runtime's types.
struct actor_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  actor_fixture() {
    cfg.set("scheduler.max-threads", 2);
    rt::add_runtime_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  http_client_actor client(http_tls_settings tls = {}) {
    return rt::spawn_http_client(*sys, std::move(tls));
  }

  outcome call(const http_client_actor& client, http_request req) {
    caf::scoped_actor self{*sys};
    outcome out;
    auto start = steady::now();
    // A generous CAF-level timeout: the client must answer on its own.
    self->request(client, caf::timespan{30s}, std::move(req))
      .receive([&](http_response& res) { out.response = std::move(res); },
               [&](caf::error& err) { out.error = std::move(err); });
    out.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      steady::now() - start);
    if (out.error)
      out.rendered = sys->render(out.error);
    return out;
  }
};

http_request get(std::string url, rt::timespan timeout = 5s) {
  http_request req;
  req.url = std::move(url);
  req.timeout = timeout;
  return req;
}

std::unique_ptr<troupe::test::test_pki> make_pki() {
  auto pki = troupe::test::make_test_pki();
  if (!pki)
    FAIL(pki.error().message);
  return std::move(*pki);
}

} // namespace

// -- pure helpers
// ---------------------------------------------------------------

TEST_CASE("http: parse_url splits scheme, host, port and target") {
  using row = std::tuple<std::string, std::string, std::string, uint16_t,
                         std::string, std::string>;
  auto [url, scheme, host, port, target, canonical]
    = GENERATE(table<std::string, std::string, std::string, uint16_t,
                     std::string, std::string>({
      row{"http://example.com", "http", "example.com", 80, "/",
          "http://example.com/"},
      row{"HTTPS://etcd-0.svc:2379/v3/kv/range", "https", "etcd-0.svc", 2379,
          "/v3/kv/range", "https://etcd-0.svc:2379/v3/kv/range"},
      row{"https://[::1]:8443/a?b=1#frag", "https", "::1", 8443, "/a?b=1",
          "https://[::1]:8443/a?b=1"},
      row{"https://10.0.0.1?watch=true", "https", "10.0.0.1", 443,
          "/?watch=true", "https://10.0.0.1/?watch=true"},
      row{"http://h:80/x", "http", "h", 80, "/x", "http://h/x"},
    }));
  auto parsed = rt::parse_url(url);
  REQUIRE(parsed);
  CHECK(parsed->scheme == scheme);
  CHECK(parsed->host == host);
  CHECK(parsed->port == port);
  CHECK(parsed->target == target);
  CHECK(parsed->to_string() == canonical);
}

TEST_CASE("http: parse_url rejects bad URLs, naming them") {
  auto url = GENERATE(as<std::string>{}, "", "example.com/x", "ftp://h/",
                      "http://", "http:///x", "http://h:0/", "http://h:65536/",
                      "http://h:x/", "http://[::1/", "http://[zz]/",
                      "http://h /", "http://h\r\nX: y/", "http://a_b%/");
  auto parsed = rt::parse_url(url);
  REQUIRE_FALSE(parsed);
  CHECK(parsed.error().code == static_cast<uint8_t>(errc::http_bad_request));
  CHECK_THAT(parsed.error().message, Catch::Contains("invalid URL"));
}

TEST_CASE("http: parse_url rejects user info without echoing it") {
  auto parsed = rt::parse_url("https://admin:hunter2@etcd:2379/v3");
  REQUIRE_FALSE(parsed);
  CHECK_THAT(parsed.error().message, Catch::Contains("<redacted>@etcd"));
  CHECK_THAT(parsed.error().message, !Catch::Contains("hunter2"));
  // A password with '/', '?' or '#' (not percent-encoded) ends the
  // authority early: the URL is invalid, and the message must still not
  // show the password.
  for (auto url : {"http://root:hun/ter2@127.0.0.1:2379",
                   "http://root:hun?ter2@127.0.0.1:2379",
                   "http://root:hun#ter2@127.0.0.1:2379"}) {
    auto bad = rt::parse_url(url);
    REQUIRE_FALSE(bad);
    INFO(bad.error().message);
    CHECK_THAT(bad.error().message, !Catch::Contains("ter2"));
    CHECK_THAT(bad.error().message, !Catch::Contains("hun"));
    CHECK_THAT(bad.error().message, Catch::Contains("<redacted>@127.0.0.1"));
  }
}

TEST_CASE("http: response headers are found case-insensitively") {
  http_response res;
  res.headers = {{"Content-Type", "text/plain"}, {"X-Etcd-Index", "7"}};
  REQUIRE(res.header("x-etcd-index") != nullptr);
  CHECK(*res.header("x-etcd-index") == "7");
  CHECK(*res.header("CONTENT-TYPE") == "text/plain");
  CHECK(res.header("missing") == nullptr);
}

// -- plain HTTP through the actor
// -----------------------------------------------

TEST_CASE_METHOD(actor_fixture,
                 "http client: 200 with body and headers, request as sent") {
  http_test_server server;
  server.push(http_behaviour::respond(
    200, {{"Content-Type", "text/plain"}, {"X-Test", "yes"}}, "hello"));
  auto client = this->client();
  http_request req = get(server.url("/v3/kv/range?x=1"));
  req.method = "POST";
  req.headers = {{"X-Req", "1"}, {"Authorization", "Bearer s3cret"}};
  req.body = R"({"key":"a"})";
  auto out = call(client, req);
  INFO(out.rendered);
  REQUIRE(out.response);
  CHECK(out.response->status == 200);
  CHECK(out.response->body == "hello");
  REQUIRE(out.response->header("x-test") != nullptr);
  CHECK(*out.response->header("x-test") == "yes");
  auto seen = server.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].target == "/v3/kv/range?x=1");
  CHECK(seen[0].body == R"({"key":"a"})");
  REQUIRE(seen[0].header("x-req") != nullptr);
  CHECK(*seen[0].header("x-req") == "1");
  REQUIRE(seen[0].header("authorization") != nullptr);
  CHECK(*seen[0].header("authorization") == "Bearer s3cret");
  REQUIRE(seen[0].header("host") != nullptr);
  CHECK(*seen[0].header("host")
        == "127.0.0.1:" + std::to_string(server.port()));
  REQUIRE(seen[0].header("content-length") != nullptr);
  CHECK(*seen[0].header("content-length") == "11");
}

TEST_CASE_METHOD(actor_fixture, "http client: 404 and 500 are responses") {
  http_test_server server;
  server.push(http_behaviour::respond(404, {}, "no such key"));
  server.push(http_behaviour::respond(500, {}, "boom"));
  auto client = this->client();
  auto first = call(client, get(server.url("/a")));
  auto second = call(client, get(server.url("/b")));
  INFO(first.rendered << " / " << second.rendered);
  REQUIRE(first.response);
  CHECK(first.response->status == 404);
  CHECK(first.response->body == "no such key");
  REQUIRE(second.response);
  CHECK(second.response->status == 500);
  CHECK(second.response->body == "boom");
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: refused connection => http_connect_failed") {
  auto port = troupe::test::closed_port();
  auto url = "http://127.0.0.1:" + std::to_string(port) + "/v3/kv/range";
  auto out = call(this->client(), get(url, 10s));
  INFO(out.rendered);
  REQUIRE_FALSE(out.response);
  CHECK(out.code() == errc::http_connect_failed);
  CHECK(out.elapsed < 2s);
  CHECK_THAT(out.message(), Catch::StartsWith("GET " + url + ": connect"));
  CHECK_THAT(out.rendered, Catch::StartsWith("runtime: http_connect_failed"));
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: silent server, 300ms timeout => http_timeout") {
  http_test_server server;
  server.push(http_behaviour::never_respond());
  auto out = call(this->client(), get(server.url("/slow"), 300ms));
  INFO(out.rendered << " after " << out.elapsed.count() << " ms");
  REQUIRE_FALSE(out.response);
  CHECK(out.code() == errc::http_timeout);
  CHECK(out.elapsed >= 250ms);
  CHECK(out.elapsed <= 5s);
  CHECK_THAT(out.message(), Catch::Contains("timed out after 300 ms"));
  CHECK_THAT(out.message(), Catch::Contains("during read"));
  CHECK(server.requests().size() == 1);
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: the deadline covers a slow response too") {
  http_test_server server;
  server.push(
    http_behaviour::delay_then(2s, http_behaviour::respond(200, {}, "late")));
  server.push(http_behaviour::delay_then(
    50ms, http_behaviour::respond(200, {}, "in time")));
  auto client = this->client();
  auto late = call(client, get(server.url(), 300ms));
  CHECK(late.code() == errc::http_timeout);
  auto in_time = call(client, get(server.url(), 2s));
  INFO(in_time.rendered);
  REQUIRE(in_time.response);
  CHECK(in_time.response->body == "in time");
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: oversized response => http_response_too_large") {
  http_test_server server;
  const std::string big(64 * 1024, 'x');
  SECTION("Content-Length above the bound") {
    server.push(http_behaviour::oversized(64 * 1024));
  }
  SECTION("body delimited by EOF grows past the bound") {
    server.push(http_behaviour::send_raw(
      "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + big));
  }
  SECTION("chunked body grows past the bound") {
    server.push(http_behaviour::send_raw(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000\r\n" + big
      + "\r\n0\r\n\r\n"));
  }
  SECTION("header alone above the bound") {
    server.push(http_behaviour::respond(
      200, {{"X-Big", std::string(20 * 1024, 'h')}}, "small"));
  }
  auto req = get(server.url());
  req.max_response_bytes = 16 * 1024;
  auto out = call(this->client(), req);
  INFO(out.rendered);
  REQUIRE_FALSE(out.response);
  CHECK(out.code() == errc::http_response_too_large);
  CHECK_THAT(out.message(), Catch::Contains("16384"));
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: max_response_bytes counts header plus body") {
  http_test_server server;
  // The response is 38 + 19 (headers) + 4 (blank line, CRLFs) + body; a
  // bound between body size and full size must fail, the full size pass.
  auto raw = std::string{"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"}
             + std::string(100, 'b');
  server.push(http_behaviour::send_raw(raw));
  server.push(http_behaviour::send_raw(raw));
  auto client = this->client();
  auto tight = get(server.url());
  tight.max_response_bytes = raw.size() - 1;
  auto exact = get(server.url());
  exact.max_response_bytes = raw.size();
  CHECK(call(client, tight).code() == errc::http_response_too_large);
  auto ok = call(client, exact);
  INFO(ok.rendered);
  REQUIRE(ok.response);
  CHECK(ok.response->body.size() == 100);
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: malformed bytes => http_malformed_response") {
  http_test_server server;
  auto raw = GENERATE(as<std::string>{}, "this is not http\r\n\r\n",
                      "HTTP/1.1 abc OK\r\nContent-Length: 0\r\n\r\n",
                      "HTTP/1.1 200 OK\r\nBad Header Line\r\n\r\n",
                      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
                      "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n");
  server.push(http_behaviour::send_raw(raw));
  auto out = call(this->client(), get(server.url("/m")));
  INFO(raw << " => " << out.rendered);
  REQUIRE_FALSE(out.response);
  CHECK(out.code() == errc::http_malformed_response);
  CHECK_THAT(out.message(), Catch::StartsWith("GET " + server.url("/m")));
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: server closing at once is an error, not a "
                 "crash") {
  http_test_server server;
  server.push(http_behaviour::close_immediately());
  auto client = this->client();
  auto out = call(client, get(server.url()));
  INFO(out.rendered);
  REQUIRE_FALSE(out.response);
  CHECK((out.code() == errc::http_malformed_response
         || out.code() == errc::http_connect_failed));
  // The client keeps working.
  auto next = call(client, get(server.url()));
  INFO(next.rendered);
  REQUIRE(next.response);
  CHECK(next.response->status == 200);
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: bad requests => http_bad_request, no I/O") {
  http_test_server server;
  auto req = get(server.url());
  SECTION("empty URL") {
    req.url = "";
  }
  SECTION("unsupported scheme") {
    req.url = "ftp://127.0.0.1:" + std::to_string(server.port()) + "/";
  }
  SECTION("bad port") {
    req.url = "http://127.0.0.1:99999/";
  }
  SECTION("zero timeout") {
    req.timeout = rt::timespan{0};
  }
  SECTION("negative timeout") {
    req.timeout = -1s;
  }
  SECTION("header value with CRLF") {
    req.headers = {{"X-Evil", "a\r\nInjected: yes"}};
  }
  SECTION("header name with a space") {
    req.headers = {{"X Evil", "a"}};
  }
  SECTION("method with a space") {
    req.method = "GET /x";
  }
  auto out = call(this->client(), req);
  INFO(out.rendered);
  REQUIRE_FALSE(out.response);
  CHECK(out.code() == errc::http_bad_request);
  CHECK(out.elapsed < 1s);
  CHECK(server.connections() == 0);
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: 100 concurrent requests all complete") {
  http_test_server server;
  server.set_default(
    http_behaviour::delay_then(100ms, http_behaviour::respond(200, {}, "ok")));
  auto client = this->client();
  caf::scoped_actor self{*sys};
  auto start = steady::now();
  std::vector<decltype(self->request(client, caf::timespan{30s},
                                     http_request{}))>
    pending;
  for (int i = 0; i < 100; ++i)
    pending.push_back(
      self->request(client, caf::timespan{30s},
                    get(server.url("/n/" + std::to_string(i)), 10s)));
  int ok = 0;
  std::vector<std::string> errors;
  for (auto& handle : pending)
    handle.receive(
      [&](http_response& res) { ok += res.status == 200 ? 1 : 0; },
      [&](caf::error& err) { errors.push_back(sys->render(err)); });
  auto elapsed = steady::now() - start;
  INFO((errors.empty() ? std::string{} : errors.front()));
  CHECK(ok == 100);
  CHECK(server.requests().size() == 100);
  // Sequential exchanges would take at least 100 x 100ms.
  CHECK(elapsed < 5s);
  CHECK(server.max_concurrent_connections() > 10);
}

TEST_CASE_METHOD(actor_fixture,
                 "http client: terminating the actor answers pending "
                 "requests with http_shutdown") {
  http_test_server server;
  server.push(http_behaviour::never_respond());
  auto client = this->client();
  caf::scoped_actor self{*sys};
  auto handle
    = self->request(client, caf::timespan{30s}, get(server.url("/watch"), 20s));
  REQUIRE(eventually([&] { return server.requests().size() == 1; }));
  auto start = steady::now();
  self->send_exit(client, caf::exit_reason::user_shutdown);
  caf::error err;
  handle.receive([](http_response&) { FAIL("unexpected response"); },
                 [&](caf::error& e) { err = std::move(e); });
  INFO(sys->render(err));
  REQUIRE(err);
  CHECK(err.category() == caf::atom("runtime"));
  CHECK(err.code() == static_cast<uint8_t>(errc::http_shutdown));
  CHECK(steady::now() - start < 2s);
}

TEST_CASE("http client: header values never reach the log") {
  auto sink = std::make_shared<rt::capture_sink>();
  auto old_level = rt::current_log_level();
  rt::add_log_sink(sink);
  rt::set_log_level(rt::log_level::trace);
  {
    http_test_server server;
    server.push(http_behaviour::respond(200));
    server.push(http_behaviour::never_respond());
    rt::http_engine engine;
    for (auto timeout : {rt::timespan{5s}, rt::timespan{200ms}}) {
      auto req = get(server.url("/secret-test"), timeout);
      req.headers = {{"Authorization", "Bearer s3cret-token"}};
      std::promise<void> done;
      engine.start(req, [&](auto) { done.set_value(); });
      REQUIRE(done.get_future().wait_for(10s) == std::future_status::ready);
    }
  }
  rt::set_log_level(old_level);
  rt::remove_log_sink(sink);
  // The exchanges were logged (at debug), but never a header value.
  CHECK(sink->contains("/secret-test"));
  CHECK_FALSE(sink->contains("s3cret"));
}

// -- the engine directly
// --------------------------------------------------------

TEST_CASE("http engine: shutdown completes a pending exchange with "
          "http_shutdown") {
  http_test_server server;
  server.push(http_behaviour::never_respond());
  rt::http_engine engine;
  std::promise<rt::expected<http_response>> result;
  std::atomic<int> calls{0};
  std::thread::id callback_thread;
  engine.start(get(server.url("/watch"), 20s), [&](auto res) {
    callback_thread = std::this_thread::get_id();
    if (++calls == 1)
      result.set_value(std::move(res));
  });
  REQUIRE(eventually([&] { return server.requests().size() == 1; }));
  auto start = steady::now();
  engine.shutdown();
  CHECK(steady::now() - start < 1s);
  auto future = result.get_future();
  REQUIRE(future.wait_for(0s) == std::future_status::ready);
  auto res = future.get();
  REQUIRE_FALSE(res);
  CHECK(res.error().code == static_cast<uint8_t>(errc::http_shutdown));
  CHECK_THAT(res.error().message,
             Catch::StartsWith("GET " + server.url("/watch")));
  CHECK(callback_thread != std::this_thread::get_id());
  // Later exchanges fail at once, on the caller's thread.
  std::optional<rt::expected<http_response>> late;
  engine.start(get(server.url()), [&](auto r) { late.emplace(std::move(r)); });
  REQUIRE(late);
  REQUIRE_FALSE(*late);
  CHECK(late->error().code == static_cast<uint8_t>(errc::http_shutdown));
  engine.shutdown(); // idempotent
  CHECK(calls == 1);
}

TEST_CASE("http engine: a header value over 64 KiB is an error, the "
          "callback runs and the engine keeps working") {
  // Beast's fields throw std::length_error for a value over 64 KiB; the
  // exception used to escape to the io thread's last line of defence, so
  // the exchange never completed (its callback never ran, its socket stayed
  // open until shutdown).
  http_test_server server;
  server.push(http_behaviour::send_raw("HTTP/1.1 200 OK\r\nX-Big: "
                                       + std::string(200000, 'a')
                                       + "\r\nContent-Length: 2\r\n\r\n{}"));
  server.push(http_behaviour::respond(200, {}, "fine"));
  rt::http_engine engine;
  // One exchange; its result within 3 s (nullopt if the callback never ran).
  auto exchange = [&]() -> std::optional<rt::expected<http_response>> {
    auto done = std::make_shared<std::promise<rt::expected<http_response>>>();
    auto f = done->get_future();
    engine.start(get(server.url(), 5s),
                 [done](auto res) { done->set_value(std::move(res)); });
    if (f.wait_for(3s) != std::future_status::ready)
      return std::nullopt;
    return f.get();
  };
  auto res = exchange();
  REQUIRE(res);
  REQUIRE_FALSE(*res);
  CHECK(res->error().code
        == static_cast<uint8_t>(errc::http_response_too_large));
  CHECK_THAT(res->error().message, Catch::Contains("header"));
  auto ok = exchange();
  REQUIRE(ok);
  REQUIRE(*ok);
  CHECK((*ok)->body == "fine");
}

TEST_CASE("http engine: destroying the engine completes pending exchanges") {
  http_test_server server;
  server.set_default(http_behaviour::never_respond());
  std::atomic<int> shutdown_errors{0};
  std::atomic<int> calls{0};
  {
    rt::http_engine engine;
    for (int i = 0; i < 5; ++i)
      engine.start(get(server.url(), 20s), [&](auto res) {
        ++calls;
        if (!res
            && res.error().code == static_cast<uint8_t>(errc::http_shutdown))
          ++shutdown_errors;
      });
    REQUIRE(eventually([&] { return server.requests().size() == 5; }));
  }
  CHECK(calls == 5);
  CHECK(shutdown_errors == 5);
}

// -- TLS
// --------------------------------------------------------------------------

TEST_CASE_METHOD(actor_fixture, "https: success with the right CA") {
  auto pki = make_pki();
  SECTION("IP address in the SAN") {
    http_test_server server{
      http_test_server_tls{pki->server_cert, pki->server_key, ""}};
    server.push(http_behaviour::respond(200, {}, "secure"));
    auto out
      = call(client({pki->ca_file, "", ""}), get(server.url("/v3/kv/range")));
    INFO(out.rendered);
    REQUIRE(out.response);
    CHECK(out.response->body == "secure");
  }
  SECTION("DNS name in the SAN") {
    http_test_server server{http_test_server_tls{pki->localhost_only_cert,
                                                 pki->localhost_only_key, ""}};
    server.push(http_behaviour::respond(200, {}, "secure"));
    auto out = call(client({pki->ca_file, "", ""}),
                    get(server.url_with_host("localhost", "/x")));
    INFO(out.rendered);
    REQUIRE(out.response);
    CHECK(out.response->body == "secure");
  }
}

TEST_CASE_METHOD(actor_fixture, "https: wrong CA => http_tls_failed") {
  auto pki = make_pki();
  http_test_server server{
    http_test_server_tls{pki->server_cert, pki->server_key, ""}};
  auto out = call(client({pki->other_ca_file, "", ""}),
                  get(server.url("/v3/kv/range")));
  INFO(out.rendered);
  REQUIRE_FALSE(out.response);
  CHECK(out.code() == errc::http_tls_failed);
  CHECK_THAT(out.message(),
             Catch::StartsWith("GET " + server.url("/v3/kv/range")
                               + ": TLS handshake failed: certificate verify "
                                 "failed"));
  CHECK(server.requests().empty());
}

TEST_CASE_METHOD(actor_fixture,
                 "https: host not in the certificate => http_tls_failed") {
  auto pki = make_pki();
  // Each certificate is signed by the trusted CA, but for another name.
  std::optional<http_test_server> server;
  std::string url;
  SECTION("IP address not in the SAN (DNS:localhost only)") {
    server.emplace(http_test_server_tls{pki->localhost_only_cert,
                                        pki->localhost_only_key, ""});
    url = server->url("/x");
  }
  SECTION("DNS name not in the SAN (DNS:wrong-name.example only)") {
    server.emplace(
      http_test_server_tls{pki->wrong_name_cert, pki->wrong_name_key, ""});
    url = server->url_with_host("localhost", "/x");
  }
  auto out = call(client({pki->ca_file, "", ""}), get(url));
  INFO(out.rendered);
  REQUIRE_FALSE(out.response);
  CHECK(out.code() == errc::http_tls_failed);
  CHECK_THAT(out.message(), Catch::Contains("certificate verify failed"));
  CHECK_THAT(out.message(), Catch::Contains("mismatch"));
  CHECK(server->requests().empty());
}

TEST_CASE_METHOD(actor_fixture, "https: client certificate required") {
  auto pki = make_pki();
  http_test_server server{
    http_test_server_tls{pki->server_cert, pki->server_key, pki->ca_file}};
  SECTION("provided => success") {
    auto out = call(client({pki->ca_file, pki->client_cert, pki->client_key}),
                    get(server.url("/v3/lease/grant")));
    INFO(out.rendered);
    REQUIRE(out.response);
    CHECK(out.response->status == 200);
    CHECK(server.requests().size() == 1);
  }
  SECTION("missing => http_tls_failed") {
    auto out = call(client({pki->ca_file, "", ""}),
                    get(server.url("/v3/lease/grant")));
    INFO(out.rendered);
    REQUIRE_FALSE(out.response);
    CHECK(out.code() == errc::http_tls_failed);
    CHECK(server.requests().empty());
  }
}

TEST_CASE_METHOD(actor_fixture,
                 "https: unreadable TLS settings => http_tls_failed naming "
                 "the file, http:// still works") {
  http_test_server plain;
  auto client = this->client({"/nonexistent/ca.pem", "", ""});
  auto out = call(client, get("https://127.0.0.1:1/x"));
  INFO(out.rendered);
  CHECK(out.code() == errc::http_tls_failed);
  CHECK_THAT(out.message(), Catch::Contains("/nonexistent/ca.pem"));
  auto ok = call(client, get(plain.url()));
  REQUIRE(ok.response);
  CHECK(ok.response->status == 200);
}

TEST_CASE("http: Retry-After is read as delta-seconds, capped, else 0") {
  using row = std::tuple<std::string, rt::timespan>;
  auto [value, expected] = GENERATE(table<std::string, rt::timespan>({
    row{"7", 7s},
    row{" 12\t", 12s},
    row{"0", 0s},
    row{"999999", 3600s},
    row{"-3", 0s},
    row{"2.5", 0s},
    row{"Wed, 21 Oct 2015 07:28:00 GMT", 0s},
    row{"", 0s},
    row{"99999999999999999999999", 0s},
  }));
  rt::http_response resp;
  resp.headers.push_back({"retry-after", value});
  CHECK(resp.retry_after() == expected);
  CHECK(rt::http_response{}.retry_after() == 0s);
}
