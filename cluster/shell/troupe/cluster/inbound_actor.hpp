#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "troupe/cluster/frame_dispatcher.hpp"
#include "troupe/cluster/transport.hpp"

/// @file
/// The inbound actor: decodes the frames of one peer, batch by batch, on a
/// CAF worker (implementation detail of remoting_listener).

namespace troupe::cluster::detail {

/// The frames of one socket read, copied out of the transport's buffer.
struct inbound_batch {
  struct frame {
    uint32_t offset = 0;
    uint32_t size = 0;
    cluster::lane lane = lane::ordinary;
  };
  std::vector<char> bytes;
  std::vector<frame> frames;
};

template <class Inspector>
auto inspect(Inspector& f, inbound_batch::frame& x) {
  return f(x.offset, x.size, x.lane);
}

template <class Inspector>
auto inspect(Inspector& f, inbound_batch& x) {
  return f(x.bytes, x.frames);
}

/// Spawns the inbound actor of `peer`: it dispatches each `inbound_batch`
/// in order (frame_dispatcher), enqueuing targets on its own worker, and
/// forwards control envelopes and `peer_event`s to `remoting` behind the
/// messages that came before them. It stops after forwarding the peer's
/// quarantine.
caf::actor spawn_inbound_actor(caf::actor_system& sys,
                               std::shared_ptr<inbound_context> ctx,
                               caf::actor remoting, unique_address peer);

} // namespace troupe::cluster::detail
