// Unit tests of the etcd gateway protocol (request builders, response
// parsers, answer classification) on the exact JSON measured on etcd 3.4.23
// (backends-notes.md §1).

#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/lease/etcd_protocol.hpp"

using namespace troupe::lease::etcd;
using troupe::runtime::secret;

namespace {

// The header etcd sends with every answer (backends-notes.md preamble).
#define HEADER                                                                 \
  R"("header":{"cluster_id":"324952591200643719","member_id":)"                \
  R"("3319814642761637952","revision":"8","raft_term":"2"})"

// A lease ID above 2^53: a double would round it.
constexpr int64_t big_id = 2324035695445400632;

} // namespace

TEST_CASE("etcd protocol: base64 round trips and RFC 4648 vectors") {
  auto [plain, encoded] = GENERATE(table<std::string, std::string>({
    {"", ""},
    {"f", "Zg=="},
    {"fo", "Zm8="},
    {"foo", "Zm9v"},
    {"foob", "Zm9vYg=="},
    {"fooba", "Zm9vYmE="},
    {"foobar", "Zm9vYmFy"},
    {"/lease/mylock", "L2xlYXNlL215bG9jaw=="},
    {"nodeA", "bm9kZUE="},
    {std::string{"\0\xff\x10", 3}, "AP8Q"},
  }));
  CHECK(base64_encode(plain) == encoded);
  auto decoded = base64_decode(encoded);
  REQUIRE(decoded);
  CHECK(*decoded == plain);
}

TEST_CASE("etcd protocol: bad base64 is an error naming the offset") {
  auto [text, expected] = GENERATE(table<std::string, std::string>({
    {"!!!!", "character outside the alphabet at offset 0"},
    {"Zg=", "length 3 is not a multiple of 4"},
    {"Z=g=", "misplaced padding at offset 1"},
    {"Zm9v=g==", "misplaced padding at offset 4"},
    {"Zm 9", "character outside the alphabet at offset 2"},
  }));
  auto r = base64_decode(text);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains(expected));
}

TEST_CASE("etcd protocol: int64 strings parse exactly, also above 2^53") {
  auto [text, value] = GENERATE(table<std::string, int64_t>({
    {"0", 0},
    {"2324035695445400582", 2324035695445400582},
    {"9007199254740993", 9007199254740993}, // 2^53 + 1: not a double
    {"9223372036854775807", INT64_MAX},
    {"-1", -1},
  }));
  auto r = parse_int64(text);
  REQUIRE(r);
  CHECK(*r == value);
}

TEST_CASE("etcd protocol: malformed int64 strings are errors quoting them") {
  auto text = GENERATE(as<std::string>{}, "", "12a", " 1", "+1", "1.5",
                       "9223372036854775808", "0x10");
  auto r = parse_int64(text);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains("not an int64: \"" + text));
}

TEST_CASE("etcd protocol: UTF-8 validation") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("/troupe/leases/jobs"));
  CHECK(is_valid_utf8("gr\xc3\xbc\xc3\x9f"));     // grüß
  CHECK(is_valid_utf8("\xf0\x9f\x98\x80"));       // U+1F600
  CHECK_FALSE(is_valid_utf8("\xff"));             // never valid
  CHECK_FALSE(is_valid_utf8("\xc3"));             // truncated
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));         // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));     // surrogate
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80")); // above U+10FFFF
}

