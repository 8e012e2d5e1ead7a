#pragma once

#include <functional>
#include <string>

#include "troupe/lease/backend_types.hpp"
#include "troupe/lease/lease_settings.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The backend interface: the small piece a coordination service implements.

namespace troupe::lease {

/// A lease store (in-memory, file, etcd, Kubernetes, or your own).
///
/// The interface is deliberately small (the seed promises ~50 lines of glue
/// per service): the lease actor, not the backend, owns retries, deadlines,
/// renewal timing, idempotence of acquisition and loss detection. A backend
/// only carries out one call and reports what the store said.
///
/// Contract of every operation:
/// - `done` is called exactly once, from any thread, possibly before the
///   call returns; after the backend is destroyed it may be dropped.
/// - A call that gets no answer reports `unavailable`; the actor bounds each
///   call with `operation_timeout` anyway, so a hung call is harmless.
/// - Nothing throws: third-party exceptions become `unavailable` or
///   `rejected` with a `detail` that names what failed.
/// - acquire: write a record naming `owner` unless another unexpired holder
///   exists; the fencing token of a new acquisition must be greater than
///   every earlier token of this lease name (DESIGN.md §5, §10).
/// - renew: extend the caller's record by `ttl` if it still names the
///   caller; never resurrect an expired or foreign record.
/// - release: remove the record if it still names the caller.
///
/// Thread-safety: calls may come from several lease actors concurrently.
class lease_backend {
public:
  using callback = std::function<void(backend_reply)>;

  virtual ~lease_backend() = default;

  virtual void acquire(const backend_request& req, callback done) = 0;
  virtual void renew(const backend_request& req, callback done) = 0;
  virtual void release(const backend_request& req, callback done) = 0;

  /// Dispatches to acquire, renew or release by `op`.
  void call(backend_op op, const backend_request& req, callback done) {
    switch (op) {
      case backend_op::acquire:
        acquire(req, std::move(done));
        return;
      case backend_op::renew:
        renew(req, std::move(done));
        return;
      case backend_op::release:
        release(req, std::move(done));
        return;
    }
  }

  /// A short description for log lines, e.g. `file store /run/troupe/leases`.
  virtual std::string describe() const = 0;

  /// Backend-specific checks of settings (e.g. whole seconds for etcd).
  virtual runtime::error validate(const lease_settings&) const {
    return {};
  }
};

} // namespace troupe::lease
