#include "troupe/bootstrap/kubernetes_api_discovery_config.hpp"

#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"

namespace troupe::bootstrap {

namespace {

constexpr std::string_view prefix = "cluster.bootstrap.kubernetes_api.";
constexpr std::string_view sa_dir = runtime::kubernetes_service_account_dir;

std::string key(std::string_view option) {
  return fmt::format("{}{}", prefix, option);
}

void add_string(runtime::config_schema& schema, std::string_view option,
                std::string default_value, std::string description) {
  schema.add(runtime::make_config_key(key(option), runtime::config_type::string,
                                      std::move(default_value),
                                      std::move(description)));
}

} // namespace

void declare_kubernetes_api_discovery_config(runtime::config_schema& schema) {
  add_string(schema, "pod_label_selector", "app=troupe",
             "Label selector of the cluster's pods (Kubernetes selector "
             "syntax, e.g. app=troupe,tier in (a,b)); must not be empty.");
  add_string(schema, "pod_namespace", "",
             "Namespace whose pods are listed; empty means the content of "
             "cluster.bootstrap.kubernetes_api.namespace_file, else default.");
  add_string(schema, "pod_port_name", "management",
             "Name of the container port that is the contact point's "
             "(management) port; a Running pod without it uses "
             "cluster.bootstrap.contact_point_port when that is set.");
  add_string(schema, "api_server", "",
             "Base URL of the Kubernetes API server; empty means in-cluster: "
             "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT.");
  add_string(schema, "token_file", fmt::format("{}/token", sa_dir),
             "Bearer token file, re-read every minute and after a 401; "
             "empty sends no token (kubectl proxy).");
  add_string(schema, "ca_file", fmt::format("{}/ca.crt", sa_dir),
             "CA bundle that verifies the API server; empty means the "
             "system's store.");
  add_string(schema, "namespace_file", fmt::format("{}/namespace", sa_dir),
             "The pod's namespace file (service account).");
  schema.add(runtime::make_config_key(
    key("allow_insecure_http"), runtime::config_type::boolean, "false",
    "Permit an http:// api_server (kubectl proxy on loopback, tests); logs "
    "a warning."));
  auto timeout = runtime::make_config_key(
    key("request_timeout"), runtime::config_type::duration, "2s",
    "Deadline of one list request (each discovery is also bounded by "
    "cluster.bootstrap.discovery_timeout).");
  timeout.min_duration = std::chrono::milliseconds{1};
  schema.add(std::move(timeout));
}

runtime::expected<kubernetes_api_discovery_options>
kubernetes_api_discovery_options_from_config(const runtime::config& cfg,
                                             const runtime::env_reader& getenv,
                                             uint16_t fallback_port) {
  auto str = [&](std::string_view option) -> const std::string& {
    return cfg.get<std::string>(key(option));
  };
  kubernetes_api_discovery_options opts;
  opts.config_prefix = std::string{prefix};
  opts.api_server = str("api_server");
  if (opts.api_server.empty()) {
    auto url = runtime::in_cluster_api_server(getenv, key("api_server"));
    if (!url)
      return runtime::make_error(errc::invalid_settings,
                                 std::move(url.error().message));
    opts.api_server = std::move(*url);
  }
  opts.pod_namespace = str("pod_namespace");
  if (opts.pod_namespace.empty())
    opts.pod_namespace = runtime::namespace_from_file(str("namespace_file"));
  opts.pod_label_selector = str("pod_label_selector");
  opts.pod_port_name = str("pod_port_name");
  opts.token_file = str("token_file");
  opts.ca_file = str("ca_file");
  opts.allow_insecure_http = cfg.get<bool>(key("allow_insecure_http"));
  opts.request_timeout = cfg.get<runtime::timespan>(key("request_timeout"));
  opts.fallback_port = fallback_port;
  return opts;
}

runtime::expected<std::shared_ptr<kubernetes_api_discovery>>
kubernetes_api_discovery_from_config(const runtime::config& cfg,
                                     const runtime::env_reader& getenv,
                                     uint16_t fallback_port) {
  auto opts
    = kubernetes_api_discovery_options_from_config(cfg, getenv, fallback_port);
  if (!opts)
    return opts.error();
  return kubernetes_api_discovery::make(std::move(*opts));
}

} // namespace troupe::bootstrap
