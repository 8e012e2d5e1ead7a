#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/lease/lease_backend.hpp"
#include "troupe/lease/lease_settings.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// Leases from configuration: the `lease.*` keys, settings and backends.

namespace troupe::lease {

/// Declares the `lease.*` keys, including `lease.etcd.*`
/// (docs/reference/configuration.md lists them with their defaults).
void declare_lease_config(runtime::config_schema& schema);

/// The settings of lease `name` held by `owner`, from `lease.ttl`,
/// `lease.renewal_interval`, ... (0s values mean "the default", see
/// lease_settings). Not yet validated: lease_handle::spawn validates.
lease_settings settings_from_config(const runtime::config& cfg,
                                    std::string name, std::string owner);

/// The backend `lease.backend` selects: `in_memory` (over a process-wide
/// store on `clock`), `file` (in `lease.file.directory`) or `etcd`
/// (`lease.etcd.*`, etcd_lease_config.hpp). Errors name the key and the
/// problem (e.g. a directory that cannot be created).
runtime::expected<std::shared_ptr<lease_backend>>
backend_from_config(const runtime::config& cfg,
                    const runtime::clock_source& clock);

} // namespace troupe::lease
