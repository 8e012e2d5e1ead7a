#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_types.hpp"
#include "troupe/test/k8s_lease_codec.hpp"
#include "troupe/test/k8s_lease_store.hpp"
#include "troupe/test/k8s_pod_store.hpp"

/// @file
/// An emulator of the Kubernetes API server's `coordination.k8s.io/v1`
/// Lease API and of the core API's pod list (HTTP/1.1 and HTTPS on
/// loopback) with bearer-token authentication, an RBAC deny switch and
/// fault injection, for testing troupe's Kubernetes lease backend and the
/// kubernetes_api contact-point discovery without a cluster. Free of Catch2: a
/// standalone program can run it (the demo's Kubernetes mode).
///
/// What it follows (see backends-notes.md §2; every text was read in the
/// kubernetes/kubernetes source, not observed on a cluster):
/// - Paths: `/apis/coordination.k8s.io/v1/namespaces/{ns}/leases` (GET
///   list, POST), `.../leases/{name}` (GET, PUT, PATCH, DELETE),
///   `/apis/coordination.k8s.io/v1/leases` (GET list across namespaces),
///   `/api/v1/namespaces/{ns}/pods` (GET list with `labelSelector`; the
///   pods are put there by the test: k8s_pod_store.hpp has the list rules).
///   Any other path is 404 `the server could not find the requested
///   resource`; another method on a known path is 405 MethodNotAllowed.
///   `/healthz`, `/livez`, `/readyz` answer 200 `ok` (text/plain) without
///   authentication, as the default RBAC lets anyone read them.
/// - Object shape, validation and optimistic concurrency: k8s_lease_store.hpp.
/// - Every error is a `Status` body (k8s_status.hpp); every answer carries
///   `Content-Type: application/json` and `Cache-Control: no-cache,
///   private`.
/// - Order of checks, as the apiserver's filter chain: authentication (401)
///   -> routing (404/405) -> authorization (403) -> body size (413) ->
///   Content-Type (415) -> decoding and storage rules.
/// - Authentication: `Authorization: Bearer <token>` (scheme
///   case-insensitive). A wrong token is 401 `Unauthorized`. A request
///   without credentials (no header, another scheme, empty token) is, with
///   `anonymous_auth` (the apiserver's default), the user
///   `system:anonymous`, whom RBAC denies everything: 403; without
///   `anonymous_auth` it is 401.
/// - Authorization: the service account `system:serviceaccount:NS:SA` may
///   do every verb on leases and pods except those denied with `deny`. A
///   PUT that would create the object also needs `create`
///   (handlers/update.go). A denied pod list is 403 `pods is forbidden: User
///   "..." cannot list resource "pods" in API group "" in the namespace
///   "NS"` (the core group is the empty string).
/// - Body size: more than `max_body_bytes` is 413 RequestEntityTooLarge
///   (the apiserver's limit is 3 MiB).
/// - Content-Type: POST/PUT/DELETE bodies must be `application/json`
///   (parameters such as `charset` allowed; an absent Content-Type counts as
///   JSON, as in the apiserver). PATCH takes
///   `application/merge-patch+json` or `application/strategic-merge-patch+
///   json` (the same thing for a Lease, which has no lists).
///
/// Where it deliberately differs from a real apiserver:
/// - unknown `spec` fields are kept and returned (the apiserver drops them):
///   this models a newer server whose fields the client does not know;
/// - pods can only be listed (any other method on the pod collection is
///   405, a single pod's path is 404): tests write them with `put_pod`;
///   the list ignores fieldSelector, limit and watch;
/// - no managedFields, no watch, no deletecollection (405), no
///   `application/yaml` or protobuf bodies (415), no json-patch or apply
///   patches (415); labels and annotations are not validated;
/// - malformed-JSON messages imitate Go's encoding/json only approximately.
///
/// Threads: the server runs on `io_threads` Asio threads of its own (one
/// strand per connection). Thread-safety: every member function may be
/// called from any thread, concurrently with the server. The destructor
/// stops the threads and closes every connection, including hung ones.

