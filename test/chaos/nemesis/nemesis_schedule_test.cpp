// The nemesis schedule: deterministic per seed, a minority faulty at most,
// every kind over a long run, holds and quiet gaps after the timing rules,
// clear errors for bad inputs.

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "troupe/chaos/nemesis_schedule.hpp"

using namespace troupe::chaos;
using namespace std::chrono_literals;
using std::chrono::milliseconds;

namespace {

nemesis_schedule make(const nemesis_inputs& in) {
  auto s = make_schedule(in);
  INFO((s ? std::string{} : s.error().message));
  REQUIRE(s);
  return *s;
}

nemesis_inputs inputs(uint64_t seed, milliseconds duration) {
  nemesis_inputs in;
  in.seed = seed;
  in.duration = duration;
  return in;
}

/// One fault as the steps tell it: its start step, (but for lease_delete)
/// its end step, and the steps between (a slow_restart's links_slow and
/// restart).
struct fault {
  nemesis_step start;
  std::optional<nemesis_step> end;
  std::vector<nemesis_step> middle;

  milliseconds until() const {
    return end ? end->at : start.at;
  }

  bool is_etcd() const {
    return start.op == step_op::etcd_stop || start.op == step_op::etcd_slow
           || start.op == step_op::lease_delete;
  }

  bool is_majority_restart() const {
    return start.op == step_op::kill && start.nodes.size() > 1;
  }

  bool is_slow_restart() const {
    return end && end->op == step_op::links_fast;
  }

  bool is_partition() const {
    return start.op == step_op::partition;
  }

  /// The nodes this fault makes faulty: the killed or paused nodes, a
  /// partition's smaller side.
  std::vector<std::string> faulty() const {
    if (start.op == step_op::partition)
      return start.nodes.size() < start.to.size() ? start.nodes : start.to;
    return is_etcd() ? std::vector<std::string>{} : start.nodes;
  }

