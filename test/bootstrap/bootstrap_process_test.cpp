#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "troupe/bootstrap/bootstrap_process.hpp"
#include "troupe/bootstrap/errc.hpp"

using namespace std::chrono_literals;
using namespace troupe::bootstrap;
using troupe::runtime::unique_address;

namespace {

const timestamp t0 = timestamp{1h};

// Node "x": contact point x:8558, cluster address x:2552#<uid>.
contact_point cp(char name) {
  return contact_point{std::string(1, name), 8558};
}

unique_address node(char name, uint64_t uid = 1) {
  return unique_address{std::string(1, name), 2552, uid};
}

seed_nodes_answer none_from(char name, uint64_t uid = 1) {
  return seed_nodes_answer{node(name, uid), {}};
}

seed_nodes_answer cluster_from(char name, std::string members) {
  seed_nodes_answer a{node(name), {}};
  for (char m : members)
    a.seed_nodes.push_back(seed_node{node(m), "up", {}});
  return a;
}

bootstrap_settings settings(size_t required = 3) {
  bootstrap_settings s;
  s.method = discovery_method::config;
  s.config_contact_points = {cp('a')};
  s.required_contact_point_nr = required;
  return s;
}

// What a scripted world answers. `answer(name, now)`: nullopt = the probe
// fails (no answer from that contact point).
struct script {
  std::function<std::vector<contact_point>(timestamp)> discovered;
  std::function<std::optional<seed_nodes_answer>(char, timestamp)> answer;
  /// Probe round trip.
  timespan latency = 10ms;
  /// Discovery fails at these times (per call).
  std::function<bool(timestamp)> discovery_fails
    = [](timestamp) { return false; };
};

struct decision {
  std::string what; // "join_self" or "join a,b"
  timespan at;
};

struct run_result {
  std::vector<decision> decisions;
  std::vector<bootstrap_status> statuses;
  bootstrap_process process;
};

std::string render(const join_seed_nodes& j) {
  std::string out = "join ";
  for (size_t i = 0; i < j.seeds.size(); ++i)
    out += (i ? "," : "") + j.seeds[i].host;
  return out;
}

// Drives `p` for `duration`, answering its effects from `s`.
run_result run(char self, bootstrap_settings cfg, const script& s,
               timespan duration = 20s, planted_bug bug = planted_bug::none,
               uint64_t self_uid = 1) {
  run_result r{{}, {}, bootstrap_process{node(self, self_uid), cfg, bug}};
  // Pending probe answers: (due, id, contact point name).
  std::multimap<timestamp, std::pair<uint64_t, char>> pending;
  std::function<void(std::vector<bootstrap_effect>, timestamp)> handle;
  handle = [&](std::vector<bootstrap_effect> fx, timestamp now) {
    for (auto& e : fx) {
      if (auto* d = std::get_if<discover>(&e)) {
        (void)d;
        if (s.discovery_fails(now))
          handle(r.process.on_discovery_failed(
                   troupe::runtime::make_error(errc::discovery_unavailable,
                                               "scripted failure"),
                   now),
                 now);
        else
          handle(r.process.on_discovered(s.discovered(now), now), now);
      } else if (auto* p = std::get_if<probe>(&e)) {
        pending.emplace(now + s.latency,
                        std::make_pair(p->id, p->point.host[0]));
      } else if (auto* j = std::get_if<join_seed_nodes>(&e)) {
        r.decisions.push_back({render(*j), now - t0});
      } else if (std::holds_alternative<join_self>(e)) {
        r.decisions.push_back({"join_self", now - t0});
      } else if (auto* st = std::get_if<status_changed>(&e)) {
        r.statuses.push_back(st->status);
      }
    }
  };
  handle(r.process.start(t0), t0);
  for (auto now = t0; now <= t0 + duration; now += 50ms) {
    while (!pending.empty() && pending.begin()->first <= now) {
      auto [id, name] = pending.begin()->second;
      auto at = pending.begin()->first;
      pending.erase(pending.begin());
      if (auto a = s.answer(name, at))
        handle(r.process.on_probe_answer(id, *a, at), at);
      else
        handle(
          r.process.on_probe_failed(
            id, troupe::runtime::make_error(errc::probe_failed, "refused"), at),
          at);
    }
    if (auto due = r.process.next_tick(); due && *due <= now)
      handle(r.process.tick(now), now);
  }
  return r;
}

std::vector<contact_point> points(std::string names) {
  std::vector<contact_point> out;
  for (char c : names)
    out.push_back(cp(c));
  return out;
}

script all_alone(std::string names) {
  return script{
    [names](timestamp) { return points(names); },
    [](char name, timestamp) { return std::optional{none_from(name)}; }};
}

} // namespace

