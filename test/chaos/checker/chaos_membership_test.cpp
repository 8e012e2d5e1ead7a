// I4's membership checks (chaos_membership.hpp) on planted histories of
// five nodes: a run that ends as one cluster passes; one that ends as two
// clusters, with a live node left out, with a member not up, or with two
// incarnations fails naming the nodes and their views; two clusters at
// once in a quiet period fail, and a restart, a partition or slow links in
// progress is not a quiet period. views.jsonl is written with the driver's
// own writer (driver/view_log.hpp), nemesis.jsonl as the driver writes it;
// times are seconds from run_start.

#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "chaos_checker.hpp"
#include "chaos_membership.hpp"
#include "chaos_test_clock.hpp"
#include "chaos_timeline.hpp"
#include "view_log.hpp"

using namespace troupe;
using namespace troupe::chaos;

namespace {

using test_clock::ns;

std::string address(int node, int start = 1) {
  return fmt::format("10.77.0.{}:2552#{}{}", node, node, start);
}

std::string node_name(int node) {
  return fmt::format("node-{}", node);
}

uint64_t pid_of(int node, int start = 1) {
  return static_cast<uint64_t>(100 * start + node);
}

// Members `nodes` (start 1) with `status`, reachable.
std::vector<view_member> members(std::vector<int> nodes,
                                 const char* status = "up") {
  std::vector<view_member> out;
  for (auto n : nodes)
    out.push_back({address(n), status, true});
  return out;
}

// Five nodes started at once (quiet_after 3 s), the nemesis from 5 s to
// 30 s without a fault, the probe at 32 s, the end at 40 s.
struct five_nodes {
  std::vector<std::pair<double, std::string>> nemesis;
  std::vector<std::pair<double, std::string>> views;
  std::map<std::string, std::string> history;

  five_nodes() {
    op(0, "run_start",
       R"("seed":7,"nodes":5,"mechanism":"netns","duration_s":25,)"
       R"("quiet_after_ms":3000)");
    for (int n = 1; n <= 5; ++n)
      started(0.01 * n, n, 1);
    op(5, "nemesis_start");
    op(30, "nemesis_end");
    op(32, "probe_start");
    op(40, "run_end");
  }

  void op(double s, const char* name, const std::string& fields = "") {
    nemesis.emplace_back(s,
                         fmt::format(R"({{"mono_ns":{},"op":"{}"{}{}}})", ns(s),
                                     name, fields.empty() ? "" : ",", fields));
  }

  std::string proc(int node, int start = 1) {
    return fmt::format(R"("node":"{}","pid":{})", node_name(node),
                       pid_of(node, start));
  }

  // node_start and the history file's first line.
  void started(double s, int node, int start) {
    op(s, "node_start",
       proc(node, start) + fmt::format(R"(,"start":{})", start));
    history[fmt::format("{}.{}.jsonl", node_name(node), start)] = fmt::format(
      R"({{"mono_ns":{},"node":"{}","address":"{}","event":"node_started"}})"
      "\n",
      ns(s + 0.1), node_name(node), address(node, start));
  }

  void killed(double s, int node, int start = 1) {
    op(s, "kill", proc(node, start));
    op(s + 0.01, "node_exit", proc(node, start) + R"(,"status":"killed")");
  }

  // `node`'s answer in `round` (asked at `s`, answered 20 ms later).
  void view(double s, uint64_t round, int node, std::vector<view_member> ms,
            std::optional<std::string> incarnation = std::nullopt,
            int start = 1) {
    view_sample v{ns(s),
                  ns(s + 0.02),
                  round,
                  s > 32,
                  node_name(node),
                  pid_of(node, start),
                  static_cast<uint64_t>(start),
                  members_answer{address(node, start), std::move(incarnation),
                                 std::move(ms)},
                  {}};
    views.emplace_back(s, view_line(v));
  }

  void no_view(double s, uint64_t round, int node, std::string error) {
    view_sample v{ns(s),           ns(s + 0.9),  round, s > 32,
                  node_name(node), pid_of(node), 1,     {},
                  std::move(error)};
    views.emplace_back(s, view_line(v));
  }

  // Every node of `nodes` sees `seen` in `round` at `s`.
  void round(double s, uint64_t round, std::vector<int> nodes,
             std::vector<int> seen) {
    for (auto n : nodes)
      view(s, round, n, members(seen));
  }

  static std::string text(std::vector<std::pair<double, std::string>> lines) {
    std::stable_sort(lines.begin(), lines.end(),
                     [](auto& a, auto& b) { return a.first < b.first; });
    std::string out;
    for (auto& [s, l] : lines)
      out += l.ends_with('\n') ? l : l + "\n";
    return out;
  }

