#include "troupe/cluster/sim_transport.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <random>
#include <vector>

#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/frame.hpp"
#include "troupe/cluster/peer_backoff.hpp"
#include "troupe/cluster/quarantine.hpp"
#include "troupe/runtime/assert.hpp"

// The whole simulated world lives in sim_network::impl; sim_transport is a
// facade over one node of it. Every listener call is an event on the
// network's queue, so callbacks only ever run inside advance_to.

namespace troupe::cluster {

namespace {

using runtime::timespan;
using runtime::timestamp;

constexpr size_t no_node = static_cast<size_t>(-1);

struct queued_frame {
  uint64_t uid = 0; // destination uid (0: any)
  std::vector<std::byte> payload;
};

// This node's outbound connection to one endpoint.
struct association {
  enum class state : uint8_t { idle, connecting, established };
  state st = state::idle;
  size_t remote = no_node; // node id when established
  uint64_t remote_uid = 0;
  uint64_t generation = 0; // bumped whenever the connection breaks
  std::deque<queued_frame> queues[2];
  peer_backoff backoff;
  bool attempted = false;
  bool attempt_scheduled = false;
  timestamp last_due{};

  explicit association(const sim_settings& s)
    : backoff(s.reconnect_backoff_min, s.reconnect_backoff_max) {}

  bool has_queued() const {
    return !queues[0].empty() || !queues[1].empty();
  }
};

struct node_state {
  size_t id = 0;
  unique_address addr;
  cluster_incarnation incarnation;
  transport_listener* listener = nullptr;
  bool alive = true;
  quarantine_registry registry;
  std::map<endpoint, association> out;
  // Live inbound connections: peer endpoint -> (peer uid, peer node id).
  std::map<endpoint, std::pair<uint64_t, size_t>> in;
  std::map<std::pair<endpoint, direction>, link_fault> faults;
  std::map<endpoint, peer_metrics> metrics;
  peer_counters unattributed;
  std::unique_ptr<sim_transport> facade;

  peer_counters& counters(const endpoint& ep) {
    auto& m = metrics[ep];
    m.peer = ep;
    return m.counters;
  }

  link_fault fault(const endpoint& ep, direction dir) const {
    auto i = faults.find({ep, dir});
    return i == faults.end() ? link_fault{} : i->second;
  }
};

struct event {
  timestamp at;
  uint64_t seq;
  std::function<void()> run;
};

struct later {
  bool operator()(const event& x, const event& y) const {
    return x.at != y.at ? x.at > y.at : x.seq > y.seq;
  }
};

size_t lane_index(lane l) {
  return static_cast<size_t>(l);
}

} // namespace

class sim_network::impl {
public:
  impl(uint64_t seed, sim_settings settings, timestamp start)
    : settings_(settings), rng_(seed), now_(start) {}

  // -- nodes ----------------------------------------------------------------

  sim_transport& start_node(const unique_address& addr,
                            transport_listener& listener) {
    TROUPE_ASSERT(addr.uid != 0);
    auto ep = endpoint_of(addr);
    TROUPE_ASSERT(live_.count(ep) == 0);
    auto n = std::make_unique<node_state>();
    n->id = nodes_.size();
    n->addr = addr;
    n->listener = &listener;
    n->facade = std::make_unique<sim_transport>(*this, n->id);
    live_[ep] = n->id;
    nodes_.push_back(std::move(n));
    return *nodes_.back()->facade;
  }

  sim_transport* find(const endpoint& ep) {
    auto i = live_.find(ep);
    return i == live_.end() ? nullptr : nodes_[i->second]->facade.get();
  }

  node_state& node(size_t id) {
    return *nodes_[id];
  }

  const sim_settings& settings() const {
    return settings_;
  }

  timestamp now() const {
    return now_;
  }

  // Kills node `id`: its connections break, peers notice after a latency.
  void stop(size_t id, const char* why) {
    auto& n = node(id);
    if (!n.alive)
      return;
    n.alive = false;
    live_.erase(endpoint_of(n.addr));
    for (auto& [ep, a] : n.out)
      for (auto ln : {lane::control, lane::ordinary})
        if (auto k = a.queues[lane_index(ln)].size(); k > 0)
          count_drop(n, ep, drop_reason::shutdown, k, ln);
    n.out.clear();
    n.in.clear();
    for (auto& other : nodes_)
      if (other->alive)
        break_links(*other, n, why);
  }

