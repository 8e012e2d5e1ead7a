// The API emulator's pod list (`GET /api/v1/namespaces/{ns}/pods`) over real
// HTTP, status by status against the apiserver's behaviour: the PodList
// shape, label selectors, resourceVersion, an unknown namespace, 400 for a
// malformed selector, 403 without RBAC `list pods`, 401, 405. What each
// status is based on is in k8s_pod_store.hpp and k8s_api_emulator.hpp.

#include <catch2/catch.hpp>

#include <cctype>
#include <map>
#include <string>

#include "k8s_test_client.hpp"

using namespace k8s_test;
using troupe::test::k8s_container_port;
using troupe::test::k8s_pod;
using troupe::test::k8s_resource;
using troupe::test::k8s_verb;

namespace {

k8s_pod node_pod(std::string name, std::string ip,
                 std::map<std::string, std::string> labels
                 = {{"app", "troupe"}}) {
  k8s_pod p;
  p.name = std::move(name);
  p.pod_ip = std::move(ip);
  p.labels = std::move(labels);
  p.containers.push_back(
    {"node", "troupe-demo:dev", {{"cluster", 2552}, {"management", 8558}}});
  return p;
}

// The names of a PodList's items, space-separated.
std::string names_of(const std::string& body) {
  auto doc = json_of(body);
  std::string out;
  for (const auto& item : doc["items"].GetArray())
    out += (out.empty() ? "" : " ")
           + std::string{item["metadata"]["name"].GetString()};
  return out;
}

std::string query(std::string_view selector) {
  std::string out;
  for (unsigned char c : selector)
    out += std::isalnum(c) ? std::string(1, static_cast<char>(c))
                           : fmt::format("%{:02X}", c);
  return "?labelSelector=" + out;
}

} // namespace

TEST_CASE("k8s emulator pods: the PodList shape (kind, apiVersion, "
          "resourceVersion, items with metadata, spec and status)") {
  fixture f;
  auto stored = f.emu.put_pod(node_pod("troupe-0", "10.0.0.5"));
  auto res = f.c.must("GET", f.emu.pods_url("default"));
  REQUIRE(res.status == 200);
  CHECK(*res.header("Content-Type") == "application/json");
  auto doc = json_of(res.body);
  CHECK(str_at(doc, "/kind") == "PodList");
  CHECK(str_at(doc, "/apiVersion") == "v1");
  CHECK(str_at(doc, "/metadata/resourceVersion") == f.emu.resource_version());
  CHECK_FALSE(has_at(doc, "/items/0/kind")); // list items carry no kind
  CHECK(str_at(doc, "/items/0/metadata/name") == "troupe-0");
  CHECK(str_at(doc, "/items/0/metadata/namespace") == "default");
  CHECK(str_at(doc, "/items/0/metadata/uid").size() == 36);
  CHECK(str_at(doc, "/items/0/metadata/uid") == stored.uid);
  CHECK(str_at(doc, "/items/0/metadata/resourceVersion")
        == stored.resource_version);
  CHECK(str_at(doc, "/items/0/metadata/labels/app") == "troupe");
  CHECK_FALSE(has_at(doc, "/items/0/metadata/deletionTimestamp"));
  CHECK(str_at(doc, "/items/0/spec/containers/0/ports/1/name") == "management");
  CHECK(int_at(doc, "/items/0/spec/containers/0/ports/1/containerPort")
        == 8558);
  CHECK(str_at(doc, "/items/0/spec/containers/0/ports/1/protocol") == "TCP");
  CHECK(str_at(doc, "/items/0/status/phase") == "Running");
  CHECK(str_at(doc, "/items/0/status/podIP") == "10.0.0.5");
  CHECK(str_at(doc, "/items/0/status/podIPs/0/ip") == "10.0.0.5");
}

TEST_CASE("k8s emulator pods: resourceVersion rises with every pod change, "
          "a terminating pod is listed with its deletionTimestamp") {
  fixture f;
  auto rv = [&] {
    return std::stoull(
      str_at(json_of(f.c.must("GET", f.emu.pods_url("default")).body),
             "/metadata/resourceVersion"));
  };
  auto r0 = rv();
  f.emu.put_pod(node_pod("troupe-0", ""));
  auto r1 = rv();
  auto p = node_pod("troupe-0", "10.0.0.5");
  auto uid = f.emu.pod("default", "troupe-0")->uid;
  f.emu.put_pod(p);
  auto r2 = rv();
  CHECK(f.emu.pod("default", "troupe-0")->uid == uid); // an update
  p.deletion_timestamp = "2026-12-01T10:00:00Z";
  f.emu.put_pod(p);
  auto r3 = rv();
  auto listed = json_of(f.c.must("GET", f.emu.pods_url("default")).body);
  CHECK(str_at(listed, "/items/0/metadata/deletionTimestamp")
        == "2026-12-01T10:00:00Z");
  CHECK(int_at(listed, "/items/0/metadata/deletionGracePeriodSeconds") == 30);
  REQUIRE(f.emu.delete_pod("default", "troupe-0"));
  CHECK_FALSE(f.emu.delete_pod("default", "troupe-0"));
  auto r4 = rv();
  CHECK(r0 < r1);
  CHECK(r1 < r2);
  CHECK(r2 < r3);
  CHECK(r3 < r4);
  CHECK(names_of(f.c.must("GET", f.emu.pods_url("default")).body).empty());
}

