#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/lease/lease_backend.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_types.hpp"
#include "troupe/runtime/secret.hpp"

/// @file
/// The etcd lease backend: etcd v3's JSON gateway (`/v3/...`) over troupe's
/// HTTP engine (DESIGN.md §5, §10; facts measured on etcd 3.4 in
/// backends-notes.md §1).

namespace troupe::lease {

/// Options of an etcd_lease_backend (the `lease.etcd.*` keys).
///
/// - endpoints: base URLs (`http://` or `https://`, no path), tried round
///   robin: after an `unavailable` answer the next call goes to the next
///   endpoint.
/// - key_prefix: the lease of name N is the key `key_prefix + N`.
/// - user, password / password_file: etcd authentication (empty user = no
///   auth). The password file is re-read at every authentication, so a
///   rotated password is picked up.
/// - tls: CA and client certificate for https:// endpoints (the server is
///   always verified).
/// - request_timeout: the deadline of each HTTP request; keep it shorter
///   than the renewal interval (validate() checks).
/// - min_ttl: etcd's minimum lease TTL (ceil(1.5 x election timeout), 2 s
///   with etcd's default election timeout); a shorter ttl is refused by
///   validate() because etcd would silently raise it.
/// - after_grant: test hook, called on the io thread after each successful
///   grant and before the acquire txn (e.g. to revoke the lease behind the
///   backend's back). Leave empty in production.
struct etcd_lease_backend_options {
  std::vector<std::string> endpoints{"http://127.0.0.1:2379"};
  std::string key_prefix = "/troupe/leases/";
  std::string user;
  runtime::secret password;
  std::string password_file;
  runtime::http_tls_settings tls;
  timespan request_timeout = std::chrono::seconds{2};
  timespan min_ttl = std::chrono::seconds{2};
  std::function<void(const std::string& name, int64_t lease_id)> after_grant;
};

/// Counters of an etcd_lease_backend (for tests and benchmarks).
struct etcd_lease_backend_stats {
  uint64_t requests = 0;        ///< HTTP requests sent (all kinds)
  uint64_t authentications = 0; ///< /v3/auth/authenticate requests
  uint64_t grants = 0;          ///< leases granted
  uint64_t revokes = 0;         ///< revoke requests sent
};

/// A lease_backend over etcd v3 (the JSON gateway of etcd 3.4 and later).
///
/// Per lease (name, owner) the backend keeps a session: the etcd lease IDs
/// it granted for it, each tagged with the acquisition it was granted for,
/// and which one (if any) the key is attached to.
///
/// - acquire: grant a lease (TTL = ttl in whole seconds; the TTL etcd
///   granted is read back, and a larger one is logged at INFO once per
///   name: the local deadline still uses the configured ttl), then the txn
///   "create the key with value = owner, attached to the lease, if its
///   create_revision == 0, else read it". Success -> `ok`, token = the
///   txn's revision (= the key's create_revision: strictly increasing,
///   DESIGN.md §10). Failure -> `held` with holder = the key's value and
///   token = its create_revision; if the key is attached to a lease this
///   backend granted for the same acquisition (an earlier attempt applied
///   and its reply was lost), acquisition = the request's (a self-conflict:
///   success) and the session adopts that lease after a keepalive of it
///   (its TTL ran since the earlier attempt's grant, the lease actor's
///   deadline counts from this attempt: a failed keepalive is answered as
///   a renewal's would be); under a lease of another
///   acquisition of ours, that acquisition; under a lease this backend did
///   not grant but naming this owner (another process with the same
///   identity), a non-zero acquisition different from the request's. The
///   unused fresh lease is revoked (best effort). `requested lease not
///   found` on the txn (the fresh lease vanished) -> grant anew and retry,
///   at most twice.
/// - renew: keepalive (`POST /v3/lease/keepalive {"ID":...}`) of the
///   attached lease, then a linearizable range of the key (two requests
///   per renewal; the range is what notices a key deleted by hand, which
///   leaves the etcd lease alive). TTL absent -> `not_found` (the lease
///   expired or was revoked). TTL > 0 and the key still has value = owner,
///   lease = ours and create_revision = the token -> `ok` with the token.
///   Key missing -> `not_found` whose detail says the key was deleted while
///   its lease lived (the lease is forgotten and revoked). Key present but
///   re-created or rewritten (another create_revision, lease or value) ->
///   `held` naming the key's value and create_revision (under our owner's
///   name: a different acquisition, never ours). No attached lease for
///   (name, owner) -> `not_found`; attached for another acquisition ->
///   `held` naming that acquisition. Renewal never writes the key.
/// - release: the guarded delete "delete the key if value == owner and
///   lease == ours", then revoke every lease of that acquisition (404 is
///   fine). A failed compare means the key no longer names us -> `ok`.
///   Nothing held -> `not_found` (which counts as released).
///
/// Answers (etcd::classify_answer): 2xx -> parsed (unparseable ->
/// `unavailable` naming what was wrong, never `ok`); 401 -> authenticate
/// again and retry once (if credentials are configured), else `rejected`;
/// 400 `user name is empty` with credentials -> authenticate and retry
/// once; 412 `authentication is not enabled` -> drop the token and retry
/// once; 403 -> `rejected` naming the key and "permission denied"; 5xx,
/// 408, 429, timeouts, connection errors, malformed responses ->
/// `unavailable` (`retry_after` from a `Retry-After` header); TLS failures
/// and other 4xx -> `rejected`. Every `detail` names the endpoint and the
/// path, e.g. `etcd http://127.0.0.1:2379 /v3/kv/txn: HTTP 503:
/// etcdserver: no leader`.
///
/// Auth: the token from `/v3/auth/authenticate` is sent raw in
/// `Authorization` (etcd refuses `Bearer`). Passwords and tokens never
/// appear in logs, details or errors.
///
/// Does not retry (the lease actor does). A key deleted by hand is noticed
/// at the holder's next renewal (above), not at once (no watch).
///
/// Thread-safety: every member may be called from any thread; calls from
/// several lease actors may overlap. `done` runs on the HTTP engine's io
/// thread (or, after shutdown, on the caller's), never under the
/// backend's lock. The destructor shuts the engine down: pending calls
/// complete with `unavailable`.
class etcd_lease_backend final : public lease_backend {
public:
  /// Checks the options (at least one endpoint, each an http(s) URL
  /// without path; a password file that is readable; password and
  /// password_file not both set; credentials only with a user; TLS files
  /// loadable when an https endpoint is configured) and starts the HTTP
  /// engine. Errors: lease errc::invalid_settings naming the
  /// `lease.etcd.*` key and the problem.
  static runtime::expected<std::shared_ptr<etcd_lease_backend>>
  make(etcd_lease_backend_options opts);