  /// Whether this fault runs at some instant of [from, to).
  bool overlaps(milliseconds from, milliseconds to) const {
    return start.at < to && from < until();
  }
};

std::vector<fault> faults_of(const nemesis_schedule& s) {
  std::map<uint32_t, std::vector<nemesis_step>> by_number;
  for (auto& step : s.steps)
    by_number[step.fault].push_back(step);
  std::vector<fault> out;
  for (auto& [n, steps] : by_number) {
    fault f{steps.front(), std::nullopt, {}};
    if (steps.size() > 1)
      f.end = steps.back();
    f.middle.assign(steps.begin() + 1,
                    steps.end() - (steps.size() > 1 ? 1 : 0));
    INFO(render(f.start));
    CHECK(f.end.has_value() == (f.start.op != step_op::lease_delete));
    CHECK(f.middle.size() == (f.is_slow_restart() ? 2u : 0u));
    out.push_back(f);
  }
  return out;
}

step_op end_op_of(step_op start) {
  switch (start) {
    case step_op::kill:
      return step_op::restart;
    case step_op::pause:
      return step_op::resume;
    case step_op::partition:
      return step_op::heal;
    case step_op::etcd_stop:
      return step_op::etcd_start;
    default:
      return step_op::etcd_fast;
  }
}

/// A slow_restart: kill and links_slow at once, the restart after a kill's
/// hold, links_fast at least `slow_links.min` later; no partition runs
/// meanwhile.
void check_slow_restart(const fault& f, const std::vector<fault>& all,
                        const nemesis_schedule& s) {
  auto& r = s.rules;
  nemesis_timing t;
  REQUIRE(f.middle.size() == 2);
  auto& slow = f.middle[0];
  auto& restart = f.middle[1];
  CHECK(f.start.nodes.size() == 1);
  CHECK(slow.op == step_op::links_slow);
  CHECK(slow.at == f.start.at);
  CHECK(slow.delay >= t.link_delay_min);
  CHECK(slow.delay <= t.link_delay_max);
  CHECK(restart.op == step_op::restart);
  for (auto* step : {&slow, &restart, &*f.end})
    CHECK(step->nodes == f.start.nodes);
  CHECK(restart.at - f.start.at >= r.kill.min);
  CHECK(restart.at - f.start.at <= r.kill.max);
  CHECK(f.end->at - restart.at >= r.slow_links.min);
  for (auto& g : all)
    if (g.is_partition()) {
      INFO("partition " << render(g.start));
      CHECK_FALSE(g.overlaps(f.start.at, f.until()));
    }
}

/// A majority_restart: a majority but not every node, killed and
/// restarted together after a kill's hold, and no other node fault from
/// its start until `recovery` after its restart.
void check_majority_restart(const fault& f, const std::vector<fault>& all,
                            const nemesis_schedule& s, size_t nodes) {
  auto& r = s.rules;
  CHECK(f.start.nodes.size() >= majority_of(nodes));
  CHECK(f.start.nodes.size() < nodes);
  CHECK(f.end->nodes == f.start.nodes);
  auto hold = f.until() - f.start.at;
  CHECK(hold >= r.kill.min);
  CHECK(hold <= r.kill.max);
  for (auto& g : all)
    if (!g.is_etcd() && g.start.at != f.start.at) {
      INFO("node fault " << render(g.start));
      CHECK_FALSE(g.overlaps(f.start.at, f.until() + r.recovery));
    }
}

/// Checks every rule of make_schedule on `s`.
void check_rules(const nemesis_schedule& s, size_t nodes) {
  INFO(render(s));
  auto& r = s.rules;
  auto minority = minority_of(nodes);
  auto faults = faults_of(s);
  // Ordered steps within [0, duration].
  for (size_t i = 0; i < s.steps.size(); ++i) {
    CHECK(s.steps[i].at >= 0ms);
    CHECK(s.steps[i].at <= s.duration);
    if (i > 0)
      CHECK(s.steps[i - 1].at <= s.steps[i].at);
  }
  for (auto& f : faults) {
    INFO(render(f.start));
    if (f.is_slow_restart()) {
      check_slow_restart(f, faults, s);
      continue;
    }
    if (f.is_majority_restart()) {
      check_majority_restart(f, faults, s, nodes);
      continue;
    }
    if (f.end) {
      CHECK(f.end->op == end_op_of(f.start.op));
      CHECK(f.end->nodes
            == (f.start.op == step_op::partition ? std::vector<std::string>{}
                                                 : f.start.nodes));
      CHECK(f.end->id == f.start.id);
    }
    auto hold = f.until() - f.start.at;
    switch (f.start.op) {
      case step_op::kill:
        CHECK(f.start.nodes.size() == 1);
        CHECK(hold >= r.kill.min);
        CHECK(hold <= r.kill.max);
        break;
      case step_op::pause:
        CHECK(f.start.nodes.size() == 1);
        CHECK(hold > s.rules.downed); // stable_after + detection
        CHECK(hold >= r.pause.min);
        CHECK(hold <= r.pause.max);
        break;
      case step_op::partition: {
        CHECK(hold > s.rules.downed);
        CHECK(hold >= r.partition.min);
        CHECK(hold <= r.partition.max);
        CHECK(f.start.nodes.size() + f.start.to.size() == nodes);
        auto side = f.faulty().size();
        CHECK(side >= 1);
        CHECK(side <= minority);
        CHECK(f.start.id >= 1);
        break;
      }
      case step_op::etcd_stop:
      case step_op::etcd_slow:
        CHECK(hold >= r.etcd.min);
        CHECK(hold <= r.etcd.max);
        break;
      default:
        CHECK(hold == 0ms);
    }
  }
  // At every fault's start: the faulty nodes at that instant are at most a
  // minority (a majority_restart alone aside), distinct, and at most one
  // etcd fault runs.
  for (auto& f : faults) {
    std::multiset<std::string> faulty;
    size_t etcd = 0;
    for (auto& g : faults) {
      if (g.start.at <= f.start.at && f.start.at < g.until()
          && !g.is_majority_restart()) {
        for (auto& n : g.faulty())
          faulty.insert(n);
        etcd += g.is_etcd() ? 1 : 0;
      }
    }
    INFO("at " << render(f.start));
    CHECK(faulty.size() <= minority);
    CHECK(std::set<std::string>(faulty.begin(), faulty.end()).size()
          == faulty.size());
    CHECK(etcd <= 1);
  }
  // A fault that starts when none runs starts at least `recovery` after
  // the last one ended (the first one `recovery` after the start).
  milliseconds last_end{0};
  for (size_t i = 0; i < faults.size(); ++i) {
    auto& f = faults[i];
    // Faults are numbered in the order of their starts.
    bool running = false;
    for (size_t j = 0; j < i; ++j)
      running = running || f.start.at < faults[j].until();
    if (!running) {
      INFO(render(f.start));
      CHECK(f.start.at - last_end >= r.recovery);
    }
    last_end = std::max(last_end, f.until());
  }
}

} // namespace