  // Breaks every connection between live node `n` and `gone` (in both
  // directions), notifying `n` only (`gone` is dead or notified apart).
  void break_links(node_state& n, const node_state& gone, const char* why) {
    auto ep = endpoint_of(gone.addr);
    if (auto i = n.out.find(ep); i != n.out.end()) {
      auto& a = i->second;
      if (a.st != association::state::idle && a.remote == gone.id) {
        bool was_up = a.st == association::state::established;
        close(n, ep, a);
        if (was_up)
          notify_down(n, gone.addr, direction::outbound, why);
      } else if (a.st == association::state::connecting) {
        close(n, ep, a);
      }
    }
    if (auto i = n.in.find(ep);
        i != n.in.end() && i->second.second == gone.id) {
      n.in.erase(i);
      notify_down(n, gone.addr, direction::inbound, why);
    }
  }

  void disconnect(const endpoint& a, const endpoint& b) {
    auto x = live_.find(a);
    auto y = live_.find(b);
    if (x == live_.end() || y == live_.end())
      return;
    auto& nx = node(x->second);
    auto& ny = node(y->second);
    break_links(nx, ny, "connection lost");
    break_links(ny, nx, "connection lost");
  }

  // -- events ---------------------------------------------------------------

  void schedule(timestamp at, std::function<void()> f) {
    events_.push(event{at, next_seq_++, std::move(f)});
  }

  std::optional<timestamp> next_event_time() const {
    if (events_.empty())
      return std::nullopt;
    return events_.top().at;
  }

  size_t advance_to(timestamp t) {
    size_t n = 0;
    while (!events_.empty() && events_.top().at <= t) {
      // Moving out of the top is safe: it is popped before anything else
      // touches the queue.
      auto e = std::move(const_cast<event&>(events_.top()));
      events_.pop();
      now_ = std::max(now_, e.at);
      e.run();
      ++n;
    }
    now_ = std::max(now_, t);
    return n;
  }

  size_t run_until_idle(timespan limit) {
    auto end = now_ + limit;
    size_t n = 0;
    while (auto t = next_event_time()) {
      if (*t > end)
        break;
      n += advance_to(*t);
    }
    return n;
  }

  // -- sending --------------------------------------------------------------

  runtime::error send(size_t id, const unique_address& to, lane ln,
                      std::span<const std::byte> payload) {
    auto& n = node(id);
    if (!n.alive)
      return runtime::make_error(errc::shutting_down,
                                 "cannot send to " + to_string(to)
                                   + ": the transport is shut down");
    auto ep = endpoint_of(to);
    auto i = n.out.find(ep);
    std::optional<uint64_t> established;
    if (i != n.out.end() && i->second.st == association::state::established)
      established = i->second.remote_uid;
    if (auto err
        = check_send(n.addr, to, payload.size(), settings_.max_frame_size,
                     n.registry, established)) {
      if (err.code == static_cast<uint8_t>(errc::quarantined))
        count_drop(n, ep, drop_reason::quarantined, 1, ln);
      else if (err.code == static_cast<uint8_t>(errc::incarnation_mismatch))
        count_drop(n, ep, drop_reason::incarnation_mismatch, 1, ln);
      return err;
    }
    auto fault = n.fault(ep, direction::outbound);
    if (fault.blackhole || draw_drop(fault)) {
      count_drop(n, ep,
                 fault.blackhole ? drop_reason::blackholed
                                 : drop_reason::injected,
                 1, ln);
      return {};
    }
    if (i == n.out.end())
      i = n.out.emplace(ep, association{settings_}).first;
    auto& a = i->second;
    queued_frame f{to.uid, {payload.begin(), payload.end()}};
    if (a.st == association::state::established) {
      transmit(n, ep, a, ln, std::move(f));
      return {};
    }
    auto& q = a.queues[lane_index(ln)];
    q.push_back(std::move(f));
    auto bound = ln == lane::control ? settings_.control_queue_size
                                     : settings_.outbound_queue_size;
    if (q.size() > bound) {
      q.pop_front();
      count_drop(n, ep, drop_reason::queue_overflow, 1, ln);
    }
    maybe_connect(n, ep, a, a.backoff.current(rng_));
    return {};
  }

  void remove_node(size_t id, const unique_address& peer) {
    auto& n = node(id);
    if (!n.alive || !n.registry.quarantine(peer))
      return;
    quarantined(n, peer, "removed from membership");
  }

