// The PodList decoder and the contact-point rule of the kubernetes_api
// discovery (bootstrap/core kubernetes_pod_list.hpp), as pure functions over
// strings: which answers are PodLists, which pods are contact points.

#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/bootstrap/kubernetes_pod_list.hpp"

using namespace troupe;
using namespace troupe::bootstrap;

namespace {

// One item: name, phase, podIP, deletionTimestamp ("" leaves it out) and the
// ports member of its container (raw JSON, "" for none).
std::string pod(std::string_view name, std::string_view phase,
                std::string_view ip, std::string_view ports = "",
                std::string_view deletion = "") {
  auto del = deletion.empty()
               ? std::string{}
               : fmt::format(R"(,"deletionTimestamp":"{}")", deletion);
  auto ports_member
    = ports.empty() ? std::string{} : fmt::format(R"(,"ports":{})", ports);
  auto ip_member = ip.empty() ? std::string{}
                              : fmt::format(R"(,"podIP":"{}","podIPs":)"
                                            R"([{{"ip":"{}"}}])",
                                            ip, ip);
  return fmt::format(
    R"({{"metadata":{{"name":"{}","namespace":"default","labels":)"
    R"({{"app":"troupe"}}{}}},"spec":{{"containers":[{{"name":"node",)"
    R"("image":"troupe-demo:dev"{}}}]}},"status":{{"phase":"{}"{}}}}})",
    name, del, ports_member, phase, ip_member);
}

std::string list_of(std::string items) {
  return fmt::format(R"({{"kind":"PodList","apiVersion":"v1","metadata":)"
                     R"({{"resourceVersion":"42"}},"items":[{}]}})",
                     items);
}

const std::string mgmt
  = R"([{"name":"cluster","containerPort":2552,"protocol":"TCP"},)"
    R"({"name":"management","containerPort":8558,"protocol":"TCP"}])";

std::string points_of(std::string_view json, uint16_t fallback = 0) {
  auto list = parse_kubernetes_pod_list(json);
  REQUIRE(list);
  auto sel = select_contact_points(*list, "management", fallback);
  std::string out;
  for (const auto& p : sel.contact_points)
    out += (out.empty() ? "" : " ") + to_string(p);
  return out;
}

} // namespace

TEST_CASE("pod list: a PodList decodes with its resourceVersion and every "
          "field discovery reads") {
  auto list = parse_kubernetes_pod_list(list_of(
    pod("troupe-0", "Running", "10.0.0.5", mgmt, "2026-01-01T00:00:00Z")));
  REQUIRE(list);
  CHECK(list->resource_version == "42");
  REQUIRE(list->items.size() == 1);
  auto& p = list->items[0];
  CHECK(p.name == "troupe-0");
  CHECK(p.phase == "Running");
  CHECK(p.pod_ip == "10.0.0.5");
  CHECK(p.deletion_timestamp == "2026-01-01T00:00:00Z");
  REQUIRE(p.ports.size() == 2);
  CHECK(p.ports[1] == kubernetes_container_port{"management", 8558, "TCP"});
}

TEST_CASE("pod list: answers that are not PodLists => bad_discovery_answer "
          "naming what is wrong") {
  using row = std::tuple<const char*, std::string, const char*>;
  auto [what, body, expected]
    = GENERATE(table<const char*, std::string, const char*>({
      row{"not JSON", "<html>Bad Gateway</html>", "malformed JSON at offset 0"},
      row{"truncated", R"({"kind":"PodList","items":[)", "malformed JSON"},
      row{"an array", "[]", "not a JSON object"},
      row{"a Status", R"({"kind":"Status","code":500})",
          "kind is \"Status\", not \"PodList\""},
      row{"no kind", R"({"items":[]})", "kind is missing"},
      row{"no items", R"({"kind":"PodList","metadata":{}})",
          "items is missing"},
      row{"items an object", R"({"kind":"PodList","items":{}})",
          "items is not an array"},
      row{"an item not an object", R"({"kind":"PodList","items":[3]})",
          "items[0] is not an object"},
      row{"an item without a name",
          R"({"kind":"PodList","items":[{"metadata":{}}]})",
          "items[0].metadata.name is missing"},
      row{"a phase number",
          R"({"kind":"PodList","items":[{"metadata":{"name":"a"},)"
          R"("status":{"phase":1}}]})",
          "items[0].status.phase is not a string"},
      row{"containers an object",
          R"({"kind":"PodList","items":[{"metadata":{"name":"a"},)"
          R"("spec":{"containers":{}}}]})",
          "items[0].spec.containers is not an array"},
      row{"a port of 70000",
          list_of(pod("a", "Running", "10.0.0.1",
                      R"([{"name":"management","containerPort":70000}])")),
          "items[0].spec.containers[0].ports[0].containerPort is not an "
          "integer in 1..65535"},
      row{"a port as a string",
          list_of(pod("a", "Running", "10.0.0.1",
                      R"([{"name":"management","containerPort":"8558"}])")),
          "containerPort is not an integer"},
    }));
  INFO(what);
  auto list = parse_kubernetes_pod_list(body);
  REQUIRE_FALSE(list);
  CHECK(list.error().category == "bootstrap");
  CHECK(list.error().code == static_cast<uint8_t>(errc::bad_discovery_answer));
  CHECK_THAT(list.error().message, Catch::Contains(expected));
  CHECK_THAT(list.error().message, Catch::StartsWith("PodList: "));
}

