#include "troupe/sim/bootstrap_world.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/bootstrap/seed_nodes_answer.hpp"

namespace troupe::sim {

namespace {

using namespace std::chrono_literals;
using cluster::member_status;

constexpr uint16_t management_port = 8558;

bool at_least_weakly_up(member_status s) {
  return s == member_status::weakly_up || s == member_status::up
         || s == member_status::leaving || s == member_status::exiting;
}

runtime::error probe_error(std::string what) {
  return runtime::make_error(bootstrap::errc::probe_failed, std::move(what));
}

} // namespace

bootstrap_layer::bootstrap_layer(membership_world& w,
                                 bootstrap_world_settings s)
  : w_(w), settings_(std::move(s)) {}

void bootstrap_layer::start(size_t i) {
  if (nodes_.size() < w_.size())
    nodes_.resize(w_.size());
  for (size_t j = 0; j < w_.size(); ++j)
    by_host_[w_.endpoint_of(j).host] = j;
  if (w_.alive(i))
    return;
  auto& n = nodes_[i];
  w_.start(i, {});
  ++n.incarnation;
  if (!n.visible_from)
    n.visible_from
      = w_.sched().now() + w_.random().between(0s, settings_.max_discovery_lag);
  n.process = std::make_unique<bootstrap::bootstrap_process>(
    w_.address(i), settings_.bootstrap, settings_.bug);
  n.tick_due.reset();
  handle(i, n.process->start(w_.local_now(i)));
}

template <class Call>
void bootstrap_layer::act(size_t i, uint64_t inc, Call&& call) {
  auto& n = nodes_[i];
  if (!w_.alive(i) || n.incarnation != inc || !n.process || w_.failure())
    return;
  handle(i, call(*n.process, w_.local_now(i)));
}

void bootstrap_layer::handle(size_t i,
                             std::vector<bootstrap::bootstrap_effect> fx) {
  auto inc = nodes_[i].incarnation;
  for (auto& e : fx) {
    if (std::holds_alternative<bootstrap::discover>(e)) {
      on_discover(i, inc);
    } else if (auto* p = std::get_if<bootstrap::probe>(&e)) {
      on_probe(i, inc, *p);
    } else if (auto* j = std::get_if<bootstrap::join_seed_nodes>(&e)) {
      w_.join(i, j->seeds);
    } else if (std::holds_alternative<bootstrap::join_self>(e)) {
      ++foundings_;
      w_.note(fmt::format("bootstrap: {} founds a cluster",
                          to_string(w_.address(i))));
      w_.join(i, {w_.endpoint_of(i)});
    } else if (auto* st = std::get_if<bootstrap::status_changed>(&e)) {
      w_.note(fmt::format("bootstrap {}: {} ({})", to_string(w_.address(i)),
                          to_string(st->status.reason), st->status.detail));
    }
    if (w_.failure() || !w_.alive(i) || nodes_[i].incarnation != inc)
      return;
  }
  schedule(i);
}

void bootstrap_layer::schedule(size_t i) {
  auto& n = nodes_[i];
  if (!n.process)
    return;
  auto due = n.process->next_tick();
  if (!due)
    return;
  auto inc = n.incarnation;
  w_.schedule_tick_at(i, *due, n.tick_due, [this, i, inc] {
    act(i, inc, [](auto& p, auto now) { return p.tick(now); });
  });
}

void bootstrap_layer::on_discover(size_t i, uint64_t inc) {
  auto now = w_.sched().now();
  bool fails = w_.random().chance(settings_.discovery_failure);
  std::vector<bootstrap::contact_point> points;
  for (size_t j = 0; j < nodes_.size(); ++j)
    if (nodes_[j].visible_from && *nodes_[j].visible_from <= now)
      points.push_back({w_.endpoint_of(j).host, management_port});
  w_.sched().after(5ms, [this, i, inc, fails, points = std::move(points)] {
    act(i, inc, [&](auto& p, auto t) {
      if (fails)
        return p.on_discovery_failed(
          runtime::make_error(bootstrap::errc::discovery_unavailable,
                              "simulated discovery failure"),
          t);
      return p.on_discovered(points, t);
    });
  });
}

void bootstrap_layer::on_probe(size_t i, uint64_t inc,
                               const bootstrap::probe& p) {
  auto& r = w_.random();
  auto sent = w_.sched().now();
  auto deadline = sent + settings_.bootstrap.probing_failure_timeout;
  auto id = p.id;
  auto fail_at = [this, i, inc, id](timespan t, std::string why) {
    w_.sched().at(t, [this, i, inc, id, why = std::move(why)] {
      ++failed_;
      act(i, inc, [&](auto& pr, auto now) {
        return pr.on_probe_failed(id, probe_error(why), now);
      });
    });
  };
  auto target = by_host_.find(p.point.host);
  if (target == by_host_.end() || p.point.port != management_port) {
    fail_at(sent + 1ms, "no such contact point");
    return;
  }
  auto j = target->second;
  auto from = w_.address(i);
  auto to = w_.address(j);
  auto out_rule = w_.net().rule(from, to);
  auto back_rule = w_.net().rule(to, from);
  if (!w_.alive(j)) {
    fail_at(sent + 1ms, "connection refused");
    return;
  }
  if (out_rule.blocked || back_rule.blocked) {
    fail_at(deadline, "timed out (partition)");
    return;
  }
  auto there = sent
               + r.between(settings_.min_probe_delay, settings_.max_probe_delay)
               + out_rule.extra_delay;
  auto back = r.between(settings_.min_probe_delay, settings_.max_probe_delay)
              + back_rule.extra_delay;
  if (there + back > deadline) {
    fail_at(deadline, "timed out (slow link)");
    return;
  }
  w_.sched().at(there, [this, i, inc, j, id, back, deadline, fail_at] {
    if (!w_.alive(j)) {
      fail_at(std::min(w_.sched().now() + back, deadline), "connection reset");
      return;
    }
    // Answered from the probed node's view as it is when the probe arrives.
    const auto& e = w_.engine(j);
    auto answer = bootstrap::seed_nodes_of(w_.address(j), &e.state());
    w_.sched().after(back, [this, i, inc, id, answer = std::move(answer)] {
      ++answered_;
      act(i, inc, [&](auto& pr, auto now) {
        return pr.on_probe_answer(id, answer, now);
      });
    });
  });
}

void bootstrap_layer::after_step(size_t i) {
  if (i < nodes_.size() && w_.alive(i) && nodes_[i].process
      && !nodes_[i].process->done() && w_.engine(i).is_member())
    nodes_[i].process->on_member();
  check_clusters();
}

std::vector<std::string> bootstrap_layer::clusters() const {
  // Member nodes: alive and a member of their own view, not down/removed.
  std::vector<size_t> members;
  for (size_t i = 0; i < w_.size(); ++i) {
    if (!w_.alive(i) || !w_.engine(i).is_member())
      continue;
    auto self = w_.engine(i).self_member();
    if (self && self->status != member_status::down
        && self->status != member_status::removed)
      members.push_back(i);
  }
  auto knows = [&](size_t a, size_t b) {
    const auto* m = w_.engine(a).state().latest_gossip().find(w_.address(b));
    return m != nullptr && m->status != member_status::removed;
  };
  std::map<size_t, size_t> parent;
  std::function<size_t(size_t)> root = [&](size_t x) {
    return parent[x] == x ? x : parent[x] = root(parent[x]);
  };
  for (auto x : members)
    parent[x] = x;
  for (auto a : members)
    for (auto b : members)
      if (a < b && (knows(a, b) || knows(b, a)))
        parent[root(a)] = root(b);
  std::map<size_t, std::vector<size_t>> groups;
  for (auto x : members)
    groups[root(x)].push_back(x);
  std::vector<std::string> out;
  for (const auto& [r, xs] : groups) {
    bool formed = false;
    std::string names;
    for (auto x : xs) {
      auto s = w_.engine(x).self_member()->status;
      formed = formed || at_least_weakly_up(s);
      names += fmt::format("{}{}({})", names.empty() ? "" : ", ",
                           to_string(w_.address(x)), cluster::to_string(s));
    }
    if (formed)
      out.push_back("{" + names + "}");
  }
  return out;
}

void bootstrap_layer::check_clusters() {
  if (w_.failure())
    return;
  auto cs = clusters();
  if (cs.size() > 1) {
    std::string detail = fmt::format("{} clusters at once:", cs.size());
    for (const auto& c : cs)
      detail += " " + c;
    w_.fail("never_two_clusters", detail);
  }
}

} // namespace troupe::sim