namespace troupe::test {

/// The authorizer's verbs for Lease requests.
enum class k8s_verb : uint8_t {
  get,
  list,
  create,
  update,
  patch,
  delete_, ///< "delete" (a C++ keyword)
};

/// The verb as RBAC names it: "get", ..., "delete".
const char* to_string(k8s_verb v) noexcept;

/// The resources the emulator serves.
enum class k8s_resource : uint8_t {
  /// `leases` in API group `coordination.k8s.io`.
  leases,
  /// `pods` in the core API group (`""`).
  pods,
};

/// Configuration of a `k8s_api_emulator`.
struct k8s_api_emulator_options {
  /// Listen address; port 0 picks a free port (see `port()`).
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  /// Asio threads serving connections (at least 1).
  size_t io_threads = 1;
  /// HTTPS with `cert_file`/`key_file` (PEM); with `client_ca_file`, a
  /// client certificate signed by that CA is required.
  bool tls = false;
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
  /// The accepted bearer token; empty disables authentication (every
  /// request is the service account, like `kubectl proxy`).
  std::string token = "k8s-emulator-token";
  /// Requests without credentials are `system:anonymous` (403) rather than
  /// 401, as kube-apiserver's `--anonymous-auth=true` default.
  bool anonymous_auth = true;
  /// The identity the token stands for (`system:serviceaccount:NS:SA` in
  /// 403 messages).
  std::string service_account_namespace = "default";
  std::string service_account_name = "default";
  /// Namespaces that exist (empty: all of them); see k8s_lease_store.
  std::vector<std::string> namespaces;
  /// Largest accepted request body, bytes (the apiserver's default: 3 MiB).
  uint64_t max_body_bytes = 3 * 1024 * 1024;
  /// Requests kept for `requests()`; the oldest go first beyond this (a
  /// long-running demo emulator must not grow without bound).
  size_t max_recorded_requests = 100000;
  /// A deliberately broken rule, for planted-bug checks only.
  k8s_planted_bug planted_bug = k8s_planted_bug::none;
};

/// One injected fault, matched against each request in the order faults
/// were added (the first match wins and uses up one of its `remaining`).
/// Build with the factories, then narrow: `k8s_fault::hang().on("PUT")
/// .times(1)`.
struct k8s_fault {
  enum class action : uint8_t {
    /// Only the delay, then the request is served normally.
    none,
    /// Answer `status` with the Status body the apiserver gives for that
    /// code (k8s_server_error); nothing is written.
    answer,
    /// Close the connection after reading the request; nothing is written.
    drop,
    /// Serve the request (writes happen), then close the connection
    /// without answering: "applied, reply lost".
    apply_then_drop,
    /// Read the request and never answer; the connection stays open until
    /// `release_hangs()` or the emulator stops.
    hang,
  };

  action what = action::none;
  /// HTTP method to match; empty matches any.
  std::string method;
  /// Request path (no query) to match exactly, or as a prefix when it ends
  /// in '*'; empty matches any.
  std::string path;
  /// How many more requests it applies to; nullopt: until cleared.
  std::optional<uint32_t> remaining;
  /// Wait this long before acting (the connection stays open meanwhile).
  std::chrono::milliseconds delay{0};
  /// For `answer`: the HTTP status, the Status message (empty: the
  /// apiserver's default text for that code).
  uint16_t status = 503;
  std::string message;
  /// For `answer`: when positive, a `Retry-After` header (seconds) and
  /// `details.retryAfterSeconds`.
  std::chrono::seconds retry_after{0};
  /// For `answer`: a `text/plain` body with the bare message instead of a
  /// Status, as the apiserver's priority-and-fairness filter answers 429.
  bool plain_text = false;

  /// Delays matching requests by `d`, then serves them.
  static k8s_fault delay_by(std::chrono::milliseconds d);
  /// Answers `status` (e.g. 500, 503, 504, 409) instead of serving.
  static k8s_fault answer_status(uint16_t status, std::string message = {});
  /// Answers 429 TooManyRequests with `Retry-After` and
  /// `details.retryAfterSeconds` set to `retry_after`.
  static k8s_fault too_many_requests(std::chrono::seconds retry_after);
  static k8s_fault drop_connection();
  static k8s_fault apply_then_drop();
  static k8s_fault hang();

  /// A copy that matches only `method` (and `path`, see above).
  k8s_fault on(std::string method, std::string path = {}) const;
  /// A copy that applies to the next `n` matching requests only.
  k8s_fault times(uint32_t n) const;
  /// A copy that also waits `d` before acting.
  k8s_fault after(std::chrono::milliseconds d) const;
};

/// One request as the emulator received it, and what it answered.
struct k8s_recorded_request {
  std::string method;
  std::string target;
  /// Every header verbatim (including Authorization: tests check which
  /// token a client sent).
  std::vector<runtime::http_header> headers;
  std::string body;
  /// The HTTP status answered; 0 while pending or when nothing was
  /// answered (drop, apply_then_drop, hang).
  uint16_t status = 0;
  /// The fault that matched, `none` when none did.
  k8s_fault::action fault = k8s_fault::action::none;
  bool faulted = false;

