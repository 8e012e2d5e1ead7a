#include "troupe/cluster/inbound_actor.hpp"

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

namespace troupe::cluster::detail {

namespace {

struct inbound_state {
  static inline const char* name = "troupe.remoting.inbound";
  std::unique_ptr<frame_dispatcher> dispatcher;
};

caf::behavior inbound_impl(caf::stateful_actor<inbound_state>* self,
                           std::shared_ptr<inbound_context> ctx,
                           caf::actor remoting, unique_address peer) {
  self->state.dispatcher = std::make_unique<frame_dispatcher>(std::move(ctx));
  auto post = [=](control_received&& c) { self->send(remoting, std::move(c)); };
  return {
    [=](const inbound_batch& batch) {
      auto& d = *self->state.dispatcher;
      auto bytes = std::as_bytes(std::span{batch.bytes});
      for (auto& f : batch.frames)
        d.dispatch(peer, f.lane, bytes.subspan(f.offset, f.size),
                   self->context(), post);
      d.reset_target();
    },
    [=](peer_event& e) {
      auto quarantined = e.change == peer_change::quarantined;
      self->send(remoting, std::move(e));
      if (quarantined)
        self->quit();
    },
  };
}

} // namespace

caf::actor spawn_inbound_actor(caf::actor_system& sys,
                               std::shared_ptr<inbound_context> ctx,
                               caf::actor remoting, unique_address peer) {
  return sys.spawn(inbound_impl, std::move(ctx), std::move(remoting),
                   std::move(peer));
}

} // namespace troupe::cluster::detail