TEST_CASE("nemesis schedule: the same seed and inputs give the same "
          "schedule") {
  auto in = inputs(42, 10min);
  auto a = make(in);
  auto b = make(in);
  CHECK(a.steps == b.steps);
  CHECK(render(a) == render(b));
  CHECK(a.steps.size() > 20);
}

TEST_CASE("nemesis schedule: different seeds give different schedules") {
  std::vector<std::vector<nemesis_step>> seen;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto steps = make(inputs(seed, 5min)).steps;
    INFO("seed " << seed);
    CHECK(std::find(seen.begin(), seen.end(), steps) == seen.end());
    seen.push_back(std::move(steps));
  }
}

TEST_CASE("nemesis schedule: at most a minority faulty, holds and gaps "
          "after the rules, over 300 seeds of 10 minutes") {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    INFO("seed " << seed);
    check_rules(make(inputs(seed, 10min)), 5);
  }
}

TEST_CASE("nemesis schedule: the rules hold for 3 and 7 nodes and without "
          "overlaps") {
  auto nodes = GENERATE(3u, 7u);
  auto overlap = GENERATE(0u, 100u);
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    INFO("seed " << seed << ", " << nodes << " nodes, overlap " << overlap);
    auto in = inputs(seed, 10min);
    in.nodes = default_nodes(nodes);
    in.overlap_percent = overlap;
    check_rules(make(in), nodes);
  }
}

TEST_CASE("nemesis schedule: every fault kind and both asymmetric "
          "directions appear over 30 minutes") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    auto s = make(inputs(seed, 30min));
    std::set<std::string> ops;
    bool minority_from = false;
    bool minority_to = false;
    bool two_node_partition = false;
    for (auto& step : s.steps) {
      ops.insert(to_string(step.op));
      if (step.op != step_op::partition)
        continue;
      std::string kind = to_string(step.partition);
      ops.insert(kind);
      bool from_small = step.nodes.size() < step.to.size();
      if (kind == "asymmetric")
        (from_small ? minority_from : minority_to) = true;
      two_node_partition = two_node_partition
                           || std::min(step.nodes.size(), step.to.size()) == 2;
    }
    for (auto op :
         {"kill", "restart", "pause", "resume", "partition", "heal",
          "etcd_stop", "etcd_start", "etcd_slow", "etcd_fast", "lease_delete",
          "symmetric", "asymmetric", "links_slow", "links_fast"})
      CHECK(ops.count(op) == 1);
    auto faults = faults_of(s);
    CHECK(std::any_of(faults.begin(), faults.end(),
                      [](auto& f) { return f.is_majority_restart(); }));
    CHECK(std::any_of(faults.begin(), faults.end(),
                      [](auto& f) { return f.is_slow_restart(); }));
    CHECK(minority_from);
    CHECK(minority_to);
    CHECK(two_node_partition);
  }
}

TEST_CASE("nemesis schedule: majority restarts and slow restarts keep their "
          "rules beside partitions, over 200 seeds") {
  auto nodes = GENERATE(3u, 5u);
  size_t majority = 0;
  size_t slow = 0;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    INFO("seed " << seed << ", " << nodes << " nodes");
    auto in = inputs(seed, 5min);
    in.nodes = default_nodes(nodes);
    in.kinds = {fault_kind::majority_restart, fault_kind::slow_restart,
                fault_kind::partition_symmetric, fault_kind::kill};
    auto s = make(in);
    check_rules(s, nodes);
    for (auto& f : faults_of(s)) {
      majority += f.is_majority_restart() ? 1 : 0;
      slow += f.is_slow_restart() ? 1 : 0;
    }
  }
  CHECK(majority >= 200);
  CHECK(slow >= 200);
}

TEST_CASE("nemesis schedule: etcd faults sometimes overlap node faults") {
  size_t overlaps = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto faults = faults_of(make(inputs(seed, 30min)));
    for (auto& f : faults)
      for (auto& g : faults)
        if (f.is_etcd() && !g.is_etcd() && g.start.at <= f.start.at
            && f.start.at < g.until())
          ++overlaps;
  }
  CHECK(overlaps > 0);
}