  /// The first header named `name` (case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

/// Counters since the start (monotonic).
struct k8s_emulator_counters {
  uint64_t connections = 0;
  uint64_t open_connections = 0;
  uint64_t max_concurrent_connections = 0;
  uint64_t tls_failures = 0;
  uint64_t requests = 0;
  /// Successful store writes (no-op updates excluded).
  uint64_t writes = 0;
  uint64_t faults_fired = 0;
  /// Answers by HTTP status.
  std::map<uint16_t, uint64_t> by_status;
};

/// The emulated apiserver (see the file comment for the rules).
class k8s_api_emulator {
public:
  /// Binds and starts the io threads. Throws std::runtime_error naming the
  /// cause if the listener or the TLS files cannot be set up (test setup,
  /// not a path under test); `make_k8s_api_emulator` returns it as an error
  /// instead.
  explicit k8s_api_emulator(k8s_api_emulator_options opts = {});

  ~k8s_api_emulator();

  k8s_api_emulator(const k8s_api_emulator&) = delete;
  k8s_api_emulator& operator=(const k8s_api_emulator&) = delete;

  /// The options it was built with (`set_token` does not change
  /// `options().token`).
  const k8s_api_emulator_options& options() const noexcept;

  /// The listening port.
  uint16_t port() const noexcept;

  /// `http://127.0.0.1:PORT` (https:// with TLS), no trailing slash.
  std::string base_url() const;

  /// `base_url()` + `/apis/coordination.k8s.io/v1/namespaces/NS/leases`.
  std::string leases_url(std::string_view ns) const;

  /// `leases_url(ns)` + `/NAME`.
  std::string lease_url(std::string_view ns, std::string_view name) const;

  /// The user the token authenticates: `system:serviceaccount:NS:SA`.
  std::string user() const;

  // -- authentication and authorization -------------------------------------

  /// Rotates the accepted token. The previous one keeps working for
  /// `grace` (0: refused from now on, as after a revocation).
  void set_token(std::string token, std::chrono::milliseconds grace = {});

  /// Denies (or allows again) `verb` on leases to the service account: 403.
  void deny(k8s_verb verb, bool denied = true);

  /// Denies (or allows again) `verb` on `resource`: 403.
  void deny(k8s_resource resource, k8s_verb verb, bool denied = true);

  /// Allows every verb again.
  void allow_all();

  // -- faults ----------------------------------------------------------------

  /// Adds a fault; returns its id for `clear_fault`.
  uint64_t add_fault(k8s_fault fault);

  void clear_fault(uint64_t id);

  void clear_faults();

  /// Lets every hung request go on: each is served now (writes happen) and
  /// answered if its client is still connected.
  void release_hangs();

  /// Requests currently hung.
  size_t hung_requests() const;

  /// Shifts the clock the server writes with (creationTimestamp), to model
  /// a server whose wall clock is skewed against the clients'.
  void set_clock_offset(std::chrono::milliseconds offset);

  // -- inspection and out-of-band changes ------------------------------------

  /// The stored object, or nullopt.
  std::optional<k8s_lease> lease(std::string_view ns,
                                 std::string_view name) const;

  /// Every stored object (namespace, then name order).
  std::vector<k8s_lease> leases() const;

  /// Writes `spec_json` as the spec of ns/name without authorization or
  /// validation, as another writer would (creates the object when
  /// missing; bumps the resourceVersion). Errors (errc::bad_config_value)
  /// carry the 400 message a PUT with that spec would get.
  runtime::expected<k8s_lease> put_lease(std::string_view ns,
                                         std::string_view name,
                                         std::string_view spec_json);

  /// Deletes ns/name as `kubectl delete lease` would; false if missing.
  bool delete_lease(std::string_view ns, std::string_view name);

  /// Creates or replaces the pod `pod.ns`/`pod.name` as the kubelet and
  /// the scheduler would (phase, IP, deletionTimestamp included), without
  /// authorization; bumps the resourceVersion. Returns the stored pod
  /// (uid, resourceVersion, creationTimestamp set).
  k8s_pod put_pod(k8s_pod pod);

  /// Removes a pod (its deletion has finished); false if missing. Bumps the
  /// resourceVersion.
  bool delete_pod(std::string_view ns, std::string_view name);

  /// The stored pod, or nullopt.
  std::optional<k8s_pod> pod(std::string_view ns, std::string_view name) const;

  /// `base_url()` + `/api/v1/namespaces/NS/pods`.
  std::string pods_url(std::string_view ns) const;

  /// The current global resourceVersion (decimal string).
  std::string resource_version() const;

  /// Every request so far, in arrival order.
  std::vector<k8s_recorded_request> requests() const;

  void clear_requests();

  k8s_emulator_counters counters() const;

  /// Implementation (server, sessions), defined in the .cpp files.
  class impl;

private:
  std::shared_ptr<impl> impl_;
};

/// Starts an emulator; setup failures (port in use, unreadable TLS files)
/// become errc::bad_config_value errors naming the cause.
runtime::expected<std::unique_ptr<k8s_api_emulator>>
make_k8s_api_emulator(k8s_api_emulator_options opts);

} // namespace troupe::test
