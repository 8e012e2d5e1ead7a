#include "troupe/lease/kubernetes_lease_config.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::lease {

namespace {

constexpr std::string_view sa_dir = runtime::kubernetes_service_account_dir;

} // namespace

void declare_kubernetes_lease_config(runtime::config_schema& schema) {
  using runtime::config_type;
  using runtime::make_config_key;
  schema.add(make_config_key(
    "lease.kubernetes.api_server", config_type::string, "",
    "Base URL of the Kubernetes API server; empty means in-cluster: "
    "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT."));
  schema.add(make_config_key(
    "lease.kubernetes.namespace", config_type::string, "",
    "Namespace of the Lease objects; empty means the content of "
    "lease.kubernetes.namespace_file, else default."));
  schema.add(make_config_key("lease.kubernetes.namespace_file",
                             config_type::string,
                             fmt::format("{}/namespace", sa_dir),
                             "The pod's namespace file (service account)."));
  schema.add(make_config_key(
    "lease.kubernetes.token_file", config_type::string,
    fmt::format("{}/token", sa_dir),
    "Bearer token file, re-read every token_refresh_interval and after a "
    "401; empty sends no token (kubectl proxy)."));
  schema.add(make_config_key(
    "lease.kubernetes.ca_file", config_type::string,
    fmt::format("{}/ca.crt", sa_dir),
    "CA bundle that verifies the API server; empty means the system's "
    "store."));
  schema.add(make_config_key(
    "lease.kubernetes.allow_insecure_http", config_type::boolean, "false",
    "Permit an http:// api_server (kubectl proxy on loopback, tests); "
    "logs a warning."));
  auto timeout = make_config_key(
    "lease.kubernetes.request_timeout", config_type::duration, "2s",
    "Deadline of one HTTP exchange; must be shorter than "
    "lease.renewal_interval and at most lease.operation_timeout.");
  timeout.min_duration = std::chrono::milliseconds{1};
  schema.add(std::move(timeout));
  auto refresh = make_config_key(
    "lease.kubernetes.token_refresh_interval", config_type::duration, "1m",
    "Longest time a token read from the token file is used (projected "
    "service-account tokens rotate).");
  refresh.min_duration = std::chrono::seconds{1};
  schema.add(std::move(refresh));
}

runtime::expected<kubernetes_lease_backend_options>
kubernetes_options_from_config(const runtime::config& cfg,
                               const env_reader& getenv) {
  kubernetes_lease_backend_options opts;
  opts.api_server = cfg.get<std::string>("lease.kubernetes.api_server");
  if (opts.api_server.empty()) {
    auto url
      = runtime::in_cluster_api_server(getenv, "lease.kubernetes.api_server");
    if (!url)
      return runtime::make_error(errc::invalid_settings,
                                 std::move(url.error().message));
    opts.api_server = std::move(*url);
  }
  opts.namespace_name = cfg.get<std::string>("lease.kubernetes.namespace");
  if (opts.namespace_name.empty())
    opts.namespace_name = runtime::namespace_from_file(
      cfg.get<std::string>("lease.kubernetes.namespace_file"));
  opts.token_file = cfg.get<std::string>("lease.kubernetes.token_file");
  opts.ca_file = cfg.get<std::string>("lease.kubernetes.ca_file");
  opts.allow_insecure_http
    = cfg.get<bool>("lease.kubernetes.allow_insecure_http");
  opts.request_timeout
    = cfg.get<runtime::timespan>("lease.kubernetes.request_timeout");
  opts.token_refresh_interval
    = cfg.get<runtime::timespan>("lease.kubernetes.token_refresh_interval");
  return opts;
}

runtime::expected<std::shared_ptr<lease_backend>>
kubernetes_backend_from_config(const runtime::config& cfg) {
  auto opts = kubernetes_options_from_config(
    cfg, [](const char* name) { return std::getenv(name); });
  if (!opts)
    return opts.error();
  auto backend = kubernetes_lease_backend::make(std::move(*opts));
  if (!backend)
    return runtime::make_error(
      errc::invalid_settings,
      fmt::format("lease.kubernetes.*: {}", backend.error().message));
  return std::shared_ptr<lease_backend>{std::move(*backend)};
}

} // namespace troupe::lease
