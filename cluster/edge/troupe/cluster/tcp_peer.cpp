// tcp_transport's io-thread logic per peer: flushing queued frames in
// batches, reconnecting with backoff, admitting and quarantining
// incarnations, delivering inbound frames, and injected delays.

#include <algorithm>
#include <chrono>
#include <exception>

#include <boost/asio/post.hpp>
#include <fmt/format.h>

#include "troupe/cluster/tcp_transport_impl.hpp"

namespace troupe::cluster {

namespace {

using steady = std::chrono::steady_clock;

size_t idx(lane ln) {
  return static_cast<size_t>(ln);
}

} // namespace

template <class F>
void tcp_transport::impl::notify(F&& f) {
  if (quiet_ || !listener_)
    return;
  try {
    f(*listener_);
  } catch (const std::exception& e) {
    log_.error("listener threw: {}", e.what());
  }
}

// -- writing ------------------------------------------------------------------

void tcp_transport::impl::flush(const std::shared_ptr<peer_state>& p) {
  if (quiet_)
    return;
  bool writable = p->conn && p->conn->can_write();
  bool start = false;
  bool waiting = false;
  {
    std::lock_guard guard{mtx_};
    p->flush_posted = false;
    if (writable && !p->direct_ready && p->conn->plain_fd() >= 0) {
      p->direct_ready = true;
      std::lock_guard fd_guard{p->fd_mtx};
      p->direct_fd = p->conn->plain_fd();
    }
    if (writable && !p->writing) {
      for (auto ln : {lane::control, lane::ordinary}) {
        auto& in = p->inflight[idx(ln)];
        auto& pending = p->pending[idx(ln)];
        if (in.empty() && !pending.empty())
          in.swap(pending); // both keep their capacity
      }
      start = !p->inflight[0].empty() || !p->inflight[1].empty();
      p->writing = start;
    }
    if (p->overflowing && p->pending[idx(lane::ordinary)].empty()
        && p->pending[idx(lane::control)].empty()) {
      p->overflowing = false;
      log_.info("queues to {} drain again ({} frames dropped for overflow "
                "so far)",
                to_string(p->ep),
                p->counters.dropped(drop_reason::queue_overflow));
    }
    waiting = !p->pending[0].empty() || !p->pending[1].empty()
              || !p->inflight[0].empty() || !p->inflight[1].empty();
  }
  report_drops(*p);
  if (!waiting)
    return;
  if (!p->conn)
    return maybe_connect(p);
  if (start)
    write_batch(p);
}

// Runs with `writing` claimed by the io thread.
void tcp_transport::impl::write_batch(const std::shared_ptr<peer_state>& p) {
  size_t n_control = 0;
  size_t n_ordinary = 0;
  auto control = p->inflight[idx(lane::control)].front(SIZE_MAX, n_control);
  auto ordinary
    = p->inflight[idx(lane::ordinary)].front(max_ordinary_batch, n_ordinary);
  p->batch = {n_control, n_ordinary};
  p->batch_bytes = {control.size(), ordinary.size()};
  // Control first: a control frame waits at most for one batch.
  p->conn->write({asio::buffer(control.data(), control.size()),
                  asio::buffer(ordinary.data(), ordinary.size())},
                 [self = shared_from_this(), p](const auto& ec) {
                   self->on_written(p, ec);
                 });
}

void tcp_transport::impl::on_written(const std::shared_ptr<peer_state>& p,
                                     const boost::system::error_code& ec) {
  bool lost = false;
  {
    std::lock_guard guard{mtx_};
    p->writing = false;
    auto batch = std::exchange(p->batch, {0, 0});
    auto bytes = std::exchange(p->batch_bytes, {0, 0});
    if (ec) {
      // Whether the peer got them is unknown; they are not sent again.
      for (auto ln : {lane::control, lane::ordinary}) {
        p->inflight[idx(ln)].pop(batch[idx(ln)]);
        if (batch[idx(ln)] > 0)
          count_drop_locked(*p, ln, drop_reason::connection_lost,
                            batch[idx(ln)]);
      }
      lost = true;
    } else {
      for (auto ln : {lane::control, lane::ordinary})
        p->counters.messages_out
          += p->inflight[idx(ln)].consume(bytes[idx(ln)]);
      p->counters.bytes_out += bytes[0] + bytes[1];
    }
  }
  if (lost) {
    // The connection is closed (on_closed ran); a new one may already be
    // up and waiting for this write to finish.
    purge_quarantined(*p);
    report_drops(*p);
  }
  flush(p);
}

void tcp_transport::impl::on_writable(tcp_connection& conn) {
  if (conn.dir() != direction::outbound)
    return;
  std::shared_ptr<peer_state> p;
  {
    std::lock_guard guard{mtx_};
    p = peer_locked(*conn.dialed());
  }
  flush(p);
}

void tcp_transport::impl::on_closing(tcp_connection& conn) {
  if (conn.dir() != direction::outbound || conn.plain_fd() < 0)
    return;
  std::lock_guard guard{mtx_};
  auto p = peer_locked(*conn.dialed());
  std::lock_guard fd_guard{p->fd_mtx};
  if (p->direct_fd != conn.plain_fd())
    return;
  p->direct_fd = -1;
  p->direct_ready = false;
  ++p->generation;
}

void tcp_transport::impl::report_drops(peer_state& p) {
  std::array<std::array<uint64_t, drop_reason_count>, 2> drops{};
  unique_address peer;
  {
    std::lock_guard guard{mtx_};
    drops = p.unreported;
    p.unreported = {};
    peer = unique_address{p.ep.host, p.ep.port, p.last_uid};
  }
  for (auto ln : {lane::control, lane::ordinary})
    for (size_t r = 0; r < drop_reason_count; ++r)
      if (auto n = drops[idx(ln)][r]; n > 0)
        notify([&](transport_listener& l) {
          l.on_dropped(peer, ln, static_cast<drop_reason>(r), n);
        });
}

// -- connecting ---------------------------------------------------------------

void tcp_transport::impl::maybe_connect(const std::shared_ptr<peer_state>& p) {
  if (quiet_ || p->conn || p->reconnect_armed)
    return;
  runtime::timespan delay{0};
  {
    std::lock_guard guard{mtx_};
    bool waiting = !p->pending[0].empty() || !p->pending[1].empty()
                   || !p->inflight[0].empty() || !p->inflight[1].empty();
    if (!waiting)
      return;
    delay = p->backoff.current(rng_);
  }
  if (delay.count() <= 0)
    return connect(p);
  p->reconnect_armed = true;
  p->reconnect_timer.expires_after(delay);
  p->reconnect_timer.async_wait([self = shared_from_this(), p](auto ec) {
    p->reconnect_armed = false;
    if (ec || self->quiet_ || p->conn)
      return;
    self->connect(p);
  });
}

void tcp_transport::impl::connect(const std::shared_ptr<peer_state>& p) {
  if (p->attempted) {
    std::lock_guard guard{mtx_};
    ++p->counters.reconnects;
  }
  p->attempted = true;
  p->conn = std::make_shared<tcp_connection>(*this, direction::outbound,
                                             tcp::socket{ioc}, p->ep);
  p->conn->start_outbound();
}

// -- incarnations -------------------------------------------------------------

bool tcp_transport::impl::admit(tcp_connection& conn,
                                const unique_address& peer) {
  quarantine_registry::admission r;
  {
    std::lock_guard guard{mtx_};
    r = registry_.admit(peer);
    if (r.admitted) {
      auto p = peer_locked(endpoint_of(peer));
      p->last_uid = peer.uid;
      p->protocol = conn.peer_protocol();
    }
  }
  if (!r.admitted)
    return false;
  if (r.replaced)
    on_quarantined(*r.replaced, fmt::format("replaced by the new incarnation "
                                            "{}",
                                            to_string(peer)));
  return true;
}

// Drops queued frames addressed to a uid other than 0 and `uid`.
void tcp_transport::impl::keep_only(peer_state& p, uint64_t uid) {
  std::lock_guard guard{mtx_};
  for (auto ln : {lane::control, lane::ordinary}) {
    uint64_t quarantined = 0;
    uint64_t mismatched = 0;
    auto pred = [&](uint64_t x) {
      if (x == 0 || x == uid)
        return false;
      if (registry_.is_quarantined({p.ep.host, p.ep.port, x}))
        ++quarantined;
      else
        ++mismatched;
      return true;
    };
    p.pending[idx(ln)].remove_if(pred);
    if (!p.writing)
      p.inflight[idx(ln)].remove_if(pred);
    if (quarantined > 0)
      count_drop_locked(p, ln, drop_reason::quarantined, quarantined);
    if (mismatched > 0)
      count_drop_locked(p, ln, drop_reason::incarnation_mismatch, mismatched);
  }
}

// Drops queued frames addressed to quarantined uids.
void tcp_transport::impl::purge_quarantined(peer_state& p) {
  std::lock_guard guard{mtx_};
  for (auto ln : {lane::control, lane::ordinary}) {
    auto pred = [&](uint64_t x) {
      return x != 0 && registry_.is_quarantined({p.ep.host, p.ep.port, x});
    };
    auto n = p.pending[idx(ln)].remove_if(pred);
    if (!p.writing)
      n += p.inflight[idx(ln)].remove_if(pred);
    if (n > 0)
      count_drop_locked(p, ln, drop_reason::quarantined, n);
  }
}

void tcp_transport::impl::on_quarantined(const unique_address& peer,
                                         const std::string& reason) {
  if (quiet_)
    return;
  auto ep = endpoint_of(peer);
  std::shared_ptr<peer_state> p;
  {
    std::lock_guard guard{mtx_};
    if (auto i = peers_.find(ep); i != peers_.end())
      p = i->second;
  }
  log_.info("quarantined {}: {}", to_string(peer), reason);
  if (p) {
    purge_quarantined(*p);
    if (p->conn && p->conn->established() && p->conn->peer().uid == peer.uid)
      p->conn->close("quarantined");
  }
  if (auto i = inbound_.find(ep);
      i != inbound_.end() && i->second->peer().uid == peer.uid)
    i->second->close("quarantined");
  notify([&](transport_listener& l) { l.on_peer_quarantined(peer, reason); });
  if (p)
    report_drops(*p);
}

void tcp_transport::impl::on_established(
  const std::shared_ptr<tcp_connection>& conn) {
  auto& peer = conn->peer();
  auto ep = endpoint_of(peer);
  if (auto theirs = conn->peer_incarnation(); theirs.is_set()) {
    auto ours = handshake_params().incarnation;
    if (ours.is_set() && ours != theirs) {
      log_.warning("{} belongs to cluster incarnation {}, this node to {}: "
                   "two clusters of this name met",
                   to_string(peer), to_string(theirs), to_string(ours));
      notify(
        [&](transport_listener& l) { l.on_foreign_incarnation(peer, theirs); });
    }
  }
  if (conn->dir() == direction::inbound) {
    std::erase(handshaking_, conn);
    --pending_inbound_;
    if (auto i = inbound_.find(ep); i != inbound_.end() && i->second != conn) {
      // The peer gave up on its older connection; dropping what is still
      // unread on it keeps FIFO (no old frame after a new one).
      auto old = i->second;
      old->close("replaced by a newer connection from the same node");
    }
    inbound_[ep] = conn;
    log_.info("{} connected to this node", to_string(peer));
    notify(
      [&](transport_listener& l) { l.on_peer_up(peer, direction::inbound); });
    return;
  }
  std::shared_ptr<peer_state> p;
  {
    std::lock_guard guard{mtx_};
    p = peer_locked(ep);
    p->established_uid = peer.uid;
  }
  {
    std::lock_guard guard{mtx_};
    if (!p->writing)
      drop_partial_locked(*p);
  }
  keep_only(*p, peer.uid);
  p->backoff.reset();
  log_.info("connected to {}", to_string(peer));
  notify(
    [&](transport_listener& l) { l.on_peer_up(peer, direction::outbound); });
  flush(p);
}

void tcp_transport::impl::on_closed(const std::shared_ptr<tcp_connection>& conn,
                                    const std::string& reason,
                                    close_kind kind) {
  std::optional<endpoint> ep;
  if (conn->established())
    ep = endpoint_of(conn->peer());
  else if (conn->dialed())
    ep = conn->dialed();
  if (kind == close_kind::violation) {
    // Logged before it is counted: whoever sees the count finds the line.
    log_.warning("{} closed: {}", conn->describe(), reason);
    std::lock_guard guard{mtx_};
    if (ep)
      ++peer_locked(*ep)->counters.protocol_violations;
    else
      ++unattributed_.protocol_violations;
  }
  if (conn->dir() == direction::inbound) {
    if (!conn->established()) {
      if (std::erase(handshaking_, conn) > 0)
        --pending_inbound_;
      if (!quiet_ && kind == close_kind::handshake_failed)
        log_.warning("{} closed: {}", conn->describe(), reason);
      return;
    }
    if (auto i = inbound_.find(*ep); i != inbound_.end() && i->second == conn)
      inbound_.erase(i);
    if (quiet_)
      return;
    if (kind != close_kind::violation)
      log_.info("{} closed: {}", conn->describe(), reason);
    notify([&](transport_listener& l) {
      l.on_peer_down(conn->peer(), direction::inbound, reason);
    });
    return;
  }
  std::shared_ptr<peer_state> p;
  {
    std::lock_guard guard{mtx_};
    p = peer_locked(*conn->dialed());
    if (p->conn == conn && conn->established())
      p->established_uid.reset();
  }
  if (p->conn != conn || quiet_)
    return;
  p->conn.reset();
  if (conn->established()) {
    if (kind != close_kind::violation)
      log_.info("{} ({}) closed: {}", conn->describe(), to_string(conn->peer()),
                reason);
    notify([&](transport_listener& l) {
      l.on_peer_down(conn->peer(), direction::outbound, reason);
    });
  } else {
    runtime::timespan delay;
    {
      std::lock_guard guard{mtx_};
      delay = p->backoff.on_failure(rng_);
    }
    auto level = kind == close_kind::unreachable ? runtime::log_level::debug
                                                 : runtime::log_level::warning;
    log_.log(
      level, "{}: {} (next attempt in {} ms)", conn->describe(), reason,
      std::chrono::duration_cast<std::chrono::milliseconds>(delay).count());
  }
  purge_quarantined(*p);
  report_drops(*p);
  maybe_connect(p);
}

// -- inbound frames -----------------------------------------------------------

void tcp_transport::impl::on_frames(tcp_connection& conn,
                                    std::vector<received_frame>& batch,
                                    size_t bytes) {
  auto& from = conn.peer();
  auto ep = endpoint_of(from);
  std::shared_ptr<peer_state> p;
  link_fault fault;
  {
    std::lock_guard guard{mtx_};
    p = peer_locked(ep);
    fault = fault_locked(ep, direction::inbound);
    if (fault.blackhole) {
      for (auto& f : batch)
        count_drop_locked(*p, f.lane, drop_reason::blackholed, 1);
      batch.clear();
    } else if (fault.drop_probability > 0.0) {
      std::erase_if(batch, [&](const received_frame& f) {
        if (!draw_drop_locked(fault))
          return false;
        count_drop_locked(*p, f.lane, drop_reason::injected, 1);
        return true;
      });
    }
    p->counters.bytes_in += bytes;
    p->counters.messages_in += batch.size();
  }
  if (fault.blackhole || fault.drop_probability > 0.0)
    report_drops(*p);
  if (batch.empty())
    return;
  if (fault.delay.count() > 0 || !p->inbound_delayed.empty())
    return delay_inbound(p, from, fault, batch);
  notify([&](transport_listener& l) { l.on_frames(from, batch); });
}

// -- injected delays (tests only)
// -----------------------------------------------

void tcp_transport::impl::arm_delay_timer(
  const std::shared_ptr<peer_state>& p) {
  if (p->delay_armed || quiet_)
    return;
  steady::time_point due;
  {
    std::lock_guard guard{mtx_};
    if (p->delayed.empty())
      return;
    due = p->delayed.front().due;
  }
  p->delay_armed = true;
  p->delay_timer.expires_at(due);
  p->delay_timer.async_wait([self = shared_from_this(), p](auto ec) {
    p->delay_armed = false;
    if (!ec && !self->quiet_)
      self->release_delayed(p);
  });
}

void tcp_transport::impl::release_delayed(
  const std::shared_ptr<peer_state>& p) {
  {
    std::lock_guard guard{mtx_};
    auto now = steady::now();
    while (!p->delayed.empty() && p->delayed.front().due <= now) {
      auto& f = p->delayed.front();
      enqueue_locked(*p, f.lane, f.uid, f.payload);
      p->delayed.pop_front();
    }
  }
  flush(p);
  arm_delay_timer(p);
}

void tcp_transport::impl::delay_inbound(const std::shared_ptr<peer_state>& p,
                                        const unique_address& from,
                                        const link_fault& f,
                                        std::vector<received_frame>& batch) {
  auto due = steady::now() + f.delay;
  if (!p->inbound_delayed.empty())
    due = std::max(due, p->inbound_delayed.back().due);
  for (auto& x : batch)
    p->inbound_delayed.push_back(delayed_frame{
      due, x.lane, from.uid, {x.payload.begin(), x.payload.end()}});
  arm_inbound_delay_timer(p);
}

void tcp_transport::impl::arm_inbound_delay_timer(
  const std::shared_ptr<peer_state>& p) {
  if (p->inbound_delay_armed || p->inbound_delayed.empty() || quiet_)
    return;
  p->inbound_delay_armed = true;
  p->inbound_delay_timer.expires_at(p->inbound_delayed.front().due);
  p->inbound_delay_timer.async_wait([self = shared_from_this(), p](auto ec) {
    p->inbound_delay_armed = false;
    if (ec || self->quiet_)
      return;
    auto now = steady::now();
    while (!p->inbound_delayed.empty()
           && p->inbound_delayed.front().due <= now) {
      auto f = std::move(p->inbound_delayed.front());
      p->inbound_delayed.pop_front();
      unique_address from{p->ep.host, p->ep.port, f.uid};
      received_frame r{f.lane, f.payload};
      self->notify([&](transport_listener& l) {
        l.on_frames(from, std::span{&r, 1});
      });
    }
    self->arm_inbound_delay_timer(p);
  });
}

} // namespace troupe::cluster
