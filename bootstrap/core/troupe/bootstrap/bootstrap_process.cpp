#include "troupe/bootstrap/bootstrap_process.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "troupe/runtime/assert.hpp"

namespace troupe::bootstrap {

namespace {

cluster::endpoint endpoint_of(const runtime::unique_address& a) {
  return cluster::endpoint{a.host, a.port};
}

std::string list_of(const std::vector<contact_point>& xs) {
  std::string out;
  for (const auto& x : xs) {
    if (!out.empty())
      out += ", ";
    out += to_string(x);
  }
  return out;
}

std::string list_of(const std::vector<cluster::endpoint>& xs) {
  std::string out;
  for (const auto& x : xs) {
    if (!out.empty())
      out += ", ";
    out += cluster::to_string(x);
  }
  return out;
}

} // namespace

const char* to_string(wait_reason x) noexcept {
  switch (x) {
    case wait_reason::discovering:
      return "discovering";
    case wait_reason::discovery_failing:
      return "discovery_failing";
    case wait_reason::too_few_contact_points:
      return "too_few_contact_points";
    case wait_reason::not_stable:
      return "not_stable";
    case wait_reason::not_all_probed:
      return "not_all_probed";
    case wait_reason::self_not_discovered:
      return "self_not_discovered";
    case wait_reason::not_lowest:
      return "not_lowest";
    case wait_reason::new_cluster_disabled:
      return "new_cluster_disabled";
    case wait_reason::joining:
      return "joining";
  }
  return "unknown";
}

bootstrap_process::bootstrap_process(runtime::unique_address self,
                                     bootstrap_settings settings,
                                     planted_bug bug)
  : self_(std::move(self)), settings_(std::move(settings)), bug_(bug) {
  TROUPE_ASSERT(!validate(settings_));
}

std::vector<bootstrap_effect> bootstrap_process::start(timestamp now) {
  std::vector<bootstrap_effect> out;
  if (started_ || done_)
    return out;
  started_ = true;
  discovery_in_flight_ = true;
  out.emplace_back(discover{});
  set_status({wait_reason::discovering, "asking discovery for contact points"},
             out);
  (void)now;
  return out;
}

std::vector<bootstrap_effect>
bootstrap_process::on_discovered(std::vector<contact_point> points,
                                 timestamp now) {
  std::vector<bootstrap_effect> out;
  if (!started_ || done_)
    return out;
  discovery_in_flight_ = false;
  discovery_ok_ = true;
  next_discovery_ = now + settings_.discovery_interval;
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  bool changed = !discovered_once_ || points.size() != points_.size();
  for (size_t i = 0; !changed && i < points.size(); ++i)
    changed = points_.count(points[i]) == 0;
  discovered_once_ = true;
  if (changed) {
    set_changed_at_ = now;
    std::map<contact_point, point_state> next;
    for (auto& p : points) {
      auto old = points_.find(p);
      if (old != points_.end())
        next.emplace(p, std::move(old->second));
      else
        next.emplace(p, point_state{.next_probe = now});
    }
    points_ = std::move(next);
  }
  send_due_probes(now, out);
  decide(now, out);
  return out;
}

std::vector<bootstrap_effect>
bootstrap_process::on_discovery_failed(const runtime::error& err,
                                       timestamp now) {
  std::vector<bootstrap_effect> out;
  if (!started_ || done_)
    return out;
  discovery_in_flight_ = false;
  discovery_ok_ = false;
  next_discovery_ = now + settings_.discovery_interval;
  last_discovery_error_ = err.message;
  decide(now, out);
  return out;
}

bootstrap_process::taken_probe bootstrap_process::take_probe(uint64_t id) {
  auto i = in_flight_.find(id);
  if (done_ || i == in_flight_.end())
    return {};
  auto [point, sent] = i->second;
  in_flight_.erase(i);
  auto p = points_.find(point);
  if (p == points_.end())
    return {}; // no longer discovered
  auto& st = p->second;
  return {&st, sent, !st.answered_sent || sent > *st.answered_sent};
}

std::vector<bootstrap_effect>
bootstrap_process::on_probe_answer(uint64_t id, seed_nodes_answer answer,
                                   timestamp now) {
  std::vector<bootstrap_effect> out;
  auto taken = take_probe(id);
  if (taken.state == nullptr)
    return out;
  if (taken.newest) {
    taken.state->answer = std::move(answer);
    taken.state->answered_sent = taken.sent;
    taken.state->last_error.clear();
  }
  decide(now, out);
  return out;
}

std::vector<bootstrap_effect>
bootstrap_process::on_probe_failed(uint64_t id, const runtime::error& err,
                                   timestamp now) {
  std::vector<bootstrap_effect> out;
  auto taken = take_probe(id);
  if (taken.state == nullptr)
    return out;
  if (taken.newest)
    taken.state->last_error = err.message;
  decide(now, out);
  return out;
}

void bootstrap_process::on_member() {
  done_ = true;
  in_flight_.clear();
}

std::vector<bootstrap_effect> bootstrap_process::tick(timestamp now) {
  std::vector<bootstrap_effect> out;
  if (!started_ || done_)
    return out;
  if (!discovery_in_flight_ && now >= next_discovery_) {
    discovery_in_flight_ = true;
    out.emplace_back(discover{});
  }
  // A probe the shell never reported (it must report each one) would
  // otherwise stay in the table: forget it after twice its deadline.
  std::erase_if(in_flight_, [&](const auto& kv) {
    return now - kv.second.second > 2 * settings_.probing_failure_timeout;
  });
  send_due_probes(now, out);
  decide(now, out);
  return out;
}

std::optional<timestamp> bootstrap_process::next_tick() const {
  if (!started_ || done_)
    return std::nullopt;
  std::optional<timestamp> due;
  auto consider = [&due](timestamp t) {
    if (!due || t < *due)
      due = t;
  };
  if (!discovery_in_flight_)
    consider(next_discovery_);
  for (const auto& [point, st] : points_)
    consider(st.next_probe);
  // The moment the set becomes stable, unless a decision already ran at or
  // after it (a due time in the past would make the shell tick at once,
  // forever).
  if (discovered_once_
      && last_decided_at_ < set_changed_at_ + settings_.stable_margin)
    consider(set_changed_at_ + settings_.stable_margin);
  return due;
}

std::vector<contact_point_view> bootstrap_process::contact_points() const {
  std::vector<contact_point_view> out;
  for (const auto& [point, st] : points_)
    out.push_back({point, st.answer, st.answered_sent, st.last_error});
  return out;
}

std::vector<cluster::endpoint>
bootstrap_process::answered_cluster_endpoints() const {
  std::vector<cluster::endpoint> out;
  for (const auto& [point, st] : points_)
    if (st.answer)
      out.push_back(endpoint_of(st.answer->self_node));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool bootstrap_process::is_fresh(const point_state& p, timestamp now) const {
  return p.answered_sent
         && now - *p.answered_sent <= settings_.probing_failure_timeout;
}

void bootstrap_process::send_due_probes(timestamp now,
                                        std::vector<bootstrap_effect>& out) {
  for (auto& [point, st] : points_) {
    if (st.next_probe > now)
      continue;
    auto id = next_id_++;
    in_flight_.emplace(id, std::make_pair(point, now));
    st.next_probe = now + settings_.probe_interval;
    out.emplace_back(probe{point, id});
  }
}

std::optional<std::vector<cluster::endpoint>>
bootstrap_process::reported_cluster(timestamp now) const {
  const seed_nodes_answer* best = nullptr;
  for (const auto& [point, st] : points_) {
    if (!is_fresh(st, now) || !st.answer->in_cluster()
        || st.answer->self_node == self_)
      continue;
    const auto& a = *st.answer;
    if (best == nullptr || a.seed_nodes.size() > best->seed_nodes.size()
        || (a.seed_nodes.size() == best->seed_nodes.size()
            && a.seed_nodes.front().node < best->seed_nodes.front().node))
      best = &a;
  }
  if (best == nullptr)
    return std::nullopt;
  std::vector<cluster::endpoint> seeds;
  for (const auto& s : best->seed_nodes)
    if (endpoint_of(s.node) != endpoint_of(self_))
      seeds.push_back(endpoint_of(s.node));
  if (seeds.empty())
    return std::nullopt;
  return seeds;
}

bool bootstrap_process::is_reported(const std::vector<cluster::endpoint>& seeds,
                                    timestamp now) const {
  for (const auto& [point, st] : points_) {
    if (!is_fresh(st, now) || !st.answer->in_cluster()
        || st.answer->self_node == self_)
      continue;
    for (const auto& s : st.answer->seed_nodes)
      if (std::find(seeds.begin(), seeds.end(), endpoint_of(s.node))
          != seeds.end())
        return true;
  }
  return false;
}

std::optional<bootstrap_status>
bootstrap_process::founding_blocker(timestamp now) const {
  using wr = wait_reason;
  if (!settings_.new_cluster_enabled || bug_ == planted_bug::never_found)
    return bootstrap_status{wr::new_cluster_disabled,
                            "no contact point is in a cluster and "
                            "cluster.bootstrap.new_cluster_enabled is false"};
  if (!discovered_once_)
    return bootstrap_status{wr::discovering,
                            "asking discovery for contact points"};
  if (!discovery_ok_)
    return bootstrap_status{
      wr::discovery_failing,
      fmt::format("the last discovery failed: {}", last_discovery_error_)};
  if (points_.size() < settings_.required_contact_point_nr)
    return bootstrap_status{
      wr::too_few_contact_points,
      fmt::format("discovered {} contact points, {} required", points_.size(),
                  settings_.required_contact_point_nr)};
  if (now - set_changed_at_ < settings_.stable_margin)
    return bootstrap_status{
      wr::not_stable,
      fmt::format("the {} discovered contact points changed less than "
                  "stable_margin {} ago",
                  points_.size(),
                  runtime::render_duration(settings_.stable_margin))};
  std::vector<contact_point> unanswered;
  std::optional<cluster::endpoint> lowest;
  bool self_seen = false;
  for (const auto& [point, st] : points_) {
    if (!is_fresh(st, now)) {
      unanswered.push_back(point);
      continue;
    }
    auto ep = endpoint_of(st.answer->self_node);
    if (!lowest || ep < *lowest)
      lowest = ep;
    self_seen = self_seen || st.answer->self_node == self_;
  }
  if (!unanswered.empty() && bug_ != planted_bug::found_without_all_probed)
    return bootstrap_status{
      wr::not_all_probed,
      fmt::format("no fresh answer from {} of {} contact points: {}",
                  unanswered.size(), points_.size(), list_of(unanswered))};
  if (!self_seen)
    return bootstrap_status{
      wr::self_not_discovered,
      fmt::format("this node ({}) is not among the {} answering contact "
                  "points",
                  runtime::to_string(self_), points_.size())};
  if (*lowest != endpoint_of(self_))
    return bootstrap_status{
      wr::not_lowest,
      fmt::format("{} of the {} contact points has the lowest address and "
                  "founds the cluster",
                  cluster::to_string(*lowest), points_.size())};
  return std::nullopt;
}

void bootstrap_process::decide(timestamp now,
                               std::vector<bootstrap_effect>& out) {
  if (done_)
    return;
  last_decided_at_ = std::max(last_decided_at_, now);
  // Sent to a cluster that some fresh answer still reports: keep it (a
  // larger cluster reported later does not move this node).
  if (decided_ && !decided_->empty() && is_reported(*decided_, now))
    return;
  if (auto seeds = reported_cluster(now)) {
    decided_ = *seeds;
    out.emplace_back(join_seed_nodes{*seeds});
    set_status(
      {wait_reason::joining,
       fmt::format("joining the cluster of seed nodes {}", list_of(*seeds))},
      out);
    return;
  }
  if (decided_ && decided_->empty())
    return; // founding: waiting to become a member
  if (auto blocker = founding_blocker(now)) {
    set_status(std::move(*blocker), out);
    return;
  }
  decided_ = std::vector<cluster::endpoint>{};
  out.emplace_back(join_self{});
  set_status({wait_reason::joining,
              fmt::format("founding a new cluster: {} contact points "
                          "discovered, stable for {}, all answered that they "
                          "are in no cluster, and this node is the lowest",
                          points_.size(),
                          runtime::render_duration(settings_.stable_margin))},
             out);
}

void bootstrap_process::set_status(bootstrap_status st,
                                   std::vector<bootstrap_effect>& out) {
  if (st == status_)
    return;
  status_ = std::move(st);
  out.emplace_back(status_changed{status_});
}

} // namespace troupe::bootstrap
