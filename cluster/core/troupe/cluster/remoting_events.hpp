#pragma once

#include <cstdint>
#include <string>

#include "troupe/cluster/remote_down.hpp"
#include "troupe/cluster/remoting_wire.hpp"
#include "troupe/cluster/transport.hpp"

/// @file
/// What the transport listener of remoting hands to the remoting actor
/// (local messages between the io thread and the actor, never on the
/// wire).

namespace troupe::cluster {

/// A watch, unwatch or down envelope that arrived from `from` on `lane`.
struct control_received {
  unique_address from;
  cluster::lane lane = lane::control;
  envelope_kind kind = envelope_kind::watch;
  std::string name;
  down_cause cause = down_cause::actor_stopped;
  uint64_t seq = 0;
  std::string reason;
};

template <class Inspector>
auto inspect(Inspector& f, control_received& x) {
  return f(x.from, x.lane, x.kind, x.name, x.cause, x.seq, x.reason);
}

/// What happened to a peer (transport_listener's callbacks).
enum class peer_change : uint8_t {
  up = 0,
  down,
  quarantined,
};

/// A peer came up, went down (either direction) or was quarantined.
struct peer_event {
  unique_address peer;
  peer_change change = peer_change::up;
  std::string reason;
};

template <class Inspector>
auto inspect(Inspector& f, peer_event& x) {
  return f(x.peer, x.change, x.reason);
}

} // namespace troupe::cluster
