// views.jsonl end to end: a node's `GET /cluster/members` answer as the
// management router renders it (management/core router.hpp, the code that
// answers on every node) is read by the driver (view_log.hpp), written as
// its line and read back by the checker (chaos_views.hpp) field by field;
// the answer with an `incarnation` and the driver's error lines too.

#include <catch2/catch.hpp>

#include "chaos_views.hpp"
#include "troupe/management/errc.hpp"
#include "troupe/management/router.hpp"
#include "view_log.hpp"

using namespace troupe;
using namespace troupe::chaos;

namespace {

// A node whose management API knows only its members view.
struct members_source : management::management_source {
  management::members_view view;

  static runtime::error none() {
    return runtime::make_error(management::errc::unavailable, "not here");
  }

  runtime::expected<management::members_view> members() const override {
    return view;
  }
  runtime::expected<std::optional<management::shards_view>>
  shards(std::string_view) const override {
    return none();
  }
  runtime::expected<std::vector<management::singleton_view>>
  singletons() const override {
    return none();
  }
  runtime::expected<std::vector<management::lease_view>>
  leases() const override {
    return none();
  }
  management::health ready() const override {
    return {true, {}};
  }
  management::health alive() const override {
    return {true, {}};
  }
  runtime::expected<std::string> metrics_text() const override {
    return none();
  }
  runtime::error apply(management::member_operation,
                       const std::string&) override {
    return none();
  }
  runtime::expected<std::string> bootstrap_seed_nodes() const override {
    return none();
  }
  runtime::expected<std::vector<management::fault_view>>
  faults() const override {
    return none();
  }
  runtime::error set_fault(const management::fault_request&) override {
    return none();
  }
};

// The body a node with `view` answers to GET /cluster/members.
std::string answer_of(const management::members_view& view) {
  members_source node;
  node.view = view;
  auto r
    = management::handle(node, {}, {"GET", "/cluster/members", {}, {}, {}});
  REQUIRE(r.status == 200);
  return r.body;
}

// Three members, one joining and one unreachable down.
management::members_view three_members() {
  management::members_view v;
  v.self = "10.77.0.2:2552#22";
  v.leader = "10.77.0.1:2552#11";
  v.oldest = "10.77.0.1:2552#11";
  v.members = {
    {"10.77.0.1:2552#11", "up", {"dc-default"}, 1, true, "1.0.0"},
    {"10.77.0.2:2552#22", "joining", {}, 0, true, "1.0.0"},
    {"10.77.0.3:2552#33", "down", {}, 2, false, "1.0.0"},
  };
  v.unreachable = {{"10.77.0.3:2552#33", {"10.77.0.1:2552#11"}}};
  return v;
}

std::vector<view_record> read_back(const std::string& text) {
  std::vector<std::string> problems;
  auto xs = parse_views(text, problems);
  INFO(text);
  CHECK(problems.empty());
  return xs;
}

} // namespace

TEST_CASE("views log: a node's real members answer reaches the checker "
          "with every member, its status and reachability") {
  auto parsed = parse_members_answer(answer_of(three_members()));
  REQUIRE(std::holds_alternative<members_answer>(parsed));
  auto& answer = std::get<members_answer>(parsed);
  CHECK(answer.self == "10.77.0.2:2552#22");
  CHECK_FALSE(answer.incarnation);
  CHECK(answer.members
        == std::vector<view_member>{{"10.77.0.1:2552#11", "up", true},
                                    {"10.77.0.2:2552#22", "joining", true},
                                    {"10.77.0.3:2552#33", "down", false}});
  view_sample s{100, 250, 7, true, "node-2", 4242, 3, answer, {}};
  auto xs = read_back(view_line(s));
  REQUIRE(xs.size() == 1);
  auto& r = xs[0];
  CHECK(r.line == 1);
  CHECK(r.sent_ns == 100);
  CHECK(r.mono_ns == 250);
  CHECK(r.round == 7);
  CHECK(r.final);
  CHECK(r.node == "node-2");
  CHECK(r.pid == 4242);
  CHECK(r.start == 3);
  CHECK(r.answered);
  CHECK(r.self == "10.77.0.2:2552#22");
  CHECK(r.incarnation.empty());
  REQUIRE(r.members.size() == 3);
  CHECK(r.members[1] == listed_member{"10.77.0.2:2552#22", "joining", true});
  CHECK(r.members[2] == listed_member{"10.77.0.3:2552#33", "down", false});
  // The down member is on its way out: not in the cluster; the joining
  // node is in it.
  CHECK(r.cluster()
        == std::set<std::string>{"10.77.0.1:2552#11", "10.77.0.2:2552#22"});
  CHECK(r.in_cluster());
}