TEST_CASE("bootstrap: {a,b,c} discovered, none in a cluster, a lowest => a "
          "founds once, after stable_margin") {
  auto r = run('a', settings(3), all_alone("abc"));
  REQUIRE(r.decisions.size() == 1);
  CHECK(r.decisions[0].what == "join_self");
  // stable_margin 5s from the first discovery at t0.
  CHECK(r.decisions[0].at >= 5s);
  CHECK(r.decisions[0].at <= 5s + 100ms);
  CHECK(r.process.status().reason == wait_reason::joining);
}

TEST_CASE("bootstrap: the join decision table") {
  using row = std::tuple<std::string, char, size_t, std::string, std::string,
                         std::string, wait_reason>;
  // name, self, required, discovered, answers (see below), expected
  // decision ("" none), expected final wait reason.
  auto [name, self, required, discovered, answers, expected, reason]
    = GENERATE(table<std::string, char, size_t, std::string, std::string,
                     std::string, wait_reason>({
      row{"lowest of 3 founds", 'a', 3, "abc", ". . .", "join_self",
          wait_reason::joining},
      row{"not the lowest waits", 'b', 3, "abc", ". . .", "",
          wait_reason::not_lowest},
      row{"too few contact points", 'a', 3, "ab", ". .", "",
          wait_reason::too_few_contact_points},
      row{"one silent contact point blocks founding", 'a', 3, "abc", ". . x",
          "", wait_reason::not_all_probed},
      row{"a silent lowest: nobody founds", 'b', 3, "abc", "x . .", "",
          wait_reason::not_all_probed},
      row{"self not discovered never founds", 'a', 2, "bc", ". .", "",
          wait_reason::self_not_discovered},
      row{"a cluster reported: join it", 'a', 3, "abc", ". bc .", "join b,c",
          wait_reason::joining},
      row{"required 5, 3 discovered: waits", 'c', 5, "abc", "x . .", "",
          wait_reason::too_few_contact_points},
      row{"two clusters reported: the first is joined and kept", 'a', 2, "abcd",
          ". b cd cd", "join b", wait_reason::joining},
      row{"required 1, alone: founds", 'a', 1, "a", ".", "join_self",
          wait_reason::joining},
    }));
  CAPTURE(name);
  // answers: one space-separated token per discovered contact point:
  // "." not in a cluster, "x" silent, else the members of its cluster.
  std::map<char, std::optional<seed_nodes_answer>> by_name;
  std::vector<std::string> tokens;
  for (size_t at = 0; at < answers.size();) {
    auto end = answers.find(' ', at);
    if (end == std::string::npos)
      end = answers.size();
    tokens.push_back(answers.substr(at, end - at));
    at = end + 1;
  }
  REQUIRE(tokens.size() == discovered.size());
  for (size_t i = 0; i < discovered.size(); ++i) {
    char d = discovered[i];
    if (tokens[i] == ".")
      by_name[d] = none_from(d);
    else if (tokens[i] == "x")
      by_name[d] = std::nullopt;
    else
      by_name[d] = cluster_from(d, tokens[i]);
  }
  script s{[discovered](timestamp) { return points(discovered); },
           [&](char n, timestamp) { return by_name.at(n); }};
  auto r = run(self, settings(required), s);
  if (expected.empty()) {
    CHECK(r.decisions.empty());
  } else {
    REQUIRE(r.decisions.size() == 1);
    CHECK(r.decisions[0].what == expected);
  }
  CHECK(r.process.status().reason == reason);
}

TEST_CASE("bootstrap: a reported cluster is joined at once, before "
          "stable_margin") {
  script s{[](timestamp) { return points("abc"); },
           [](char n, timestamp) {
             return std::optional{n == 'c' ? cluster_from('c', "c")
                                           : none_from(n)};
           }};
  auto r = run('a', settings(3), s);
  REQUIRE(r.decisions.size() == 1);
  CHECK(r.decisions[0].what == "join c");
  CHECK(r.decisions[0].at < 1s);
}

