#include "troupe/cluster/remoting_listener.hpp"

#include <caf/actor_system.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "troupe/cluster/inbound_actor.hpp"

namespace troupe::cluster::detail {

remoting_listener::remoting_listener(std::shared_ptr<inbound_context> ctx,
                                     bool deliver_on_io_thread)
  : ctx_(ctx), on_io_thread_(deliver_on_io_thread), direct_(ctx) {}

void remoting_listener::attach(caf::actor remoting, transport* t) {
  ctx_->transport_ptr.store(t, std::memory_order_release);
  std::lock_guard guard{mtx_};
  if (detached_)
    return;
  remoting_ = std::move(remoting);
  for (auto& [peer, msg] : buffer_)
    route(peer, std::move(msg));
  buffer_.clear();
}

void remoting_listener::detach() {
  std::lock_guard guard{mtx_};
  detached_ = true;
  remoting_ = nullptr;
  buffer_.clear();
  for (auto& [peer, actor] : inbound_)
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  inbound_.clear();
}

void remoting_listener::post(const unique_address& peer, caf::message msg) {
  // Under the lock, so events keep their order even across `attach`.
  std::lock_guard guard{mtx_};
  if (detached_)
    return;
  if (remoting_)
    route(peer, std::move(msg));
  else
    buffer_.emplace_back(peer, std::move(msg));
}

void remoting_listener::route(const unique_address& peer, caf::message msg) {
  if (on_io_thread_) {
    caf::anon_send(remoting_, std::move(msg));
    return;
  }
  auto i = inbound_.find(peer);
  if (i == inbound_.end())
    i = inbound_
          .emplace(peer, spawn_inbound_actor(ctx_->sys, ctx_, remoting_, peer))
          .first;
  // A quarantined uid never sends again: its actor stops after this.
  auto last = msg.match_elements<peer_event>()
              && msg.get_as<peer_event>(0).change == peer_change::quarantined;
  caf::anon_send(i->second, std::move(msg));
  if (last)
    inbound_.erase(i);
}

void remoting_listener::on_frames(const unique_address& from,
                                  std::span<const received_frame> frames) {
  if (on_io_thread_) {
    auto post_control = [&](control_received&& c) {
      post(from, caf::make_message(std::move(c)));
    };
    for (auto& f : frames)
      direct_.dispatch(from, f.lane, f.payload, nullptr, post_control);
    direct_.reset_target();
    return;
  }
  inbound_batch batch;
  size_t total = 0;
  for (auto& f : frames)
    total += f.payload.size();
  batch.bytes.reserve(total);
  batch.frames.reserve(frames.size());
  for (auto& f : frames) {
    auto p = reinterpret_cast<const char*>(f.payload.data());
    batch.frames.push_back({static_cast<uint32_t>(batch.bytes.size()),
                            static_cast<uint32_t>(f.payload.size()), f.lane});
    batch.bytes.insert(batch.bytes.end(), p, p + f.payload.size());
  }
  post(from, caf::make_message(std::move(batch)));
}

void remoting_listener::on_frame(const unique_address& from, lane lane,
                                 std::span<const std::byte> payload) {
  received_frame f{lane, payload};
  on_frames(from, std::span{&f, 1});
}

void remoting_listener::on_peer_up(const unique_address& peer, direction) {
  post(peer, caf::make_message(peer_event{peer, peer_change::up, {}}));
}

void remoting_listener::on_peer_down(const unique_address& peer, direction dir,
                                     std::string_view reason) {
  std::string why = to_string(dir);
  why += ": ";
  why += reason;
  post(peer,
       caf::make_message(peer_event{peer, peer_change::down, std::move(why)}));
}

void remoting_listener::on_peer_quarantined(const unique_address& peer,
                                            std::string_view reason) {
  post(peer, caf::make_message(peer_event{peer, peer_change::quarantined,
                                          std::string{reason}}));
}

void remoting_listener::on_foreign_incarnation(
  const unique_address& peer, const cluster_incarnation& theirs) {
  foreign_incarnation_handler handler;
  {
    std::lock_guard guard{mtx_};
    if (detached_)
      return;
    handler = foreign_;
  }
  if (handler)
    handler(peer, theirs);
}

void remoting_listener::set_foreign_incarnation_handler(
  foreign_incarnation_handler handler) {
  std::lock_guard guard{mtx_};
  foreign_ = std::move(handler);
}

void remoting_listener::on_dropped(const unique_address& peer, lane lane,
                                   drop_reason reason, uint64_t count) {
  ctx_->log.debug("transport dropped {} {} frame(s) to or from {}: {}", count,
                  to_string(lane), to_string(peer), to_string(reason));
}

} // namespace troupe::cluster::detail
