// The etcd backend's HTTP rules against a scripted server (test/support
// http_test_server) for answers a healthy etcd does not give on demand:
// the raw token header, 401 then re-authentication, 503 with Retry-After,
// endpoint rotation, unparseable and streaming-error bodies.

#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "troupe/lease/backend_sync.hpp"
#include "troupe/lease/etcd_lease_backend.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/test/http_test_server.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;
using troupe::test::http_behaviour;
using troupe::test::http_test_server;

namespace {

http_behaviour json(uint16_t status, std::string body,
                    std::vector<runtime::http_header> headers = {}) {
  headers.push_back({"Content-Type", "application/json"});
  return http_behaviour::respond(status, std::move(headers), std::move(body));
}

const std::string grant_ok
  = R"({"header":{"revision":"1"},"ID":"7","TTL":"2"})";
const std::string txn_ok = R"({"header":{"revision":"9"},"succeeded":true,)"
                           R"("responses":[{"response_put":{}}]})";
std::string auth_ok(const std::string& token) {
  return R"({"header":{},"token":")" + token + R"("})";
}
const std::string invalid_token
  = R"({"error":"etcdserver: invalid auth token","message":)"
    R"("etcdserver: invalid auth token","code":16})";

std::shared_ptr<etcd_lease_backend>
make_backend(std::vector<std::string> endpoints, bool with_user) {
  etcd_lease_backend_options opts;
  opts.endpoints = std::move(endpoints);
  opts.request_timeout = 1s;
  if (with_user) {
    opts.user = "app";
    opts.password = runtime::secret{"pw"};
  }
  auto b = etcd_lease_backend::make(std::move(opts));
  if (!b)
    FAIL(b.error().message);
  return *b;
}

backend_reply call(lease_backend& b, backend_op op) {
  auto r = call_and_wait(b, op, {"jobs", "node-a", 2s, 11, 0}, 10s);
  if (!r)
    FAIL("no reply");
  INFO(to_string(r->status) << ": " << r->detail);
  return *r;
}

std::string header_of(const troupe::test::recorded_request& r,
                      std::string_view name) {
  auto* v = r.header(name);
  return v ? *v : "<absent>";
}

} // namespace

TEST_CASE("etcd client: authenticates first and sends the token raw in "
          "Authorization (never \"Bearer\")") {
  http_test_server srv;
  srv.push(json(200, auth_ok("tok.1")));
  srv.push(json(200, grant_ok));
  srv.push(json(200, txn_ok));
  auto b = make_backend({srv.url("/")}, true);
  auto r = call(*b, backend_op::acquire);
  CHECK(r.status == backend_status::ok);
  CHECK(r.token == 9);
  auto reqs = srv.requests();
  REQUIRE(reqs.size() == 3);
  CHECK(reqs[0].target == "/v3/auth/authenticate");
  CHECK(reqs[0].body == R"({"name":"app","password":"pw"})");
  CHECK(header_of(reqs[0], "Authorization") == "<absent>");
  CHECK(reqs[1].target == "/v3/lease/grant");
  CHECK(reqs[1].body == R"({"TTL":"2"})");
  CHECK(reqs[2].target == "/v3/kv/txn");
  for (size_t i = 1; i < 3; ++i) {
    CHECK(reqs[i].method == "POST");
    CHECK(header_of(reqs[i], "Authorization") == "tok.1");
    CHECK(header_of(reqs[i], "Content-Type") == "application/json");
  }
}

TEST_CASE("etcd client: 401 => re-authenticate once and retry, a second 401 "
          "is rejected without a loop") {
  http_test_server srv;
  srv.push(json(200, auth_ok("tok.1")));
  srv.push(json(401, invalid_token)); // grant: the token expired
  srv.push(json(200, auth_ok("tok.2")));
  srv.push(json(200, grant_ok));
  srv.push(json(200, txn_ok));
  auto b = make_backend({srv.url("/")}, true);
  CHECK(call(*b, backend_op::acquire).status == backend_status::ok);
  auto reqs = srv.requests();
  REQUIRE(reqs.size() == 5);
  CHECK(header_of(reqs[3], "Authorization") == "tok.2");
  CHECK(header_of(reqs[4], "Authorization") == "tok.2");
  CHECK(b->stats().authentications == 2);

  srv.push(json(401, invalid_token));
  srv.push(json(200, auth_ok("tok.3")));
  srv.push(json(401, invalid_token));
  auto r = call(*b, backend_op::acquire);
  CHECK(r.status == backend_status::rejected);
  CHECK_THAT(r.detail, Catch::Contains("HTTP 401: etcdserver: invalid auth "
                                       "token"));
  CHECK(srv.requests().size() == 8);
}

