// The Kubernetes Lease API emulator over real HTTP, checked against
// backends-notes.md §2 status by status: code, reason, exact message text
// and body shape. The client is troupe::runtime::http_engine, the one the
// Kubernetes lease backend uses. PATCH, out-of-band writes, faults, TLS and
// the planted-bug check are in k8s_emulator_fault_test.cpp.

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "k8s_test_client.hpp"

using namespace k8s_test;
using troupe::test::k8s_api_emulator;
using troupe::test::k8s_api_emulator_options;
using troupe::test::k8s_verb;

namespace {

uint64_t rv_number(const std::string& rv) {
  return std::stoull(rv);
}

} // namespace

TEST_CASE("k8s emulator: GET of a missing lease => 404 NotFound (§2.4)") {
  fixture f;
  auto res = f.c.must("GET", f.url("abc"));
  CHECK(res.status == 404);
  CHECK(*res.header("Content-Type") == "application/json");
  CHECK(res.body
        == status_body(404, "NotFound",
                       R"(leases.coordination.k8s.io \"abc\" not found)",
                       details("abc")));
}

TEST_CASE("k8s emulator: POST => 201 with the object, POST again => 409 "
          "AlreadyExists (§2.3)") {
  fixture f;
  auto res
    = f.c.must("POST", f.collection(),
               lease_body("abc", "pod-a", {}, R"(,"x-future":{"k":[1,2]})"));
  REQUIRE(res.status == 201);
  auto obj = json_of(res.body);
  CHECK(str_at(obj, "/kind") == "Lease");
  CHECK(str_at(obj, "/apiVersion") == "coordination.k8s.io/v1");
  CHECK(str_at(obj, "/metadata/name") == "abc");
  CHECK(str_at(obj, "/metadata/namespace") == "default");
  CHECK(str_at(obj, "/metadata/uid").size() == 36);
  CHECK(str_at(obj, "/metadata/creationTimestamp").size() == 20);
  CHECK(str_at(obj, "/spec/holderIdentity") == "pod-a");
  CHECK(int_at(obj, "/spec/leaseDurationSeconds") == 15);
  CHECK(str_at(obj, "/spec/acquireTime") == "2024-05-01T10:00:00.123456Z");
  CHECK(str_at(obj, "/spec/renewTime") == "2024-05-01T10:05:42.654321Z");
  CHECK(int_at(obj, "/spec/leaseTransitions") == 0);
  // Unknown spec fields round-trip (a newer server's fields).
  CHECK(int_at(obj, "/spec/x-future/k/1") == 2);
  auto got = f.c.must("GET", f.url("abc"));
  CHECK(got.body == res.body);
  auto again = f.c.must("POST", f.collection(), lease_body("abc", "pod-b"));
  CHECK(again.status == 409);
  CHECK(again.body
        == status_body(409, "AlreadyExists",
                       R"(leases.coordination.k8s.io \"abc\" already exists)",
                       details("abc")));
}

TEST_CASE("k8s emulator: PUT with the current resourceVersion => 200 and a "
          "new resourceVersion (§2.3)") {
  fixture f;
  auto rv = f.create("abc", "pod-a");
  auto res = f.c.must("PUT", f.url("abc"), lease_body("abc", "pod-b", rv));
  REQUIRE(res.status == 200);
  auto obj = json_of(res.body);
  CHECK(str_at(obj, "/spec/holderIdentity") == "pod-b");
  auto new_rv = str_at(obj, "/metadata/resourceVersion");
  CHECK(rv_number(new_rv) > rv_number(rv));
  CHECK(f.emu.lease("default", "abc")->resource_version == new_rv);
  // uid and creationTimestamp stay those of the creation.
  CHECK(str_at(obj, "/metadata/uid") == f.emu.lease("default", "abc")->uid);
}

TEST_CASE("k8s emulator: PUT with a stale resourceVersion => 409 Conflict, "
          "exact message (§2.4)") {
  fixture f;
  auto res = stale_put(f);
  CHECK(res.status == 409);
  CHECK(
    res.body
    == status_body(
      409, "Conflict",
      R"(Operation cannot be fulfilled on leases.coordination.k8s.io \"abc\": )"
      R"(the object has been modified; please apply your changes to the )"
      R"(latest version and try again)",
      details("abc")));
  CHECK(f.emu.lease("default", "abc")->spec.holder_identity == "pod-b");
}