TEST_CASE("etcd protocol: request bodies") {
  CHECK(grant_request(10) == R"({"TTL":"10"})");
  CHECK(lease_id_request(big_id) == R"({"ID":"2324035695445400632"})");
  CHECK(range_request("/lease/mylock") == R"({"key":"L2xlYXNlL215bG9jaw=="})");
  // backends-notes.md §1.5, with the int64 operands as strings.
  CHECK(acquire_txn_request("/lease/mylock", "nodeA", big_id)
        == R"({"compare":[{"key":"L2xlYXNlL215bG9jaw==","result":"EQUAL",)"
           R"("target":"CREATE","create_revision":"0"}],)"
           R"("success":[{"request_put":{"key":"L2xlYXNlL215bG9jaw==",)"
           R"("value":"bm9kZUE=","lease":"2324035695445400632"}}],)"
           R"("failure":[{"request_range":{"key":"L2xlYXNlL215bG9jaw=="}}]})");
  CHECK(release_txn_request("/lease/mylock", "nodeA", big_id)
        == R"({"compare":[{"key":"L2xlYXNlL215bG9jaw==","result":"EQUAL",)"
           R"("target":"VALUE","value":"bm9kZUE="},)"
           R"({"key":"L2xlYXNlL215bG9jaw==","result":"EQUAL",)"
           R"("target":"LEASE","lease":"2324035695445400632"}],)"
           R"("success":[{"request_delete_range":)"
           R"({"key":"L2xlYXNlL215bG9jaw=="}}],)"
           R"("failure":[{"request_range":{"key":"L2xlYXNlL215bG9jaw=="}}]})");
  // JSON escaping of user names and passwords.
  CHECK(authenticate_request("app\"x", secret{"p\\w\n"})
        == R"({"name":"app\"x","password":"p\\w\n"})");
}

TEST_CASE("etcd protocol: grant response") {
  auto r = parse_grant_response(R"({)" HEADER
                                R"(,"ID":"2324035695445400582","TTL":"10"})");
  REQUIRE(r);
  CHECK(r->id == 2324035695445400582);
  CHECK(r->ttl == 10);
  // Integers instead of strings are accepted too.
  auto n = parse_grant_response(R"({"ID":12345,"TTL":5})");
  REQUIRE(n);
  CHECK(n->id == 12345);
  CHECK(n->ttl == 5);
}

TEST_CASE("etcd protocol: bad grant responses name the field") {
  auto [body, expected] = GENERATE(table<std::string, std::string>({
    {R"({"TTL":"10"})", "field \"ID\": missing"},
    {R"({"ID":"1"})", "field \"TTL\": missing"},
    {R"({"ID":1.5e20,"TTL":"2"})", "field \"ID\": not an int64"},
    {R"({"ID":"x1","TTL":"2"})", "field \"ID\": not an int64: \"x1\""},
    {R"({"ID":"0","TTL":"2"})", "field \"ID\": is 0"},
    {R"({"ID":"1","TTL":"0"})", "field \"TTL\": 0 is not positive"},
    {R"({"ID":"1","TTL":true})", "field \"TTL\": not an int64"},
    {R"({"ID":"1","TTL":)", "not JSON"},
    {R"([1,2])", "not a JSON object"},
    {"", "empty body"},
    {"404 page not found\n", "not JSON"},
  }));
  auto r = parse_grant_response(body);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::StartsWith("etcd grant response: "));
  CHECK_THAT(r.error().message, Catch::Contains(expected));
}

TEST_CASE("etcd protocol: txn response of a successful acquire") {
  auto r = parse_txn_response(
    R"({"header":{"cluster_id":"1","member_id":"2","revision":"8",)"
    R"("raft_term":"2"},"succeeded":true,)"
    R"("responses":[{"response_put":{"header":{"revision":"8"}}}]})");
  REQUIRE(r);
  CHECK(r->succeeded);
  CHECK(r->revision == 8);
  CHECK(r->range_kvs.empty());
}

TEST_CASE("etcd protocol: failed txn (no succeeded member) reads the holder") {
  auto r = parse_txn_response(
    R"({)" HEADER R"(,"responses":[{"response_range":{"header":)"
    R"({"revision":"8"},"kvs":[{"key":"L2xlYXNlL215bG9jaw==",)"
    R"("create_revision":"8","mod_revision":"8","version":"1",)"
    R"("value":"bm9kZUE=","lease":"2324035695445400632"}],"count":"1"}}]})");
  REQUIRE(r);
  CHECK_FALSE(r->succeeded);
  CHECK(r->revision == 8);
  REQUIRE(r->range_kvs.size() == 1);
  CHECK(r->range_kvs[0]
        == kv{"/lease/mylock", "nodeA", 8, 8, 1, 2324035695445400632});
}