  void set_fault(size_t id, const endpoint& peer, direction dir,
                 const link_fault& fault) {
    auto& faults = node(id).faults;
    if (fault.is_healthy())
      faults.erase({peer, dir});
    else
      faults[{peer, dir}] = fault;
  }

  void record_drop(size_t id, const unique_address& from, lane ln,
                   drop_reason reason) {
    auto& c = node(id).counters(endpoint_of(from));
    ++c.drops[static_cast<size_t>(reason)];
    (void)ln;
  }

  transport_metrics metrics(size_t id) {
    auto& n = node(id);
    transport_metrics result;
    result.total = n.unattributed;
    for (auto& [ep, m] : n.metrics) {
      result.peers.push_back(m);
      result.total.add(m.counters);
    }
    return result;
  }

private:
  bool draw_drop(const link_fault& fault) {
    if (fault.drop_probability <= 0.0)
      return false;
    std::uniform_real_distribution<double> unit{0.0, 1.0};
    return unit(rng_) < std::min(fault.drop_probability, 1.0);
  }

  void count_drop(node_state& n, const endpoint& ep, drop_reason reason,
                  uint64_t count, lane ln = lane::ordinary) {
    auto& c = n.counters(ep);
    c.drops[static_cast<size_t>(reason)] += count;
    auto peer = unique_address{ep.host, ep.port,
                               n.registry.current_uid(ep).value_or(0)};
    auto id = n.id;
    schedule(now_, [this, id, peer, ln, reason, count] {
      auto& m = node(id);
      if (m.alive)
        m.listener->on_dropped(peer, ln, reason, count);
    });
  }

  void notify_down(node_state& n, const unique_address& peer, direction dir,
                   std::string reason) {
    auto id = n.id;
    schedule(now_ + settings_.latency, [this, id, peer, dir, reason] {
      auto& m = node(id);
      if (m.alive)
        m.listener->on_peer_down(peer, dir, reason);
    });
  }

  void notify_foreign(node_state& n, const unique_address& peer,
                      const cluster_incarnation& theirs) {
    auto id = n.id;
    schedule(now_, [this, id, peer, theirs] {
      auto& m = node(id);
      if (m.alive)
        m.listener->on_foreign_incarnation(peer, theirs);
    });
  }

  void notify_up(node_state& n, const unique_address& peer, direction dir) {
    auto id = n.id;
    schedule(now_, [this, id, peer, dir] {
      auto& m = node(id);
      if (m.alive)
        m.listener->on_peer_up(peer, dir);
    });
  }

  // Closes an association; frames in flight on it are lost.
  void close(node_state& n, const endpoint& ep, association& a) {
    ++a.generation;
    a.st = association::state::idle;
    a.remote = no_node;
    if (a.has_queued())
      maybe_connect(n, ep, a, a.backoff.current(rng_));
  }

  void maybe_connect(node_state& n, const endpoint& ep, association& a,
                     timespan delay) {
    if (a.st != association::state::idle || a.attempt_scheduled)
      return;
    a.attempt_scheduled = true;
    auto id = n.id;
    auto gen = a.generation;
    schedule(now_ + delay, [this, id, ep, gen] { attempt(id, ep, gen); });
  }

  void attempt(size_t id, const endpoint& ep, uint64_t gen) {
    auto& n = node(id);
    auto i = n.out.find(ep);
    if (!n.alive || i == n.out.end() || i->second.generation != gen)
      return;
    auto& a = i->second;
    a.attempt_scheduled = false;
    if (a.st != association::state::idle || !a.has_queued())
      return;
    if (a.attempted)
      ++n.counters(ep).reconnects;
    a.attempted = true;
    a.st = association::state::connecting;
    // Connect + TLS-less handshake: two round trips.
    schedule(now_ + 4 * settings_.latency,
             [this, id, ep, gen] { complete(id, ep, gen); });
  }

  void fail_attempt(node_state& n, const endpoint& ep, association& a,
                    bool refused) {
    if (refused)
      ++n.counters(ep).handshake_failures;
    a.st = association::state::idle;
    ++a.generation;
    if (a.has_queued())
      maybe_connect(n, ep, a, a.backoff.on_failure(rng_));
    else
      a.backoff.on_failure(rng_);
  }