  ~etcd_lease_backend() override;

  etcd_lease_backend(const etcd_lease_backend&) = delete;
  etcd_lease_backend& operator=(const etcd_lease_backend&) = delete;

  void acquire(const backend_request& req, callback done) override;
  void renew(const backend_request& req, callback done) override;
  void release(const backend_request& req, callback done) override;

  /// `etcd http://127.0.0.1:2379 (key prefix /troupe/leases/)`.
  std::string describe() const override;

  /// The etcd rules (lease errc::invalid_settings naming the field): ttl a
  /// whole number of seconds and >= min_ttl (`lease.ttl`, never rounded);
  /// request_timeout shorter than renewal_interval and at most
  /// operation_timeout (`lease.etcd.request_timeout`); the key (prefix +
  /// name) valid UTF-8 without NUL.
  runtime::error validate(const lease_settings& s) const override;

  /// The key of lease `name`: `key_prefix + name`.
  std::string key_of(std::string_view name) const;

  /// The etcd lease ID the key of (name, owner) is attached to as far as
  /// this backend knows; 0 if none.
  int64_t lease_id_of(std::string_view name, std::string_view owner) const;

  /// A snapshot of the counters.
  etcd_lease_backend_stats stats() const;

  class impl;

private:
  explicit etcd_lease_backend(std::shared_ptr<impl> ptr);

  std::shared_ptr<impl> impl_;
};

} // namespace troupe::lease