TEST_CASE("etcd protocol: txn responses of a release") {
  auto deleted = parse_txn_response(
    R"({"header":{"revision":"17"},"succeeded":true,"responses":)"
    R"([{"response_delete_range":{"header":{"revision":"17"},)"
    R"("deleted":"1"}}]})");
  REQUIRE(deleted);
  CHECK(deleted->succeeded);
  CHECK(deleted->deleted == 1);
  // Compare failed on an absent key: the range has no kvs, no count.
  auto absent = parse_txn_response(
    R"({"header":{"revision":"17"},"responses":[{"response_range":)"
    R"({"header":{"revision":"17"}}}]})");
  REQUIRE(absent);
  CHECK_FALSE(absent->succeeded);
  CHECK(absent->range_kvs.empty());
  CHECK(absent->deleted == 0);
}

TEST_CASE("etcd protocol: bad txn responses name the field") {
  auto [body, expected] = GENERATE(table<std::string, std::string>({
    {R"({"succeeded":true})", "field \"header\": missing"},
    {R"({"header":[]})", "field \"header\": not an object"},
    {R"({"header":{}})", "field \"header.revision\": missing"},
    {R"({"header":{"revision":"8"},"succeeded":"true"})",
     "field \"succeeded\": not a boolean"},
    {R"({"header":{"revision":"8"},"responses":{}})",
     "field \"responses\": not an array"},
    {R"({"header":{"revision":"8"},"responses":[7]})",
     "field \"responses[0]\": not an object"},
    {R"({"header":{"revision":"8"},"responses":[{"response_x":{}}]})",
     "field \"responses[0]\": holds none of"},
    {R"({"header":{"revision":"8"},"responses":[{"response_range":)"
     R"({"kvs":[{"value":"!!!!"}]}}]})",
     "field \"responses[0].response_range.kvs[0].value\": invalid base64"},
    {R"({"header":{"revision":"8"},"responses":[{"response_range":)"
     R"({"kvs":[{"create_revision":"abc"}]}}]})",
     "field \"responses[0].response_range.kvs[0].create_revision\": "
     "not an int64: \"abc\""},
    {R"({"header":{"revision":"8"},"responses":[{"response_range":)"
     R"({"kvs":{}}}]})",
     "field \"responses[0].response_range.kvs\": not an array"},
    {R"({"header":{"revision":"8"},"responses":[{"response_range":)"
     R"({"kvs":[{"value":7}]}}]})",
     "field \"responses[0].response_range.kvs[0].value\": not a base64"},
    {R"({"header":{"revision":"8"},"responses":[{"response_delete_range":)"
     R"({"deleted":[]}}]})",
     "field \"responses[0].response_delete_range.deleted\": not an int64"},
    {R"({"header":{"revision":"8"},"responses":[{"response_ran)", "not JSON"},
  }));
  auto r = parse_txn_response(body);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::StartsWith("etcd txn response: "));
  CHECK_THAT(r.error().message, Catch::Contains(expected));
}

TEST_CASE("etcd protocol: keepalive responses (TTL absent = lease gone)") {
  auto alive = parse_keepalive_response(
    R"({"result":{)" HEADER R"(,"ID":"2324035695445400606","TTL":"10"}})"
    "\n");
  REQUIRE(alive);
  CHECK(alive->id == 2324035695445400606);
  CHECK(alive->ttl == 10);
  auto gone
    = parse_keepalive_response(R"({"result":{)" HEADER R"(,"ID":"999999"}})");
  REQUIRE(gone);
  CHECK(gone->id == 999999);
  CHECK(gone->ttl == 0);
  // Two request objects give two lines; the first decides.
  auto two = parse_keepalive_response(R"({"result":{"ID":"5","TTL":"3"}})"
                                      "\n"
                                      R"({"result":{"ID":"5","TTL":"3"}})"
                                      "\n");
  REQUIRE(two);
  CHECK(two->ttl == 3);
}