  void complete(size_t id, const endpoint& ep, uint64_t gen) {
    auto& n = node(id);
    auto i = n.out.find(ep);
    if (!n.alive || i == n.out.end() || i->second.generation != gen)
      return;
    auto& a = i->second;
    auto target = live_.find(ep);
    if (target == live_.end())
      return fail_attempt(n, ep, a, false); // connection refused
    auto& peer = node(target->second);
    // Each side admits the other, as the TCP transport does after the
    // handshake authenticated both.
    if (peer.registry.is_quarantined(n.addr)
        || n.registry.is_quarantined(peer.addr)) {
      ++peer.counters(endpoint_of(n.addr)).handshake_failures;
      return fail_attempt(n, ep, a, true);
    }
    admit(n, peer.addr);
    admit(peer, n.addr);
    a.st = association::state::established;
    a.remote = peer.id;
    a.remote_uid = peer.addr.uid;
    a.backoff.reset();
    if (auto old = peer.in.find(endpoint_of(n.addr)); old != peer.in.end())
      peer.in.erase(old); // the newer connection from the same node wins
    peer.in[endpoint_of(n.addr)] = {n.addr.uid, n.id};
    notify_up(n, peer.addr, direction::outbound);
    notify_up(peer, n.addr, direction::inbound);
    if (n.incarnation.is_set() && peer.incarnation.is_set()
        && n.incarnation != peer.incarnation) {
      notify_foreign(n, peer.addr, peer.incarnation);
      notify_foreign(peer, n.addr, n.incarnation);
    }
    for (auto ln : {lane::control, lane::ordinary}) {
      auto q = std::move(a.queues[lane_index(ln)]);
      a.queues[lane_index(ln)].clear();
      for (auto& f : q) {
        if (f.uid != 0 && f.uid != peer.addr.uid)
          count_drop(n, ep, drop_reason::incarnation_mismatch, 1, ln);
        else
          transmit(n, ep, a, ln, std::move(f));
      }
    }
  }

  // Runs the quarantine registry's admission for `peer` at `n`.
  void admit(node_state& n, const unique_address& peer) {
    n.counters(endpoint_of(peer));
    n.metrics[endpoint_of(peer)].uid = peer.uid;
    // The simulated handshake is between nodes of this build.
    n.metrics[endpoint_of(peer)].protocol = current_protocol;
    auto r = n.registry.admit(peer);
    if (r.replaced)
      quarantined(n, *r.replaced,
                  "replaced by the new incarnation " + to_string(peer));
  }

  // `peer` was just quarantined at `n`: drop its frames, close its links.
  void quarantined(node_state& n, const unique_address& peer,
                   std::string reason) {
    auto ep = endpoint_of(peer);
    if (auto i = n.out.find(ep); i != n.out.end()) {
      auto& a = i->second;
      for (auto ln : {lane::control, lane::ordinary}) {
        auto& q = a.queues[lane_index(ln)];
        auto before = q.size();
        std::erase_if(q, [&](auto& f) { return f.uid == peer.uid; });
        if (before != q.size())
          count_drop(n, ep, drop_reason::quarantined, before - q.size(), ln);
      }
      if (a.st == association::state::established && a.remote_uid == peer.uid) {
        auto remote = a.remote;
        close(n, ep, a);
        notify_down(n, peer, direction::outbound, "quarantined");
        // The peer sees its inbound connection close.
        auto& other = node(remote);
        auto mine = endpoint_of(n.addr);
        if (auto j = other.in.find(mine); j != other.in.end()) {
          other.in.erase(j);
          notify_down(other, n.addr, direction::inbound, "connection closed");
        }
      }
    }
    if (auto j = n.in.find(ep);
        j != n.in.end() && j->second.first == peer.uid) {
      auto remote = j->second.second;
      n.in.erase(j);
      notify_down(n, peer, direction::inbound, "quarantined");
      auto& other = node(remote);
      if (auto k = other.out.find(endpoint_of(n.addr));
          k != other.out.end()
          && k->second.st == association::state::established) {
        close(other, k->first, k->second);
        notify_down(other, n.addr, direction::outbound, "connection closed");
      }
    }
    auto id = n.id;
    schedule(now_, [this, id, peer, reason] {
      auto& m = node(id);
      if (m.alive)
        m.listener->on_peer_quarantined(peer, reason);
    });
  }

