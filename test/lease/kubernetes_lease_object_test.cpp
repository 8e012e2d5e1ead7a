// The pure part of the Kubernetes backend: Lease and Status parsing, the
// write body, MicroTime, DNS-1123 names and the observation rule.

#include "troupe/lease/kubernetes_lease_object.hpp"

#include <string>

#include <catch2/catch.hpp>

using namespace troupe::lease;
using namespace std::chrono_literals;
using troupe::runtime::timestamp;

namespace {

// The shape of backends-notes.md §2.2.
constexpr const char* sample
  = R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1",
 "metadata":{"name":"my-lock","namespace":"default","uid":"6f1c-uid","resourceVersion":"48213",
   "creationTimestamp":"2024-05-01T10:00:00Z","managedFields":[{"manager":"x"}],
   "labels":{"app":"demo"},"annotations":{"troupe.io/acquisition":"1f2e"}},
 "spec":{"holderIdentity":"pod-a","leaseDurationSeconds":15,
   "acquireTime":"2024-05-01T10:00:00.123456Z","renewTime":"2024-05-01T10:05:42.654321Z",
   "leaseTransitions":3,"preferredHolder":"pod-b"}})";

} // namespace

TEST_CASE("a Lease object parses into its fields") {
  auto x = parse_kubernetes_lease(sample);
  REQUIRE(x);
  CHECK(x->name == "my-lock");
  CHECK(x->namespace_name == "default");
  CHECK(x->uid == "6f1c-uid");
  CHECK(x->resource_version == "48213");
  CHECK(x->acquisition == 0x1f2e);
  CHECK(x->holder() == "pod-a");
  CHECK(x->lease_duration_seconds == 15);
  CHECK(x->lease_transitions == 3);
  CHECK(x->renew_time == "2024-05-01T10:05:42.654321Z");
  CHECK(x->raw == sample);
}

TEST_CASE("optional spec fields may be absent or null") {
  auto x = parse_kubernetes_lease(
    R"({"kind":"Lease","metadata":{"name":"a","resourceVersion":"7"},)"
    R"("spec":{"holderIdentity":null}})");
  REQUIRE(x);
  CHECK(x->holder().empty());
  CHECK_FALSE(x->lease_duration_seconds);
  CHECK_FALSE(x->lease_transitions);
  CHECK(x->acquisition == 0);
  auto y = parse_kubernetes_lease(
    R"({"metadata":{"name":"a","resourceVersion":"7"}})");
  REQUIRE(y);
  CHECK(y->holder().empty());
}

TEST_CASE("bad Lease bodies are errors that name the field") {
  struct row {
    const char* body;
    const char* expected;
  };
  auto rows = GENERATE(values<row>({
    {"", "malformed JSON"},
    {"{\"kind\":\"Lease\",", "malformed JSON"},
    {"[1,2]", "not a JSON object"},
    {"<html>oops</html>", "malformed JSON"},
    {R"({"kind":"Status","metadata":{"name":"a","resourceVersion":"1"}})",
     "kind is not \"Lease\""},
    {R"({"kind":"Lease"})", "metadata is missing"},
    {R"({"kind":"Lease","metadata":{"resourceVersion":"1"}})",
     "metadata.name is missing"},
    {R"({"kind":"Lease","metadata":{"name":"a"}})",
     "metadata.resourceVersion is missing"},
    {R"({"kind":"Lease","metadata":{"name":"a","resourceVersion":""}})",
     "metadata.resourceVersion is missing"},
    {R"({"kind":"Lease","metadata":{"name":"a","resourceVersion":12}})",
     "metadata.resourceVersion is not a string"},
    {R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":[]})",
     "spec is not an object"},
    {R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{"holderIdentity":5}})",
     "spec.holderIdentity is not a string"},
    {R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{"leaseDurationSeconds":-5}})",
     "spec.leaseDurationSeconds = -5 is outside"},
    {R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{"leaseDurationSeconds":"15"}})",
     "spec.leaseDurationSeconds is not an integer"},
    {R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{"leaseDurationSeconds":1.5}})",
     "spec.leaseDurationSeconds is not an integer"},
    {R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{"leaseTransitions":4294967296}})",
     "spec.leaseTransitions = 4294967296 is outside"},
    // RapidJSON decodes a lone low surrogate into bytes that are not UTF-8;
    // writing them back would send the API server an unparseable body.
    {R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{"x\ude02":1}})",
     "lone UTF-16 surrogate"},
    {R"({"metadata":{"name":"a","resourceVersion":"1","annotations":{"k":["\udc00"]}}})",
     "lone UTF-16 surrogate"},
  }));
  auto x = parse_kubernetes_lease(rows.body);
  REQUIRE_FALSE(x);
  INFO(x.error().message);
  CHECK(x.error().message.find(rows.expected) != std::string::npos);
}