TEST_CASE("k8s emulator: PUT without resourceVersion => 422 Invalid with "
          "causes (§2.3)") {
  fixture f;
  f.create("abc");
  auto res = f.c.must("PUT", f.url("abc"), lease_body("abc", "pod-b"));
  CHECK(res.status == 422);
  CHECK(
    res.body
    == status_body(
      422, "Invalid",
      R"(leases.coordination.k8s.io \"abc\" is invalid: )"
      R"(metadata.resourceVersion: Invalid value: 0x0: must be specified )"
      R"(for an update)",
      R"({"name":"abc","group":"coordination.k8s.io","kind":"leases",)"
      R"("causes":[{"reason":"FieldValueInvalid","message":"Invalid value: )"
      R"(0x0: must be specified for an update","field":)"
      R"("metadata.resourceVersion"}]})"));
}

TEST_CASE("k8s emulator: PUT on a missing lease creates it => 201, whatever "
          "resourceVersion was sent (§2.3)") {
  fixture f;
  auto res = f.c.must("PUT", f.url("abc"), lease_body("abc", "pod-a", "999"));
  CHECK(res.status == 201);
  auto obj = json_of(res.body);
  CHECK(str_at(obj, "/spec/holderIdentity") == "pod-a");
  CHECK(str_at(obj, "/metadata/resourceVersion") != "999");
  CHECK(f.emu.lease("default", "abc").has_value());
}

TEST_CASE("k8s emulator: PUT carrying a uid is a precondition => 409, also "
          "against a missing object") {
  fixture f;
  auto rv = f.create("abc");
  auto body = lease_body("abc", "pod-b", rv);
  body.replace(body.find(R"("name")"), 0, R"("uid":"other",)");
  auto res = f.c.must("PUT", f.url("abc"), body);
  CHECK(res.status == 409);
  auto st = json_of(res.body);
  CHECK(str_at(st, "/reason") == "Conflict");
  CHECK(str_at(st, "/message")
        == fmt::format(R"(Operation cannot be fulfilled on )"
                       R"(leases.coordination.k8s.io "abc": StorageError: )"
                       R"(invalid object, Code: 4, Key: )"
                       R"(/registry/leases/default/abc, ResourceVersion: 0, )"
                       R"(AdditionalErrorMsg: Precondition failed: UID in )"
                       R"(precondition: other, UID in object meta: {})",
                       f.emu.lease("default", "abc")->uid));
  REQUIRE(f.emu.delete_lease("default", "abc"));
  auto gone = f.c.must("PUT", f.url("abc"), body);
  CHECK(gone.status == 409);
  CHECK(
    str_at(json_of(gone.body), "/message").ends_with("UID in object meta: "));
}

TEST_CASE("k8s emulator: PUT that changes nothing => 200, same "
          "resourceVersion (no write)") {
  fixture f;
  auto rv = f.create("abc", "pod-a");
  auto res = f.c.must("PUT", f.url("abc"), lease_body("abc", "pod-a", rv));
  CHECK(res.status == 200);
  CHECK(str_at(json_of(res.body), "/metadata/resourceVersion") == rv);
  CHECK(f.emu.resource_version() == rv);
}

