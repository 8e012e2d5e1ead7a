#include "troupe/chaos/nemesis_schedule.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "troupe/runtime/assert.hpp"

namespace troupe::chaos {

namespace {

using std::chrono::milliseconds;

/// Unbiased integers from std::mt19937_64, whose output sequence the
/// standard fixes (unlike the distributions').
class draw {
public:
  explicit draw(uint64_t seed) : gen_(seed) {}

  /// Uniform in [lo, hi].
  uint64_t between(uint64_t lo, uint64_t hi) {
    TROUPE_ASSERT(lo <= hi);
    auto span = hi - lo;
    if (span == std::numeric_limits<uint64_t>::max())
      return gen_();
    auto range = span + 1;
    // Rejecting the lowest 2^64 mod range values leaves a multiple of
    // range equally likely outcomes.
    auto reject_below = (0 - range) % range;
    for (;;) {
      uint64_t x = gen_();
      if (x >= reject_below)
        return lo + x % range;
    }
  }

  milliseconds between(milliseconds lo, milliseconds hi) {
    TROUPE_ASSERT(lo.count() >= 0 && lo <= hi);
    return milliseconds{static_cast<int64_t>(between(
      static_cast<uint64_t>(lo.count()), static_cast<uint64_t>(hi.count())))};
  }

  /// True with `percent` percent.
  bool chance(uint32_t percent) {
    return between(0, 99) < percent;
  }

  /// Fisher-Yates (std::shuffle's use of the generator is unspecified).
  template <class T>
  void shuffle(std::vector<T>& xs) {
    for (size_t i = xs.size(); i > 1; --i)
      std::swap(xs[i - 1], xs[between(0, i - 1)]);
  }

private:
  std::mt19937_64 gen_;
};

/// Lays out the faults one after another (see make_schedule).
class planner {
public:
  planner(const nemesis_inputs& in, const nemesis_rules& rules)
    : in_(in), rules_(rules), draw_(in.seed),
      busy_until_(in.nodes.size(), milliseconds{0}) {}

  std::vector<nemesis_step> run() {
    std::vector<fault_kind> kinds;
    for (auto k : in_.kinds)
      if (std::find(kinds.begin(), kinds.end(), k) == kinds.end())
        kinds.push_back(k);
    t_ = gap();
    std::set<fault_kind> exhausted;
    std::vector<fault_kind> bag;
    while (exhausted.size() < kinds.size()) {
      if (bag.empty()) {
        for (auto k : kinds)
          if (exhausted.count(k) == 0)
            bag.push_back(k);
        draw_.shuffle(bag);
      }
      auto kind = bag.back();
      bag.pop_back();
      // The cursor never goes back, so a kind that no longer fits never
      // will.
      if (!place(kind))
        exhausted.insert(kind);
    }
    std::stable_sort(steps_.begin(), steps_.end(),
                     [](const nemesis_step& x, const nemesis_step& y) {
                       if (x.at != y.at)
                         return x.at < y.at;
                       return ends_fault(x.op) && !ends_fault(y.op);
                     });
    return std::move(steps_);
  }

private:
  milliseconds gap() {
    return draw_.between(rules_.recovery, rules_.recovery * 3 / 2);
  }

  size_t busy_at(milliseconds t) const {
    return static_cast<size_t>(std::count_if(
      busy_until_.begin(), busy_until_.end(), [t](auto u) { return u > t; }));
  }

  /// The first instant from the cursor on where one more node may fail.
  milliseconds node_capacity_from(milliseconds t) const {
    auto minority = minority_of(in_.nodes.size());
    while (busy_at(t) >= minority) {
      auto next = milliseconds::max();
      for (auto u : busy_until_)
        if (u > t)
          next = std::min(next, u);
      t = next;
    }
    return t;
  }

  /// The first instant from `t` on where no node is faulty or recovering.
  milliseconds all_free_from(milliseconds t) const {
    for (auto u : busy_until_)
      t = std::max(t, u);
    return t;
  }

  /// The first instant from the cursor on where a fault of `kind` may
  /// start: a majority_restart when every node is free; slow links never
  /// overlap a partition (in netns mode their proxies would carry traffic
  /// around the partition's rules), so each waits for the other's end.
  milliseconds earliest_start(fault_kind kind) const {
    switch (kind) {
      case fault_kind::majority_restart:
        return all_free_from(t_);
      case fault_kind::slow_restart:
        return node_capacity_from(std::max(t_, partition_until_));
      case fault_kind::partition_symmetric:
      case fault_kind::partition_asymmetric:
        return node_capacity_from(std::max(t_, slow_until_));
      default:
        return is_node_fault(kind) ? node_capacity_from(t_)
                                   : std::max(t_, etcd_busy_until_);
    }
  }