TEST_CASE("etcd client: the password and the tokens reach no log line and "
          "no detail, at trace level, through re-authentication and "
          "refusals") {
  auto sink = std::make_shared<runtime::capture_sink>();
  runtime::add_log_sink(sink);
  auto level = runtime::current_log_level();
  runtime::set_log_level(runtime::log_level::trace);
  std::vector<std::string> details;
  {
    http_test_server srv;
    srv.push(json(200, auth_ok("tok.SECRET1")));
    srv.push(json(401, invalid_token));
    srv.push(json(200, auth_ok("tok.SECRET2")));
    srv.push(json(401, invalid_token));
    srv.push(json(200, auth_ok("tok.SECRET3")));
    srv.push(json(403, R"({"error":"etcdserver: permission denied",)"
                       R"("code":7})"));
    srv.push(json(500, R"({"error":"boom","code":13})"));
    etcd_lease_backend_options opts;
    opts.endpoints = {srv.url("/")};
    opts.request_timeout = 1s;
    opts.user = "app";
    opts.password = runtime::secret{"pw.SECRET0"};
    auto b = etcd_lease_backend::make(std::move(opts));
    REQUIRE(b);
    for (int i = 0; i < 3; ++i)
      details.push_back(call(**b, backend_op::acquire).detail);
    details.push_back((*b)->describe());
  }
  runtime::set_log_level(level);
  runtime::remove_log_sink(sink);
  INFO(sink->dump());
  CHECK(sink->count("/v3/auth/authenticate") > 0); // the exchanges were logged
  CHECK(sink->count("SECRET") == 0);
  for (auto& d : details) {
    INFO(d);
    CHECK(d.find("SECRET") == std::string::npos);
  }
}

TEST_CASE("etcd client: 503 with Retry-After => unavailable with retry_after, "
          "the next call goes to the next endpoint") {
  http_test_server first;
  http_test_server second;
  first.set_default(
    json(503,
         R"({"error":"etcdserver: no leader","message":"etcdserver: no )"
         R"(leader","code":14})",
         {{"Retry-After", "2"}}));
  second.push(json(200, grant_ok));
  second.push(json(200, txn_ok));
  auto b = make_backend({first.url("/"), second.url("/")}, false);
  auto r = call(*b, backend_op::acquire);
  CHECK(r.status == backend_status::unavailable);
  CHECK(r.retry_after == 2s);
  CHECK_THAT(r.detail,
             Catch::Contains(
               "etcd " + first.url("/").substr(0, first.url("/").size() - 1)
               + " /v3/lease/grant: HTTP 503: etcdserver: no "
                 "leader"));
  CHECK(call(*b, backend_op::acquire).status == backend_status::ok);
  CHECK(first.requests().size() == 1);
  CHECK(second.requests().size() == 2);
}

TEST_CASE("etcd client: an unparseable 2xx is unavailable naming the field, "
          "never ok") {
  http_test_server srv;
  auto [body, expected] = GENERATE(table<std::string, std::string>({
    {R"({"ID":"x7","TTL":"2"})", "field \"ID\": not an int64: \"x7\""},
    {"<html>proxy</html>", "not JSON"},
    {"", "empty body"},
  }));
  srv.push(json(200, body));
  auto b = make_backend({srv.url("/")}, false);
  auto r = call(*b, backend_op::acquire);
  CHECK(r.status == backend_status::unavailable);
  CHECK_THAT(r.detail, Catch::Contains("/v3/lease/grant: etcd grant "
                                       "response: "));
  CHECK_THAT(r.detail, Catch::Contains(expected));
}

