#include "troupe/lease/etcd_lease_config.hpp"

namespace troupe::lease {

void declare_etcd_lease_config(runtime::config_schema& schema) {
  using runtime::config_type;
  using runtime::make_config_key;
  schema.add(make_config_key(
    "lease.etcd.endpoints", config_type::string_list, "http://127.0.0.1:2379",
    "Base URLs of etcd's client endpoints (http:// or https://), tried "
    "round robin: after an unavailable answer the next call goes to the "
    "next endpoint."));
  schema.add(make_config_key(
    "lease.etcd.key_prefix", config_type::string, "/troupe/leases/",
    "The lease named N is the etcd key key_prefix + N."));
  schema.add(make_config_key(
    "lease.etcd.user", config_type::string, "",
    "etcd user to authenticate as; empty = no authentication."));
  schema.add(make_config_key(
    "lease.etcd.password", config_type::secret, "",
    "Password of lease.etcd.user (or use lease.etcd.password_file)."));
  schema.add(make_config_key(
    "lease.etcd.password_file", config_type::string, "",
    "File holding the password of lease.etcd.user (one trailing newline "
    "ignored); re-read at every authentication."));
  schema.add(make_config_key(
    "lease.etcd.ca_file", config_type::string, "",
    "PEM CA bundle that verifies etcd's server certificate (https "
    "endpoints); empty = the system's CA store."));
  schema.add(make_config_key(
    "lease.etcd.cert_file", config_type::string, "",
    "PEM client certificate for etcd's --client-cert-auth (with "
    "lease.etcd.key_file)."));
  schema.add(make_config_key("lease.etcd.key_file", config_type::string, "",
                             "PEM private key of lease.etcd.cert_file."));
  auto timeout = make_config_key(
    "lease.etcd.request_timeout", config_type::duration, "2s",
    "Deadline of each HTTP request to etcd; must be shorter than the "
    "renewal interval and at most the operation timeout.");
  timeout.min_duration = std::chrono::milliseconds{1};
  schema.add(std::move(timeout));
  auto min_ttl = make_config_key(
    "lease.etcd.min_ttl", config_type::duration, "2s",
    "etcd's minimum lease TTL (ceil(1.5 x election timeout): 2s with the "
    "default 1000ms); a shorter lease.ttl is refused.");
  min_ttl.min_duration = std::chrono::seconds{1};
  schema.add(std::move(min_ttl));
}

etcd_lease_backend_options
etcd_options_from_config(const runtime::config& cfg) {
  etcd_lease_backend_options o;
  o.endpoints = cfg.get<std::vector<std::string>>("lease.etcd.endpoints");
  o.key_prefix = cfg.get<std::string>("lease.etcd.key_prefix");
  o.user = cfg.get<std::string>("lease.etcd.user");
  o.password = cfg.get<runtime::secret>("lease.etcd.password");
  o.password_file = cfg.get<std::string>("lease.etcd.password_file");
  o.tls.ca_file = cfg.get<std::string>("lease.etcd.ca_file");
  o.tls.client_cert_file = cfg.get<std::string>("lease.etcd.cert_file");
  o.tls.client_key_file = cfg.get<std::string>("lease.etcd.key_file");
  o.request_timeout = cfg.get<runtime::timespan>("lease.etcd.request_timeout");
  o.min_ttl = cfg.get<runtime::timespan>("lease.etcd.min_ttl");
  return o;
}

runtime::expected<std::shared_ptr<lease_backend>>
etcd_backend_from_config(const runtime::config& cfg) {
  auto backend = etcd_lease_backend::make(etcd_options_from_config(cfg));
  if (!backend)
    return backend.error();
  return std::shared_ptr<lease_backend>{std::move(*backend)};
}

} // namespace troupe::lease