TEST_CASE("k8s emulator: DELETE without and with preconditions (§2.3)") {
  fixture f;
  f.create("abc");
  auto uid = f.emu.lease("default", "abc")->uid;
  auto res = f.c.must("DELETE", f.url("abc"));
  CHECK(res.status == 200);
  CHECK(res.body
        == fmt::format(R"({{"kind":"Status","apiVersion":"v1","metadata":{{}},)"
                       R"("status":"Success","details":{{"name":"abc",)"
                       R"("group":"coordination.k8s.io","kind":"leases",)"
                       R"("uid":"{}"}}}})"
                       "\n",
                       uid));
  CHECK(f.c.must("GET", f.url("abc")).status == 404);
  CHECK(f.c.must("DELETE", f.url("abc")).status == 404);

  auto rv = f.create("abc");
  uid = f.emu.lease("default", "abc")->uid;
  auto options = [](std::string_view pre) {
    return fmt::format(R"({{"kind":"DeleteOptions","apiVersion":"v1",)"
                       R"("preconditions":{{{}}}}})",
                       pre);
  };
  auto stale
    = f.c.must("DELETE", f.url("abc"), options(R"("resourceVersion":"1")"));
  CHECK(stale.status == 409);
  CHECK(stale.body
        == status_body(
          409, "Conflict",
          fmt::format(
            R"(Operation cannot be fulfilled on Lease.coordination.k8s.io )"
            R"(\"abc\": the ResourceVersion in the precondition (1) does not )"
            R"(match the ResourceVersion in record ({}). The object might )"
            R"(have been modified)",
            rv),
          details("abc", "Lease")));
  auto wrong_uid = f.c.must("DELETE", f.url("abc"), options(R"("uid":"x")"));
  CHECK(wrong_uid.status == 409);
  CHECK(str_at(json_of(wrong_uid.body), "/message")
        == fmt::format(R"(Operation cannot be fulfilled on )"
                       R"(Lease.coordination.k8s.io "abc": the UID in the )"
                       R"(precondition (x) does not match the UID in record )"
                       R"(({}). The object might have been deleted and then )"
                       R"(recreated)",
                       uid));
  CHECK(f.emu.lease("default", "abc").has_value());
  auto ok = f.c.must(
    "DELETE", f.url("abc"),
    options(fmt::format(R"("uid":"{}","resourceVersion":"{}")", uid, rv)));
  CHECK(ok.status == 200);
  CHECK_FALSE(f.emu.lease("default", "abc").has_value());
}

TEST_CASE("k8s emulator: wrong or missing token => 401, anonymous => 403 "
          "(§2.4, §2.5)") {
  fixture f;
  const auto unauthorized = std::string{
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
    R"("message":"Unauthorized","reason":"Unauthorized","code":401})"
    "\n"};
  client wrong{"not-the-token"};
  auto res = wrong.must("GET", f.url("abc"));
  CHECK(res.status == 401);
  CHECK(res.body == unauthorized);
  // No credentials: system:anonymous (the apiserver's default), denied.
  client none{""};
  auto anon = none.must("GET", f.url("abc"));
  CHECK(anon.status == 403);
  CHECK(str_at(json_of(anon.body), "/message")
        == R"(leases.coordination.k8s.io "abc" is forbidden: User )"
           R"("system:anonymous" cannot get resource "leases" in API group )"
           R"("coordination.k8s.io" in the namespace "default")");
  k8s_api_emulator_options no_anon;
  no_anon.anonymous_auth = false;
  fixture strict{no_anon};
  CHECK(none.must("GET", strict.url("abc")).body == unauthorized);
}

TEST_CASE("k8s emulator: set_token without grace refuses the old token => "
          "401 (scenario L1)") {
  fixture f;
  f.create("abc");
  f.emu.set_token("rotated");
  CHECK(f.c.must("GET", f.url("abc")).status == 401);
  f.c.set_token("rotated");
  CHECK(f.c.must("GET", f.url("abc")).status == 200);
  auto recorded = f.emu.requests();
  auto* sent = recorded.back().header("Authorization");
  REQUIRE(sent);
  CHECK(*sent == "Bearer rotated");
  // With a grace period both tokens work until it ends.
  f.emu.set_token("third", 1h);
  CHECK(f.c.must("GET", f.url("abc")).status == 200);
  f.c.set_token("third");
  CHECK(f.c.must("GET", f.url("abc")).status == 200);
}

