#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/http_types.hpp"

/// @file
/// troupe's client of the Kubernetes API server, the part every Kubernetes
/// edge shares (the lease backend, the kubernetes_api contact-point
/// discovery): in-cluster configuration as client-go's
/// `rest.InClusterConfig` (KUBERNETES_SERVICE_HOST/PORT, the service-account
/// token, CA and namespace files), a bearer token re-read every
/// `token_refresh_interval` and after a 401 (projected tokens rotate;
/// scenario L1), TLS verified against the CA over runtime's http_engine, and
/// `http://` only when explicitly allowed. What a status code means is the
/// caller's business: this client only retries a 401 once.

namespace troupe::runtime {

class http_engine;

/// Reads an environment variable; nullptr when unset. Tests inject one.
using env_reader = std::function<const char*(const char*)>;

/// Where a pod's service account is mounted (token, ca.crt, namespace).
inline constexpr std::string_view kubernetes_service_account_dir
  = "/var/run/secrets/kubernetes.io/serviceaccount";

/// Where and how to reach the API server.
struct kubernetes_api_options {
  /// Base URL of the API server, e.g. `https://10.96.0.1:443` (in-cluster)
  /// or `http://127.0.0.1:8001` (`kubectl proxy`). No path, no user info.
  std::string api_server;
  /// Bearer token file (the service-account token); empty sends no
  /// Authorization header (e.g. behind `kubectl proxy`). Re-read every
  /// `token_refresh_interval` and after every 401 (projected tokens rotate;
  /// scenario L1).
  std::string token_file;
  /// PEM CA bundle that verifies the API server (in-cluster: the
  /// service-account `ca.crt`); empty means the system's store.
  std::string ca_file;
  /// Permit an `http://` api_server. Off by default: the token would travel
  /// in clear text. Only for `kubectl proxy` on loopback and tests.
  bool allow_insecure_http = false;
  /// Deadline of one HTTP exchange.
  timespan request_timeout = std::chrono::seconds{2};
  /// Longest time a token read from `token_file` is used.
  timespan token_refresh_interval = std::chrono::minutes{1};
  /// Monotonic clock for the token's age (and the caller's observations).
  /// nullptr means the host's CLOCK_MONOTONIC.
  std::shared_ptr<const clock_source> clock;
  /// The component of the client's log lines (the 401 retry, the insecure
  /// http:// warning), e.g. "lease.kubernetes".
  std::string log_component = "kubernetes";
  /// The configuration prefix of these options, e.g.
  /// `cluster.bootstrap.kubernetes_api.`: when set, `make`'s errors name the
  /// keys (`cluster.bootstrap.kubernetes_api.token_file /x: cannot read`);
  /// when empty, the options (`Kubernetes token_file /x: cannot read`).
  std::string config_prefix;
};

/// `https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT` (an IPv6 host
/// bracketed), as client-go's in-cluster config. Errors
/// (errc::bad_config_value) name both variables and say to set `key` when
/// either is unset or empty (not running in a pod).
expected<std::string> in_cluster_api_server(const env_reader& getenv,
                                            std::string_view key);

/// The pod's namespace from `namespace_file` (its first line, trailing
/// blanks dropped), or `default` when the file is missing or empty, as
/// client-go's in-cluster namespace.
std::string namespace_from_file(const std::string& namespace_file);

/// Checks a namespace name: a DNS-1123 label (1..63 characters, lowercase
/// alphanumerics and '-', starting and ending with an alphanumeric), as the
/// API server requires. The error (errc::bad_config_value) quotes the name
/// and names the rule.
error validate_kubernetes_namespace(std::string_view name);

/// The media type of a response's Content-Type, lower case, without
/// parameters and surrounding blanks (`application/json`); "" when there is
/// none. The API server answers `application/json` to JSON requests; anything
/// else (an HTML error page of a proxy) is not an API object.
std::string media_type_of(const http_response& resp);

/// HTTP exchanges with one API server, authenticated by the token file.
///
/// Each `request` is one exchange bounded by `request_timeout`, with
/// `Accept: application/json`, `Authorization: Bearer <token>` (when a token
/// file is configured) and, with a body, `Content-Type: application/json`.
/// A 401 re-reads the token file and retries the request once; the answer
/// of the retry (a second 401 included) is the result. Any other status is
/// returned as is; errors are the http_engine's (timeouts, connection and
/// TLS failures) or errc::credentials_unreadable when the token file cannot
/// be read, is empty or holds more than one line. The token never reaches
/// a message or a log line.
///
/// Thread-safety: `request` may be called from any thread concurrently;
/// callbacks run on the client's io thread and must not block. Destroying
/// the client (or `shutdown`) completes pending requests with
/// errc::http_shutdown.
class kubernetes_api_client
  : public std::enable_shared_from_this<kubernetes_api_client> {
public:
  using callback = std::function<void(expected<http_response>)>;

  /// Checks the options (an absolute http(s) URL without path or user info,
  /// http:// only with allow_insecure_http, positive timeouts, a token file
  /// that can be read, for https:// a CA file that loads) and starts the
  /// HTTP engine; `api_server` is kept as `scheme://authority`. Errors
  /// (errc::bad_config_value) name the option and the file.
  static expected<std::shared_ptr<kubernetes_api_client>>
  make(kubernetes_api_options opts);

  ~kubernetes_api_client();

  kubernetes_api_client(const kubernetes_api_client&) = delete;
  kubernetes_api_client& operator=(const kubernetes_api_client&) = delete;

  /// One exchange: `method` `path` (with its query, e.g.
  /// `/api/v1/namespaces/ns/pods?labelSelector=app%3Dx`), `body` (JSON;
  /// empty for none), answers larger than `max_response_bytes` fail. Each
  /// attempt is bounded by `request_timeout`; a positive `timeout` also
  /// bounds both attempts together (the 401 retry gets what is left), so
  /// that `done` is called within it. `done` is called exactly once.
  void request(std::string method, std::string path, std::string body,
               uint64_t max_response_bytes, callback done,
               timespan timeout = timespan{0});

  /// Completes pending requests with errc::http_shutdown and stops the io
  /// thread. Idempotent.
  void shutdown();

  /// The options, completed (canonical api_server, a clock).
  const kubernetes_api_options& options() const noexcept {
    return opts_;
  }

  /// For a message about a 401 that survived the retry: ` file PATH` or
  /// ` (no token file is configured)`.
  std::string token_source() const;

private:
  explicit kubernetes_api_client(kubernetes_api_options opts);

  expected<std::string> token(bool force);

  struct exchange_state;

  void exchange(std::shared_ptr<exchange_state> st, bool after_401);

  kubernetes_api_options opts_;
  std::shared_ptr<http_engine> engine_;
  std::mutex mtx_;
  std::string token_;
  std::optional<timestamp> token_read_at_;
};

} // namespace troupe::runtime