TEST_CASE("etcd protocol: bad keepalive responses") {
  auto [body, expected] = GENERATE(table<std::string, std::string>({
    {"", "empty body"},
    {"\n\n", "empty body"},
    {R"({"result":{"TTL":"10"}})", "field \"result.ID\": missing"},
    {R"({"result":[]})", "field \"result\": not an object"},
    {R"({"result":{"ID":"1","TTL":"ten"}})",
     "field \"result.TTL\": not an int64: \"ten\""},
    {R"({"other":1})", "field \"result\": missing"},
    {R"({"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: )"
     R"(no leader","http_status":"Service Unavailable"}})",
     "stream error (HTTP 503): etcdserver: no leader"},
    {R"({"result":{"ID":"1")", "not JSON"},
  }));
  auto r = parse_keepalive_response(body);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::StartsWith("etcd keepalive response: "));
  CHECK_THAT(r.error().message, Catch::Contains(expected));
}

TEST_CASE("etcd protocol: authenticate response, errors never quote it") {
  auto ok = parse_authenticate_response(R"({)" HEADER
                                        R"(,"token":"HRsZrkifEVDNTcHq.75"})");
  REQUIRE(ok);
  CHECK(ok->reveal() == "HRsZrkifEVDNTcHq.75");
  auto [body, expected] = GENERATE(table<std::string, std::string>({
    {R"({"tok":"HRsZrkifEVDNTcHq.75"})", "field \"token\": missing"},
    {R"({"token":""})", "field \"token\": empty"},
    {R"({"token":75})", "field \"token\": not a string"},
    {R"({"token":"HRsZrkifEVDNTcHq.75")", "not JSON"},
  }));
  auto r = parse_authenticate_response(body);
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains(expected));
  CHECK_THAT(r.error().message, !Catch::Contains("HRsZ"));
}

TEST_CASE("etcd protocol: both error shapes") {
  auto unary = parse_error_body(
    R"({"error":"etcdserver: requested lease not found","message":)"
    R"("etcdserver: requested lease not found","code":5})");
  REQUIRE(unary);
  CHECK(unary->grpc_code == 5);
  CHECK(unary->http_code == 0);
  CHECK(unary->message == "etcdserver: requested lease not found");
  auto stream = parse_error_body(
    R"({"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: )"
    R"(request timed out","http_status":"Service Unavailable"}})"
    "\n");
  REQUIRE(stream);
  CHECK(stream->grpc_code == 14);
  CHECK(stream->http_code == 503);
  CHECK(stream->message == "etcdserver: request timed out");
  auto only_error = parse_error_body(R"({"error":"unexpected EOF"})");
  REQUIRE(only_error);
  CHECK(only_error->message == "unexpected EOF");
  CHECK_FALSE(parse_error_body("404 page not found\n"));
  CHECK_FALSE(parse_error_body(R"({"header":{}})"));
}

TEST_CASE("etcd protocol: answers are classified by status and message") {
  using k = answer_kind;
  auto [status, body, kind] = GENERATE(table<int, std::string, k>({
    {200, R"({"header":{},"ID":"1","TTL":"2"})", k::ok},
    {200, "", k::ok},
    {401,
     R"({"error":"etcdserver: invalid auth token","message":)"
     R"("etcdserver: invalid auth token","code":16})",
     k::unauthenticated},
    {400,
     R"({"error":"etcdserver: user name is empty","message":)"
     R"("etcdserver: user name is empty","code":3})",
     k::user_name_empty},
    {412,
     R"({"error":"etcdserver: authentication is not enabled","message":)"
     R"("etcdserver: authentication is not enabled","code":9})",
     k::auth_not_enabled},
    {412,
     R"({"error":"etcdserver: lease already exists","message":)"
     R"("etcdserver: lease already exists","code":9})",
     k::rejected},
    {404,
     R"({"error":"etcdserver: requested lease not found","message":)"
     R"("etcdserver: requested lease not found","code":5})",
     k::lease_not_found},
    {404, "404 page not found\n", k::rejected},
    {403,
     R"({"error":"etcdserver: permission denied","message":)"
     R"("etcdserver: permission denied","code":7})",
     k::permission_denied},
    {400,
     R"({"error":"etcdserver: authentication failed, invalid user ID or )"
     R"(password","message":"etcdserver: authentication failed, invalid )"
     R"(user ID or password","code":3})",
     k::rejected},
    {400,
     R"({"error":"etcdserver: too large lease TTL","message":)"
     R"("etcdserver: too large lease TTL","code":11})",
     k::rejected},
    {500,
     R"({"error":"context deadline exceeded","message":)"
     R"("context deadline exceeded","code":2})",
     k::unavailable},
    {503,
     R"({"error":"etcdserver: no leader","message":"etcdserver: no leader",)"
     R"("code":14})",
     k::unavailable},
    {504, "", k::unavailable},
    {502, "<html>bad gateway</html>", k::unavailable},
    {429, "", k::unavailable},
    {302, "", k::unavailable},
    // The streaming error shape arrives with HTTP 200 (keepalive).
    {200,
     R"({"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: )"
     R"(no leader","http_status":"Service Unavailable"}})",
     k::unavailable},
    {200,
     R"({"error":{"grpc_code":16,"http_code":401,"message":"etcdserver: )"
     R"(invalid auth token","http_status":"Unauthorized"}})",
     k::unauthenticated},
    {200, R"({"error":{"grpc_code":14}})", k::unavailable},
    {200, R"({"error":{"http_code":200}})", k::unavailable},
    {200, R"({"error":{"http_code":70000,"grpc_code":7}})",
     k::permission_denied},
  }));
  auto a = classify_answer(static_cast<uint16_t>(status), body);
  INFO(status << " " << body);
  CHECK(a.kind == kind);
}

