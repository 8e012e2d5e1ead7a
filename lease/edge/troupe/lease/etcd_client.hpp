#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/lease/etcd_protocol.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_engine.hpp"
#include "troupe/runtime/http_types.hpp"
#include "troupe/runtime/secret.hpp"

/// @file
/// The RPC layer under the etcd lease backend: one POST to etcd's JSON
/// gateway with endpoint rotation, authentication and the retry rules of
/// backends-notes.md §1.6/§1.8. Knows nothing about leases.

namespace troupe::lease {

/// The HTTP request the etcd backend sends: `POST endpoint + path` with
/// `body`, `Content-Type: application/json`, and `Authorization: <token>`
/// (raw, not `Bearer`: etcd answers that with 401) when `auth_token` is
/// non-empty. Public so that a raw-HTTP baseline (benchmarks) sends exactly
/// the same bytes as the backend.
runtime::http_request make_etcd_http_request(std::string_view endpoint,
                                             std::string_view path,
                                             std::string body,
                                             const runtime::secret& auth_token,
                                             runtime::timespan timeout);

/// What an etcd_client needs (a subset of etcd_lease_backend_options).
struct etcd_client_options {
  std::vector<std::string> endpoints;
  std::string user;
  runtime::secret password;
  std::string password_file;
  runtime::http_tls_settings tls;
  runtime::timespan request_timeout = std::chrono::seconds{2};
};

/// The outcome of one RPC after authentication handling.
///
/// - `kind`: `ok` (a 2xx without an error body: parse `body`), or the
///   failure that remained after the retries the client makes itself.
///   Transport errors are `unavailable` (timeout, connection, malformed or
///   oversized response, shutdown) or `rejected` (TLS failure, bad
///   request).
/// - `where`: `etcd <endpoint> <path>`, the prefix of every message about
///   this RPC.
/// - `detail`: for failures, `where` plus what happened (`HTTP 503:
///   etcdserver: no leader`, the engine's error). Never holds a secret.
/// - `retry_after`: from a `Retry-After: <seconds>` header; 0 otherwise.
struct etcd_result {
  etcd::answer_kind kind = etcd::answer_kind::unavailable;
  std::string body;
  std::string where;
  std::string detail;
  runtime::timespan retry_after{0};
  /// The client shut down before the RPC completed (not worth a warning).
  bool shut_down = false;
};

/// Counters of an etcd_client.
struct etcd_client_stats {
  uint64_t requests = 0;
  uint64_t authentications = 0;
};

/// Sends RPCs to etcd's gateway (`POST <endpoint><path>`, JSON).
///
/// - Endpoints: round robin; an `unavailable` answer (or a TLS failure)
///   moves the next RPC to the next endpoint. One RPC uses one endpoint.
/// - Authentication (when `user` is set): authenticates before the first
///   RPC and sends the token raw in `Authorization`. On 401 (token expired
///   or invalid) or 400 `user name is empty` it authenticates again and
///   retries once; on 412 `authentication is not enabled` it drops the
///   token and retries once without it (and stops authenticating until
///   etcd asks for it again). Without a user, those answers are `rejected`
///   with a detail saying that etcd wants credentials.
/// - The password file is re-read at every authentication.
/// - Every HTTP request has the deadline `request_timeout`; an RPC with a
///   re-authentication makes up to three requests.
///
/// Thread-safety: `post` may be called from any thread concurrently;
/// `then` runs on the engine's io thread (or synchronously on the
/// caller's after shutdown). The token is guarded by a mutex that is
/// never held while calling out.
class etcd_client : public std::enable_shared_from_this<etcd_client> {
public:
  using handler = std::function<void(etcd_result)>;

  /// Checks the endpoints (non-empty list of http(s) URLs without a path)
  /// and starts the engine. Errors: lease errc::invalid_settings naming
  /// `lease.etcd.endpoints` and the URL.
  static runtime::expected<std::shared_ptr<etcd_client>>
  make(etcd_client_options opts);

  ~etcd_client();

  /// Sends `body` to `path` (e.g. etcd::txn_path); calls `then` once.
  void post(std::string_view path, std::string body, handler then);

  /// Completes pending RPCs with `unavailable` and stops the io thread.
  void shutdown();

  /// The endpoints, comma-separated.
  std::string endpoints_text() const;

  const etcd_client_options& options() const noexcept {
    return opts_;
  }

  /// True if the TLS settings failed to load (the message names the file).
  const runtime::error& tls_setup_error() const noexcept {
    return engine_.tls_setup_error();
  }

  etcd_client_stats stats() const;

private:
  explicit etcd_client(etcd_client_options opts);

  struct call {
    std::string path;
    std::string body;
    handler then;
    bool retried = false;
  };

  void start(std::shared_ptr<call> c);
  void send(std::shared_ptr<call> c);
  void on_answer(std::shared_ptr<call> c, size_t turn, std::string endpoint,
                 runtime::expected<runtime::http_response> r);
  /// Authenticates, then `send`s `c`; failures complete `c`.
  void authenticate_then_send(std::shared_ptr<call> c);
  void advance(size_t turn);
  bool has_user() const noexcept {
    return !opts_.user.empty();
  }
  runtime::expected<runtime::secret> read_password() const;
  runtime::secret token() const;
  void set_token(runtime::secret token, bool auth_disabled);

  etcd_client_options opts_;
  runtime::http_engine engine_;
  std::atomic<size_t> turn_{0};
  std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> authentications_{0};
  mutable std::mutex mtx_;
  runtime::secret token_;
  bool auth_disabled_ = false;
};

} // namespace troupe::lease
