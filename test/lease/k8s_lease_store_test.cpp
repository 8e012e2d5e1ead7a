// The pure core of the Kubernetes Lease API emulator without sockets: Go's
// MicroTime parsing, DNS-1123 names, Status rendering, merge patches and
// the store's resourceVersion rules.

#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/test/k8s_lease_codec.hpp"
#include "troupe/test/k8s_lease_store.hpp"
#include "troupe/test/k8s_status.hpp"

using namespace troupe::test;

namespace {

std::string go_error(std::string_view value, std::string_view rest,
                     std::string_view elem) {
  return "parsing time \"" + std::string{value}
         + "\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \""
         + std::string{rest} + "\" as \"" + std::string{elem} + "\"";
}

k8s_write_context ctx(std::string uid = "uid-1") {
  k8s_write_context c;
  c.now = "2024-05-01T10:00:00Z";
  c.new_uid = std::move(uid);
  return c;
}

std::string body(std::string_view name, std::string_view holder,
                 std::string_view rv = {}) {
  std::string meta = "\"name\":\"" + std::string{name} + "\"";
  if (!rv.empty())
    meta += ",\"resourceVersion\":\"" + std::string{rv} + "\"";
  return "{\"metadata\":{" + meta + "},\"spec\":{\"holderIdentity\":\""
         + std::string{holder} + "\"}}";
}

} // namespace

TEST_CASE("k8s micro time: valid values come back in UTC with six digits") {
  auto [in, out] = GENERATE(table<std::string, std::string>({
    {"2024-05-01T10:00:00.123456Z", "2024-05-01T10:00:00.123456Z"},
    {"2024-05-01T10:00:00.123456+02:00", "2024-05-01T08:00:00.123456Z"},
    {"2024-05-01T01:00:00.000000+02:00", "2024-04-30T23:00:00.000000Z"},
    {"2024-12-31T23:30:00.000000-01:00", "2025-01-01T00:30:00.000000Z"},
    {"2024-05-01T10:00:00,000001Z", "2024-05-01T10:00:00.000001Z"},
    {"2024-02-29T00:00:00.000000Z", "2024-02-29T00:00:00.000000Z"},
    {"2024-05-01T1:00:00.000000Z", "2024-05-01T01:00:00.000000Z"},
  }));
  INFO(in);
  auto t = k8s_parse_micro_time(in);
  CHECK(t.error.empty());
  CHECK(t.canonical == out);
}

TEST_CASE("k8s micro time: invalid values give Go's time.ParseError text") {
  const std::string p = "parsing time ";
  auto [in, err] = GENERATE_COPY(table<std::string, std::string>({
    {"2024-05-01T10:00:00Z", go_error("2024-05-01T10:00:00Z", "Z", ".000000")},
    {"2024-05-01T10:00:00.123Z",
     go_error("2024-05-01T10:00:00.123Z", ".123Z", ".000000")},
    {"2024-05-01T10:00:00.1234567Z",
     go_error("2024-05-01T10:00:00.1234567Z", "7Z", "Z07:00")},
    {"2024-05-01 10:00:00.000000Z",
     go_error("2024-05-01 10:00:00.000000Z", " 10:00:00.000000Z", "T")},
    {"", go_error("", "", "2006")},
    {"2024-13-01T10:00:00.000000Z",
     p + "\"2024-13-01T10:00:00.000000Z\": month out of range"},
    {"2024-05-01T25:00:00.000000Z",
     p + "\"2024-05-01T25:00:00.000000Z\": hour out of range"},
    {"2023-02-29T10:00:00.000000Z",
     p + "\"2023-02-29T10:00:00.000000Z\": day out of range"},
    {"2024-05-01T10:00:00.000000Zjunk",
     p + "\"2024-05-01T10:00:00.000000Zjunk\": extra text: \"junk\""},
  }));
  INFO(in);
  auto t = k8s_parse_micro_time(in);
  CHECK(t.canonical.empty());
  CHECK(t.error == err);
}

TEST_CASE("k8s names: DNS-1123 subdomains only, at most 253 characters") {
  const std::string longest(253, 'a');
  for (std::string_view ok :
       {std::string_view{"a"}, std::string_view{"abc"},
        std::string_view{"a.b-c"}, std::string_view{"0-9"},
        std::string_view{longest}})
    CHECK(k8s_dns1123_subdomain_errors(ok).empty());
  for (auto bad : {"", "-a", "a-", "A", "a..b", "a_b", ".a", "a."})
    CHECK(k8s_dns1123_subdomain_errors(bad).size() == 1);
  auto long_name = k8s_dns1123_subdomain_errors(std::string(254, 'a'));
  REQUIRE(long_name.size() == 1);
  CHECK(long_name[0] == "must be no more than 253 characters");
  CHECK(k8s_validate_lease_name("")[0].message
        == "Required value: name or generateName is required");
}