TEST_CASE("bootstrap: new_cluster_enabled = false never founds, joins a "
          "cluster that appears") {
  auto cfg = settings(3);
  cfg.new_cluster_enabled = false;
  script s{[](timestamp) { return points("abc"); },
           [](char n, timestamp now) {
             if (n == 'b' && now >= t0 + 12s)
               return std::optional{cluster_from('b', "b")};
             return std::optional{none_from(n)};
           }};
  auto r = run('a', cfg, s);
  REQUIRE(r.decisions.size() == 1);
  CHECK(r.decisions[0].what == "join b");
  CHECK(r.decisions[0].at >= 12s);
  bool saw_disabled = false;
  for (const auto& st : r.statuses)
    saw_disabled
      = saw_disabled || st.reason == wait_reason::new_cluster_disabled;
  CHECK(saw_disabled);
}

TEST_CASE("bootstrap: a change of the discovered set restarts stable_margin") {
  // c appears at 3s: the set {a,b,c} is stable from 3s, founding at >= 8s.
  script s{[](timestamp now) { return points(now >= t0 + 3s ? "abc" : "ab"); },
           [](char n, timestamp) { return std::optional{none_from(n)}; }};
  auto r = run('a', settings(2), s);
  REQUIRE(r.decisions.size() == 1);
  CHECK(r.decisions[0].what == "join_self");
  CHECK(r.decisions[0].at >= 8s);
  CHECK(r.decisions[0].at <= 8s + 100ms);
}

TEST_CASE("bootstrap: a failing discovery blocks founding until it answers "
          "again") {
  auto s = all_alone("abc");
  s.discovery_fails
    = [](timestamp now) { return now >= t0 + 2s && now < t0 + 9s; };
  auto r = run('a', settings(3), s);
  REQUIRE(r.decisions.size() == 1);
  CHECK(r.decisions[0].at >= 9s);
  bool saw_failing = false;
  for (const auto& st : r.statuses)
    saw_failing = saw_failing || st.reason == wait_reason::discovery_failing;
  CHECK(saw_failing);
}

TEST_CASE("bootstrap: answers older than probing_failure_timeout do not "
          "count") {
  // c answers until 1s, then is silent: by 5s its answer is stale.
  script s{[](timestamp) { return points("abc"); },
           [](char n, timestamp now) -> std::optional<seed_nodes_answer> {
             if (n == 'c' && now > t0 + 1s)
               return std::nullopt;
             return none_from(n);
           }};
  auto r = run('a', settings(3), s);
  CHECK(r.decisions.empty());
  CHECK(r.process.status().reason == wait_reason::not_all_probed);
  CHECK(r.process.status().detail.find("c:8558") != std::string::npos);
}

TEST_CASE("bootstrap: slow probes (2s round trip) still count and the lowest "
          "founds") {
  auto s = all_alone("abc");
  s.latency = 2s;
  auto r = run('a', settings(3), s);
  REQUIRE(r.decisions.size() == 1);
  CHECK(r.decisions[0].what == "join_self");
}

TEST_CASE("bootstrap: probes slower than probing_failure_timeout never "
          "found") {
  auto s = all_alone("abc");
  s.latency = 4s;
  auto r = run('a', settings(3), s, 30s);
  CHECK(r.decisions.empty());
}

TEST_CASE("bootstrap: sent to a cluster that vanished, it joins the one "
          "reported now") {
  script s{[](timestamp) { return points("abcd"); },
           [](char n, timestamp now) -> std::optional<seed_nodes_answer> {
             if (now < t0 + 3s)
               return n == 'b' ? cluster_from('b', "b") : none_from(n);
             if (n == 'b')
               return std::nullopt;
             return n == 'd' ? cluster_from('d', "cd") : none_from(n);
           }};
  auto r = run('a', settings(2), s);
  REQUIRE(r.decisions.size() == 2);
  CHECK(r.decisions[0].what == "join b");
  CHECK(r.decisions[1].what == "join c,d");
}

TEST_CASE("bootstrap: sent to a cluster that vanished while two are "
          "reported, it joins the larger") {
  script s{[](timestamp) { return points("abcde"); },
           [](char n, timestamp now) -> std::optional<seed_nodes_answer> {
             if (n == 'b')
               return now < t0 + 3s ? std::optional{cluster_from('b', "b")}
                                    : std::nullopt;
             if (n == 'c' && now >= t0 + 1s)
               return cluster_from('c', "c");
             if ((n == 'd' || n == 'e') && now >= t0 + 1s)
               return cluster_from(n, "de");
             return none_from(n);
           }};
  auto r = run('a', settings(2), s);
  REQUIRE(r.decisions.size() == 2);
  CHECK(r.decisions[0].what == "join b");
  CHECK(r.decisions[1].what == "join d,e");
}