TEST_CASE("views log: an answer's incarnation, a string or a number, is "
          "kept, and a node not yet joined has an empty view") {
  auto body = answer_of(three_members());
  auto with = [&](const std::string& field) {
    auto b = body;
    b.insert(1, field + ",");
    return b;
  };
  for (auto [field, want] :
       {std::pair{std::string{R"("incarnation":"c1f2e3")"}, "c1f2e3"},
        std::pair{std::string{R"("incarnation":981234)"}, "981234"}}) {
    auto parsed = parse_members_answer(with(field));
    REQUIRE(std::holds_alternative<members_answer>(parsed));
    auto& a = std::get<members_answer>(parsed);
    REQUIRE(a.incarnation);
    CHECK(*a.incarnation == want);
    auto xs = read_back(view_line({1, 2, 1, false, "node-2", 9, 1, a, {}}));
    REQUIRE(xs.size() == 1);
    CHECK(xs[0].incarnation == want);
  }
  auto none = parse_members_answer(with(R"("incarnation":null)"));
  REQUIRE(std::holds_alternative<members_answer>(none));
  CHECK_FALSE(std::get<members_answer>(none).incarnation);
  management::members_view alone;
  alone.self = "10.77.0.4:2552#44";
  auto fresh = parse_members_answer(answer_of(alone));
  REQUIRE(std::holds_alternative<members_answer>(fresh));
  auto xs = read_back(view_line(
    {1, 2, 1, false, "node-4", 9, 1, std::get<members_answer>(fresh), {}}));
  REQUIRE(xs.size() == 1);
  CHECK(xs[0].answered);
  CHECK(xs[0].members.empty());
  CHECK_FALSE(xs[0].in_cluster());
}

TEST_CASE("views log: a node that gave no view is a line with the error") {
  view_sample s{
    10,    910,          3,
    false, "node-5",     77,
    2,     std::nullopt, "GET http://10.77.0.5:8558/cluster/members: timeout"};
  auto xs = read_back(view_line(s));
  REQUIRE(xs.size() == 1);
  CHECK_FALSE(xs[0].answered);
  CHECK(xs[0].error == s.error);
  CHECK(xs[0].node == "node-5");
  CHECK(xs[0].round == 3);
}

TEST_CASE("views log: an answer that is not a members view is named") {
  using row = std::pair<std::string, std::string>;
  auto [body, why] = GENERATE(table<std::string, std::string>({
    row{"<html>", "not JSON"},
    row{"[]", "not a JSON object"},
    row{R"({"members":[]})", "no string \"self\""},
    row{R"({"self":"a:1#2"})", "no array \"members\""},
    row{R"({"self":"a:1#2","members":[{"address":"b:1#3"}]})",
        "members[0] has no string \"status\""},
    row{R"({"self":"a:1#2","members":[3]})", "members[0] is not an object"},
    row{R"({"self":"a:1#2","members":[],"incarnation":[1]})",
        "\"incarnation\" is neither a string nor a number"},
    row{R"({"self":"a:1#2","members":[{"address":"b","status":"up",)"
        R"("reachable":"yes"}]})",
        "members[0]'s \"reachable\" is not a boolean"},
  }));
  auto parsed = parse_members_answer(body);
  REQUIRE(std::holds_alternative<std::string>(parsed));
  INFO(std::get<std::string>(parsed));
  CHECK(std::get<std::string>(parsed).find(why) != std::string::npos);
}

TEST_CASE("views log: the checker names a malformed line of views.jsonl") {
  using row = std::pair<std::string, std::string>;
  auto [line, why] = GENERATE(table<std::string, std::string>({
    row{"not json", "views.jsonl line 1: not JSON"},
    row{"[1]", "views.jsonl line 1: not a JSON object"},
    row{std::string(100000, '['), "views.jsonl line 1: not JSON"},
    row{R"({"mono_ns":5,"sent_ns":9,"round":1,"final":false,"node":"n",)"
        R"("pid":1,"start":1,"error":"x"})",
        "sent_ns 9 is after mono_ns 5"},
    row{R"({"mono_ns":0,"sent_ns":0,"round":1,"final":false,"node":"n",)"
        R"("pid":1,"start":1,"error":"x"})",
        "mono_ns 0 is not a CLOCK_MONOTONIC stamp"},
    row{R"({"mono_ns":5,"sent_ns":1,"round":1,"final":"no","node":"n",)"
        R"("pid":1,"start":1,"error":"x"})",
        "field \"final\" has the wrong type"},
    row{R"({"mono_ns":5,"sent_ns":1,"round":1,"final":false,"node":"n",)"
        R"("pid":1,"start":1,"self":"a","members":[{"address":"b"}]})",
        "members[0]: field \"status\" missing"},
    row{R"({"mono_ns":5,"sent_ns":1,"round":1,"final":false,"node":"n",)"
        R"("pid":1,"start":1,"members":[]})",
        "field \"self\" missing"},
  }));
  std::vector<std::string> problems;
  auto xs = parse_views(line + "\n", problems);
  CHECK(xs.empty());
  REQUIRE(problems.size() == 1);
  INFO(problems[0]);
  CHECK(problems[0].find(why) != std::string::npos);
}
