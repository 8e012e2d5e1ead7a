#include "troupe/cluster/frame_dispatcher.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/actor_cast.hpp>
#include <caf/message_id.hpp>
#include <fmt/format.h>

#include "troupe/cluster/remoting_wire.hpp"

namespace troupe::cluster::detail {

void frame_dispatcher::drop_undecodable(const unique_address& from, lane lane,
                                        const std::string& why) {
  if (auto* t = ctx_->transport_ptr.load(std::memory_order_acquire))
    t->record_drop(from, lane, drop_reason::undecodable);
  auto& counters = *ctx_->counters;
  if (remoting_counters::bump(counters.undecodable))
    ctx_->log.warning("dropped an undecodable {} frame from {}: {} ({} so "
                      "far)",
                      to_string(lane), to_string(from), why,
                      counters.undecodable.load(std::memory_order_relaxed));
}

void frame_dispatcher::dispatch(
  const unique_address& from, lane lane, std::span<const std::byte> payload,
  caf::execution_unit* host,
  const std::function<void(control_received&&)>& post_control) {
  auto env = decode_envelope(payload);
  if (!env) {
    drop_undecodable(from, lane, env.error().message);
    return;
  }
  auto tagged = env->kind == envelope_kind::tagged;
  if (env->kind != envelope_kind::message && !tagged) {
    post_control(control_received{from, lane, env->kind, std::string{env->name},
                                  env->cause, env->seq,
                                  std::string{env->reason}});
    return;
  }
  auto msg
    = tagged
        ? decode_message_elements(ctx_->sys, env->body, &cache_)
        : decode_message(ctx_->sys, env->body,
                         remote_ref{from, std::string{env->reply_to}}, &cache_);
  if (!msg) {
    drop_undecodable(from, lane,
                     fmt::format("{} for \"{}\": {}", to_string(env->kind),
                                 env->name, msg.error().message));
    return;
  }
  if (target_name_ != env->name) {
    target_name_ = env->name;
    target_ = ctx_->registry->find_target(env->name);
  }
  auto& counters = *ctx_->counters;
  if (!target_.actor || (tagged && !target_.receiver)) {
    if (auto level = counters.dead_letter())
      ctx_->log.log(*level,
                    "dead letter: nothing {}is published under \"{}\" on "
                    "this node; dropped a {} from {} ({} so far)",
                    tagged ? "that takes tagged messages " : "", env->name,
                    to_string(env->kind), to_string(from),
                    counters.dead_letters.load(std::memory_order_relaxed));
    return;
  }
  if (tagged)
    (*target_.receiver)(from, env->tag, std::move(*msg));
  else
    caf::actor_cast<caf::abstract_actor*>(target_.actor)
      ->enqueue(nullptr, caf::make_message_id(), std::move(*msg), host);
  counters.delivered.fetch_add(1, std::memory_order_relaxed);
}

} // namespace troupe::cluster::detail
