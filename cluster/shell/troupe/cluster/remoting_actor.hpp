#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "troupe/cluster/remote_ref.hpp"
#include "troupe/cluster/remoting_events.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// The remoting actor: one per node; owns the watch table and carries out
/// publish notices, watches and node removals (remoting.hpp is the API
/// users call; it talks to this actor).

namespace troupe::cluster {

using published_atom = caf::atom_constant<caf::atom("published")>;
using unpublished_atom = caf::atom_constant<caf::atom("unpublish")>;
using watch_atom = caf::atom_constant<caf::atom("watch")>;
using unwatch_atom = caf::atom_constant<caf::atom("unwatch")>;
using node_removed_atom = caf::atom_constant<caf::atom("rmnode")>;
using quarantine_atom = caf::atom_constant<caf::atom("quarantine")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using status_atom = caf::atom_constant<caf::atom("status")>;

/// A snapshot of the remoting actor's tables (tests, operations).
struct remoting_status {
  /// Names published on this node, sorted.
  std::vector<std::string> published;
  /// (local watcher, remote reference) pairs.
  uint64_t watches = 0;
};

template <class Inspector>
auto inspect(Inspector& f, remoting_status& x) {
  return f(x.published, x.watches);
}

/// The remoting actor's protocol. Users go through `remoting_handle`;
/// these are its messages:
/// - `(published, name, actor)`: `actor` was published (or exposed for
///   replies) under `name`: monitor it, so its stop reaches the watchers.
/// - `(unpublish, name)`: `name` was unpublished: its watchers get a down.
/// - `(watch, ref, watcher)` / `(unwatch, ref, watcher)`: remote watches;
///   `watcher` receives `remote_down` once.
/// - `(rmnode, node, reason, quarantine_after)`: membership removed `node`:
///   fire every watch on it now, and quarantine it in the transport after
///   `quarantine_after` (remoting.hpp, `node_removed`).
/// - `(status) -> remoting_status`.
/// The rest come from the transport listener and the actor's own timers:
/// `(flush)` (watch_table.hpp) and `(quarantine, node)`, the delayed
/// quarantine of a removed node.
using remoting_actor
  = caf::typed_actor<caf::reacts_to<published_atom, std::string, caf::actor>,
                     caf::reacts_to<unpublished_atom, std::string>,
                     caf::reacts_to<watch_atom, remote_ref, caf::actor>,
                     caf::reacts_to<unwatch_atom, remote_ref, caf::actor>,
                     caf::reacts_to<node_removed_atom, unique_address,
                                    std::string, runtime::timespan>,
                     caf::reacts_to<quarantine_atom, unique_address>,
                     caf::replies_to<status_atom>::with<remoting_status>,
                     caf::reacts_to<control_received>,
                     caf::reacts_to<peer_event>, caf::reacts_to<flush_atom>>;

namespace detail {
struct remoting_shared;
} // namespace detail

/// Spawns the remoting actor over `shared` (whose transport is set).
remoting_actor
spawn_remoting_actor(caf::actor_system& sys,
                     std::shared_ptr<detail::remoting_shared> shared);

} // namespace troupe::cluster
