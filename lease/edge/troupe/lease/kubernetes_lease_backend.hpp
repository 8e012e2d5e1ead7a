#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "troupe/lease/lease_backend.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/kubernetes_api.hpp"

/// @file
/// The Kubernetes lease backend: native `coordination.k8s.io/v1` Lease
/// objects, as client-go's leader election uses them (DESIGN.md §5, §10;
/// backends-notes.md §2). docs/guides/lease-kubernetes.md is the user's
/// guide (RBAC Role, token rotation, clock skew, fencing token).

namespace troupe::lease {

/// Where and how to reach the API server (the shared client's options,
/// runtime/kubernetes_api.hpp: URL, token file, CA file, insecure http,
/// request timeout, token refresh, monotonic clock) and which namespace holds
/// the Lease objects. `validate` requires `request_timeout` to be shorter
/// than the renewal interval and at most the operation timeout. `clock` also
/// times the observations (client-go's observedTime).
struct kubernetes_lease_backend_options : runtime::kubernetes_api_options {
  kubernetes_lease_backend_options() {
    log_component = "lease.kubernetes";
  }

  /// Namespace of the Lease objects.
  std::string namespace_name = "default";
  /// Wall clock for the MicroTime fields written (acquireTime, renewTime),
  /// which are informational only. Empty means system_clock::now. Tests
  /// skew it (scenario L8).
  std::function<std::chrono::system_clock::time_point()> wall_clock;
};

/// A lease_backend over Kubernetes Lease objects
/// (`/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}`).
///
/// Record: `spec.holderIdentity` = owner, `spec.leaseDurationSeconds` = ttl
/// in whole seconds, `spec.acquireTime`/`renewTime` (MicroTime, written,
/// never read for expiry), `spec.leaseTransitions`, and the annotation
/// `troupe.io/acquisition` (the acquisition id, hex) that tells a retried
/// write of ours from another process using the same holder identity.
///
/// Operations (each HTTP exchange bounded by `request_timeout`):
/// - acquire: GET. 404 -> POST a new object whose `leaseTransitions` is one
///   more than the highest value this backend has seen for the name (201 ->
///   ok; 409 AlreadyExists -> `conflict`). An object naming another holder
///   that is live by local observation -> `held`. An object naming us with
///   our acquisition id (our earlier write applied, its reply was lost) ->
///   PUT it again as a renewal (200 -> ok): the record must change after
///   this call started, because the lease actor counts its deadline from
///   the call's start and contenders from the last change they saw. Otherwise
///   (empty holder, or unchanged for its `leaseDurationSeconds` on this
///   process's monotonic clock) PUT with the read `resourceVersion`,
///   `leaseTransitions` + 1 -> ok; 409 -> `conflict` (re-read on retry).
/// - renew: PUT the cached object with its `resourceVersion` and a new
///   `renewTime`. 409 -> GET: still ours -> PUT again with the new
///   resourceVersion (our earlier renewal applied, its reply was lost;
///   scenario L3); another holder -> `held` (lost); gone -> `not_found`.
///   An object deleted by hand while held: the PUT carries its
///   `metadata.uid`, a precondition the API server checks against the
///   missing object too (409), so the GET answers 404 -> `not_found` (lost,
///   nothing re-created). A server that ignores the uid and answers 201
///   re-created the object: it is released at once (PUT with an empty
///   holder) and the renewal answers `not_found` all the same.
/// - release: PUT with an empty holder and `leaseDurationSeconds` 1,
///   keeping `leaseTransitions`; 409 -> GET and retry if still ours,
///   otherwise the record no longer names us -> ok (scenario L12).
/// Fencing token: `spec.leaseTransitions` (strictly increasing per
/// object); `token_scope` = `metadata.uid` (deleting the object by hand
/// starts a new object; its creator continues from the highest value it
/// saw, other processes may not have seen it).
///
/// Status mapping: 401 -> re-read the token and retry once, then
/// `rejected`; 403 -> `rejected` naming the RBAC verb that is missing; 422
/// and other 4xx -> `rejected` with the server's message; 429 and 5xx ->
/// `unavailable` with `retry_after` from `Retry-After` or
/// `details.retryAfterSeconds`; timeouts and connection errors ->
/// `unavailable`; a 2xx whose body is not a valid Lease (malformed JSON,
/// missing resourceVersion, a negative leaseDurationSeconds, a non-JSON
/// content type) -> `unavailable` naming what was wrong: never `ok`; so is
/// a 2xx to an acquire or renew whose Lease does not name this owner and
/// acquisition (not the object that was written).
///
/// Thread-safety: calls may come from any thread concurrently; callbacks
/// run on the backend's HTTP io thread. Destroying the backend completes
/// pending calls with `unavailable`.
class kubernetes_lease_backend final : public lease_backend {
public:
  /// Checks the options (URL, http:// without allow_insecure_http,
  /// namespace a DNS-1123 label, positive timeouts, a token file that can
  /// be read, for https:// a CA file that loads) and starts the HTTP
  /// engine. Errors (errc::invalid_settings) name the option.
  static runtime::expected<std::shared_ptr<kubernetes_lease_backend>>
  make(kubernetes_lease_backend_options opts);

  ~kubernetes_lease_backend() override;

  void acquire(const backend_request& req, callback done) override;
  void renew(const backend_request& req, callback done) override;
  void release(const backend_request& req, callback done) override;

  /// `Kubernetes leases in namespace NS at URL`.
  std::string describe() const override;

  /// The lease name must be a DNS-1123 subdomain (never truncated or
  /// mapped), the ttl a whole number of seconds of at least 1s, and
  /// `request_timeout` shorter than the renewal interval and at most the
  /// operation timeout.
  runtime::error validate(const lease_settings& settings) const override;

  /// Implementation (sessions, HTTP engine), defined in the .cpp.
  class impl;

private:
  explicit kubernetes_lease_backend(std::shared_ptr<impl> ptr);

  std::shared_ptr<impl> impl_;
};

} // namespace troupe::lease