  chaos_report check() const {
    chaos_input in;
    in.history = history;
    in.nemesis_jsonl = text(nemesis);
    in.views_jsonl = text(views);
    return check_run(in);
  }
};

// A copy: the report may be a temporary.
demo::verdict::check named(const chaos_report& r, std::string_view n) {
  auto i = std::find_if(r.verdict.checks.begin(), r.verdict.checks.end(),
                        [&](auto& c) { return c.name == n; });
  REQUIRE(i != r.verdict.checks.end());
  return *i;
}

const char* final_check = "I4 one membership view";
const char* quiet_check = "I4 no two clusters when quiet";

std::string problems(const demo::verdict::check& c) {
  std::string out;
  for (auto& p : c.problems)
    out += p + "\n";
  return out;
}

} // namespace

TEST_CASE("chaos I4: a run that ends as one cluster passes") {
  five_nodes run;
  run.round(10, 1, {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  run.round(11, 2, {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  run.round(35, 3, {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  auto r = run.check();
  auto end = named(r, final_check);
  auto quiet = named(r, quiet_check);
  INFO(render(r));
  CHECK(end.ok);
  CHECK(quiet.ok);
  CHECK(end.summary
        == "final round 3 at +35.000s: 5 live nodes, each a member of the "
           "one view {node-1.1 up, node-2.1 up, node-3.1 up, node-4.1 up, "
           "node-5.1 up}");
  CHECK(r.summary.view_samples == 15);
  CHECK(r.summary.view_rounds == 3);
  CHECK(r.summary.final_live == 5);
  CHECK(r.summary.quiet_rounds == 3);
  CHECK(r.summary.quiet_periods == 1);
  CHECK_THAT(render(r), Catch::Contains("membership views: 15 samples in 3 "
                                        "rounds, 3 rounds judged in 1 quiet "
                                        "period"));
}

TEST_CASE("chaos I4: a run that ends as two clusters {A,B} | {C,D,E} fails, "
          "naming both and their views") {
  five_nodes run;
  run.round(10, 1, {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  run.round(35, 2, {1, 2}, {1, 2});
  run.round(35, 2, {3, 4, 5}, {3, 4, 5});
  auto r = run.check();
  auto end = named(r, final_check);
  INFO(problems(end));
  CHECK_FALSE(end.ok);
  REQUIRE(end.problems.size() == 1);
  CHECK(end.problems[0]
        == "views.jsonl line 6: the live nodes do not share one view (2 "
           "clusters): node-1.1 and node-2.1 see {node-1.1 up, node-2.1 up}; "
           "node-3.1, node-4.1 and node-5.1 see {node-3.1 up, node-4.1 up, "
           "node-5.1 up}");
  // The end is quiet too: two clusters at once there as well.
  CHECK_FALSE(named(r, quiet_check).ok);
  // Located at the first answer of the round, which the timeline marks.
  auto at = std::find_if(r.offenses.begin(), r.offenses.end(),
                         [](auto& o) { return o.check == final_check; });
  REQUIRE(at != r.offenses.end());
  CHECK(at->at.file == "views.jsonl");
  CHECK(at->at.line == 6);
  CHECK_THAT(render_timeline(r.history, at->at),
             Catch::Contains(">> +35.020s node-1 view round=2 final "
                             "{node-1.1 up, node-2.1 up}\n   +35.020s node-2 "
                             "view round=2 final {node-1.1 up, node-2.1 up}"));
}

TEST_CASE("chaos I4: a live node left out of the view at the end fails") {
  five_nodes run;
  SECTION("it has not joined: its view is empty") {
    run.round(35, 1, {1, 2, 3, 4}, {1, 2, 3, 4});
    run.view(35, 1, 5, {});
    auto end = named(run.check(), final_check);
    INFO(problems(end));
    CHECK_FALSE(end.ok);
    CHECK_THAT(problems(end),
               Catch::Contains("node-5.1 sees {}")
                 && Catch::Contains("views.jsonl line 5: node-5.1 "
                                    "(10.77.0.5:2552#51) is outside: its "
                                    "view {} does not list it as a member"));
  }
  SECTION("it gave no view") {
    run.round(35, 1, {1, 2, 3, 4}, {1, 2, 3, 4});
    run.no_view(35, 1, 5, "GET http://10.77.0.5:8558/cluster/members: timeout");
    auto end = named(run.check(), final_check);
    CHECK_FALSE(end.ok);
    CHECK_THAT(problems(end),
               Catch::Contains("node-5.1 (pid 105) gave no view in the final "
                               "round: GET http://10.77.0.5:8558/cluster/"
                               "members: timeout"));
  }
  SECTION("the round did not ask it") {
    run.round(35, 1, {1, 2, 3, 4}, {1, 2, 3, 4});
    auto end = named(run.check(), final_check);
    CHECK_FALSE(end.ok);
    CHECK_THAT(problems(end),
               Catch::Contains("views.jsonl: node-5.1 (pid 105) was live when "
                               "final round 1 started, but the round has no "
                               "answer of it"));
  }
  SECTION("every view is the same, without it") {
    run.round(35, 1, {1, 2, 3, 4, 5}, {1, 2, 3, 4});
    auto end = named(run.check(), final_check);
    CHECK_FALSE(end.ok);
    CHECK_THAT(problems(end), Catch::Contains("node-5.1 (10.77.0.5:2552#51) is "
                                              "outside"));
  }
}

TEST_CASE("chaos I4: liveness at the end is the driver's records, not the "
          "nodes' word") {
  five_nodes run;
  run.killed(20, 5);
  SECTION("a node killed and not restarted need not answer") {
    run.round(35, 1, {1, 2, 3, 4}, {1, 2, 3, 4});
    auto r = run.check();
    INFO(problems(named(r, final_check)));
    CHECK(named(r, final_check).ok);
    CHECK(r.summary.final_live == 4);
  }
  SECTION("a view that lists it up names a member that is no live process") {
    run.round(35, 1, {1, 2, 3, 4}, {1, 2, 3, 4, 5});
    auto end = named(run.check(), final_check);
    CHECK_FALSE(end.ok);
    CHECK(problems(end)
          == "views.jsonl line 1: every live node lists node-5.1 "
             "(10.77.0.5:2552#51), which is no live process\n");
  }
  SECTION("its restarted process is live and must be in the view") {
    run.started(25, 5, 2);
    run.round(35, 1, {1, 2, 3, 4}, {1, 2, 3, 4});
    auto end = named(run.check(), final_check);
    CHECK_FALSE(end.ok);
    CHECK_THAT(problems(end), Catch::Contains("node-5.2 (pid 205) was live"));
  }
}

TEST_CASE("chaos I4: at the end every member is up and reachable, with one "
          "incarnation") {
  five_nodes run;
  SECTION("a member still joining") {
    for (int n = 1; n <= 5; ++n) {
      auto ms = members({1, 2, 3, 4, 5});
      ms[3].status = "joining";
      run.view(35, 1, n, ms);
    }
    auto end = named(run.check(), final_check);
    CHECK_FALSE(end.ok);
    CHECK(problems(end)
          == "views.jsonl line 1: every live node sees node-4.1 "
             "(10.77.0.4:2552#41) joining, not up\n");
  }
  SECTION("a member unreachable") {
    for (int n = 1; n <= 5; ++n) {
      auto ms = members({1, 2, 3, 4, 5});
      ms[1].reachable = false;
      run.view(35, 1, n, ms);
    }
    auto end = named(run.check(), final_check);
    CHECK_FALSE(end.ok);
    CHECK_THAT(problems(end), Catch::Contains("sees node-2.1 "
                                              "(10.77.0.2:2552#21) "
                                              "unreachable"));
  }
  SECTION("two incarnations over the same members") {
    for (int n = 1; n <= 5; ++n)
      run.view(35, 1, n, members({1, 2, 3, 4, 5}), n <= 2 ? "inc-a" : "inc-b");
    auto end = named(run.check(), final_check);
    CHECK_FALSE(end.ok);
    CHECK_THAT(problems(end), Catch::Contains("(2 clusters)")
                                && Catch::Contains("incarnation inc-a")
                                && Catch::Contains("incarnation inc-b"));
  }
  SECTION("one incarnation everywhere passes") {
    for (int n = 1; n <= 5; ++n)
      run.view(35, 1, n, members({1, 2, 3, 4, 5}), "inc-a");
    CHECK(named(run.check(), final_check).ok);
  }
}

TEST_CASE("chaos I4: two clusters at once in a quiet period fail, though the "
          "run ends as one") {
  five_nodes run;
  run.round(10, 1, {1, 2}, {1, 2});
  run.round(10, 1, {3, 4, 5}, {3, 4, 5});
  run.round(35, 2, {1, 2, 3, 4, 5}, {1, 2, 3, 4, 5});
  auto r = run.check();
  CHECK(named(r, final_check).ok);
  auto quiet = named(r, quiet_check);
  CHECK_FALSE(quiet.ok);
  CHECK(problems(quiet)
        == "views.jsonl line 1: round 1 at +10.000s, quiet since +3.050s: 2 "
           "clusters at once: node-1.1 and node-2.1 see {node-1.1 up, "
           "node-2.1 up}; node-3.1, node-4.1 and node-5.1 see {node-3.1 up, "
           "node-4.1 up, node-5.1 up}\n");
  CHECK(quiet.summary == "1 quiet round with two clusters at once");
}

TEST_CASE("chaos I4: a restart, a partition or slow links in progress is not "
          "a quiet period") {
  five_nodes run;
  SECTION("node-3 restarted 2 s before (quiet_after is 3 s)") {
    run.killed(7.9, 3);
    run.started(8, 3, 2);
  }
  // The faults start more than quiet_after before the round: only their
  // being active keeps it from being quiet.
  SECTION("a partition held from 6 s to 15 s") {
    run.op(6, "partition",
           R"("id":1,"kind":"symmetric","from":["node-1","node-2"],)"
           R"("to":["node-3","node-4","node-5"],"mechanism":"netns")");
    run.op(15, "heal", R"("id":1)");
  }
  SECTION("slow links from 6 s to 16 s") {
    run.op(6, "links_slow",
           R"("node":"node-3","delay_ms":1500,"mechanism":"netns")");
    run.op(16, "links_fast", R"("node":"node-3")");
  }
  SECTION("node-4 paused from 6 s to 12 s") {
    run.op(6, "pause", run.proc(4));
    run.op(12, "resume", run.proc(4));
  }
  run.round(10, 1, {1, 2}, {1, 2});
  run.round(10, 1, {3, 4, 5}, {3, 4, 5});
  auto r = run.check();
  INFO(problems(named(r, quiet_check)));
  CHECK(named(r, quiet_check).ok);
  CHECK(r.summary.quiet_rounds == 0);
}

TEST_CASE("chaos I4: in a quiet period a transient difference is fine, two "
          "incarnations are not") {
  five_nodes run;
  SECTION("one member joining in some views, a node not joined yet") {
    auto ms = members({1, 2, 3, 4, 5});
    ms[4].status = "joining";
    run.round(10, 1, {1, 2}, {1, 2, 3, 4, 5});
    run.view(10, 1, 3, ms);
    run.view(10, 1, 4, members({1, 2, 3, 4}));
    run.view(10, 1, 5, {});
    auto r = run.check();
    INFO(problems(named(r, quiet_check)));
    CHECK(named(r, quiet_check).ok);
    CHECK(r.summary.quiet_rounds == 1);
  }
  SECTION("the same members under two incarnations") {
    for (int n = 1; n <= 5; ++n)
      run.view(10, 1, n, members({1, 2, 3, 4, 5}), n == 1 ? "x" : "y");
    auto quiet = named(run.check(), quiet_check);
    CHECK_FALSE(quiet.ok);
    CHECK_THAT(problems(quiet), Catch::Contains("2 clusters at once: node-1.1 "
                                                "sees {node-1.1 up"));
  }
}

TEST_CASE("chaos I4: quiet periods follow the node events") {
  five_nodes run;
  run.killed(10, 2);
  run.started(14, 2, 2);
  run.op(20, "etcd_stop"); // not a node event
  run.op(21, "majority_restart", R"("nodes":["node-1","node-3","node-4"])");
  chaos_input in;
  in.nemesis_jsonl = five_nodes::text(run.nemesis);
  auto h = parse_run(in);
  INFO(h.problems.size());
  CHECK(h.problems.empty());
  auto periods = quiet_periods(h);
  REQUIRE(periods.size() == 3);
  // After the starts; after the restart at 14 s (the kill to its restart
  // is a fault); after the majority_restart marker, to run_end.
  CHECK(periods[0].from_ns == ns(3.05));
  CHECK(periods[0].to_ns == ns(10));
  CHECK(periods[1].from_ns == ns(17));
  CHECK(periods[1].to_ns == ns(21));
  CHECK(periods[2].from_ns == ns(24));
  CHECK(periods[2].to_ns == ns(40));
  auto lives = process_lives(h);
  REQUIRE(lives.size() == 6);
  CHECK(lives[1].node == "node-2");
  CHECK(lives[1].to_ns == ns(10));
  CHECK(lives[5].start == 2);
  CHECK(lives[5].from_ns == ns(14));
}