  /// Places one fault of `kind` at or after the cursor; false if it does
  /// not fit before the end.
  bool place(fault_kind kind) {
    auto hold = rules_.hold(kind);
    auto start = earliest_start(kind);
    // Nothing runs at `start` (the fault waited, or its overlap draw fell
    // at the end of the previous one): keep the quiet gap.
    if (start >= active_until_)
      start = std::max(start, active_until_ + rules_.recovery);
    if (start + hold.min > in_.duration)
      return false;
    auto end
      = start
        + draw_.between(hold.min, std::min(hold.max, in_.duration - start));
    ++fault_;
    kind_ = kind;
    if (is_node_fault(kind))
      place_node_fault(kind, start, end);
    else
      place_etcd_fault(kind, start, end);
    active_until_ = std::max(active_until_, end);
    if (draw_.chance(in_.overlap_percent))
      t_ = start
           + draw_.between(
             milliseconds{0},
             std::max(end - start - milliseconds{1}, milliseconds{0}));
    else
      t_ = active_until_ + gap();
    return true;
  }

  /// `n` distinct nodes among those free at `t`, in input order.
  std::vector<size_t> pick_free(milliseconds t, size_t n) {
    std::vector<size_t> free;
    for (size_t i = 0; i < busy_until_.size(); ++i)
      if (busy_until_[i] <= t)
        free.push_back(i);
    TROUPE_ASSERT(free.size() >= n);
    draw_.shuffle(free);
    free.resize(n);
    std::sort(free.begin(), free.end());
    return free;
  }

  void add(milliseconds at, step_op op, std::vector<std::string> nodes,
           uint32_t id = 0) {
    nemesis_step s;
    s.at = at;
    s.op = op;
    s.nodes = std::move(nodes);
    s.id = id;
    s.fault = fault_;
    s.kind = kind_;
    steps_.push_back(std::move(s));
  }

  /// How many nodes a fault of `kind` starting at `start` faults.
  size_t draw_size(fault_kind kind, milliseconds start) {
    auto n = in_.nodes.size();
    switch (kind) {
      case fault_kind::partition_symmetric:
      case fault_kind::partition_asymmetric:
        return draw_.between(1, minority_of(n) - busy_at(start));
      case fault_kind::majority_restart:
        return draw_.between(majority_of(n), n - 1);
      default:
        return 1;
    }
  }

  void place_node_fault(fault_kind kind, milliseconds start, milliseconds end) {
    auto picked = pick_free(start, draw_size(kind, start));
    for (auto i : picked)
      busy_until_[i] = end + rules_.recovery;
    // While a majority is down nothing else faults a node: the survivors
    // are the cluster's only members.
    if (kind == fault_kind::majority_restart)
      std::fill(busy_until_.begin(), busy_until_.end(), end + rules_.recovery);
    std::vector<std::string> side;
    std::vector<std::string> rest;
    for (size_t i = 0; i < in_.nodes.size(); ++i)
      (std::binary_search(picked.begin(), picked.end(), i) ? side : rest)
        .push_back(in_.nodes[i]);
    switch (kind) {
      case fault_kind::kill:
      case fault_kind::majority_restart:
        add(start, step_op::kill, side);
        add(end, step_op::restart, side);
        return;
      case fault_kind::pause:
        add(start, step_op::pause, side);
        add(end, step_op::resume, side);
        return;
      case fault_kind::slow_restart:
        place_slow_restart(side, start, end);
        return;
      default:
        break;
    }
    partition_until_ = std::max(partition_until_, end);
    nemesis_step s;
    s.at = start;
    s.op = step_op::partition;
    s.id = ++partition_;
    s.fault = fault_;
    s.kind = kind;
    s.nodes = std::move(side);
    s.to = std::move(rest);
    if (kind == fault_kind::partition_asymmetric) {
      s.partition = partition_kind::asymmetric;
      if (draw_.chance(50))
        std::swap(s.nodes, s.to);
    }
    steps_.push_back(std::move(s));
    add(end, step_op::heal, {}, partition_);
  }

  /// kill and links_slow at `start`, the restart after the kill's hold,
  /// links_fast at `end` (at least `slow_links.min` after the restart).
  void place_slow_restart(const std::vector<std::string>& node,
                          milliseconds start, milliseconds end) {
    auto& r = rules_;
    auto restart
      = start
        + draw_.between(r.kill.min,
                        std::min(r.kill.max, end - start - r.slow_links.min));
    add(start, step_op::kill, node);
    add(start, step_op::links_slow, node);
    steps_.back().delay
      = draw_.between(in_.timing.link_delay_min, in_.timing.link_delay_max);
    add(restart, step_op::restart, node);
    add(end, step_op::links_fast, node);
    slow_until_ = std::max(slow_until_, end);
  }