TEST_CASE("escaped surrogate pairs are UTF-8 and survive a write") {
  auto x = parse_kubernetes_lease(
    R"({"metadata":{"name":"a","resourceVersion":"1"},"spec":{"holderIdentity":"n\ud83d\ude00"}})");
  REQUIRE(x);
  CHECK(x->holder() == "n\xf0\x9f\x98\x80");
  kubernetes_lease_write w;
  w.name = x->name;
  w.resource_version = x->resource_version;
  w.holder_identity = x->holder();
  auto body = render_kubernetes_lease(x->raw, w);
  REQUIRE(body);
  auto y = parse_kubernetes_lease(*body);
  REQUIRE(y);
  CHECK(y->holder() == x->holder());
}

TEST_CASE("deeply nested or huge bodies are refused without recursion") {
  std::string deep(100000, '[');
  auto x = parse_kubernetes_lease(deep);
  REQUIRE_FALSE(x);
  std::string huge = R"({"metadata":{"name":"a","resourceVersion":"1"},"x":")"
                     + std::string(2 * 1024 * 1024, 'y') + "\"}";
  auto y = parse_kubernetes_lease(huge);
  REQUIRE_FALSE(y);
  CHECK(y.error().message.find("exceeds") != std::string::npos);
}

TEST_CASE("a Status body parses, retryAfterSeconds is read") {
  auto st = parse_kubernetes_status(
    R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
    R"("message":"Operation cannot be fulfilled on leases.coordination.k8s.io \"abc\": the object has been modified; please apply your changes to the latest version and try again",)"
    R"("reason":"Conflict","details":{"name":"abc","group":"coordination.k8s.io","kind":"leases","retryAfterSeconds":3},"code":409})");
  REQUIRE(st);
  CHECK(st->code == 409);
  CHECK(st->reason == "Conflict");
  CHECK(st->message.find("the object has been modified") != std::string::npos);
  CHECK(st->retry_after == 3s);
  CHECK_FALSE(parse_kubernetes_status(R"({"kind":"Lease"})"));
  CHECK_FALSE(parse_kubernetes_status("Internal Server Error"));
}

TEST_CASE("the write body keeps unknown fields and sets troupe's") {
  kubernetes_lease_write w;
  w.name = "my-lock";
  w.namespace_name = "default";
  w.resource_version = "48213";
  w.holder_identity = "pod-b";
  w.lease_duration_seconds = 20;
  w.lease_transitions = 4;
  w.acquire_time = "2024-05-01T11:00:00.000001Z";
  w.renew_time = "2024-05-01T11:00:00.000002Z";
  w.acquisition = 0xabc;
  auto body = render_kubernetes_lease(sample, w);
  REQUIRE(body);
  auto x = parse_kubernetes_lease(*body);
  REQUIRE(x);
  CHECK(x->holder() == "pod-b");
  CHECK(x->lease_duration_seconds == 20);
  CHECK(x->lease_transitions == 4);
  CHECK(x->resource_version == "48213");
  CHECK(x->acquisition == 0xabc);
  CHECK(x->acquire_time == "2024-05-01T11:00:00.000001Z");
  CHECK(body->find("\"preferredHolder\":\"pod-b\"") != std::string::npos);
  CHECK(body->find("\"labels\":{\"app\":\"demo\"}") != std::string::npos);
  CHECK(body->find("managedFields") == std::string::npos);
  // A release: empty holder, no annotation, acquireTime kept.
  kubernetes_lease_write r = w;
  r.holder_identity.clear();
  r.acquisition = 0;
  r.acquire_time.clear();
  auto rel = render_kubernetes_lease(*body, r);
  REQUIRE(rel);
  auto y = parse_kubernetes_lease(*rel);
  REQUIRE(y);
  CHECK(y->holder().empty());
  CHECK(y->acquisition == 0);
  CHECK(y->acquire_time == "2024-05-01T11:00:00.000001Z");
  CHECK(rel->find("troupe.io/acquisition") == std::string::npos);
  // A new object (POST) has no resourceVersion.
  kubernetes_lease_write n = w;
  n.resource_version.clear();
  auto created = render_kubernetes_lease("", n);
  REQUIRE(created);
  CHECK(created->find("resourceVersion") == std::string::npos);
  CHECK(created->find("\"kind\":\"Lease\"") != std::string::npos);
  CHECK(created->find("\"apiVersion\":\"coordination.k8s.io/v1\"")
        != std::string::npos);
  CHECK_FALSE(render_kubernetes_lease("[]", w));
}

