// Unit tests of the lease demo's pure parts: the node output lines and the
// verdict (PASS, FAIL or setup error) the launcher prints.

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "demo_ledger.hpp"
#include "demo_verdict.hpp"

using namespace std::chrono_literals;
using namespace troupe::demo;

namespace {

node_event acquired(std::string owner, uint64_t token) {
  return {event_kind::acquired, std::move(owner), token, 0, {}};
}

node_event competing(std::string owner) {
  return {event_kind::competing, std::move(owner), 0, 0, "\"demo\""};
}

std::string ledger_line(uint64_t token, const std::string& owner,
                        uint64_t entry, int64_t mono_ns) {
  return format_ledger_record({token, owner, entry, mono_ns});
}

node_report stopped_by_demo(std::string name) {
  return {std::move(name), "exited with code 0", false, "nothing on stderr"};
}

node_report killed_by_demo(std::string name) {
  return {std::move(name), "was killed by signal 9 (Killed)", false,
          "nothing on stderr"};
}

// A clean run: node-1 holds token 1, is killed, node-2 takes over with
// token 2, is killed, node-3 takes over with token 3; all stopped at the
// end.
verdict_input clean_run() {
  verdict_input in;
  in.ttl = 1s;
  in.holder_bound = 12s;
  in.kills_requested = 2;
  in.events
    = {competing("node-1"),   competing("node-2"),   competing("node-3"),
       acquired("node-1", 1), acquired("node-2", 2), acquired("node-3", 3)};
  in.ledger_text
    = ledger_line(1, "node-1", 1, 100) + ledger_line(1, "node-1", 2, 200)
      + ledger_line(2, "node-2", 1, 300) + ledger_line(3, "node-3", 1, 400);
  in.takeovers = {takeover{"node-1", 1, "node-2", 2, 900ms, 2},
                  takeover{"node-2", 2, "node-3", 3, 900ms, 1}};
  in.nodes = {killed_by_demo("node-1"), killed_by_demo("node-2"),
              stopped_by_demo("node-3")};
  return in;
}

// Nodes that exited by themselves before printing anything.
verdict_input failed_start() {
  verdict_input in;
  in.ttl = 2s;
  in.holder_bound = 14s;
  in.kills_requested = 2;
  for (auto name : {"node-1", "node-2", "node-3"})
    in.nodes.push_back({name, "exited with code 2", true,
                        "troupe-demo-node: --ttl: bad duration \"x\""});
  in.ended_early = early_end{"every node had exited after the start", 0};
  return in;
}

// Removes the last acquisition and the last ledger line: the last
// takeover of clean_run() never happened.
void drop_last_holder(verdict_input& in) {
  in.events.pop_back();
  auto& text = in.ledger_text;
  text.erase(text.rfind('\n', text.size() - 2) + 1);
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(), [&](auto& line) {
    return line.find(text) != std::string::npos;
  });
}

std::string render(const verdict& v) {
  std::string result;
  for (auto& line : v.report)
    result += "  " + line + "\n";
  for (auto& line : v.violations)
    result += "  VIOLATION: " + line + "\n";
  if (v.setup_error)
    result += "  setup error: " + *v.setup_error + "\n";
  return result;
}

} // namespace

TEST_CASE("demo events: every node line round-trips, a release is not a "
          "second \"stopped\"") {
  auto ev = GENERATE(
    node_event{event_kind::competing, "node-1", 0, 0, "\"demo\" (pid 7)"},
    node_event{event_kind::acquired, "node-2", 3, 0, ""},
    node_event{event_kind::ledger, "node-2", 3, 5, ""},
    node_event{event_kind::lost, "node-2", 3, 0, "check_alive() turned false"},
    node_event{event_kind::released, "node-3", 4, 0, ""},
    node_event{event_kind::stopped, "node-3", 0, 0, ""});
  auto line = format_node_event(ev);
  INFO(line);
  CHECK(parse_node_event(line) == ev);
  if (ev.kind == event_kind::released) {
    CHECK(line == "node-3: released the lease (fencing token 4)");
    CHECK(line.find("stopped") == std::string::npos);
  }
}

