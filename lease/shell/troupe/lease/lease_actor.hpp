#pragma once

#include <memory>

#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "troupe/lease/lease_backend.hpp"
#include "troupe/lease/lease_messages.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// The lease actor: one per lease; owns the backend session, serialises
/// operations, runs renewal and publishes `lease_lost` (DESIGN.md §5).

namespace troupe::lease {

using acquire_atom = caf::atom_constant<caf::atom("acquire")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using subscribe_atom = caf::atom_constant<caf::atom("subscribe")>;
using unsubscribe_atom = caf::atom_constant<caf::atom("unsubscr")>;
using status_atom = caf::atom_constant<caf::atom("status")>;

/// The lease actor's protocol.
///
/// - `(acquire, timespan wait) -> acquire_result`: acquire, answering within
///   `wait` (the requester's own timeout should be a little longer). Errors:
///   lease::errc::backend_unavailable, backend_rejected,
///   conflict_unresolved, backend_protocol_violation, shutting_down. A grant
///   that arrives after `wait` is released at once and logged.
/// - `(release) -> bool`: releases; `true` once the backend confirmed (or
///   the lease was not held). Errors: backend_unavailable / backend_rejected
///   when every attempt failed (the record then expires after the ttl).
/// - `(subscribe, actor)` / `(unsubscribe, actor)`: `lease_lost` messages.
/// - `(status) -> lease_status`.
/// The remaining two entries are the actor's own timer and backend replies.
using lease_actor = caf::typed_actor<
  caf::replies_to<acquire_atom, runtime::timespan>::with<acquire_result>,
  caf::replies_to<release_atom>::with<bool>,
  caf::reacts_to<subscribe_atom, caf::actor>,
  caf::reacts_to<unsubscribe_atom, caf::actor>,
  caf::replies_to<status_atom>::with<lease_status>,
  caf::reacts_to<backend_replied>, caf::reacts_to<timer_fired>>;

namespace detail {
struct lease_shared;
} // namespace detail

/// Spawns the lease actor. `settings` must be valid (lease_handle::spawn
/// checks them); `shared` carries the check_alive() deadline and the
/// on_lost listeners shared with the handle; `seed` seeds acquisition ids
/// and retry jitter.
lease_actor spawn_lease_actor(caf::actor_system& sys, lease_settings settings,
                              std::shared_ptr<lease_backend> backend,
                              std::shared_ptr<detail::lease_shared> shared,
                              uint64_t seed);

} // namespace troupe::lease