TEST_CASE("bootstrap: a cluster reported with other seeds of the same "
          "cluster is not joined again") {
  script s{[](timestamp) { return points("abc"); },
           [](char n, timestamp now) -> std::optional<seed_nodes_answer> {
             if (n == 'b')
               return cluster_from('b', now < t0 + 2s ? "b" : "bc");
             if (n == 'c')
               return now < t0 + 2s ? none_from('c') : cluster_from('c', "bc");
             return none_from(n);
           }};
  auto r = run('a', settings(3), s);
  REQUIRE(r.decisions.size() == 1);
  CHECK(r.decisions[0].what == "join b");
}

TEST_CASE("bootstrap: its own answer never makes it join itself as a seed") {
  // a is already up in its own cluster (a restart raced with its probe).
  script s{[](timestamp) { return points("ab"); },
           [](char n, timestamp) {
             return std::optional{n == 'a' ? cluster_from('a', "a")
                                           : none_from(n)};
           }};
  auto r = run('a', settings(2), s);
  for (const auto& d : r.decisions)
    CHECK(d.what.find("join a") == std::string::npos);
}

TEST_CASE("bootstrap: an answer from this node's old incarnation is not "
          "this node") {
  // The contact point a:8558 still answers with uid 1; this is uid 2.
  auto r = run('a', settings(2), all_alone("ab"), 20s, planted_bug::none, 2);
  CHECK(r.decisions.empty());
  CHECK(r.process.status().reason == wait_reason::self_not_discovered);
}

TEST_CASE("bootstrap: once a member, nothing more is asked") {
  bootstrap_process p{node('a'), settings(2)};
  auto fx = p.start(t0);
  REQUIRE_FALSE(fx.empty());
  fx = p.on_discovered(points("ab"), t0);
  CHECK(p.next_tick().has_value());
  p.on_member();
  CHECK(p.done());
  CHECK_FALSE(p.next_tick().has_value());
  CHECK(p.tick(t0 + 10s).empty());
  CHECK(p.on_discovered(points("abc"), t0 + 10s).empty());
}

TEST_CASE("bootstrap: an answer to an older probe does not replace a newer "
          "one") {
  bootstrap_process p{node('a'), settings(2)};
  (void)p.start(t0);
  auto fx = p.on_discovered(points("ab"), t0);
  uint64_t first_b = 0;
  for (auto& e : fx)
    if (auto* pr = std::get_if<probe>(&e); pr && pr->point == cp('b'))
      first_b = pr->id;
  REQUIRE(first_b != 0);
  fx = p.tick(t0 + 1s);
  uint64_t second_b = 0;
  for (auto& e : fx)
    if (auto* pr = std::get_if<probe>(&e); pr && pr->point == cp('b'))
      second_b = pr->id;
  REQUIRE(second_b != 0);
  (void)p.on_probe_answer(second_b, cluster_from('b', "b"), t0 + 1100ms);
  (void)p.on_probe_answer(first_b, none_from('b'), t0 + 1200ms);
  auto views = p.contact_points();
  REQUIRE(views.size() == 2);
  REQUIRE(views[1].answer.has_value());
  CHECK(views[1].answer->in_cluster());
}

TEST_CASE("bootstrap: the planted bug found_without_all_probed founds with a "
          "silent contact point") {
  script s = all_alone("abc");
  s.answer = [](char n, timestamp) -> std::optional<seed_nodes_answer> {
    if (n == 'c')
      return std::nullopt;
    return none_from(n);
  };
  auto ok = run('a', settings(3), s);
  CHECK(ok.decisions.empty());
  auto buggy
    = run('a', settings(3), s, 20s, planted_bug::found_without_all_probed);
  REQUIRE(buggy.decisions.size() == 1);
  CHECK(buggy.decisions[0].what == "join_self");
}

TEST_CASE("bootstrap: next_tick moves forward: a shell that ticks at it "
          "never spins") {
  bootstrap_process p{node('b'), settings(2)};
  (void)p.start(t0);
  (void)p.on_discovered(points("ab"), t0);
  auto now = t0;
  for (int i = 0; i < 50; ++i) {
    auto due = p.next_tick();
    REQUIRE(due);
    // Each due time is after the last tick (no timer stays due).
    CHECK(*due > now - 1ms);
    now = std::max(now + 1ms, *due);
    (void)p.tick(now);
    auto next = p.next_tick();
    REQUIRE(next);
    CHECK(*next > now);
  }
}
