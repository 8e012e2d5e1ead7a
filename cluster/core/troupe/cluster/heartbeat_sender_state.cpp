#include "troupe/cluster/heartbeat_sender_state.hpp"

#include <algorithm>
#include <iterator>

namespace troupe::cluster {

heartbeat_response respond_to(const heartbeat& hb, const unique_address& self) {
  return heartbeat_response{self, hb.sequence_nr, hb.creation_time};
}

heartbeat_sender_state::heartbeat_sender_state(
  unique_address self, size_t monitored_by_nr_of_members,
  phi_accrual_settings fd)
  : ring_(std::move(self), {}, {}, monitored_by_nr_of_members),
    failure_detector_(fd) {}

void heartbeat_sender_state::init(std::set<unique_address> nodes,
                                  std::set<unique_address> unreachable) {
  ring_.reset(std::move(nodes), std::move(unreachable));
}

void heartbeat_sender_state::add_member(const unique_address& node,
                                        timestamp now) {
  if (node == ring_.self() || ring_.contains(node))
    return;
  auto new_ring = ring_;
  new_ring.add(node);
  membership_change(std::move(new_ring), now);
}

void heartbeat_sender_state::remove_member(const unique_address& node,
                                           timestamp now) {
  if (node == ring_.self())
    return; // the shell stops heartbeating when self is removed
  auto new_ring = ring_;
  new_ring.remove(node);
  membership_change(std::move(new_ring), now);
  failure_detector_.remove(node);
  old_receivers_now_unreachable_.erase(node);
}

void heartbeat_sender_state::unreachable_member(const unique_address& node,
                                                timestamp now) {
  auto new_ring = ring_;
  new_ring.set_unreachable(node, true);
  membership_change(std::move(new_ring), now);
}

void heartbeat_sender_state::reachable_member(const unique_address& node,
                                              timestamp now) {
  auto new_ring = ring_;
  new_ring.set_unreachable(node, false);
  membership_change(std::move(new_ring), now);
}

void heartbeat_sender_state::membership_change(heartbeat_node_ring new_ring,
                                               timestamp now) {
  for (const auto& old : ring_.my_receivers()) {
    if (new_ring.my_receivers().count(old) != 0)
      continue;
    // A receiver that is dropped while unavailable stays monitored until
    // it responds or is removed; an available one is forgotten now.
    if (failure_detector_.is_available(old, now))
      failure_detector_.remove(old);
    else
      old_receivers_now_unreachable_.insert(old);
  }
  ring_ = std::move(new_ring);
}

void heartbeat_sender_state::heartbeat_response(
  const cluster::heartbeat_response& rsp, timestamp now) {
  const auto& from = rsp.from;
  bool receiver = ring_.my_receivers().count(from) != 0;
  bool old = old_receivers_now_unreachable_.count(from) != 0;
  if (!receiver && !old)
    return;
  failure_detector_.heartbeat(from, now);
  auto sent = std::min(rsp.creation_time, now.time_since_epoch());
  if (!latest_answered_ || sent > *latest_answered_)
    latest_answered_ = sent;
  if (old) {
    // Back from unreachable: no need to keep heartbeating it.
    if (!receiver)
      failure_detector_.remove(from);
    old_receivers_now_unreachable_.erase(from);
  }
}

heartbeat_round heartbeat_sender_state::tick(timestamp now) {
  heartbeat_round round;
  round.heartbeat
    = cluster::heartbeat{ring_.self(), ++sequence_nr_, now.time_since_epoch()};
  for (const auto& to : active_receivers()) {
    round.receivers.push_back(to);
    if (!failure_detector_.is_monitoring(to))
      round.first_heartbeat_to.push_back(to);
  }
  return round;
}

void heartbeat_sender_state::expected_first_heartbeat(
  const unique_address& node, timestamp now) {
  auto active = ring_.my_receivers().count(node) != 0
                || old_receivers_now_unreachable_.count(node) != 0;
  if (active && !failure_detector_.is_monitoring(node))
    failure_detector_.heartbeat(node, now);
}

std::set<unique_address> heartbeat_sender_state::active_receivers() const {
  auto result = ring_.my_receivers();
  result.insert(old_receivers_now_unreachable_.begin(),
                old_receivers_now_unreachable_.end());
  return result;
}

} // namespace troupe::cluster
