// The membership engine's part about other clusters of the same name
// (cluster_merge.hpp; docs/design/cluster.md, "A second cluster is
// detected and healed"): the incarnation probe, detections, the judge's
// decision, the merge mark and the stop of a merging member.

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "troupe/cluster/membership_engine.hpp"

namespace troupe::cluster {

namespace {

// How long a foreign cluster not seen again is remembered.
timespan foreign_ttl(const membership_settings& s) {
  if (s.incarnation_probe_interval)
    return 3 * *s.incarnation_probe_interval;
  return std::chrono::seconds{30};
}

std::string size_text(std::optional<uint32_t> size) {
  return size ? fmt::format("{} members", *size) : "size unknown";
}

} // namespace

std::vector<endpoint> membership_engine::contact_endpoints() const {
  std::vector<endpoint> out;
  auto add = [&](const endpoint& ep) {
    if (ep != endpoint_of(self())
        && std::find(out.begin(), out.end(), ep) == out.end())
      out.push_back(ep);
  };
  for (const auto& ep : settings_.seed_nodes)
    add(ep);
  for (const auto& ep : contacts_)
    add(ep);
  return out;
}

membership_effects
membership_engine::set_contact_endpoints(std::vector<endpoint> endpoints,
                                         clock_reading t) {
  effects out;
  if (terminated_)
    return out;
  contacts_ = std::move(endpoints);
  // A new contact list is probed at the next tick, not a whole interval
  // later: the bootstrap hands it when it found contact points.
  next_probe_ = t.now;
  return out;
}

membership_effects
membership_engine::foreign_incarnation_met(const unique_address& peer,
                                           const cluster_incarnation& other,
                                           clock_reading t) {
  effects out;
  if (terminated_ || !joined_ || peer.uid == 0 || !other.is_set())
    return out;
  same_cluster(peer, other, std::nullopt, t, out);
  return out;
}

cluster_info membership_engine::own_info() const {
  const auto& g = state_.latest_gossip();
  return cluster_info{g.incarnation(), cluster_size(g), g.merging_into()};
}

bool membership_engine::same_cluster(const unique_address& from,
                                     const cluster_incarnation& incarnation,
                                     std::optional<uint32_t> size,
                                     clock_reading t, effects& out) {
  if (incarnation == this->incarnation())
    return true;
  if (!incarnation.is_set()) {
    out.info.push_back(fmt::format("ignored a message from {} that names no "
                                   "cluster incarnation",
                                   to_string(from)));
    return false;
  }
  record_foreign(from, cluster_info{incarnation, size.value_or(0), {}}, size, t,
                 out);
  // The message carried no (or no fresh) size: ask for one, so that the
  // judge of this meeting can decide.
  if (from.uid != 0)
    out.send.push_back(
      {from, membership_message{incarnation_probe{self(), own_info(), {}}}});
  return false;
}

void membership_engine::record_foreign(const unique_address& via,
                                       const cluster_info& info,
                                       std::optional<uint32_t> size,
                                       clock_reading t, effects& out) {
  auto [it, fresh] = foreign_.try_emplace(info.incarnation);
  auto& rec = it->second;
  rec.incarnation = info.incarnation;
  rec.seen_via = via;
  rec.last_seen = t.wall;
  rec.last_seen_at = t.now;
  if (size) {
    rec.size = size;
    rec.merging_into = info.merging_into;
  }
  if (!fresh)
    return;
  out.met_foreign.push_back(info.incarnation);
  out.errors.push_back(fmt::format(
    "another cluster of this name was met: this node's cluster is "
    "incarnation {} ({} members), and {} belongs to incarnation {} ({}). "
    "Two clusters formed apart (e.g. a partition during formation, or a "
    "seed node restarted behind one); the smaller one (at equal sizes the "
    "younger incarnation) leaves and its members rejoin the other",
    to_string(incarnation()), cluster_size(state_.latest_gossip()),
    to_string(via), to_string(info.incarnation), size_text(size)));
}

void membership_engine::on_probe(const incarnation_probe& m, clock_reading t,
                                 effects& out) {
  if (!joined_ || !incarnation().is_set())
    return; // only members answer
  incarnation_probe_answer answer{self(), own_info(), {}};
  if (m.info.incarnation.is_set() && m.info.incarnation != incarnation()) {
    record_foreign(m.from, m.info, m.info.size, t, out);
    if (m.verdict.is_set())
      obey(m.from, m.info, m.verdict, t, out);
    else
      answer.verdict = judge(m.from, m.info, t, out);
    answer.info = own_info();
  }
  out.send.push_back({m.from, membership_message{std::move(answer)}});
}

void membership_engine::on_probe_answer(const incarnation_probe_answer& m,
                                        clock_reading t, effects& out) {
  if (!joined_ || !m.info.incarnation.is_set()
      || m.info.incarnation == incarnation())
    return;
  record_foreign(m.from, m.info, m.info.size, t, out);
  if (m.verdict.is_set())
    return obey(m.from, m.info, m.verdict, t, out);
  if (auto verdict = judge(m.from, m.info, t, out); verdict.is_set())
    out.send.push_back({m.from, membership_message{incarnation_probe{
                                  self(), own_info(), verdict}}});
}

cluster_incarnation membership_engine::judge(const unique_address& from,
                                             const cluster_info& other,
                                             clock_reading t, effects& out) {
  // Only the older side decides; a side that is already leaving (either)
  // decides nothing more.
  if (!judges(incarnation(), other.incarnation) || is_merging()
      || other.merging_into.is_set())
    return {};
  cluster_side self_side{incarnation(), cluster_size(state_.latest_gossip())};
  cluster_side other_side{other.incarnation, other.size};
  if (decide_merge(self_side, other_side) == merge_verdict::other_side_leaves) {
    // Repeated at every meeting until that side leaves; logged once.
    if (std::exchange(foreign_[other.incarnation].told_to_leave, true))
      return incarnation();
    out.info.push_back(fmt::format(
      "merge rule: the cluster of incarnation {} ({} members, met via {}) "
      "leaves and joins this one (incarnation {}, {} members); telling it",
      to_string(other.incarnation), other.size, to_string(from),
      to_string(incarnation()), self_side.size));
    return incarnation();
  }
  // The judge is the older side, so it leaves only as the smaller one.
  leave_for_merge(other.incarnation,
                  fmt::format("it has {} members and the other ({}, met via "
                              "{}) has {}",
                              self_side.size, to_string(other.incarnation),
                              to_string(from), other.size),
                  t, out);
  return {};
}

void membership_engine::obey(const unique_address& from,
                             const cluster_info& other,
                             const cluster_incarnation& verdict,
                             clock_reading t, effects& out) {
  // A verdict counts only from the judge of the meeting: the older side,
  // naming itself as the winner.
  if (verdict != other.incarnation
      || !judges(other.incarnation, incarnation())) {
    out.info.push_back(fmt::format(
      "ignored a merge verdict from {} (incarnation {}) naming {}: only the "
      "older cluster of a meeting decides, and only for itself as the winner",
      to_string(from), to_string(other.incarnation), to_string(verdict)));
    return;
  }
  if (is_merging())
    return;
  leave_for_merge(verdict,
                  fmt::format("the older cluster ({}, {} members, via {}) "
                              "judged so; this one has {} members",
                              to_string(other.incarnation), other.size,
                              to_string(from),
                              cluster_size(state_.latest_gossip())),
                  t, out);
}

void membership_engine::leave_for_merge(const cluster_incarnation& winner,
                                        std::string why, clock_reading t,
                                        effects& out) {
  if (bug_ == planted_bug::loser_never_leaves) {
    out.info.push_back("planted bug: this cluster does not leave for the "
                       "merge ("
                       + why + ")");
    return;
  }
  auto next = state_.latest_gossip();
  if (!next.mark_merging_into(winner))
    return;
  out.errors.push_back(fmt::format(
    "this cluster (incarnation {}) leaves to join the cluster of incarnation "
    "{}: {}. Every member stops (coordinated shutdown, reason cluster_merge) "
    "for its supervisor to restart it; restarted, it joins the other cluster "
    "through its seed nodes or the bootstrap's contact points",
    to_string(incarnation()), to_string(winner), why));
  update_latest(std::move(next), t, out);
  if (terminated_)
    return;
  // The mark must reach every member before this node stops: tell each at
  // once (the gossip timer spreads it further while the members linger).
  for (const auto& m : state_.latest_gossip().members())
    if (m.address != self() && m.status != member_status::down
        && state_.valid_node_for_gossip(m.address))
      send_envelope(m.address, out);
}

void membership_engine::probe_tick(clock_reading t, effects& out) {
  std::erase_if(foreign_, [&](auto& entry) {
    if (t.now - entry.second.last_seen_at < foreign_ttl(settings_))
      return false;
    out.info.push_back(fmt::format("no longer sees the cluster of "
                                   "incarnation {}",
                                   to_string(entry.first)));
    return true;
  });
  if (!settings_.incarnation_probe_interval || is_merging()
      || t.now < next_probe_)
    return;
  next_probe_ = t.now + *settings_.incarnation_probe_interval;
  const auto& g = state_.latest_gossip();
  for (const auto& ep : contact_endpoints()) {
    bool in_view = std::any_of(
      g.members().begin(), g.members().end(), [&](const member& m) {
        return m.status != member_status::down && endpoint_of(m.address) == ep;
      });
    if (!in_view)
      out.send.push_back(
        {unique_address{ep.host, ep.port, 0},
         membership_message{incarnation_probe{self(), own_info(), {}}}});
  }
}

void membership_engine::merge_tick(clock_reading t, effects& out) {
  if (!is_merging() || terminated_)
    return;
  if (!merging_since_) {
    merging_since_ = t.now;
    out.info.push_back(fmt::format(
      "this node's cluster leaves to join the cluster of incarnation {}: it "
      "refuses joins and stops once every member has seen that, or within {} "
      "ms",
      to_string(merging_into()),
      std::chrono::duration_cast<std::chrono::milliseconds>(
        merge_linger(settings_.gossip_interval))
        .count()));
  }
  const auto& g = state_.latest_gossip();
  bool all_seen
    = std::all_of(g.members().begin(), g.members().end(), [&](const member& m) {
        return m.status == member_status::down || g.is_seen_by(m.address);
      });
  if (!all_seen
      && t.now < *merging_since_ + merge_linger(settings_.gossip_interval))
    return;
  if (!all_seen)
    gossip_tick(out);
  terminate(self_stop_reason::merging,
            fmt::format("this cluster (incarnation {}) left to join the "
                        "cluster of incarnation {}: restart this node to "
                        "join it",
                        to_string(incarnation()), to_string(merging_into())),
            out);
}

} // namespace troupe::cluster