TEST_CASE("etcd client: a keepalive answered 200 with the streaming error "
          "shape is unavailable, not a renewal") {
  http_test_server srv;
  srv.push(json(200, grant_ok));
  srv.push(json(200, txn_ok));
  srv.push(json(200, R"({"error":{"grpc_code":14,"http_code":503,"message":)"
                     R"("etcdserver: request timed out","http_status":)"
                     R"("Service Unavailable"}})"
                     "\n"));
  srv.push(json(200, R"({"result":{"header":{},"ID":"7"}})"
                     "\n"));
  auto b = make_backend({srv.url("/")}, false);
  REQUIRE(call(*b, backend_op::acquire).status == backend_status::ok);
  auto r = call(*b, backend_op::renew);
  CHECK(r.status == backend_status::unavailable);
  CHECK_THAT(r.detail, Catch::Contains("HTTP 503: etcdserver: request timed "
                                       "out"));
  auto gone = call(*b, backend_op::renew);
  CHECK(gone.status == backend_status::not_found);
  CHECK(srv.requests()[2].body == R"({"ID":"7"})");
}

TEST_CASE("etcd client: a server that never answers costs one "
          "request_timeout, then unavailable") {
  http_test_server srv;
  srv.set_default(http_behaviour::never_respond());
  auto b = make_backend({srv.url("/")}, false);
  auto start = std::chrono::steady_clock::now();
  auto r = call(*b, backend_op::acquire);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.status == backend_status::unavailable);
  CHECK_THAT(r.detail, Catch::Contains("timed out"));
  CHECK(took >= 900ms);
  CHECK(took <= 2s);
}

TEST_CASE("scenario L3 (etcd, scripted): the acquire txn applied but its "
          "reply was lost: the retry adopts that lease, renewals use it") {
  http_test_server srv;
  srv.push(json(200, grant_ok)); // lease 7
  srv.push(http_behaviour::never_respond());
  srv.push(json(200, R"({"header":{"revision":"12"},"ID":"8","TTL":"2"})"));
  srv.push(json(200, R"({"header":{"revision":"12"},"responses":[)"
                     R"({"response_range":{"kvs":[{"key":"L3Ryb3VwZS9sZWFz)"
                     R"(ZXMvam9icw==","create_revision":"5","mod_revision":)"
                     R"("5","version":"1","value":"bm9kZS1h","lease":"7"}],)"
                     R"("count":"1"}}]})"));
  // Revoke 8 and the keepalive of the adopted lease 7 run concurrently
  // (either may take either answer: a revoke accepts any 200), then the
  // renewal's keepalive.
  for (int i = 0; i < 3; ++i)
    srv.push(json(200, R"({"result":{"ID":"7","TTL":"2"}})"
                       "\n"));
  // The renewal's range: the key is still the adopted one.
  srv.push(json(200, R"({"header":{"revision":"12"},"kvs":[{"key":)"
                     R"("L3Ryb3VwZS9sZWFzZXMvam9icw==","create_revision":)"
                     R"("5","mod_revision":"5","version":"1","value":)"
                     R"("bm9kZS1h","lease":"7"}],"count":"1"})"));
  auto b = make_backend({srv.url("/")}, false);
  auto lost = call(*b, backend_op::acquire);
  CHECK(lost.status == backend_status::unavailable);
  CHECK(b->lease_id_of("jobs", "node-a") == 0);
  auto retry = call(*b, backend_op::acquire);
  CHECK(retry.status == backend_status::held);
  CHECK(retry.holder == "node-a");
  CHECK(retry.acquisition == 11);
  CHECK(retry.token == 5);
  CHECK(b->lease_id_of("jobs", "node-a") == 7);
  // The unused lease 8 is revoked in the background: let it take its turn.
  for (int i = 0; i < 200 && srv.requests().size() < 6; ++i)
    std::this_thread::sleep_for(10ms);
  auto renewed = call(*b, backend_op::renew);
  CHECK(renewed.status == backend_status::ok);
  CHECK(renewed.token == 5);
  auto reqs = srv.requests();
  REQUIRE(reqs.size() == 8);
  // The adoption kept lease 7 alive before answering (its TTL ran since
  // the first attempt's grant); the unused lease 8 went back.
  std::set<std::pair<std::string, std::string>> middle{
    {reqs[4].target, reqs[4].body}, {reqs[5].target, reqs[5].body}};
  CHECK(middle.count({"/v3/lease/revoke", R"({"ID":"8"})"}) == 1);
  CHECK(middle.count({"/v3/lease/keepalive", R"({"ID":"7"})"}) == 1);
  CHECK(reqs[6].target == "/v3/lease/keepalive");
  CHECK(reqs[6].body == R"({"ID":"7"})");
  CHECK(reqs[7].target == "/v3/kv/range");
  CHECK(reqs[7].body == R"({"key":"L3Ryb3VwZS9sZWFzZXMvam9icw=="})");
}