TEST_CASE("k8s emulator pods: label selectors filter the list (equality, "
          "inequality, set-based, existence, AND)") {
  fixture f;
  f.emu.put_pod(node_pod("a", "10.0.0.1", {{"app", "troupe"}, {"tier", "x"}}));
  f.emu.put_pod(node_pod("b", "10.0.0.2", {{"app", "troupe"}, {"tier", "y"}}));
  f.emu.put_pod(node_pod("c", "10.0.0.3", {{"app", "troupe"}}));
  f.emu.put_pod(node_pod("d", "10.0.0.4", {{"app", "other"}, {"n", "5"}}));
  auto other = node_pod("e", "10.0.0.5");
  other.ns = "elsewhere";
  f.emu.put_pod(other);
  auto [selector, expected] = GENERATE(table<std::string, std::string>({
    {"", "a b c d"},
    {"app=troupe", "a b c"},
    {"app==troupe", "a b c"},
    {"app!=troupe", "d"},
    {"tier!=x", "b c d"}, // != also matches pods without the label
    {"tier in (x, y)", "a b"},
    {"tier notin (x)", "b c d"},
    {"tier", "a b"},
    {"!tier", "c d"},
    {"app=troupe,tier", "a b"},
    {"app=troupe, !tier", "c"},
    {"app=troupe,tier=z", ""},
    {"n>4", "d"},
    {"n<5", ""},
  }));
  INFO("labelSelector " << selector);
  auto res = f.c.must("GET", f.emu.pods_url("default") + query(selector));
  REQUIRE(res.status == 200);
  CHECK(names_of(res.body) == expected);
}

TEST_CASE("k8s emulator pods: a namespace without pods (or that does not "
          "exist) => 200 with an empty list, as List does not check it") {
  troupe::test::k8s_api_emulator_options opts;
  opts.namespaces = {"default"};
  fixture f{opts};
  f.emu.put_pod(node_pod("a", "10.0.0.1"));
  auto res = f.c.must("GET", f.emu.pods_url("no-such-ns"));
  CHECK(res.status == 200);
  auto doc = json_of(res.body);
  CHECK(str_at(doc, "/kind") == "PodList");
  REQUIRE(doc["items"].IsArray()); // `[]`, not null
  CHECK(doc["items"].Empty());
}

TEST_CASE("k8s emulator pods: a malformed label selector => 400 BadRequest "
          "Status") {
  fixture f;
  auto [selector, message] = GENERATE(table<std::string, std::string>({
    {"app=", ""}, // an empty value is valid
    {"app=(x", "found '(', expected: identifier"},
    {"tier in ()", "values set can't be empty"},
    {"tier in x", "found 'x', expected: '('"},
    {"app=troupe,", "found 'end of string', expected: identifier"},
    {"app troupe", "found 'troupe', expected: [!= == = > < in notin]"},
    {"Bad Key=x", "expected"},
    {"a=b c", "found 'c', expected: ',' or 'end of string'"},
    {"-a=b", "invalid label key \"-a\""},
    {"a=-b", "invalid label value \"-b\""},
    {"n>x", "the value must be an integer"},
  }));
  INFO("labelSelector " << selector);
  auto res = f.c.must("GET", f.emu.pods_url("default") + query(selector));
  if (message.empty()) {
    CHECK(res.status == 200);
    return;
  }
  CHECK(res.status == 400);
  auto st = json_of(res.body);
  CHECK(str_at(st, "/kind") == "Status");
  CHECK(str_at(st, "/reason") == "BadRequest");
  CHECK(int_at(st, "/code") == 400);
  CHECK_THAT(str_at(st, "/message"),
             Catch::StartsWith("unable to parse requirement: ")
               && Catch::Contains(message));
}

TEST_CASE("k8s emulator pods: without RBAC list on pods => 403 Forbidden "
          "with the authorizer's message, leases are unaffected") {
  fixture f;
  f.emu.deny(k8s_resource::pods, k8s_verb::list);
  auto res = f.c.must("GET", f.emu.pods_url("shop"));
  CHECK(res.status == 403);
  CHECK(res.body
        == status_body(403, "Forbidden",
                       R"(pods is forbidden: User \"system:serviceaccount:)"
                       R"(default:default\" cannot list resource \"pods\" in )"
                       R"(API group \"\" in the namespace \"shop\")",
                       R"({"kind":"pods"})"));
  CHECK(f.c.must("GET", f.collection()).status == 200); // leases: allowed
  // Denying a lease verb does not deny pods.
  f.emu.deny(k8s_resource::pods, k8s_verb::list, false);
  f.emu.deny(k8s_verb::list);
  CHECK(f.c.must("GET", f.emu.pods_url("shop")).status == 200);
  CHECK(f.c.must("GET", f.collection()).status == 403);
}

TEST_CASE("k8s emulator pods: a wrong token => 401, no credentials => 403 "
          "for system:anonymous, another method => 405") {
  fixture f;
  f.c.set_token("wrong");
  auto res = f.c.must("GET", f.emu.pods_url("default"));
  CHECK(res.status == 401);
  CHECK(str_at(json_of(res.body), "/reason") == "Unauthorized");
  f.c.set_token("");
  auto anon = f.c.must("GET", f.emu.pods_url("default"));
  CHECK(anon.status == 403);
  CHECK_THAT(str_at(json_of(anon.body), "/message"),
             Catch::Contains("User \"system:anonymous\" cannot list resource "
                             "\"pods\""));
  f.c.set_token(f.emu.options().token);
  CHECK(f.c.must("POST", f.emu.pods_url("default"), "{}").status == 405);
  CHECK(f.c.must("GET", f.emu.pods_url("default") + "/troupe-0").status == 404);
}