TEST_CASE("k8s emulator: a denied verb => 403 Forbidden naming the verb "
          "(§2.6, scenario L7)") {
  fixture f;
  f.create("abc");
  auto rv = f.emu.lease("default", "abc")->resource_version;
  auto user = f.emu.user();
  CHECK(user == "system:serviceaccount:default:default");
  auto forbidden = [&](std::string_view verb, std::string_view name) {
    auto subject
      = name.empty()
          ? std::string{"leases.coordination.k8s.io"}
          : fmt::format(R"(leases.coordination.k8s.io \"{}\")", name);
    return status_body(
      403, "Forbidden",
      fmt::format(R"({} is forbidden: User \"{}\" cannot {} resource )"
                  R"(\"leases\" in API group \"coordination.k8s.io\" in the )"
                  R"(namespace \"default\")",
                  subject, user, verb),
      name.empty()
        ? std::string{R"({"group":"coordination.k8s.io","kind":"leases"})"}
        : details(name));
  };
  struct row {
    k8s_verb verb;
    std::string method;
    std::string url;
    std::string body;
    std::string name;
  };
  std::vector<row> rows{
    {k8s_verb::get, "GET", f.url("abc"), "", "abc"},
    {k8s_verb::list, "GET", f.collection(), "", ""},
    {k8s_verb::create, "POST", f.collection(), lease_body("new", "a"), ""},
    {k8s_verb::update, "PUT", f.url("abc"), lease_body("abc", "b", rv), "abc"},
    {k8s_verb::patch, "PATCH", f.url("abc"), R"({"spec":{}})", "abc"},
    {k8s_verb::delete_, "DELETE", f.url("abc"), "", "abc"},
  };
  for (const auto& r : rows) {
    INFO(to_string(r.verb));
    f.emu.allow_all();
    f.emu.deny(r.verb);
    auto res = f.c.must(
      r.method, r.url, r.body,
      r.method == "PATCH"
        ? std::vector<rt::http_header>{{"Content-Type",
                                        "application/merge-patch+json"}}
        : std::vector<rt::http_header>{});
    CHECK(res.status == 403);
    CHECK(res.body == forbidden(to_string(r.verb), r.name));
  }
  // get and update only: a PUT that would create needs create too, and the
  // apiserver's message then ends in the (empty) RBAC reason.
  f.emu.allow_all();
  f.emu.deny(k8s_verb::create);
  auto res = f.c.must("PUT", f.url("fresh"), lease_body("fresh", "a"));
  CHECK(res.status == 403);
  CHECK(str_at(json_of(res.body), "/message")
        == R"(leases.coordination.k8s.io "fresh" is forbidden: )");
  CHECK(f.c.must("PUT", f.url("abc"), lease_body("abc", "b", rv)).status
        == 200);
}

TEST_CASE("k8s emulator: a body that is not application/json => 415 "
          "UnsupportedMediaType") {
  fixture f;
  auto res = f.c.must("POST", f.collection(), lease_body("abc", "a"),
                      {{"Content-Type", "text/plain"}});
  CHECK(res.status == 415);
  CHECK(res.body
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
           R"("status":"Failure","message":"the body of the request was in )"
           R"(an unknown format - accepted media types include: )"
           R"(application/json, application/yaml, )"
           R"(application/vnd.kubernetes.protobuf",)"
           R"("reason":"UnsupportedMediaType","code":415})"
           "\n");
  // Parameters are fine; PATCH wants a patch type.
  CHECK(f.c
          .must("POST", f.collection(), lease_body("abc", "a"),
                {{"Content-Type", "application/json; charset=utf-8"}})
          .status
        == 201);
  auto patch = f.c.must("PATCH", f.url("abc"), R"({"spec":{}})");
  CHECK(patch.status == 415);
  CHECK(
    str_at(json_of(patch.body), "/message")
      .ends_with("application/json-patch+json, application/merge-patch+json, "
                 "application/strategic-merge-patch+json, "
                 "application/apply-patch+yaml"));
}

TEST_CASE("k8s emulator: malformed JSON, a field of the wrong type, a bad "
          "MicroTime => 400 BadRequest") {
  fixture f;
  auto bad = f.c.must("POST", f.collection(), R"({"metadata":{"name":)");
  CHECK(bad.status == 400);
  auto st = json_of(bad.body);
  CHECK(str_at(st, "/reason") == "BadRequest");
  CHECK(int_at(st, "/code") == 400);
  CHECK_FALSE(has_at(st, "/details"));
  CHECK(str_at(st, "/message")
        == R"(the object provided is unrecognized (must be of type Lease): )"
           R"(couldn't get version/kind; json parse error: unexpected end of )"
           R"(JSON input ({"metadata":{"name":))");

  auto typed = f.c.must("POST", f.collection(),
                        R"({"metadata":{"name":"abc"},)"
                        R"("spec":{"leaseDurationSeconds":"15"}})");
  CHECK(typed.status == 400);
  CHECK(str_at(json_of(typed.body), "/message")
        == R"(Lease in version "v1" cannot be handled as a Lease: json: )"
           R"(cannot unmarshal string into Go struct field )"
           R"(LeaseSpec.spec.leaseDurationSeconds of type int32)");

  // MicroTime needs exactly six fractional digits.
  auto body = lease_body("abc", "a");
  auto at = body.find("2024-05-01T10:00:00.123456Z");
  body.replace(at, 27, "2024-05-01T10:00:00Z");
  auto micro = f.c.must("POST", f.collection(), body);
  CHECK(micro.status == 400);
  CHECK(str_at(json_of(micro.body), "/message")
        == R"(Lease in version "v1" cannot be handled as a Lease: parsing )"
           R"(time "2024-05-01T10:00:00Z" as )"
           R"("2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as )"
           R"(".000000")");
  CHECK(f.emu.leases().empty());
}

