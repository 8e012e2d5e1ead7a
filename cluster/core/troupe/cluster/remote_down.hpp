#pragma once

#include <cstdint>
#include <string>

#include "troupe/cluster/remote_ref.hpp"

/// @file
/// The notification a watcher of a remote reference receives.

namespace troupe::cluster {

/// Why a watched remote reference is gone for good.
enum class down_cause : uint8_t {
  /// The actor published under the name stopped.
  actor_stopped = 0,
  /// The name was unpublished on its node.
  unpublished,
  /// Nothing was published under the name when the watch request arrived
  /// (Akka: watching a non-existent actor terminates at once).
  not_published,
  /// The membership layer removed the node (`node_removed`; before the
  /// transport quarantines it).
  node_removed,
  /// The transport quarantined the node's incarnation: a new incarnation
  /// at the same host:port completed a handshake, so the old process is
  /// gone.
  node_quarantined,
};

/// Number of `down_cause` values.
inline constexpr uint8_t down_cause_count = 5;

/// "actor_stopped", "unpublished", ... (the enumerator's name).
const char* to_string(down_cause x) noexcept;

/// Sent once to each local actor watching `ref` when the reference is gone
/// for good: the actor stopped or was unpublished on its node, or the node
/// was removed from membership or quarantined (Akka's `Terminated`). A
/// connection blip never produces it. `reason` is for logs (e.g. the
/// stopped actor's exit reason).
///
/// Order: a `remote_down` for an actor that stopped reaches the watcher
/// after every message that actor sent on the ordinary lane before it
/// stopped (remoting.hpp explains the flush), unless the ordinary copy was
/// lost and `cluster.remoting.down_flush_timeout` passed.
struct remote_down {
  remote_ref ref;
  down_cause cause = down_cause::actor_stopped;
  std::string reason;

  friend bool operator==(const remote_down&, const remote_down&) = default;
};

/// CAF-free inspection; registered as "troupe.cluster.remote_down".
template <class Inspector>
auto inspect(Inspector& f, remote_down& x) {
  return f(x.ref, x.cause, x.reason);
}

} // namespace troupe::cluster