  void place_etcd_fault(fault_kind kind, milliseconds start, milliseconds end) {
    etcd_busy_until_ = end + rules_.recovery;
    switch (kind) {
      case fault_kind::etcd_stop:
        add(start, step_op::etcd_stop, {});
        add(end, step_op::etcd_start, {});
        return;
      case fault_kind::etcd_slow: {
        add(start, step_op::etcd_slow, {});
        steps_.back().delay
          = draw_.between(in_.timing.etcd_delay_min, in_.timing.etcd_delay_max);
        add(end, step_op::etcd_fast, {});
        return;
      }
      default:
        add(start, step_op::lease_delete, {});
        return;
    }
  }

  const nemesis_inputs& in_;
  const nemesis_rules& rules_;
  draw draw_;
  milliseconds t_{0};
  milliseconds active_until_{0};
  milliseconds etcd_busy_until_{0};
  // The end of the latest partition and of the latest slow links.
  milliseconds partition_until_{0};
  milliseconds slow_until_{0};
  std::vector<milliseconds> busy_until_;
  std::vector<nemesis_step> steps_;
  uint32_t fault_ = 0;
  fault_kind kind_ = fault_kind::kill;
  uint32_t partition_ = 0;
};

/// The input errors of make_schedule besides the timing's and the
/// duration's.
runtime::error check_inputs(const nemesis_inputs& in) {
  if (in.nodes.empty())
    return detail::nemesis_input_error(
      "0 nodes: at least one node name is needed");
  std::set<std::string> seen;
  for (auto& n : in.nodes) {
    if (n.empty())
      return detail::nemesis_input_error("an empty node name");
    if (!seen.insert(n).second)
      return detail::nemesis_input_error(
        fmt::format("node name \"{}\" appears twice", n));
  }
  if (in.kinds.empty())
    return detail::nemesis_input_error("no fault kinds enabled");
  if (in.overlap_percent > 100)
    return detail::nemesis_input_error(
      fmt::format("overlap_percent {} is above 100", in.overlap_percent));
  auto node_kind
    = std::find_if(in.kinds.begin(), in.kinds.end(), is_node_fault);
  if (node_kind != in.kinds.end() && minority_of(in.nodes.size()) == 0)
    return detail::nemesis_input_error(
      fmt::format("{} node(s) leave no minority to fault ({} needs "
                  "at least 3 nodes)",
                  in.nodes.size(), to_string(*node_kind)));
  return {};
}

} // namespace

std::vector<std::string> default_nodes(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 1; i <= n; ++i)
    out.push_back("node-" + std::to_string(i));
  return out;
}

runtime::expected<nemesis_schedule> make_schedule(const nemesis_inputs& in) {
  if (auto err = check_inputs(in))
    return err;
  auto rules = rules_of(in.timing);
  if (!rules)
    return rules.error();
  auto least = least_duration(*rules, in.kinds);
  if (in.duration < least)
    return detail::nemesis_input_error(
      fmt::format("duration {} is too short: the enabled faults need "
                  "at least {} (a quiet start of {} plus the longest "
                  "least hold)",
                  render_offset(in.duration), render_offset(least),
                  render_offset(rules->recovery)));
  nemesis_schedule s;
  s.seed = in.seed;
  s.duration = in.duration;
  s.nodes = in.nodes;
  s.rules = *rules;
  s.steps = planner{in, *rules}.run();
  return s;
}

std::string render(const nemesis_schedule& schedule) {
  auto& r = schedule.rules;
  auto range = [](hold_range h) {
    return fmt::format("[{}, {}]", render_offset(h.min), render_offset(h.max));
  };
  auto out = fmt::format(
    "nemesis schedule: seed {}, duration {}, {} nodes {{{}}}, {} steps\n"
    "  detection {}, downed {}, recovery gap >= {}, quiet after {}; holds: "
    "kill {}, pause {}, partition {}, etcd {}, slow links after a restart "
    "{}\n",
    schedule.seed, render_offset(schedule.duration), schedule.nodes.size(),
    fmt::join(schedule.nodes, ","), schedule.steps.size(),
    render_offset(r.detection), render_offset(r.downed),
    render_offset(r.recovery), render_offset(r.quiet_after), range(r.kill),
    range(r.pause), range(r.partition), range(r.etcd), range(r.slow_links));
  for (auto& step : schedule.steps)
    out += render(step) + "\n";
  return out;
}

} // namespace troupe::chaos
