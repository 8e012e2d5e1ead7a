#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/expected.hpp>

#include "troupe/lease/lease_actor.hpp"
#include "troupe/lease/lease_backend.hpp"
#include "troupe/lease/lease_messages.hpp"
#include "troupe/lease/lease_settings.hpp"
#include "troupe/runtime/node.hpp"

/// @file
/// The handle users hold: the seed's Lease contract in C++.

namespace troupe::lease {

namespace detail {
struct lease_shared;
} // namespace detail

/// Undoes one `on_lost` registration. Discarding it keeps the handler
/// registered for the lease's lifetime. Thread-safe.
class [[nodiscard]] lost_subscription {
public:
  lost_subscription() = default;
  lost_subscription(std::weak_ptr<detail::lease_shared> shared, uint64_t id);

  /// Removes the handler; once this returns, the handler is never called
  /// again (unless it is running on another thread right now, in which case
  /// this waits for it). Idempotent; harmless after the lease is gone.
  void unsubscribe();

private:
  std::weak_ptr<detail::lease_shared> shared_;
  uint64_t id_ = 0;
};

/// A lease: acquire, release, check_alive, on_lost (the seed's contract).
///
/// The handle is a small value over the lease actor (which owns the backend
/// session, serialises operations and renews) and an atomic deadline.
/// Copies share the same lease.
///
/// - `acquire()` -> true (granted), false (another holder: contention), or
///   an error (backend unreachable after the attempts, refused, ...). A
///   failure is never reported as false.
/// - `release()` -> gives the lease up and waits for the backend; a no-op
///   when not held. check_alive() turns false when release starts.
/// - `check_alive()` -> lock-free, no message: an atomic load and a coarse
///   monotonic clock read. It turns false by itself at the local deadline
///   (start of the last successful renewal request + ttl - safety_margin -
///   clock resolution) even if the actor processed nothing.
/// - `on_lost(handler)` -> called once per lost acquisition, on the lease
///   actor's thread (keep it short, do not block); returns an unsubscribe
///   handle. Actors may instead `subscribe` and receive `lease_lost`.
///
/// Blocking members (`acquire`, `release` taking a timeout) are
/// conveniences for `main()` and tests with a real scheduler; actors use
/// `actor()` with `request` instead (see lease_actor.hpp). Thread-safety:
/// every member may be called from any thread.
class lease_handle {
public:
  /// Validates `settings` (lease_settings rules plus the backend's own) and
  /// spawns the lease actor. Errors: lease::errc::invalid_settings naming
  /// the field.
  static caf::expected<lease_handle>
  spawn(caf::actor_system& sys, lease_settings settings,
        std::shared_ptr<lease_backend> backend);

  /// As above, and ties the lease to `node`'s graceful shutdown: the lease
  /// is released (awaited, at most `release_timeout`) before the actor system
  /// stops.
  static caf::expected<lease_handle>
  spawn(runtime::node& node, lease_settings settings,
        std::shared_ptr<lease_backend> backend,
        runtime::timespan release_timeout = std::chrono::seconds{5});

  /// The lease `name` held by `owner` as the node's configuration says:
  /// backend from `lease.backend` (and `lease.file.*`), settings from the
  /// other `lease.*` keys (lease_config.hpp), tied to the node's shutdown.
  /// Errors: the backend's or the settings' error, naming the problem.
  static caf::expected<lease_handle>
  spawn_from_config(runtime::node& node, std::string name, std::string owner);

  lease_handle() = default;

  /// The lease actor, for
  /// `request(actor(), t, acquire_atom::value, runtime::timespan{wait})`.
  const lease_actor& actor() const noexcept {
    return actor_;
  }

  /// Blocking acquire: true / false / error. Waits at most `timeout`
  /// (a grant arriving later is released by the actor).
  caf::expected<bool> acquire(runtime::timespan timeout
                              = std::chrono::seconds{30});

  /// Blocking release; waits at most `timeout` for the backend.
  caf::error release(runtime::timespan timeout = std::chrono::seconds{30});

  /// True while the lease is held and the local deadline has not passed.
  bool check_alive() const noexcept;

  /// The fencing token of the current (or last) acquisition; 0 before the
  /// first one. Strictly increasing across acquisitions.
  uint64_t token() const noexcept;

  /// How often this lease was acquired (each a new fencing token) and how
  /// often it was lost (`lease_lost` published), since it was spawned; for
  /// metrics. Lock-free; 0 for an invalid handle.
  uint64_t acquisitions() const noexcept;
  uint64_t losses() const noexcept;

  /// Registers `handler` for lease_lost; see the class comment.
  lost_subscription on_lost(std::function<void(const lease_lost&)> handler);

  /// Sends `lease_lost` messages to `subscriber`.
  void subscribe(const caf::actor& subscriber) const;
  void unsubscribe(const caf::actor& subscriber) const;

  const lease_settings& settings() const noexcept {
    return settings_;
  }

private:
  caf::actor_system* sys_ = nullptr;
  lease_actor actor_;
  std::shared_ptr<detail::lease_shared> shared_;
  lease_settings settings_;
};

} // namespace troupe::lease