  // Puts one frame on an established association.
  void transmit(node_state& n, const endpoint& ep, association& a, lane ln,
                queued_frame f) {
    auto& peer = node(a.remote);
    auto bytes = frame_header_size + f.payload.size();
    auto& c = n.counters(ep);
    c.bytes_out += bytes;
    ++c.messages_out;
    timespan extra
      = n.fault(ep, direction::outbound).delay
        + peer.fault(endpoint_of(n.addr), direction::inbound).delay;
    if (settings_.jitter.count() > 0)
      extra += timespan{static_cast<int64_t>(
        rng_() % static_cast<uint64_t>(settings_.jitter.count()))};
    auto due = std::max(now_ + settings_.latency + extra, a.last_due);
    a.last_due = due;
    auto from = n.id;
    auto gen = a.generation;
    schedule(due, [this, from, ep, gen, ln, bytes, f = std::move(f)] {
      deliver(from, ep, gen, ln, bytes, f.payload);
    });
  }

  void deliver(size_t from, const endpoint& ep, uint64_t gen, lane ln,
               size_t bytes, const std::vector<std::byte>& payload) {
    auto& n = node(from);
    auto i = n.out.find(ep);
    if (!n.alive || i == n.out.end() || i->second.generation != gen) {
      if (n.alive)
        count_drop(n, ep, drop_reason::connection_lost, 1, ln);
      return;
    }
    auto& peer = node(i->second.remote);
    auto src = endpoint_of(n.addr);
    auto fault = peer.fault(src, direction::inbound);
    if (fault.blackhole)
      return count_drop(peer, src, drop_reason::blackholed, 1, ln);
    if (draw_drop(fault))
      return count_drop(peer, src, drop_reason::injected, 1, ln);
    auto& c = peer.counters(src);
    c.bytes_in += bytes;
    ++c.messages_in;
    received_frame f{ln, payload};
    peer.listener->on_frames(n.addr, std::span{&f, 1});
  }

  sim_settings settings_;
  std::mt19937_64 rng_;
  timestamp now_;
  uint64_t next_seq_ = 0;
  std::priority_queue<event, std::vector<event>, later> events_;
  std::vector<std::unique_ptr<node_state>> nodes_;
  std::map<endpoint, size_t> live_;
};

// -- sim_network --------------------------------------------------------------

sim_network::sim_network(uint64_t seed, sim_settings settings,
                         runtime::timestamp start)
  : impl_(std::make_unique<impl>(seed, settings, start)) {}

sim_network::~sim_network() = default;

sim_transport& sim_network::start_node(const unique_address& addr,
                                       transport_listener& listener) {
  return impl_->start_node(addr, listener);
}

sim_transport* sim_network::find(const endpoint& ep) {
  return impl_->find(ep);
}

void sim_network::crash(const endpoint& ep) {
  if (auto* t = impl_->find(ep))
    t->shutdown();
}

void sim_network::disconnect(const endpoint& a, const endpoint& b) {
  impl_->disconnect(a, b);
}

runtime::timestamp sim_network::now() const noexcept {
  return impl_->now();
}

std::optional<runtime::timestamp> sim_network::next_event_time() const {
  return impl_->next_event_time();
}

size_t sim_network::advance_to(runtime::timestamp t) {
  return impl_->advance_to(t);
}

size_t sim_network::run_until_idle(runtime::timespan limit) {
  return impl_->run_until_idle(limit);
}

// -- sim_transport ------------------------------------------------------------

const unique_address& sim_transport::local_address() const noexcept {
  return net_.node(node_).addr;
}

runtime::error sim_transport::send(const unique_address& to, lane lane,
                                   std::span<const std::byte> payload) {
  return net_.send(node_, to, lane, payload);
}

void sim_transport::remove_node(const unique_address& node) {
  net_.remove_node(node_, node);
}

void sim_transport::set_incarnation(const cluster_incarnation& x) {
  net_.node(node_).incarnation = x;
}

bool sim_transport::is_quarantined(const unique_address& node) const {
  return net_.node(node_).registry.is_quarantined(node);
}

void sim_transport::set_fault(const endpoint& peer, direction dir,
                              const link_fault& fault) {
  net_.set_fault(node_, peer, dir, fault);
}

void sim_transport::record_drop(const unique_address& from, lane lane,
                                drop_reason reason) {
  net_.record_drop(node_, from, lane, reason);
}

transport_metrics sim_transport::metrics() const {
  return net_.metrics(node_);
}

void sim_transport::shutdown() {
  net_.stop(node_, "connection reset (peer stopped)");
}

} // namespace troupe::cluster