TEST_CASE("demo stderr_tail: the last non-empty lines, joined") {
  using row = std::tuple<std::string, size_t, std::string>;
  auto [text, lines, expected]
    = GENERATE(table<std::string, size_t, std::string>({
      row{"", 3, "nothing on stderr"},
      row{"\n\n  \n", 3, "nothing on stderr"},
      row{"one", 3, "one"},
      row{"a\nb\n\nc\n", 3, "a | b | c"},
      row{"1\n2\n3\n4\n", 3, "2 | 3 | 4"},
      row{"1\n2\n3\n4\r\n", 1, "4"},
      row{std::string(300, 'x') + "\n", 3, std::string(200, 'x')},
    }));
  INFO(text);
  CHECK(stderr_tail(text, lines) == expected);
}

TEST_CASE("demo verdict: a clean run passes") {
  auto v = judge(clean_run());
  INFO(render(v));
  CHECK(v.ok());
  CHECK_FALSE(v.setup_error);
  CHECK(v.exit_code() == 0);
  CHECK(mentions(v.report, "holders: 3 (node-1, node-2, node-3)"));
}

TEST_CASE("demo verdict: nodes that all exited by themselves are a setup "
          "error naming the first and its stderr, not a violation") {
  auto v = judge(failed_start());
  INFO(render(v));
  CHECK(v.violations.empty());
  REQUIRE(v.setup_error);
  CHECK(*v.setup_error
        == "every node process exited: node-1 exited with code 2: "
           "troupe-demo-node: --ttl: bad duration \"x\"");
  CHECK(v.exit_code() == 2);
}

TEST_CASE("demo verdict: no acquisition within the bound is a setup error "
          "saying how far the nodes got") {
  auto in = failed_start();
  for (auto& n : in.nodes)
    n = {n.name, "was killed by signal 15 (Terminated)", false,
         "starting up slowly"};
  in.ended_early = early_end{"no node held the lease within 14.00s", 3};
  SECTION("none announced \"competing\"") {
    auto v = judge(in);
    INFO(render(v));
    CHECK(v.violations.empty());
    REQUIRE(v.setup_error);
    CHECK(*v.setup_error
          == "no node announced \"competing\" within 14.00s (2 * ttl + "
             "10s); node-1 wrote to stderr: starting up slowly");
    CHECK(v.exit_code() == 2);
  }
  SECTION("competing, but nobody acquired") {
    in.events = {competing("node-1"), competing("node-2")};
    auto v = judge(in);
    REQUIRE(v.setup_error);
    CHECK_THAT(*v.setup_error,
               Catch::StartsWith("no node acquired the lease within 14.00s"));
    CHECK(v.exit_code() == 2);
  }
  SECTION("one exited by itself, the others kept running") {
    in.nodes[1] = {"node-2", "exited with code 1", true, "disk full"};
    auto v = judge(in);
    REQUIRE(v.setup_error);
    CHECK(*v.setup_error
          == "no node acquired the lease: node-2 exited with code 1: disk "
             "full");
  }
  SECTION("interrupted: no setup error") {
    in.interrupted = true;
    in.ended_early.reset();
    in.kills_requested = 0;
    auto v = judge(in);
    INFO(render(v));
    CHECK_FALSE(v.setup_error);
    CHECK(v.exit_code() == 0);
  }
}

TEST_CASE("demo verdict: a safety violation is a FAIL even with a setup "
          "error") {
  auto in = failed_start();
  in.events = {acquired("node-1", 1), acquired("node-2", 1)};
  auto v = judge(in);
  INFO(render(v));
  CHECK(v.setup_error);
  CHECK(mentions(v.violations, "token 1 acquired by node-1 and by node-2"));
  CHECK(v.exit_code() == 1);
}

TEST_CASE("demo verdict: a takeover that did not come is a violation only if "
          "another node was running") {
  auto in = clean_run();
  drop_last_holder(in); // node-3 never acquired
  in.takeovers[1].successor.clear();
  in.takeovers[1].successor_token = 0;
  SECTION("one other node running: FAIL") {
    in.takeovers[1].live_others = 1;
    auto v = judge(in);
    INFO(render(v));
    CHECK(v.violations
          == std::vector<std::string>{
            "nobody took over after node-2 (token 2) was killed although 1 "
            "other node was running"});
    CHECK(v.exit_code() == 1);
  }
  SECTION("nobody else running: reported, and the rest of the plan waived") {
    in.takeovers[1].live_others = 0;
    in.nodes[2] = {"node-3", "exited with code 1", true, "crashed"};
    in.nodes.push_back(stopped_by_demo("node-4")); // never took part
    auto v = judge(in);
    INFO(render(v));
    CHECK(v.ok());
    CHECK(v.exit_code() == 0);
    CHECK(mentions(v.report, "nobody could (not a violation)"));
    CHECK(mentions(v.report, "node-3 exited with code 1 before the demo "
                             "stopped it (stderr: crashed)"));
  }
}