TEST_CASE("nemesis schedule: a short run of 2 minutes has several faults") {
  auto s = make(inputs(1, 2min));
  INFO(render(s));
  CHECK(faults_of(s).size() >= 4);
  check_rules(s, 5);
}

TEST_CASE("nemesis schedule: only the enabled kinds are drawn") {
  auto in = inputs(7, 10min);
  in.kinds = {fault_kind::pause, fault_kind::etcd_slow};
  auto s = make(in);
  for (auto& step : s.steps) {
    INFO(render(step));
    CHECK((step.op == step_op::pause || step.op == step_op::resume
           || step.op == step_op::etcd_slow || step.op == step_op::etcd_fast));
    if (step.op == step_op::etcd_slow) {
      CHECK(step.delay >= in.timing.etcd_delay_min);
      CHECK(step.delay <= in.timing.etcd_delay_max);
    }
  }
  CHECK(s.steps.size() > 4);
}

TEST_CASE("nemesis schedule: the rules follow from the timing") {
  nemesis_timing t; // the demo's: heartbeat 200ms, pause 1s, ...
  auto r = rules_of(t);
  REQUIRE(r);
  // phi 8, min_std_deviation 100ms: mean 200ms + pause 1s + y * 100ms.
  CHECK(r->detection > 1400ms);
  CHECK(r->detection < 1800ms);
  CHECK(r->downed == r->detection + t.stable_after);
  CHECK(r->removal_margin == 3500ms);
  CHECK(r->recovery == r->downed + 3500ms + 3000ms + 1000ms);
  CHECK(r->pause.min == r->downed + t.slack); // downed > ttl 3s
  CHECK(r->partition.min == r->downed + t.slack);
  CHECK(r->etcd.min == 4000ms);
  // downed + 1.5s + 5 gossip rounds of 200ms + slack 1s.
  CHECK(r->quiet_after == r->downed + 3500ms);
  CHECK(r->slow_links.min == r->downed + t.slack);
  CHECK(r->slow_links.max == 2 * r->slow_links.min);
  CHECK(r->hold(fault_kind::majority_restart).min == r->kill.min);
  CHECK(r->hold(fault_kind::slow_restart).min
        == r->kill.min + r->slow_links.min);
  t.lease_ttl = 10s;
  r = rules_of(t);
  REQUIRE(r);
  CHECK(r->pause.min == 11s); // a pause outlasts the lease
}

TEST_CASE("nemesis schedule: bad inputs are errors that name them") {
  using row = std::tuple<std::string, std::function<void(nemesis_inputs&)>>;
  auto [what, change]
    = GENERATE(table<std::string, std::function<void(nemesis_inputs&)>>({
      row{"0 nodes", [](auto& in) { in.nodes.clear(); }},
      row{"duration 10.000s is too short", [](auto& in) { in.duration = 10s; }},
      row{"node name \"node-2\" appears twice",
          [](auto& in) { in.nodes[0] = "node-2"; }},
      row{"an empty node name", [](auto& in) { in.nodes[4] = ""; }},
      row{"no fault kinds", [](auto& in) { in.kinds.clear(); }},
      row{"2 node(s) leave no minority to fault (kill needs",
          [](auto& in) { in.nodes = default_nodes(2); }},
      row{"overlap_percent 101", [](auto& in) { in.overlap_percent = 101; }},
      row{"timing: stable_after 0ms must be > 0",
          [](auto& in) { in.timing.stable_after = 0ms; }},
      row{"etcd_delay_min 2000ms is above etcd_delay_max 1500ms",
          [](auto& in) { in.timing.etcd_delay_min = 2s; }},
      row{"threshold 0 must be > 0", [](auto& in) { in.timing.threshold = 0; }},
      row{"link_delay_min 2500ms is above link_delay_max 2000ms",
          [](auto& in) { in.timing.link_delay_min = 2500ms; }},
      row{"timing: gossip_interval 0ms must be > 0",
          [](auto& in) { in.timing.gossip_interval = 0ms; }},
    }));
  auto in = inputs(1, 2min);
  change(in);
  auto s = make_schedule(in);
  REQUIRE(!s);
  INFO(s.error().message);
  CHECK(s.error().category == "runtime");
  CHECK(s.error().message.rfind("nemesis: ", 0) == 0);
  CHECK(s.error().message.find(what) != std::string::npos);
}

