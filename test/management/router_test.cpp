// The management router over a fake source: paths, methods, bodies, the
// token, error mapping, and the JSON shapes (parsed back, field by field).

#include <catch2/catch.hpp>

#include <rapidjson/document.h>

#include "troupe/management/errc.hpp"
#include "troupe/management/router.hpp"

using namespace troupe;
using namespace troupe::management;

namespace {

struct fake_source : management_source {
  members_view view;
  std::optional<shards_view> accounts;
  runtime::error fail_next; // returned by the next read or apply
  std::vector<std::pair<member_operation, std::string>> applied;
  health is_ready{true, {}};
  health is_alive{true, {}};

  template <class T>
  runtime::expected<T> or_fail(T x) const {
    if (fail_next)
      return fail_next;
    return x;
  }

  runtime::expected<members_view> members() const override {
    return or_fail(view);
  }
  runtime::expected<std::optional<shards_view>>
  shards(std::string_view type) const override {
    if (fail_next)
      return fail_next;
    return type == "accounts" ? accounts : std::optional<shards_view>{};
  }
  runtime::expected<std::vector<singleton_view>> singletons() const override {
    return or_fail(std::vector<singleton_view>{
      {"scheduler", std::string{"10.0.0.2:2552#7"}, false, 12},
      {"idle", std::nullopt, false, std::nullopt},
    });
  }
  runtime::expected<std::vector<lease_view>> leases() const override {
    return or_fail(std::vector<lease_view>{
      {"scheduler", "node-b", 12, false, std::chrono::milliseconds{15000}}});
  }
  health ready() const override {
    return is_ready;
  }
  health alive() const override {
    return is_alive;
  }
  runtime::expected<std::string> metrics_text() const override {
    return or_fail(std::string{"troupe_cluster_members{status=\"up\"} 3\n"});
  }
  runtime::error apply(member_operation op,
                       const std::string& address) override {
    if (fail_next)
      return fail_next;
    bool known = false;
    for (auto& m : view.members)
      known = known || m.address == address
              || m.address.substr(0, m.address.rfind('#')) == address;
    if (!known)
      return runtime::make_error(errc::unknown_member,
                                 "no member " + address + " in the view");
    applied.emplace_back(op, address);
    return {};
  }
  std::string seed_nodes_json
    = R"({"self_node":"10.0.0.1:2552#1","seed_nodes":[]})";
  runtime::expected<std::string> bootstrap_seed_nodes() const override {
    return or_fail(seed_nodes_json);
  }
  // What set_fault was asked, in order; the faults in force.
  std::vector<fault_request> fault_requests;
  std::vector<fault_view> in_force;
  runtime::expected<std::vector<fault_view>> faults() const override {
    return or_fail(in_force);
  }
  runtime::error set_fault(const fault_request& f) override {
    if (fail_next)
      return fail_next;
    if (f.peer == "10.0.0.1:2552")
      return runtime::make_error(errc::invalid_address,
                                 "10.0.0.1:2552 is this node");
    fault_requests.push_back(f);
    for (auto d : f.directions) {
      std::erase_if(in_force, [&](const fault_view& v) {
        return v.peer == f.peer && v.direction == d;
      });
      if (f.blackhole || f.delay.count() > 0 || f.drop_probability > 0)
        in_force.push_back(
          {f.peer, d, f.blackhole, f.delay, f.drop_probability});
    }
    return {};
  }
};

fake_source three_members() {
  fake_source s;
  s.view.self = "10.0.0.1:2552#5";
  s.view.leader = "10.0.0.1:2552#5";
  s.view.oldest = "10.0.0.2:2552#7";
  s.view.singleton_target = "10.0.0.1:2552#5";
  s.view.members = {
    {"10.0.0.1:2552#5", "up", {"backend"}, 2, true, "1.1.0"},
    {"10.0.0.2:2552#7", "up", {"backend", "scheduler"}, 1, true, "1.0.0"},
    {"10.0.0.3:2552#9", "leaving", {}, 3, false, "1.0.0"},
  };
  s.view.unreachable = {{"10.0.0.3:2552#9", {"10.0.0.1:2552#5"}}};
  s.accounts = shards_view{
    "accounts",
    {{"10.0.0.1:2552#5", {"1", "7"}, 40}, {"10.0.0.2:2552#7", {"2"}, 3}}};
  return s;
}

http_request get(std::string target) {
  return http_request{"GET", std::move(target), {}, {}, {}};
}

http_request del(std::string target, std::string auth = {}) {
  return http_request{"DELETE", std::move(target), std::move(auth), {}, {}};
}

router_settings with_faults() {
  router_settings s;
  s.fault_injection = true;
  return s;
}

http_request put(std::string target, std::string body,
                 std::string content_type = {}, std::string auth = {}) {
  return http_request{"PUT", std::move(target), std::move(auth),
                      std::move(content_type), std::move(body)};
}

rapidjson::Document parse(const http_response& r) {
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

std::string error_of(const http_response& r) {
  auto doc = parse(r);
  REQUIRE(doc.IsObject());
  REQUIRE(doc.HasMember("error"));
  return doc["error"].GetString();
}

} // namespace

TEST_CASE("management: GET /cluster/members shows self, leader, oldest, "
          "members and unreachable as separate fields") {
  auto src = three_members();
  auto r = handle(src, {}, get("/cluster/members"));
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  auto doc = parse(r);
  CHECK(std::string{doc["self"].GetString()} == "10.0.0.1:2552#5");
  CHECK(std::string{doc["leader"].GetString()} == "10.0.0.1:2552#5");
  CHECK(std::string{doc["oldest"].GetString()} == "10.0.0.2:2552#7");
  CHECK(std::string{doc["singleton_target"].GetString()} == "10.0.0.1:2552#5");
  auto& ms = doc["members"];
  REQUIRE(ms.Size() == 3);
  CHECK(std::string{ms[1]["address"].GetString()} == "10.0.0.2:2552#7");
  CHECK(std::string{ms[1]["status"].GetString()} == "up");
  CHECK(ms[1]["up_number"].GetInt() == 1);
  REQUIRE(ms[1]["roles"].Size() == 2);
  CHECK(std::string{ms[1]["roles"][1].GetString()} == "scheduler");
  CHECK(ms[1]["reachable"].GetBool());
  CHECK_FALSE(ms[2]["reachable"].GetBool());
  CHECK(std::string{ms[0]["app_version"].GetString()} == "1.1.0");
  CHECK(std::string{ms[1]["app_version"].GetString()} == "1.0.0");
  REQUIRE(doc["unreachable"].Size() == 1);
  CHECK(std::string{doc["unreachable"][0]["observed_by"][0].GetString()}
        == "10.0.0.1:2552#5");
  // No leader or oldest yet: null, not an empty string.
  src.view.leader.reset();
  src.view.oldest.reset();
  doc = parse(handle(src, {}, get("/cluster/members?pretty")));
  CHECK(doc["leader"].IsNull());
  CHECK(doc["oldest"].IsNull());
}

TEST_CASE("management: GET /cluster/members shows the cluster incarnation "
          "and the other clusters of this name this node met") {
  auto src = three_members();
  auto doc = parse(handle(src, {}, get("/cluster/members")));
  // Healthy: no merge, nothing foreign; before joining, no incarnation.
  CHECK(doc["incarnation"].IsNull());
  CHECK(doc["merging_into"].IsNull());
  REQUIRE(doc["foreign_clusters"].IsArray());
  CHECK(doc["foreign_clusters"].Size() == 0);
  src.view.incarnation = "00000000000004d2@2023-11-14T22:13:20.000Z";
  src.view.merging_into = "0000000000000abc@2020-09-13T12:26:40.000Z";
  src.view.foreign_clusters = {
    {"0000000000000abc@2020-09-13T12:26:40.000Z", 5, "10.0.0.9:2552#3",
     "2023-11-14T22:13:21.250Z", std::nullopt},
    {"0000000000000007@2020-09-13T12:26:40.000Z", std::nullopt,
     "10.0.0.8:2552#4", "2023-11-14T22:13:22.000Z",
     "0000000000000abc@2020-09-13T12:26:40.000Z"},
  };
  doc = parse(handle(src, {}, get("/cluster/members")));
  CHECK(std::string{doc["incarnation"].GetString()}
        == "00000000000004d2@2023-11-14T22:13:20.000Z");
  CHECK(std::string{doc["merging_into"].GetString()}
        == "0000000000000abc@2020-09-13T12:26:40.000Z");
  auto& fs = doc["foreign_clusters"];
  REQUIRE(fs.Size() == 2);
  CHECK(std::string{fs[0]["incarnation"].GetString()}
        == "0000000000000abc@2020-09-13T12:26:40.000Z");
  CHECK(fs[0]["size"].GetUint64() == 5);
  CHECK(std::string{fs[0]["seen_via"].GetString()} == "10.0.0.9:2552#3");
  CHECK(std::string{fs[0]["last_seen"].GetString()}
        == "2023-11-14T22:13:21.250Z");
  CHECK(fs[0]["merging_into"].IsNull());
  CHECK(fs[1]["size"].IsNull());
  CHECK(std::string{fs[1]["merging_into"].GetString()}
        == "0000000000000abc@2020-09-13T12:26:40.000Z");
}

TEST_CASE("management: one member by address, with or without its uid, "
          "percent-encoded") {
  auto src = three_members();
  auto r = handle(src, {}, get("/cluster/members/10.0.0.2:2552%237"));
  CHECK(r.status == 200);
  CHECK(std::string{parse(r)["address"].GetString()} == "10.0.0.2:2552#7");
  r = handle(src, {}, get("/cluster/members/10.0.0.3:2552"));
  CHECK(r.status == 200);
  CHECK(std::string{parse(r)["status"].GetString()} == "leaving");
  r = handle(src, {}, get("/cluster/members/10.0.0.9:2552"));
  CHECK(r.status == 404);
  CHECK(error_of(r).find("no member 10.0.0.9:2552") != std::string::npos);
  r = handle(src, {}, get("/cluster/members/10.0.0.2%2"));
  CHECK(r.status == 400);
}

TEST_CASE("management: PUT /cluster/members/{address} leaves or downs, with "
          "a form or a JSON body") {
  auto src = three_members();
  struct row {
    std::string body;
    std::string content_type;
    member_operation op;
  };
  auto x = GENERATE(values<row>({
    {"operation=leave", "application/x-www-form-urlencoded",
     member_operation::leave},
    {"operation=Down", "", member_operation::down},
    {"x=1&operation=down", "", member_operation::down},
    {R"({"operation":"leave"})", "application/json", member_operation::leave},
    {R"({"operation":"DOWN"})", "", member_operation::down},
  }));
  auto r = handle(
    src, {}, put("/cluster/members/10.0.0.3:2552%239", x.body, x.content_type));
  INFO(x.body);
  CHECK(r.status == 200);
  REQUIRE(src.applied.size() == 1);
  CHECK(src.applied[0].first == x.op);
  CHECK(src.applied[0].second == "10.0.0.3:2552#9");
  CHECK(std::string{parse(r)["message"].GetString()}.find("10.0.0.3:2552#9")
        != std::string::npos);
}

TEST_CASE("management: bad PUT bodies and unknown members are 4xx naming "
          "the fault, nothing applied") {
  auto src = three_members();
  struct row {
    std::string target;
    std::string body;
    unsigned status;
    std::string says;
  };
  auto x = GENERATE(values<row>({
    {"/cluster/members/10.0.0.3:2552", "operation=restart", 400,
     "unknown operation \"restart\""},
    {"/cluster/members/10.0.0.3:2552", "", 400, "names no operation"},
    {"/cluster/members/10.0.0.3:2552", "op=leave", 400, "names no operation"},
    {"/cluster/members/10.0.0.3:2552", "operation=le%ZZve", 400,
     "broken %-escape"},
    {"/cluster/members/10.0.0.3:2552", "{\"operation\": 5}", 400,
     "no string field \"operation\""},
    {"/cluster/members/10.0.0.3:2552", "{broken", 400,
     "the body is not valid JSON: Missing a name for object member. (at "
     "byte 1)"},
    {"/cluster/members/10.9.9.9:1", "operation=down", 404,
     "no member 10.9.9.9:1"},
  }));
  auto r = handle(src, {}, put(x.target, x.body));
  INFO(x.body);
  CHECK(r.status == x.status);
  CHECK(error_of(r).find(x.says) != std::string::npos);
  CHECK(src.applied.empty());
}

TEST_CASE("management: with a token, PUT needs the bearer token and reads "
          "stay open") {
  auto src = three_members();
  router_settings s;
  s.require_token = true;
  s.token = "s3cret-token-0123";
  auto target = "/cluster/members/10.0.0.3:2552";
  for (std::string auth :
       {"", "Bearer", "Bearer ", "Bearer wrong", "Bearer s3cret-token-012",
        "Bearer s3cret-token-0124", "Basic s3cret-token-0123",
        "bearer s3cret-token-0123"}) {
    INFO(auth);
    auto r = handle(src, s, put(target, "operation=down", {}, auth));
    CHECK(r.status == 401);
    CHECK(error_of(r).find("Authorization: Bearer") != std::string::npos);
    // The token never appears in an answer.
    CHECK(r.body.find("s3cret") == std::string::npos);
  }
  CHECK(src.applied.empty());
  CHECK(handle(src, s, get("/cluster/members")).status == 200);
  auto r = handle(
    src, s, put(target, "operation=down", {}, "Bearer s3cret-token-0123"));
  CHECK(r.status == 200);
  CHECK(src.applied.size() == 1);
  // A configured requirement without a token refuses every PUT.
  s.token.clear();
  CHECK(handle(src, s, put(target, "operation=down", {}, "Bearer ")).status
        == 401);
}

TEST_CASE("management: shards, singletons and leases render their fields") {
  auto src = three_members();
  auto r = handle(src, {}, get("/cluster/shards/accounts"));
  CHECK(r.status == 200);
  auto doc = parse(r);
  CHECK(std::string{doc["type"].GetString()} == "accounts");
  REQUIRE(doc["regions"].Size() == 2);
  CHECK(doc["regions"][0]["shards"].Size() == 2);
  CHECK(doc["regions"][0]["entities"].GetUint64() == 40);
  r = handle(src, {}, get("/cluster/shards/nope"));
  CHECK(r.status == 404);
  CHECK(error_of(r).find("no region of entity type \"nope\"")
        != std::string::npos);
  doc = parse(handle(src, {}, get("/singletons")));
  REQUIRE(doc.Size() == 2);
  CHECK(std::string{doc[0]["host"].GetString()} == "10.0.0.2:2552#7");
  CHECK(doc[0]["fencing_token"].GetUint64() == 12);
  CHECK(doc[1]["host"].IsNull());
  CHECK(doc[1]["fencing_token"].IsNull());
  doc = parse(handle(src, {}, get("/leases")));
  REQUIRE(doc.Size() == 1);
  CHECK(std::string{doc[0]["holder"].GetString()} == "node-b");
  CHECK(doc[0]["ttl_ms"].GetInt64() == 15000);
  CHECK_FALSE(doc[0]["held_here"].GetBool());
}

TEST_CASE("management: probes answer 200 or 503 with the reason, metrics "
          "are Prometheus text, / is the dashboard") {
  auto src = three_members();
  router_settings s;
  s.dashboard_html = "<html>dash</html>";
  CHECK(handle(src, s, get("/ready")).status == 200);
  CHECK(handle(src, s, get("/alive")).status == 200);
  src.is_ready = {false, "this node is joining"};
  auto r = handle(src, s, get("/ready"));
  CHECK(r.status == 503);
  CHECK(std::string{parse(r)["reason"].GetString()} == "this node is joining");
  src.is_alive = {false, "shutting down"};
  CHECK(handle(src, s, get("/alive")).status == 503);
  r = handle(src, s, get("/metrics"));
  CHECK(r.status == 200);
  CHECK(r.content_type.rfind("text/plain; version=0.0.4", 0) == 0);
  CHECK(r.body == "troupe_cluster_members{status=\"up\"} 3\n");
  r = handle(src, s, get("/"));
  CHECK(r.status == 200);
  CHECK(r.content_type.rfind("text/html", 0) == 0);
  CHECK(r.body == "<html>dash</html>");
}

TEST_CASE("management: unknown paths, wrong methods, large bodies and "
          "module errors map to their status") {
  auto src = three_members();
  auto r = handle(src, {}, get("/cluster/nothing"));
  CHECK(r.status == 404);
  CHECK(error_of(r).find("no such path: /cluster/nothing")
        != std::string::npos);
  r = handle(src, {}, put("/cluster/members", "operation=down"));
  CHECK(r.status == 405);
  CHECK(r.allow == "GET, HEAD");
  r = handle(
    src, {},
    http_request{"DELETE", "/cluster/members/10.0.0.3:2552", {}, {}, {}});
  CHECK(r.status == 405);
  CHECK(r.allow == "GET, HEAD, PUT");
  router_settings small;
  small.max_body = 8;
  r = handle(src, small,
             put("/cluster/members/10.0.0.3:2552", "operation=leave"));
  CHECK(r.status == 413);
  CHECK(src.applied.empty());
  src.fail_next = runtime::make_error(errc::unavailable,
                                      "the cluster daemon did not answer "
                                      "within 2s");
  r = handle(src, {}, get("/cluster/members"));
  CHECK(r.status == 503);
  CHECK(error_of(r) == "the cluster daemon did not answer within 2s");
  CHECK(handle(src, {}, get("/leases")).status == 503);
  CHECK(handle(src, {}, get("/metrics")).status == 503);
  src.fail_next = runtime::make_error(errc::invalid_settings, "odd");
  CHECK(handle(src, {}, get("/singletons")).status == 500);
}

TEST_CASE("management: percent_decode and equal_secret") {
  CHECK(percent_decode("a%23b%2Fc") == std::optional<std::string>{"a#b/c"});
  CHECK(percent_decode("plain+text")
        == std::optional<std::string>{"plain+text"});
  CHECK_FALSE(percent_decode("a%2"));
  CHECK_FALSE(percent_decode("a%"));
  CHECK_FALSE(percent_decode("a%G1"));
  CHECK(equal_secret("abc", "abc"));
  CHECK_FALSE(equal_secret("abc", "abd"));
  CHECK_FALSE(equal_secret("abc", "abcd"));
  CHECK(equal_secret("", ""));
}

TEST_CASE("management: /faults is 403 naming the key while fault injection "
          "is off, and nothing is set") {
  auto src = three_members();
  for (auto& req :
       {get("/faults"), put("/faults/10.0.0.2:2552", "blackhole=true"),
        del("/faults/10.0.0.2:2552"), del("/faults")}) {
    INFO(req.method << " " << req.target);
    auto r = handle(src, {}, req);
    CHECK(r.status == 403);
    CHECK(error_of(r).find("management.fault_injection=true")
          != std::string::npos);
  }
  CHECK(src.fault_requests.empty());
}

TEST_CASE("management: PUT /faults/{peer} sets the named fault on the named "
          "directions, from a form or a JSON body") {
  using fd = fault_direction;
  struct row {
    std::string body;
    std::vector<fd> directions;
    bool blackhole;
    int64_t delay_ms;
    double drop;
  };
  auto x = GENERATE(values<row>({
    {"blackhole=true", {fd::inbound, fd::outbound}, true, 0, 0.0},
    {"blackhole=TRUE&direction=inbound", {fd::inbound}, true, 0, 0.0},
    {"direction=outbound&delay_ms=250", {fd::outbound}, false, 250, 0.0},
    {"drop_probability=0.25&direction=both",
     {fd::inbound, fd::outbound},
     false,
     0,
     0.25},
    {R"({"blackhole":true,"direction":"outbound"})",
     {fd::outbound},
     true,
     0,
     0.0},
    {R"({"delay_ms":100,"drop_probability":1})",
     {fd::inbound, fd::outbound},
     false,
     100,
     1.0},
  }));
  auto src = three_members();
  INFO(x.body);
  auto r = handle(src, with_faults(), put("/faults/10.0.0.2%3A2552", x.body));
  CHECK(r.status == 200);
  REQUIRE(src.fault_requests.size() == 1);
  auto& f = src.fault_requests[0];
  CHECK(f.peer == "10.0.0.2:2552");
  CHECK(f.directions == x.directions);
  CHECK(f.blackhole == x.blackhole);
  CHECK(f.delay == std::chrono::milliseconds{x.delay_ms});
  CHECK(f.drop_probability == x.drop);
  CHECK(std::string{parse(r)["message"].GetString()}.find("10.0.0.2:2552")
        != std::string::npos);
}

TEST_CASE("management: a fault on a peer that is no member is set, and the "
          "answer says no member is there") {
  auto src = three_members();
  auto r = handle(src, with_faults(),
                  put("/faults/10.0.0.2:8558", "blackhole=true"));
  CHECK(r.status == 200);
  CHECK(src.fault_requests.size() == 1);
  CHECK_THAT(std::string{parse(r)["message"].GetString()},
             Catch::Contains("no member of this node's view is at "
                             "10.0.0.2:8558"));
  auto member = handle(src, with_faults(),
                       put("/faults/10.0.0.2:2552", "blackhole=true"));
  CHECK_THAT(std::string{parse(member)["message"].GetString()},
             !Catch::Contains("no member"));
}

TEST_CASE("management: bad fault bodies and peers are 4xx naming what was "
          "wrong, and nothing is set") {
  struct row {
    std::string target;
    std::string body;
    unsigned status;
    std::string says;
  };
  auto x = GENERATE(values<row>({
    {"/faults/10.0.0.2:2552", "", 400, "names no fault"},
    {"/faults/10.0.0.2:2552", "direction=inbound", 400, "names no fault"},
    {"/faults/10.0.0.2:2552", "blackhole=yes", 400,
     "blackhole must be true or false, got \"yes\""},
    {"/faults/10.0.0.2:2552", "blackhole=true&direction=sideways", 400,
     "direction must be inbound, outbound or both"},
    {"/faults/10.0.0.2:2552", "delay_ms=-5", 400,
     "delay_ms must be an integer from 0 to 600000"},
    {"/faults/10.0.0.2:2552", "delay_ms=10s", 400, "delay_ms must be"},
    {"/faults/10.0.0.2:2552", "drop_probability=1.5", 400,
     "drop_probability must be a number from 0.0 to 1.0"},
    {"/faults/10.0.0.2:2552", "drop_probability=nan", 400,
     "drop_probability must be"},
    {"/faults/10.0.0.2:2552", "blackhole=true&partition=yes", 400,
     "unknown field \"partition\""},
    {"/faults/10.0.0.2:2552", "blackhole=tr%ZZue", 400, "broken %-escape"},
    {"/faults/10.0.0.2:2552", R"({"blackhole":[true]})", 400,
     "is not a string, number or boolean"},
    {"/faults/10.0.0.2:2552", "{\"blackhole\":", 400,
     "the body is not valid JSON"},
    {"/faults/%ZZ", "blackhole=true", 400, "the peer in the path is malformed"},
    {"/faults/10.0.0.1:2552", "blackhole=true", 400, "is this node"},
  }));
  auto src = three_members();
  INFO(x.target << " " << x.body);
  auto r = handle(src, with_faults(), put(x.target, x.body));
  CHECK(r.status == x.status);
  CHECK(error_of(r).find(x.says) != std::string::npos);
  CHECK(src.fault_requests.empty());
}

TEST_CASE("management: GET /faults lists the faults in force, DELETE heals "
          "one peer or every peer once, changes need the token") {
  auto src = three_members();
  auto s = with_faults();
  REQUIRE(handle(src, s, put("/faults/10.0.0.2:2552", "blackhole=true")).status
          == 200);
  REQUIRE(handle(src, s,
                 put("/faults/10.0.0.3:2552",
                     "direction=outbound&delay_ms=40&drop_probability=0.5"))
            .status
          == 200);
  auto listed = parse(handle(src, s, get("/faults")));
  REQUIRE(listed.IsArray());
  REQUIRE(listed.Size() == 3);
  auto& last = listed[2];
  CHECK(std::string{last["peer"].GetString()} == "10.0.0.3:2552");
  CHECK(std::string{last["direction"].GetString()} == "outbound");
  CHECK_FALSE(last["blackhole"].GetBool());
  CHECK(last["delay_ms"].GetInt64() == 40);
  CHECK(last["drop_probability"].GetDouble() == 0.5);
  CHECK(listed[0]["blackhole"].GetBool());
  // One peer healed (both directions, a healthy request).
  CHECK(handle(src, s, del("/faults/10.0.0.2:2552")).status == 200);
  auto& healed = src.fault_requests.back();
  CHECK(healed.peer == "10.0.0.2:2552");
  CHECK(healed.directions.size() == 2);
  CHECK_FALSE(healed.blackhole);
  CHECK(src.in_force.size() == 1);
  // Every peer: each once.
  REQUIRE(handle(src, s, put("/faults/10.0.0.2:2552", "blackhole=true")).status
          == 200);
  auto before = src.fault_requests.size();
  auto all = handle(src, s, del("/faults"));
  CHECK(all.status == 200);
  CHECK(std::string{parse(all)["message"].GetString()} == "healed 2 peer(s)");
  CHECK(src.fault_requests.size() == before + 2);
  CHECK(src.in_force.empty());
  // Methods.
  auto wrong = handle(
    src, s,
    http_request{"POST", "/faults/10.0.0.2:2552", {}, {}, "blackhole=true"});
  CHECK(wrong.status == 405);
  CHECK(wrong.allow == "PUT, DELETE");
  CHECK(handle(src, s, put("/faults", "blackhole=true")).allow
        == "GET, HEAD, DELETE");
  // With a token: PUT and DELETE need it, GET does not.
  s.require_token = true;
  s.token = "s3cret-token-0123";
  CHECK(handle(src, s, put("/faults/10.0.0.2:2552", "blackhole=true")).status
        == 401);
  CHECK(handle(src, s, del("/faults")).status == 401);
  CHECK(handle(src, s, get("/faults")).status == 200);
  CHECK(handle(src, s,
               put("/faults/10.0.0.2:2552", "blackhole=true", {},
                   "Bearer s3cret-token-0123"))
          .status
        == 200);
}

TEST_CASE("management: only reads of state this node holds are answered "
          "without waiting") {
  struct row {
    std::string method;
    std::string target;
    bool inline_ok;
  };
  auto x = GENERATE(values<row>({
    {"GET", "/", true},
    {"HEAD", "/alive", true},
    {"GET", "/ready?verbose=1", true},
    {"GET", "/cluster/members", true},
    {"GET", "/cluster/members/10.0.0.2:2552", true},
    {"GET", "/faults", true},
    {"PUT", "/cluster/members/10.0.0.2:2552", false},
    {"DELETE", "/faults", false},
    {"GET", "/singletons", false},
    {"GET", "/leases", false},
    {"GET", "/cluster/shards/accounts", false},
    {"GET", "/metrics", false},
    {"GET", "/nowhere", false},
  }));
  INFO(x.method << " " << x.target);
  CHECK(answers_without_waiting(http_request{x.method, x.target, {}, {}, {}})
        == x.inline_ok);
}

TEST_CASE("management: parse_form splits and decodes a form, and names the "
          "first field with a broken escape") {
  auto ok = parse_form("a=1&b%20c=x%2Fy&flag&=v");
  CHECK_FALSE(ok.broken);
  REQUIRE(ok.fields.size() == 4);
  CHECK(ok.fields[0].name == "a");
  CHECK(ok.fields[0].value == "1");
  CHECK(ok.fields[1].name == "b c");
  CHECK(ok.fields[1].value == "x/y");
  CHECK(ok.fields[2].name == "flag");
  CHECK(ok.fields[2].value.empty());
  CHECK(ok.fields[3].name.empty());
  CHECK(ok.fields[3].value == "v");
  auto bad = parse_form("a=1&b=%Z1&c=2");
  REQUIRE(bad.broken);
  CHECK(*bad.broken == "b");
  CHECK(bad.fields.size() == 1);
  CHECK(parse_form("").fields.empty());
}

TEST_CASE("management: GET /bootstrap/seed-nodes serves the source's answer "
          "without a token and takes no other method") {
  auto src = three_members();
  src.seed_nodes_json
    = R"({"self_node":"10.0.0.1:2552#5","seed_nodes":[{"node":)"
      R"("10.0.0.1:2552#5","status":"up","roles":[]}]})";
  router_settings s;
  s.require_token = true;
  s.token = "secret";
  auto r = handle(src, s, get("/bootstrap/seed-nodes"));
  CHECK(r.status == 200);
  CHECK(r.content_type == "application/json");
  CHECK(r.body == src.seed_nodes_json);
  CHECK(answers_without_waiting(get("/bootstrap/seed-nodes")));
  auto p = handle(src, s, put("/bootstrap/seed-nodes", ""));
  CHECK(p.status == 405);
  CHECK(p.allow == "GET, HEAD");
  src.fail_next = runtime::make_error(errc::unavailable, "not started");
  auto u = handle(src, s, get("/bootstrap/seed-nodes"));
  CHECK(u.status == 503);
}
