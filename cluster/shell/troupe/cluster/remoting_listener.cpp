#include "troupe/cluster/remoting_listener.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/message_id.hpp>
#include <caf/send.hpp>

#include "troupe/cluster/message_codec.hpp"
#include "troupe/cluster/remoting_wire.hpp"

namespace troupe::cluster::detail {

remoting_listener::remoting_listener(
  caf::actor_system& sys, std::shared_ptr<published_registry> registry,
  std::shared_ptr<remoting_counters> counters)
  : sys_(sys), registry_(std::move(registry)), counters_(std::move(counters)) {}

void remoting_listener::attach(caf::actor actor, transport* t) {
  transport_.store(t, std::memory_order_release);
  std::lock_guard guard{mtx_};
  if (detached_)
    return;
  for (auto& msg : buffer_)
    caf::anon_send(actor, std::move(msg));
  buffer_.clear();
  actor_ = std::move(actor);
}

void remoting_listener::detach() {
  std::lock_guard guard{mtx_};
  detached_ = true;
  actor_ = nullptr;
  buffer_.clear();
}

void remoting_listener::post(caf::message msg) {
  // Under the lock, so events reach the actor in the order they happened
  // even across `attach`.
  std::lock_guard guard{mtx_};
  if (detached_)
    return;
  if (actor_)
    caf::anon_send(actor_, std::move(msg));
  else
    buffer_.push_back(std::move(msg));
}

void remoting_listener::on_frames(const unique_address& from,
                                  std::span<const received_frame> frames) {
  target_cache cache;
  for (auto& f : frames)
    handle(from, f.lane, f.payload, cache);
}

void remoting_listener::on_frame(const unique_address& from, lane lane,
                                 std::span<const std::byte> payload) {
  target_cache cache;
  handle(from, lane, payload, cache);
}

void remoting_listener::drop_undecodable(const unique_address& from, lane lane,
                                         const std::string& why) {
  if (auto* t = transport_.load(std::memory_order_acquire))
    t->record_drop(from, lane, drop_reason::undecodable);
  if (remoting_counters::bump(counters_->undecodable))
    log_.warning("dropped an undecodable {} frame from {}: {} ({} so far)",
                 to_string(lane), to_string(from), why,
                 counters_->undecodable.load(std::memory_order_relaxed));
}

void remoting_listener::handle(const unique_address& from, lane lane,
                               std::span<const std::byte> payload,
                               target_cache& cache) {
  auto env = decode_envelope(payload);
  if (!env) {
    drop_undecodable(from, lane, env.error().message);
    return;
  }
  if (env->kind != envelope_kind::message) {
    post(caf::make_message(
      control_received{from, lane, env->kind, std::string{env->name},
                       env->cause, env->seq, std::string{env->reason}}));
    return;
  }
  auto msg = decode_message(sys_, env->body,
                            remote_ref{from, std::string{env->reply_to}});
  if (!msg) {
    drop_undecodable(from, lane,
                     "message for \"" + std::string{env->name}
                       + "\": " + msg.error().message);
    return;
  }
  if (cache.name != env->name) {
    cache.name = env->name;
    cache.actor = registry_->find(env->name);
  }
  if (!cache.actor) {
    if (remoting_counters::bump(counters_->dead_letters))
      log_.warning("dead letter: nothing is published under \"{}\" on this "
                   "node; dropped a message from {} ({} so far)",
                   env->name, to_string(from),
                   counters_->dead_letters.load(std::memory_order_relaxed));
    return;
  }
  // Straight into the target's mailbox, from the io thread.
  caf::actor_cast<caf::abstract_actor*>(cache.actor)
    ->enqueue(nullptr, caf::make_message_id(), std::move(*msg), nullptr);
  counters_->delivered.fetch_add(1, std::memory_order_relaxed);
}

void remoting_listener::on_peer_up(const unique_address& peer, direction) {
  post(caf::make_message(peer_event{peer, peer_change::up, {}}));
}

void remoting_listener::on_peer_down(const unique_address& peer, direction dir,
                                     std::string_view reason) {
  std::string why = to_string(dir);
  why += ": ";
  why += reason;
  post(caf::make_message(peer_event{peer, peer_change::down, std::move(why)}));
}

void remoting_listener::on_peer_quarantined(const unique_address& peer,
                                            std::string_view reason) {
  post(caf::make_message(
    peer_event{peer, peer_change::quarantined, std::string{reason}}));
}

void remoting_listener::on_dropped(const unique_address& peer, lane lane,
                                   drop_reason reason, uint64_t count) {
  log_.debug("transport dropped {} {} frame(s) to or from {}: {}", count,
             to_string(lane), to_string(peer), to_string(reason));
}

} // namespace troupe::cluster::detail