TEST_CASE("k8s status: 401 body and Success body render as the apiserver's") {
  CHECK(k8s_unauthorized().render()
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
           R"("status":"Failure","message":"Unauthorized","reason":)"
           R"("Unauthorized","code":401})"
           "\n");
  k8s_status ok;
  ok.status = "Success";
  CHECK(ok.render()
        == R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
           R"("status":"Success"})"
           "\n");
  CHECK(k8s_escape_html("\"<a&b>\xE2\x80\xA8\"")
        == R"("\u003ca\u0026b\u003e\u2028")");
}

TEST_CASE("k8s status: Invalid aggregates several causes as [a, b] and "
          "names one duplicate once") {
  k8s_status_cause c{"FieldValueInvalid", "Invalid value: 0: x", "spec.a"};
  CHECK(k8s_invalid("Lease", "n", {c}).message
        == R"(Lease.coordination.k8s.io "n" is invalid: spec.a: Invalid )"
           R"(value: 0: x)");
  auto two = c;
  two.field = "spec.b";
  CHECK(k8s_invalid("Lease", "n", {c, two, c}).message
        == R"(Lease.coordination.k8s.io "n" is invalid: [spec.a: Invalid )"
           R"(value: 0: x, spec.b: Invalid value: 0: x])");
}

TEST_CASE("k8s merge patch: RFC 7386 examples") {
  auto [target, patch, out]
    = GENERATE(table<std::string, std::string, std::string>({
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})",
       R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
    }));
  auto merged = k8s_merge_patch(target, patch);
  REQUIRE(std::holds_alternative<std::string>(merged));
  CHECK(std::get<std::string>(merged) == out);
}

TEST_CASE("k8s store: one counter bumped by create, update and delete, a "
          "no-op update writes nothing") {
  k8s_lease_store store;
  CHECK(store.resource_version() == "1");
  CHECK(store.create("ns", body("a", "x"), ctx()).status == 201);
  CHECK(store.resource_version() == "2");
  CHECK(store.replace("ns", "a", body("a", "y", "2"), ctx()).status == 200);
  CHECK(store.resource_version() == "3");
  CHECK(store.replace("ns", "a", body("a", "y", "3"), ctx()).status == 200);
  CHECK(store.resource_version() == "3");
  CHECK(store.writes() == 2);
  CHECK(store.erase("ns", "a"));
  CHECK(store.resource_version() == "4");
  CHECK(store.find("ns", "a") == nullptr);
}

TEST_CASE("k8s store: create on update needs create, an update does not") {
  k8s_lease_store store;
  auto denied = ctx();
  denied.create_denied = k8s_forbidden_create_on_update("a");
  CHECK(store.replace("ns", "a", body("a", "x"), denied).status == 403);
  CHECK(store.create("ns", body("a", "x"), ctx()).status == 201);
  CHECK(store.replace("ns", "a", body("a", "y", "2"), denied).status == 200);
  // Validation comes first: an invalid create-on-update is 422, not 403.
  CHECK(store.replace("ns", "B", body("B", "x"), denied).status == 422);
}

TEST_CASE("k8s store: a resourceVersion that is no decimal is a 500 with "
          "Go's strconv text") {
  k8s_lease_store store;
  store.create("ns", body("a", "x"), ctx());
  auto r = store.replace("ns", "a", body("a", "y", "abc"), ctx());
  CHECK(r.status == 500);
  CHECK(r.body.find(R"("message":"resourceVersion: Invalid value: \"abc\": )"
                    R"(strconv.ParseUint: parsing \"abc\": invalid syntax")")
        != std::string::npos);
}

TEST_CASE("k8s store: list is sorted by namespace then name, and filters by "
          "namespace") {
  k8s_lease_store store;
  store.create("b", body("z", "x"), ctx("1"));
  store.create("a-b", body("y", "x"), ctx("2"));
  store.create("a", body("x", "x"), ctx("3"));
  auto all = store.all();
  REQUIRE(all.size() == 3);
  // etcd key order: "a-b/" < "a/" < "b/".
  CHECK(std::tie(all[0].ns, all[1].ns, all[2].ns) == std::tie("a-b", "a", "b"));
  auto only_b = store.list("b").body;
  CHECK(only_b.find(R"("name":"z")") != std::string::npos);
  CHECK(only_b.find(R"("name":"x")") == std::string::npos);
}

TEST_CASE("k8s store: the planted bug accepts a stale resourceVersion") {
  k8s_lease_store_options opts;
  opts.planted_bug = k8s_planted_bug::accept_stale_resource_version;
  k8s_lease_store broken{opts};
  k8s_lease_store correct;
  for (auto* s : {&broken, &correct}) {
    s->create("ns", body("a", "x"), ctx());
    s->replace("ns", "a", body("a", "y", "2"), ctx());
  }
  CHECK(correct.replace("ns", "a", body("a", "z", "2"), ctx()).status == 409);
  CHECK(broken.replace("ns", "a", body("a", "z", "2"), ctx()).status == 200);
}