TEST_CASE("MicroTime has exactly six fractional digits and round-trips") {
  using clock = std::chrono::system_clock;
  CHECK(format_micro_time(clock::time_point{})
        == "1970-01-01T00:00:00.000000Z");
  auto t = clock::time_point{std::chrono::microseconds{1714557942654321}};
  CHECK(format_micro_time(t) == "2024-05-01T10:05:42.654321Z");
  auto back = parse_micro_time("2024-05-01T10:05:42.654321Z");
  REQUIRE(back);
  CHECK(*back == t);
  auto offset = parse_micro_time("2024-05-01T12:05:42.654321+02:00");
  REQUIRE(offset);
  CHECK(*offset == t);
  for (auto bad :
       {"2024-05-01T10:05:42Z", "2024-05-01T10:05:42.654Z",
        "2024-05-01T10:05:42.6543210Z", "2024-13-01T10:05:42.654321Z",
        "2024-05-01 10:05:42.654321Z", "garbage", ""}) {
    INFO(bad);
    CHECK_FALSE(parse_micro_time(bad));
  }
}

TEST_CASE("lease names must be DNS-1123 subdomains, nothing is mapped") {
  for (auto good :
       {"a", "my-lock", "troupe.singleton.v1", "0abc9", "a-b.c-d"}) {
    INFO(good);
    CHECK_FALSE(validate_dns1123_subdomain(good, "lease name"));
  }
  struct row {
    std::string name;
    const char* expected;
  };
  auto rows = GENERATE(values<row>({
    {"", "it is empty"},
    {"My-Lock", "upper-case 'M' at position 0"},
    {"my_lock", "character '_' at position 2"},
    {"-lock", "must start and end"},
    {"lock-", "must start and end"},
    {"a..b", "empty label"},
    {".a", "empty label"},
    {"a b", "character ' ' at position 1"},
    {std::string("a\nb"), "character 0x0a at position 1"},
    {std::string(254, 'a'), "254 characters, at most 253"},
  }));
  auto err = validate_dns1123_subdomain(rows.name, "lease name");
  REQUIRE(err);
  INFO(err.message);
  CHECK(err.message.find(rows.expected) != std::string::npos);
  CHECK(err.message.find("lease name") != std::string::npos);
}

TEST_CASE("expiry is judged by local observation of the resourceVersion") {
  auto x = parse_kubernetes_lease(sample); // holder pod-a, 15 s
  REQUIRE(x);
  kubernetes_observation obs;
  timestamp t0{100s};
  observe(obs, *x, t0);
  CHECK(obs.since == t0);
  CHECK(held_by_observation(*x, obs, t0, 5s));
  CHECK(held_by_observation(*x, obs, t0 + 14999ms, 5s));
  CHECK_FALSE(held_by_observation(*x, obs, t0 + 15s, 5s));
  // Re-reading the same resourceVersion does not restart the observation.
  observe(obs, *x, t0 + 10s);
  CHECK(obs.since == t0);
  // A new resourceVersion (a renewal) does, whatever renewTime says.
  auto renewed = *x;
  renewed.resource_version = "48214";
  renewed.renew_time = "1999-01-01T00:00:00.000000Z";
  observe(obs, renewed, t0 + 10s);
  CHECK(obs.since == t0 + 10s);
  CHECK(held_by_observation(renewed, obs, t0 + 24s, 5s));
  // No holder: never held. No valid duration: the reader's ttl.
  auto released = renewed;
  released.holder_identity = "";
  CHECK_FALSE(held_by_observation(released, obs, t0 + 10s, 5s));
  auto no_duration = renewed;
  no_duration.lease_duration_seconds.reset();
  CHECK(held_by_observation(no_duration, obs, t0 + 14s, 5s));
  CHECK_FALSE(held_by_observation(no_duration, obs, t0 + 15s, 5s));
  no_duration.lease_duration_seconds = 0;
  CHECK(held_by_observation(no_duration, obs, t0 + 14s, 5s));
}