TEST_CASE("etcd protocol: parsers survive hostile input") {
  // Deep nesting (iterative parse: no stack overflow), huge bodies, NULs,
  // invalid UTF-8, wrong types everywhere.
  std::string deep(200000, '[');
  std::string huge(max_body_bytes + 1, ' ');
  std::string nul{"{\"ID\":\"1\0\",\"TTL\":\"2\"}", 21};
  auto body = GENERATE_COPY(
    as<std::string>{}, deep, huge, nul, std::string{"{\"a\":\"\xff\xfe\"}"},
    std::string{R"({"result":null,"error":null,"header":null})"},
    std::string{R"({"responses":[null,{"response_range":null}]})"},
    std::string{R"({"ID":{"x":1},"TTL":[],"token":{},"result":1})"});
  CHECK_FALSE(parse_grant_response(body));
  CHECK_FALSE(parse_txn_response(body));
  CHECK_FALSE(parse_keepalive_response(body));
  CHECK_FALSE(parse_authenticate_response(body));
  auto range = parse_range_response(body);
  CHECK((!range || range->empty()));
  (void)parse_error_body(body);
  auto a = classify_answer(200, body);
  CHECK((a.kind == answer_kind::ok || a.kind == answer_kind::unavailable));
  if (body.size() > max_body_bytes)
    CHECK_THAT(parse_txn_response(body).error().message,
               Catch::Contains("exceeds the limit"));
}

TEST_CASE("etcd protocol: messages escape what they quote") {
  auto r = parse_int64("\x01\"x\xff");
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().message, Catch::Contains(R"(\x01\"x\xff)"));
  CHECK(escape_for_message(std::string(100, 'a'), 10) == "aaaaaaaaaa...");
}

TEST_CASE("etcd protocol: range responses") {
  auto two = parse_range_response(
    R"({)" HEADER R"(,"kvs":[{"key":"L2xvY2tzL2E=","create_revision":"4",)"
    R"("mod_revision":"5","version":"2","value":"b3duZXIy"},{"key":)"
    R"("L2xvY2tzL2I=","create_revision":"6","mod_revision":"6","version":)"
    R"("1","value":"eA==","lease":"2324035695469262610"}],"count":"2"})");
  REQUIRE(two);
  REQUIRE(two->size() == 2);
  CHECK((*two)[0] == kv{"/locks/a", "owner2", 4, 5, 2, 0});
  CHECK((*two)[1] == kv{"/locks/b", "x", 6, 6, 1, 2324035695469262610});
  auto none = parse_range_response(R"({)" HEADER R"(})");
  REQUIRE(none);
  CHECK(none->empty());
  auto bad = parse_range_response(R"({"kvs":[{"lease":"1e3"}]})");
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message,
             Catch::Contains("field \"kvs[0].lease\": not an int64"));
}
