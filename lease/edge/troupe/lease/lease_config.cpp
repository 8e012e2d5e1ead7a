#include "troupe/lease/lease_config.hpp"

#include <map>
#include <mutex>

#include "troupe/lease/etcd_lease_config.hpp"
#include "troupe/lease/file_lease_backend.hpp"
#include "troupe/lease/in_memory_lease_backend.hpp"
#include "troupe/lease/kubernetes_lease_config.hpp"

namespace troupe::lease {

void declare_lease_config(runtime::config_schema& schema) {
  using runtime::config_type;
  auto backend = runtime::make_config_key(
    "lease.backend", config_type::string, "file",
    "Lease backend: in_memory (one process, tests and "
    "development), file (the processes of one host), etcd (a "
    "cluster; lease.etcd.*) or kubernetes (coordination.k8s.io/v1 Lease "
    "objects; lease.kubernetes.*).");
  backend.allowed = {"in_memory", "file", "etcd", "kubernetes"};
  schema.add(std::move(backend));
  runtime::add_duration_key(
    schema, "lease.ttl", "15s",
    "Expiry of a lease without renewal (typical: 15-30s).",
    std::chrono::milliseconds{1});
  schema.add(
    runtime::make_config_key("lease.renewal_interval", config_type::duration,
                             "0s", "Time between renewals; 0s means ttl / 3."));
  runtime::add_integer_key(schema, "lease.acquire_retries", "3",
                           "Maximum attempts per acquire() (typical: 3-10); "
                           "also bounds the attempts of one release().",
                           1, 1000);
  schema.add(runtime::make_config_key(
    "lease.acquire_retry_delay", config_type::duration, "200ms",
    "First delay between attempts (typical: 100-1000ms); "
    "doubles up to renewal_interval / 2, with 20% jitter."));
  schema.add(runtime::make_config_key(
    "lease.operation_timeout", config_type::duration, "0s",
    "Deadline of one backend call; 0s means min(5s, "
    "renewal_interval / 2)."));
  schema.add(
    runtime::make_config_key("lease.safety_margin", config_type::duration, "0s",
                             "Subtracted from the local deadline; 0s means "
                             "max(ttl / 10, 200ms)."));
  schema.add(runtime::make_config_key(
    "lease.file.directory", config_type::string, "/var/lib/troupe/leases",
    "Directory of the file backend's records, one file per "
    "lease name. Keep it on persistent storage: the token "
    "counter lives there."));
  auto lock = runtime::make_config_key(
    "lease.file.lock_timeout", config_type::duration, "500ms",
    "How long one file operation waits for the record's "
    "lock before reporting the store unavailable.");
  lock.min_duration = std::chrono::milliseconds{1};
  schema.add(std::move(lock));
  declare_etcd_lease_config(schema);
  declare_kubernetes_lease_config(schema);
}

lease_settings settings_from_config(const runtime::config& cfg,
                                    std::string name, std::string owner) {
  lease_settings s;
  s.name = std::move(name);
  s.owner = std::move(owner);
  s.ttl = cfg.get<runtime::timespan>("lease.ttl");
  s.renewal_interval = cfg.get<runtime::timespan>("lease.renewal_interval");
  s.acquire_retries
    = static_cast<uint32_t>(cfg.get<int64_t>("lease.acquire_retries"));
  s.acquire_retry_delay
    = cfg.get<runtime::timespan>("lease.acquire_retry_delay");
  s.operation_timeout = cfg.get<runtime::timespan>("lease.operation_timeout");
  s.safety_margin = cfg.get<runtime::timespan>("lease.safety_margin");
  return s;
}

runtime::expected<std::shared_ptr<lease_backend>>
backend_from_config(const runtime::config& cfg,
                    const runtime::clock_source& clock) {
  auto& kind = cfg.get<std::string>("lease.backend");
  if (kind == "in_memory") {
    // One store per clock per process: every in_memory lease of a process
    // sees the same records.
    static std::mutex mtx;
    static std::map<const runtime::clock_source*,
                    std::shared_ptr<in_memory_lease_store>>
      stores;
    std::lock_guard guard{mtx};
    auto& store = stores[&clock];
    if (!store)
      store = std::make_shared<in_memory_lease_store>(clock);
    return std::shared_ptr<lease_backend>{
      std::make_shared<in_memory_lease_backend>(store)};
  }
  if (kind == "etcd")
    return etcd_backend_from_config(cfg);
  if (kind == "kubernetes")
    return kubernetes_backend_from_config(cfg);
  file_lease_backend_options opts;
  opts.directory = cfg.get<std::string>("lease.file.directory");
  opts.lock_timeout = cfg.get<runtime::timespan>("lease.file.lock_timeout");
  auto backend = file_lease_backend::make(std::move(opts));
  if (!backend)
    return backend.error();
  return std::shared_ptr<lease_backend>{std::move(*backend)};
}

} // namespace troupe::lease