TEST_CASE("pod list: an empty list and items null are no contact points, "
          "not errors") {
  CHECK(points_of(list_of("")).empty());
  CHECK(points_of(R"({"kind":"PodList","items":null})").empty());
}

TEST_CASE("pod list: which pods are contact points") {
  using row
    = std::tuple<const char*, std::string, uint16_t, const char*, const char*>;
  auto [what, items, fallback, points, excluded] = GENERATE(
    table<const char*, std::string, uint16_t, const char*, const char*>({
      row{"Running with the port", pod("a", "Running", "10.0.0.1", mgmt), 0,
          "10.0.0.1:8558", ""},
      row{"Pending", pod("a", "Pending", "10.0.0.1", mgmt), 0, "",
          "a (phase Pending)"},
      row{"Failed", pod("a", "Failed", "10.0.0.1", mgmt), 0, "",
          "a (phase Failed)"},
      row{"Succeeded", pod("a", "Succeeded", "10.0.0.1", mgmt), 0, "",
          "a (phase Succeeded)"},
      row{"no IP yet", pod("a", "Running", "", mgmt), 0, "",
          "a (no status.podIP)"},
      row{"terminating", pod("a", "Running", "10.0.0.1", mgmt, "2026-x"), 0, "",
          "a (being deleted since 2026-x)"},
      row{"no port named management, no fallback",
          pod("a", "Running", "10.0.0.1",
              R"([{"name":"http","containerPort":80}])"),
          0, "", "a (no TCP container port named management"},
      row{"no port named management, fallback 9000",
          pod("a", "Running", "10.0.0.1",
              R"([{"name":"http","containerPort":80}])"),
          9000, "10.0.0.1:9000", ""},
      row{"no ports at all, fallback", pod("a", "Running", "10.0.0.1"), 8558,
          "10.0.0.1:8558", ""},
      row{"the named port is UDP",
          pod("a", "Running", "10.0.0.1",
              R"([{"name":"management","containerPort":8558,)"
              R"("protocol":"UDP"}])"),
          0, "", "a (no TCP container port named management"},
      row{"a Running pod with the port wins over the fallback",
          pod("a", "Running", "10.0.0.1", mgmt), 9000, "10.0.0.1:8558", ""},
      row{"IPv6 pod IP", pod("a", "Running", "fd00::5", mgmt), 0,
          "[fd00::5]:8558", ""},
      row{"sorted, each pod once, others left out",
          pod("c", "Running", "10.0.0.3", mgmt) + ","
            + pod("a", "Running", "10.0.0.1", mgmt) + ","
            + pod("b", "Pending", "", mgmt) + ","
            + pod("d", "Running", "10.0.0.1", mgmt),
          0, "10.0.0.1:8558 10.0.0.3:8558", "b (phase Pending)"},
    }));
  INFO(what);
  auto list = parse_kubernetes_pod_list(list_of(items));
  REQUIRE(list);
  auto sel = select_contact_points(*list, "management", fallback);
  std::string got;
  for (const auto& p : sel.contact_points)
    got += (got.empty() ? "" : " ") + to_string(p);
  CHECK(got == points);
  std::string why;
  for (const auto& e : sel.excluded)
    why += (why.empty() ? "" : "; ") + e;
  if (std::string_view{excluded}.empty())
    CHECK(why.empty());
  else
    CHECK_THAT(why, Catch::StartsWith(excluded));
}

TEST_CASE("pod list: readiness is not looked at (a Running pod that is not "
          "Ready is a contact point)") {
  auto body = list_of(
    R"({"metadata":{"name":"a"},"spec":{"containers":[{"name":"node",)"
    R"("ports":[{"name":"management","containerPort":8558}]}]},)"
    R"("status":{"phase":"Running","podIP":"10.0.0.1","conditions":)"
    R"([{"type":"Ready","status":"False"}],"containerStatuses":[{"name":)"
    R"("node","ready":false}]}})");
  CHECK(points_of(body) == "10.0.0.1:8558");
}
