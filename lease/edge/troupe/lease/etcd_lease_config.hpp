#pragma once

#include <memory>

#include "troupe/lease/etcd_lease_backend.hpp"
#include "troupe/lease/lease_backend.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// The `lease.etcd.*` configuration keys and the etcd backend built from
/// them (docs/guides/lease-etcd.md explains each key).

namespace troupe::lease {

/// Declares the `lease.etcd.*` keys: endpoints, key_prefix, user, password
/// (secret), password_file, ca_file, cert_file, key_file, request_timeout,
/// min_ttl. Called by declare_lease_config.
void declare_etcd_lease_config(runtime::config_schema& schema);

/// The options the `lease.etcd.*` keys of `cfg` describe.
etcd_lease_backend_options etcd_options_from_config(const runtime::config& cfg);

/// An etcd_lease_backend from the `lease.etcd.*` keys. Errors
/// (lease errc::invalid_settings) name the key and the problem, e.g.
/// `lease.etcd.endpoints: ... unsupported scheme "ftp"`.
runtime::expected<std::shared_ptr<lease_backend>>
etcd_backend_from_config(const runtime::config& cfg);

} // namespace troupe::lease
