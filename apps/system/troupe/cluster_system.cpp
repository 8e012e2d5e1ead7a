#include "troupe/cluster_system.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "troupe/bootstrap/bootstrap_coordinator.hpp"
#include "troupe/cluster/caf_glue.hpp"
#include "troupe/downing/caf_glue.hpp"
#include "troupe/downing/downing_settings.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/kubernetes_lease_config.hpp"
#include "troupe/lease/lease_config.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/stop_signal.hpp"
#include "troupe/sharding/sharding.hpp"
#include "troupe/singleton/caf_glue.hpp"
#include "troupe/version.hpp"

namespace troupe {

runtime::expected<std::unique_ptr<cluster_system>>
cluster_system::start(int argc, char** argv,
                      std::vector<runtime::module> extra_modules) {
  runtime::install_stop_signal_handlers();
  runtime::node_options opts;
  opts.modules = std::move(extra_modules);
  opts.sources = runtime::sources_from_process(argc, argv, nullptr);
  return start(std::move(opts));
}

runtime::expected<std::unique_ptr<cluster_system>>
cluster_system::start(runtime::node_options opts) {
  std::vector<runtime::module> modules{
    lease::lease_module(),        cluster::cluster_module(),
    downing::downing_module(),    singleton::singleton_module(),
    sharding::sharding_module(),  management::management_module(),
    bootstrap::bootstrap_module()};
  for (auto& m : opts.modules)
    modules.push_back(std::move(m));
  opts.modules = std::move(modules);
  std::unique_ptr<cluster_system> sys{new cluster_system};
  auto node = runtime::node::start(std::move(opts));
  if (!node)
    return node.error();
  sys->node_ = std::move(*node);
  auto& cfg = sys->node_->cfg();
  // Checked before any networking: a refused configuration never shows up
  // as a half-started node.
  if (auto sbr = downing::downing_settings_from_config(cfg); !sbr)
    return sbr.error();
  auto remoting = cluster::remoting_handle::start(*sys->node_);
  if (!remoting)
    return remoting.error();
  sys->remoting_ = *remoting;
  auto members = cluster::cluster_handle::start(*sys->node_, sys->remoting_);
  if (!members)
    return members.error();
  sys->cluster_ = *members;
  auto resolver = downing::downing_handle::start(*sys->node_, sys->cluster_);
  if (!resolver)
    return resolver.error();
  sys->resolver_ = *resolver;
  auto api = management::management_service::start(*sys->node_, sys->cluster_,
                                                   sys->remoting_);
  if (!api)
    return api.error();
  sys->management_ = std::move(*api);
  // Cluster Bootstrap (when cluster.bootstrap.discovery_method is set)
  // probes the contact points' management endpoints, this node's own
  // among them: it starts once the management API serves.
  auto formation = bootstrap::bootstrap_handle::start(
    *sys->node_, sys->cluster_, sys->management_->port());
  if (!formation)
    return formation.error();
  sys->bootstrap_ = *formation;
  // The version and the node in one line: what a bug report needs first.
  runtime::logger{"node"}.info(
    "troupe {} started node {} of cluster {}", library_version().text,
    runtime::to_string(sys->remoting_.local_address()),
    cfg.get<std::string>("cluster.name"));
  return sys;
}

std::string cluster_system::owner_name() const {
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != 0)
    return pod;
  return runtime::to_string(remoting_.local_address());
}

caf::expected<lease::lease_handle>
cluster_system::lease(lease::lease_settings settings) {
  auto backend = lease::backend_from_config(node_->cfg(), node_->clock());
  if (!backend)
    return runtime::to_caf_error(backend.error());
  auto h = lease::lease_handle::spawn(*node_, std::move(settings),
                                      std::move(*backend));
  if (h)
    management_->add_lease(*h);
  return h;
}

caf::expected<lease::lease_handle>
cluster_system::kubernetes_lease(lease::lease_settings settings) {
  auto backend = lease::kubernetes_backend_from_config(node_->cfg());
  if (!backend)
    return runtime::to_caf_error(backend.error());
  auto h = lease::lease_handle::spawn(*node_, std::move(settings),
                                      std::move(*backend));
  if (h)
    management_->add_lease(*h);
  return h;
}

runtime::expected<singleton::singleton_manager>
cluster_system::start_singleton(std::string type_name,
                                singleton::instance_factory factory,
                                singleton::manager_options options) {
  auto h = singleton::singleton_manager::start(
    *node_, cluster_, remoting_, std::move(type_name), std::move(factory),
    std::move(options));
  if (h)
    management_->add_singleton(*h);
  return h;
}

runtime::expected<singleton::singleton_proxy>
cluster_system::singleton_proxy(std::string type_name,
                                singleton::proxy_options options) {
  return singleton::singleton_proxy::start(
    *node_, cluster_, remoting_, std::move(type_name), std::move(options));
}

runtime::expected<sharding::shard_region>
cluster_system::start_sharding(std::string type_name,
                               sharding::entity_factory factory,
                               sharding::region_options options) {
  // The removal margin's `auto` covers the resolver's longest decision
  // (ADR 0007): stable_after + down_all_when_unstable.
  if (!options.decision_bound)
    if (auto d = downing::downing_settings_from_config(node_->cfg()))
      options.decision_bound
        = d->stability.stable_after + d->stability.down_all_when_unstable;
  auto h = sharding::shard_region::start(
    *node_, cluster_, remoting_, std::move(type_name), std::move(factory),
    std::move(options));
  if (h)
    management_->add_region(*h);
  return h;
}

runtime::expected<sharding::shard_region>
cluster_system::sharding_proxy(std::string type_name,
                               sharding::region_options options) {
  auto h = sharding::shard_region::start_proxy(
    *node_, cluster_, remoting_, std::move(type_name), std::move(options));
  if (h)
    management_->add_region(*h);
  return h;
}

cluster_system::~cluster_system() {
  shutdown();
}

int cluster_system::run() {
  auto& sequence = node_->coordinated_shutdown();
  while (!runtime::stop_requested() && !sequence.started())
    runtime::sleep_unless_stopped(std::chrono::milliseconds{100});
  auto report = sequence.run_and_wait(runtime::shutdown_reason::signal);
  shutdown();
  return runtime::exit_code(report.reason);
}

runtime::shutdown_report cluster_system::shutdown() {
  if (!node_)
    return {};
  return node_->shutdown();
}

int fail(const runtime::error& err, const char* program) {
  std::fprintf(stderr, "%s: %s\n", program, err.message.c_str());
  return 2;
}

int fail(const caf::error& err, const char* program) {
  std::fprintf(stderr, "%s: %s\n", program,
               runtime::error_message(err).c_str());
  return 2;
}

} // namespace troupe