TEST_CASE("k8s emulator: name in the body differs from the URL => 400, a "
          "name that is no DNS-1123 subdomain => 422") {
  fixture f;
  auto res = f.c.must("PUT", f.url("abc"), lease_body("xyz", "a", "5"));
  CHECK(res.status == 400);
  CHECK(res.body
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
           R"("status":"Failure","message":"the name of the object (xyz) )"
           R"~(does not match the name on the URL (abc)","reason":)~"
           R"("BadRequest","code":400})"
           "\n");
  auto bad = f.c.must("POST", f.collection(), lease_body("Bad_Name", "a"));
  CHECK(bad.status == 422);
  auto st = json_of(bad.body);
  const std::string rule
    = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
      "characters, '-' or '.', and must start and end with an alphanumeric "
      "character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  CHECK(str_at(st, "/message")
        == R"(Lease.coordination.k8s.io "Bad_Name" is invalid: )"
           R"(metadata.name: Invalid value: "Bad_Name": )"
             + rule);
  CHECK(str_at(st, "/details/kind") == "Lease");
  CHECK(str_at(st, "/details/causes/0/reason") == "FieldValueInvalid");
  CHECK(str_at(st, "/details/causes/0/field") == "metadata.name");
  CHECK(f.c.must("POST", f.collection(), lease_body(std::string(254, 'a'), "a"))
          .status
        == 422);
}

TEST_CASE("k8s emulator: leaseDurationSeconds <= 0 and leaseTransitions < 0 "
          "=> 422 with one cause each (ValidateLeaseSpec)") {
  fixture f;
  auto body = lease_body("abc", "a");
  body.replace(body.find("\"leaseDurationSeconds\":15"), 25,
               "\"leaseDurationSeconds\":0");
  body.replace(body.find("\"leaseTransitions\":0"), 20,
               "\"leaseTransitions\":-1");
  auto res = f.c.must("POST", f.collection(), body);
  CHECK(res.status == 422);
  CHECK(res.body
        == status_body(
          422, "Invalid",
          R"(Lease.coordination.k8s.io \"abc\" is invalid: )"
          R"([spec.leaseDurationSeconds: Invalid value: 0: must be greater )"
          R"(than 0, spec.leaseTransitions: Invalid value: -1: must be )"
          R"(greater than or equal to 0])",
          R"({"name":"abc","group":"coordination.k8s.io","kind":"Lease",)"
          R"("causes":[{"reason":"FieldValueInvalid","message":"Invalid )"
          R"(value: 0: must be greater than 0","field":)"
          R"("spec.leaseDurationSeconds"},{"reason":"FieldValueInvalid",)"
          R"("message":"Invalid value: -1: must be greater than or equal to )"
          R"(0","field":"spec.leaseTransitions"}]})"));
}

TEST_CASE("k8s emulator: a body over max_body_bytes => 413 "
          "RequestEntityTooLarge") {
  k8s_api_emulator_options opts;
  opts.max_body_bytes = 1024;
  fixture f{opts};
  auto big = lease_body("abc", std::string(2000, 'h'));
  auto res = f.c.must("POST", f.collection(), big);
  CHECK(res.status == 413);
  CHECK(res.body
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
           R"("status":"Failure","message":"Request entity too large: limit )"
           R"(is 1024","reason":"RequestEntityTooLarge","code":413})"
           "\n");
  // Far beyond the limit the answer still arrives, then the connection ends.
  auto huge = f.c.must("POST", f.collection(),
                       lease_body("abc", std::string(3 << 20, 'h')));
  CHECK(huge.status == 413);
  CHECK(f.c.must("POST", f.collection(), lease_body("abc", "a")).status == 201);
}

