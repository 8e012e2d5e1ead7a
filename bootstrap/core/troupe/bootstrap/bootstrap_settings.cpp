#include "troupe/bootstrap/bootstrap_settings.hpp"

#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/runtime/config.hpp"

namespace troupe::bootstrap {

namespace {

using runtime::config_type;
using runtime::render_duration;

runtime::error invalid(std::string what) {
  return runtime::make_error(errc::invalid_settings, std::move(what));
}

void add_key(runtime::config_schema& schema, std::string name, config_type type,
             std::string default_value, std::string description) {
  auto key = runtime::make_config_key(
    std::move(name), type, std::move(default_value), std::move(description));
  if (type == config_type::duration)
    key.min_duration = std::chrono::milliseconds{1};
  schema.add(std::move(key));
}

} // namespace

const char* to_string(discovery_method x) noexcept {
  switch (x) {
    case discovery_method::off:
      return "";
    case discovery_method::config:
      return "config";
    case discovery_method::dns:
      return "dns";
    case discovery_method::kubernetes_api:
      return "kubernetes_api";
  }
  return "";
}

runtime::error validate(const bootstrap_settings& s) {
  std::pair<const char*, timespan> durations[] = {
    {"cluster.bootstrap.stable_margin", s.stable_margin},
    {"cluster.bootstrap.discovery_interval", s.discovery_interval},
    {"cluster.bootstrap.discovery_timeout", s.discovery_timeout},
    {"cluster.bootstrap.probe_interval", s.probe_interval},
    {"cluster.bootstrap.probing_failure_timeout", s.probing_failure_timeout},
  };
  for (const auto& [key, d] : durations)
    if (d <= timespan{0})
      return invalid(
        fmt::format("{} {} must be greater than 0", key, render_duration(d)));
  if (s.required_contact_point_nr < 1)
    return invalid("cluster.bootstrap.required_contact_point_nr 0 must be at "
                   "least 1");
  if (s.probing_failure_timeout < s.probe_interval)
    return invalid(fmt::format(
      "cluster.bootstrap.probing_failure_timeout {} must be at least "
      "cluster.bootstrap.probe_interval {} (an answer slower than the "
      "interval would never count)",
      render_duration(s.probing_failure_timeout),
      render_duration(s.probe_interval)));
  if (s.method == discovery_method::config && s.config_contact_points.empty())
    return invalid("cluster.bootstrap.config.contact_points is empty, but "
                   "cluster.bootstrap.discovery_method is config");
  return {};
}

void declare_bootstrap_config(runtime::config_schema& schema) {
  auto method = runtime::make_config_key(
    "cluster.bootstrap.discovery_method", config_type::string, "",
    "How this node finds the others to form or join a cluster (Akka "
    "Management's Cluster Bootstrap): empty joins through "
    "cluster.seed_nodes instead; config (a static list), dns (records of a "
    "headless service) or kubernetes_api (pods by label selector).");
  method.allowed = {"", "config", "dns", "kubernetes_api"};
  schema.add(std::move(method));
  add_key(schema, "cluster.bootstrap.new_cluster_enabled", config_type::boolean,
          "true",
          "Whether this node may found a new cluster; false only joins a "
          "cluster a contact point reports (for restarts after the first "
          "formation).");
  auto nr = runtime::make_config_key(
    "cluster.bootstrap.required_contact_point_nr", config_type::integer, "2",
    "Contact points that must be discovered, and all answer that they are "
    "in no cluster, before the lowest of them founds one. The initial "
    "number of nodes is the safest value.");
  nr.min_integer = 1;
  schema.add(std::move(nr));
  add_key(schema, "cluster.bootstrap.stable_margin", config_type::duration,
          "5s",
          "How long the discovered contact points must stay the same before "
          "a node may found a cluster.");
  add_key(schema, "cluster.bootstrap.discovery_interval", config_type::duration,
          "1s", "How often discovery runs.");
  add_key(schema, "cluster.bootstrap.discovery_timeout", config_type::duration,
          "3s", "Deadline of one discovery.");
  add_key(schema, "cluster.bootstrap.probe_interval", config_type::duration,
          "1s",
          "How often each contact point's GET /bootstrap/seed-nodes is "
          "asked.");
  add_key(schema, "cluster.bootstrap.probing_failure_timeout",
          config_type::duration, "3s",
          "Deadline of one probe, and how long its answer counts (at least "
          "probe_interval).");
  auto port = runtime::make_config_key(
    "cluster.bootstrap.contact_point_port", config_type::integer, "0",
    "Management port of discovered records that carry none (A/AAAA "
    "records, pods without the named port); 0: this node's "
    "management.port.");
  port.min_integer = 0;
  port.max_integer = 65535;
  schema.add(std::move(port));
  add_key(schema, "cluster.bootstrap.config.contact_points",
          config_type::string_list, "",
          "The config method's contact points as host:port (management "
          "ports), the same list on every node.");
}

runtime::expected<bootstrap_settings>
bootstrap_settings_from_config(const runtime::config& cfg) {
  bootstrap_settings s;
  auto method = cfg.get<std::string>("cluster.bootstrap.discovery_method");
  if (method == "config")
    s.method = discovery_method::config;
  else if (method == "dns")
    s.method = discovery_method::dns;
  else if (method == "kubernetes_api")
    s.method = discovery_method::kubernetes_api;
  if (s.method != discovery_method::off) {
    const auto& seeds = cfg.get<std::vector<std::string>>("cluster.seed_nodes");
    if (!seeds.empty())
      return invalid(fmt::format(
        "cluster.bootstrap.discovery_method is {} (from {}) and "
        "cluster.seed_nodes is set (from {}): use one way to join, not both",
        method, cfg.origin("cluster.bootstrap.discovery_method").text,
        cfg.origin("cluster.seed_nodes").text));
  }
  s.new_cluster_enabled
    = cfg.get<bool>("cluster.bootstrap.new_cluster_enabled");
  s.required_contact_point_nr = static_cast<size_t>(
    cfg.get<int64_t>("cluster.bootstrap.required_contact_point_nr"));
  auto d = [&cfg](const char* key) { return cfg.get<timespan>(key); };
  s.stable_margin = d("cluster.bootstrap.stable_margin");
  s.discovery_interval = d("cluster.bootstrap.discovery_interval");
  s.discovery_timeout = d("cluster.bootstrap.discovery_timeout");
  s.probe_interval = d("cluster.bootstrap.probe_interval");
  s.probing_failure_timeout = d("cluster.bootstrap.probing_failure_timeout");
  s.contact_point_port = static_cast<uint16_t>(
    cfg.get<int64_t>("cluster.bootstrap.contact_point_port"));
  const auto& points = cfg.get<std::vector<std::string>>(
    "cluster.bootstrap.config.contact_points");
  for (size_t i = 0; i < points.size(); ++i) {
    auto p = parse_contact_point(points[i]);
    if (!p)
      return invalid(fmt::format(
        "cluster.bootstrap.config.contact_points (from {}), item {}: {}",
        cfg.origin("cluster.bootstrap.config.contact_points").text, i + 1,
        p.error().message));
    s.config_contact_points.push_back(std::move(*p));
  }
  if (auto err = validate(s))
    return err;
  return s;
}

} // namespace troupe::bootstrap