TEST_CASE("nemesis schedule: etcd faults alone need a single node") {
  auto in = inputs(3, 2min);
  in.nodes = default_nodes(1);
  in.kinds = {fault_kind::etcd_stop, fault_kind::lease_delete};
  CHECK(make(in).steps.size() >= 2);
}

TEST_CASE("nemesis schedule: the least duration fits one fault") {
  auto in = inputs(5, 2min);
  in.kinds = {fault_kind::pause};
  auto least = least_duration(*rules_of(in.timing), in.kinds);
  in.duration = least;
  auto s = make(in);
  CHECK(s.steps.size() == 2);
  in.duration = least - 1ms;
  CHECK(!make_schedule(in));
}

TEST_CASE("nemesis schedule: fault kinds parse from a list") {
  auto kinds = parse_fault_kinds("pause,kill,pause,etcd_slow");
  REQUIRE(kinds);
  CHECK(
    *kinds
    == std::vector{fault_kind::pause, fault_kind::kill, fault_kind::etcd_slow});
  auto all = parse_fault_kinds("all");
  REQUIRE(all);
  CHECK(*all == all_fault_kinds());
  auto bad = parse_fault_kinds("kill,partition");
  REQUIRE(!bad);
  CHECK(bad.error().message.find("unknown fault kind \"partition\"")
        != std::string::npos);
  CHECK(!parse_fault_kinds(""));
  CHECK(!parse_fault_kinds(","));
}

TEST_CASE("nemesis schedule: steps render one line each") {
  nemesis_step p;
  p.at = 12345ms;
  p.op = step_op::partition;
  p.partition = partition_kind::asymmetric;
  p.id = 2;
  p.fault = 3;
  p.nodes = {"node-1"};
  p.to = {"node-2", "node-3"};
  CHECK(render(p)
        == "  +12.345s partition #2 asymmetric {node-1} -> {node-2,node-3} "
           "(fault 3)");
  nemesis_step slow;
  slow.at = 61s;
  slow.op = step_op::etcd_slow;
  slow.delay = 740ms;
  slow.fault = 4;
  CHECK(render(slow) == "  +61.000s etcd_slow 740ms (fault 4)");
  nemesis_step kill;
  kill.at = 5ms;
  kill.nodes = {"node-3"};
  kill.fault = 1;
  CHECK(render(kill) == "   +0.005s kill node-3 (fault 1)");
  nemesis_step links;
  links.at = 40s;
  links.op = step_op::links_slow;
  links.nodes = {"node-2"};
  links.delay = 1200ms;
  links.fault = 5;
  CHECK(render(links) == "  +40.000s links_slow node-2 1200ms (fault 5)");
  kill.nodes = {"node-1", "node-2", "node-4"};
  CHECK(render(kill) == "   +0.005s kill node-1,node-2,node-4 (fault 1)");
  CHECK(render_offset(-500ms) == "-0.500s");
  CHECK(render_offset(3600001ms) == "3600.001s");
  auto s = make(inputs(9, 2min));
  auto text = render(s);
  CHECK(text.rfind("nemesis schedule: seed 9, duration 120.000s, 5 nodes", 0)
        == 0);
  CHECK(static_cast<size_t>(std::count(text.begin(), text.end(), '\n'))
        == s.steps.size() + 2);
}

TEST_CASE("nemesis ops: node faults and the ops that end a fault") {
  for (auto k : all_fault_kinds()) {
    INFO(to_string(k));
    std::string name = to_string(k);
    CHECK(is_node_fault(k)
          == (name.rfind("etcd", 0) != 0 && name != "lease_delete"));
  }
  std::vector<step_op> ends
    = {step_op::restart,    step_op::resume,    step_op::heal,
       step_op::etcd_start, step_op::etcd_fast, step_op::links_fast};
  for (auto op : ends)
    CHECK(ends_fault(op));
  for (auto op :
       {step_op::kill, step_op::pause, step_op::partition, step_op::etcd_stop,
        step_op::etcd_slow, step_op::lease_delete, step_op::links_slow})
    CHECK(!ends_fault(op));
  CHECK(majority_of(5) == 3);
  CHECK(majority_of(4) == 3);
  CHECK(majority_of(3) == 2);
}