TEST_CASE("k8s emulator: unknown path => 404, wrong method => 405") {
  fixture f;
  auto res = f.c.must("GET", f.emu.base_url() + "/apis/example.com/v1/things");
  CHECK(res.status == 404);
  CHECK(res.body
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
           R"("status":"Failure","message":"the server could not find the )"
           R"(requested resource","reason":"NotFound","details":{},)"
           R"("code":404})"
           "\n");
  auto method = f.c.must("POST", f.url("abc"), lease_body("abc", "a"));
  CHECK(method.status == 405);
  CHECK(str_at(json_of(method.body), "/reason") == "MethodNotAllowed");
  CHECK(str_at(json_of(method.body), "/message")
        == "the server does not allow this method on the requested resource");
  auto health = f.c.must("GET", f.emu.base_url() + "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body == "ok");
}

TEST_CASE("k8s emulator: resourceVersion is one counter, strictly increasing "
          "across objects and writes, list reports it") {
  fixture f;
  std::vector<uint64_t> seen{rv_number(f.emu.resource_version())};
  seen.push_back(rv_number(f.create("a")));
  seen.push_back(rv_number(f.create("b")));
  auto a_rv = f.emu.lease("default", "a")->resource_version;
  auto put = f.c.must("PUT", f.url("a"), lease_body("a", "z", a_rv));
  seen.push_back(
    rv_number(str_at(json_of(put.body), "/metadata/resourceVersion")));
  REQUIRE(f.c.must("DELETE", f.url("b")).status == 200);
  seen.push_back(rv_number(f.emu.resource_version()));
  seen.push_back(rv_number(f.create("b")));
  CHECK(std::adjacent_find(seen.begin(), seen.end(),
                           [](auto x, auto y) { return x >= y; })
        == seen.end());
  auto list = json_of(f.c.must("GET", f.collection()).body);
  CHECK(str_at(list, "/kind") == "LeaseList");
  CHECK(str_at(list, "/metadata/resourceVersion") == f.emu.resource_version());
  CHECK(str_at(list, "/items/0/metadata/name") == "a");
  CHECK(str_at(list, "/items/1/metadata/name") == "b");
  CHECK_FALSE(has_at(list, "/items/0/kind"));
}

TEST_CASE("k8s emulator: MicroTimes come back in UTC with six digits, "
          "unknown spec fields and labels round-trip") {
  fixture f;
  auto body = lease_body("abc", "a", {},
                         R"(,"preferredHolder":"",)"
                         R"("x":{"y":null,"z":"<&>"})");
  body.replace(body.find("2024-05-01T10:00:00.123456Z"), 27,
               "2024-05-01T12:30:00.000001+02:30");
  body.replace(body.find(R"("name":"abc")"), 12,
               R"("name":"abc","labels":{"app":"demo"})");
  auto res = f.c.must("POST", f.collection(), body);
  REQUIRE(res.status == 201);
  auto obj = json_of(res.body);
  CHECK(str_at(obj, "/spec/acquireTime") == "2024-05-01T10:00:00.000001Z");
  CHECK(str_at(obj, "/metadata/labels/app") == "demo");
  CHECK(str_at(obj, "/spec/x/z") == "<&>");
  CHECK(res.body.find(R"("z":"\u003c\u0026\u003e")") != std::string::npos);
  CHECK(f.emu.lease("default", "abc")->spec_json
        == R"({"holderIdentity":"a","leaseDurationSeconds":15,)"
           R"("acquireTime":"2024-05-01T10:00:00.000001Z",)"
           R"("renewTime":"2024-05-01T10:05:42.654321Z","leaseTransitions":0,)"
           R"("preferredHolder":"","x":{"y":null,"z":"\u003c\u0026\u003e"}})");
}

TEST_CASE("k8s emulator: POST with a resourceVersion => 500, into a missing "
          "namespace => 404 namespaces not found") {
  k8s_api_emulator_options opts;
  opts.namespaces = {"default"};
  fixture f{opts};
  auto res = f.c.must("POST", f.collection(), lease_body("abc", "a", "7"));
  CHECK(res.status == 500);
  CHECK(res.body
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
           R"("status":"Failure","message":"resourceVersion should not be )"
           R"(set on objects to be created","code":500})"
           "\n");
  auto ns
    = f.c.must("POST", f.emu.leases_url("elsewhere"), lease_body("abc", "a"));
  CHECK(ns.status == 404);
  CHECK(ns.body
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
           R"("status":"Failure","message":"namespaces \"elsewhere\" not )"
           R"(found","reason":"NotFound","details":{"name":"elsewhere",)"
           R"("kind":"namespaces"},"code":404})"
           "\n");
}
