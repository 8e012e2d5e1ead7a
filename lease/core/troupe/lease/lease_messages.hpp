#pragma once

#include <cstdint>
#include <string>

#include "troupe/lease/backend_types.hpp"
#include "troupe/lease/lease_fsm.hpp"

/// @file
/// Message types of the lease protocol (plain structs with CAF-free
/// `inspect`; registered by lease/shell caf_glue).

namespace troupe::lease {

/// The answer to `acquire`: granted (`acquired`, `token`) or held by
/// another (`!acquired`, `holder`). Backend failures are errors instead.
struct acquire_result {
  bool acquired = false;
  /// The fencing token of this acquisition (0 when not acquired).
  uint64_t token = 0;
  /// The holder: this owner when acquired, else the other holder if known.
  std::string holder;
  /// What `token` is counted within: the Kubernetes Lease object's uid
  /// (re-creating the object starts a new sequence); empty for stores
  /// whose counter never restarts (in-memory, file, etcd).
  std::string token_scope;
};

template <class Inspector>
auto inspect(Inspector& f, acquire_result& x) {
  return f(x.acquired, x.token, x.holder, x.token_scope);
}

/// Published to subscribers when ownership is lost unexpectedly (renewal
/// deadline passed, another holder took over, the record vanished). Not
/// published on release().
struct lease_lost {
  std::string name;
  std::string owner;
  std::string reason;
  /// The fencing token of the acquisition that was lost.
  uint64_t token = 0;
};

template <class Inspector>
auto inspect(Inspector& f, lease_lost& x) {
  return f(x.name, x.owner, x.reason, x.token);
}

/// A snapshot of one lease for status pages and tests.
struct lease_status {
  std::string name;
  std::string owner;
  std::string state;
  uint64_t token = 0;
  bool alive = false;
  std::string backend;
  /// See acquire_result::token_scope.
  std::string token_scope;
};

template <class Inspector>
auto inspect(Inspector& f, lease_status& x) {
  return f(x.name, x.owner, x.state, x.token, x.alive, x.backend,
           x.token_scope);
}

// Internal messages of the lease actor (the FSM's inputs).

template <class Inspector>
auto inspect(Inspector& f, backend_reply& x) {
  return f(x.status, x.holder, x.token, x.acquisition, x.detail, x.retry_after,
           x.token_scope);
}

template <class Inspector>
auto inspect(Inspector& f, backend_replied& x) {
  return f(x.attempt, x.reply);
}

template <class Inspector>
auto inspect(Inspector& f, timer_fired& x) {
  return f(x.kind, x.timer_id);
}

} // namespace troupe::lease
