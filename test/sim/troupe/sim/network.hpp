#pragma once

#include <functional>
#include <map>
#include <set>
#include <utility>

#include "troupe/runtime/unique_address.hpp"
#include "troupe/sim/kernel.hpp"

/// @file
/// A simulated network between nodes of the seeded simulator: per-message
/// delay, loss, symmetric and asymmetric partitions and clogged links.
/// Links are FIFO (troupe's transport keeps FIFO per sender-receiver pair;
/// a simulated loss is a message that never arrives, as a dropped frame
/// is). Not thread-safe.

namespace troupe::sim {

using runtime::unique_address;

/// The state of one directed link (from -> to).
struct link_rule {
  /// Nothing passes (a partition or one side of an asymmetric one).
  bool blocked = false;
  /// Added to every message's delay (a clogged link).
  timespan extra_delay{0};
  /// Each message is lost with this probability.
  double drop = 0.0;
};

template <class Message>
class network {
public:
  /// Called when a message arrives: (from, to, message).
  using deliver_fn = std::function<void(const unique_address&,
                                        const unique_address&, Message&&)>;

  network(scheduler& sched, rng& random, deliver_fn deliver)
    : sched_(sched), rng_(random), deliver_(std::move(deliver)) {}

  /// Every message takes a delay drawn from [min, max].
  void set_delay(timespan min, timespan max) {
    min_delay_ = min;
    max_delay_ = max;
  }

  /// Every message anywhere is lost with probability p (on top of links).
  void set_loss(double p) {
    loss_ = p;
  }

  /// Links are keyed by host:port, so a restarted incarnation inherits the
  /// rules of its address, as a real network's would.
  link_rule& link(const unique_address& from, const unique_address& to) {
    return links_[{key(from), key(to)}];
  }

  /// Blocks both directions between every member of `a` and of `b`.
  void partition(const std::vector<unique_address>& a,
                 const std::vector<unique_address>& b) {
    for (auto& x : a)
      for (auto& y : b) {
        link(x, y).blocked = true;
        link(y, x).blocked = true;
      }
  }

  /// The rule of the link from -> to (healthy when none was set).
  link_rule rule(const unique_address& from, const unique_address& to) const {
    auto i = links_.find({key(from), key(to)});
    return i == links_.end() ? link_rule{} : i->second;
  }

  /// The link rules of another network over the same nodes: a second kind
  /// of message (the singleton's hand-over) then crosses the same
  /// partitions, clogs and drops as the first.
  using rules_fn
    = std::function<link_rule(const unique_address&, const unique_address&)>;

  /// Uses `rules` instead of this network's own link rules.
  void follow(rules_fn rules) {
    follow_ = std::move(rules);
  }

  /// Every link healthy again; messages in flight still arrive.
  void heal_all() {
    links_.clear();
  }

  /// Sends `m`; it arrives after the link's delay unless it is lost. The
  /// arrival keeps FIFO order per directed link.
  void send(const unique_address& from, const unique_address& to, Message m) {
    ++sent_;
    auto k = std::make_pair(key(from), key(to));
    link_rule rule = follow_ ? follow_(from, to) : this->rule(from, to);
    if (rule.blocked || rng_.chance(loss_) || rng_.chance(rule.drop)) {
      ++lost_;
      return;
    }
    auto due
      = sched_.now() + rng_.between(min_delay_, max_delay_) + rule.extra_delay;
    auto& last = last_arrival_[k];
    due = std::max(due, last);
    last = due;
    sched_.at(due, [this, from, to, m = std::move(m)]() mutable {
      ++delivered_;
      deliver_(from, to, std::move(m));
    });
  }

  uint64_t sent() const noexcept {
    return sent_;
  }

  uint64_t lost() const noexcept {
    return lost_;
  }

  uint64_t delivered() const noexcept {
    return delivered_;
  }

private:
  using addr_key = std::pair<std::string, uint16_t>;

  static addr_key key(const unique_address& a) {
    return {a.host, a.port};
  }

  scheduler& sched_;
  rng& rng_;
  deliver_fn deliver_;
  timespan min_delay_{std::chrono::milliseconds{1}};
  timespan max_delay_{std::chrono::milliseconds{10}};
  double loss_ = 0.0;
  rules_fn follow_;
  std::map<std::pair<addr_key, addr_key>, link_rule> links_;
  std::map<std::pair<addr_key, addr_key>, timespan> last_arrival_;
  uint64_t sent_ = 0;
  uint64_t lost_ = 0;
  uint64_t delivered_ = 0;
};

} // namespace troupe::sim