TEST_CASE("demo verdict: stopping early is a violation only if a node could "
          "have carried on") {
  auto in = clean_run();
  drop_last_holder(in);
  in.takeovers.pop_back(); // kill 2 never happened
  SECTION("nodes running, no holder: FAIL") {
    in.ended_early = early_end{"no node held the lease within 12.00s before "
                               "kill 2",
                               2};
    auto v = judge(in);
    INFO(render(v));
    CHECK(v.violations
          == std::vector<std::string>{
            "no node held the lease within 12.00s before kill 2 although 2 "
            "nodes were running"});
  }
  SECTION("only the holder left: reported, not FAIL") {
    in.ended_early = early_end{"node-2 is the only node left running, so "
                               "kill 2 was skipped (nobody could take over)",
                               0};
    in.nodes[2] = {"node-3", "was killed by signal 9 (Killed)", true,
                   "nothing on stderr"};
    auto v = judge(in);
    INFO(render(v));
    CHECK(v.ok());
    CHECK_FALSE(v.setup_error); // node-2 was still running at the end
    CHECK(mentions(v.report, "kill 2 was skipped"));
  }
  SECTION("no reason given: the missing kill is a violation") {
    auto v = judge(in);
    INFO(render(v));
    CHECK(mentions(v.violations, "only 1 of 2 kills were carried out"));
  }
}

TEST_CASE("demo verdict: a holder that lost the lease on its own is reported, "
          "not a violation") {
  auto in = clean_run();
  // node-1 lost token 1 under load before the first kill; node-2 got
  // token 2 and was killed, node-3 took over.
  in.events.insert(
    in.events.begin() + 4,
    node_event{event_kind::lost, "node-1", 1, 0, "check_alive() turned false"});
  in.takeovers = {takeover{"node-2", 2, "node-3", 3, 900ms, 1},
                  takeover{"node-3", 3, "node-1", 4, 900ms, 1}};
  in.events.push_back(acquired("node-1", 4));
  in.nodes = {stopped_by_demo("node-1"), killed_by_demo("node-2"),
              killed_by_demo("node-3")};
  auto v = judge(in);
  INFO(render(v));
  CHECK(v.ok());
  CHECK(mentions(v.report, "node-1 lost token 1 without a kill or a freeze"));
}

TEST_CASE("demo verdict: the freeze") {
  auto in = clean_run();
  in.freeze_requested = true;
  SECTION("replaced and reported the loss: PASS") {
    in.freeze = takeover{"node-3", 3, "node-1", 4, 1s, 1};
    in.events.push_back(acquired("node-1", 4));
    in.events.push_back(
      {event_kind::lost, "node-3", 3, 0, "check_alive() turned false"});
    auto v = judge(in);
    INFO(render(v));
    CHECK(v.ok());
    CHECK_FALSE(mentions(v.report, "without a kill or a freeze"));
  }
  SECTION("never reported the loss: FAIL") {
    in.freeze = takeover{"node-3", 3, "node-1", 4, 1s, 1};
    in.events.push_back(acquired("node-1", 4));
    auto v = judge(in);
    CHECK(mentions(v.violations, "never reported the loss"));
  }
  SECTION("nobody took over although one could: FAIL") {
    in.freeze = takeover{"node-3", 3, "", 0, 0s, 1};
    auto v = judge(in);
    CHECK(mentions(v.violations, "nobody took over after node-3 (token 3) "
                                 "was frozen although 1 other node was "
                                 "running"));
  }
  SECTION("nobody could take over: reported") {
    in.freeze = takeover{"node-3", 3, "", 0, 0s, 0};
    auto v = judge(in);
    INFO(render(v));
    CHECK(v.ok());
  }
  SECTION("never frozen, no reason: FAIL") {
    auto v = judge(in);
    CHECK(mentions(v.violations, "the holder was never frozen"));
  }
}
