#include "troupe/runtime/node.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include "troupe/runtime/caf_clock.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::runtime {

namespace {

struct node_config : caf::actor_system_config {
  node_config(const config& cfg, const std::vector<module>& modules,
              bool deterministic) {
    for (auto& m : modules)
      if (m.init_caf)
        m.init_caf(*this);
    // CAF's own logger is compiled out in Debian's build; keep it quiet in
    // case a build has it.
    set("logger.file-verbosity", caf::atom("quiet"));
    set("logger.console-verbosity", caf::atom("quiet"));
    if (deterministic) {
      set("scheduler.policy", caf::atom("testing"));
      return;
    }
    set("scheduler.max-threads",
        static_cast<size_t>(cfg.get<int64_t>("scheduler.max_threads")));
    set("work-stealing.moderate-sleep-duration",
        caf::timespan{cfg.get<timespan>("scheduler.moderate_sleep")});
  }
};

error configure_logging(const config& cfg) {
  auto level = parse_log_level(cfg.get<std::string>("log.level"));
  if (!level)
    return level.error();
  std::vector<std::shared_ptr<log_sink>> sinks;
  if (cfg.get<bool>("log.stderr"))
    sinks.push_back(make_stderr_sink());
  auto& json = cfg.get<std::string>("log.json_file");
  if (!json.empty()) {
    auto sink = make_json_lines_sink(json);
    if (!sink)
      return sink.error();
    sinks.push_back(std::move(*sink));
  }
  set_log_sinks(std::move(sinks));
  set_log_level(*level);
  return {};
}

} // namespace

struct node::impl {
  config_schema schema;
  std::unique_ptr<config> cfg;
  std::unique_ptr<node_config> caf_cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf_clock_source> clock;
  std::unique_ptr<runtime::coordinated_shutdown> shutdown;
  std::mutex mtx;
  std::vector<caf::strong_actor_ptr> actors;
  std::optional<shutdown_report> report;
};

expected<std::unique_ptr<node>> node::start(node_options opts) {
  auto st = std::make_unique<impl>();
  std::vector<module> modules{runtime_module()};
  modules.insert(modules.end(), opts.modules.begin(), opts.modules.end());
  for (auto& m : modules)
    if (m.declare_config)
      m.declare_config(st->schema);
  if (opts.declare_app_config)
    opts.declare_app_config(st->schema);
  auto cfg = load_config(st->schema, opts.sources);
  if (!cfg)
    return cfg.error();
  st->cfg = std::make_unique<config>(std::move(*cfg));
  if (auto err = configure_logging(*st->cfg))
    return err;
  st->caf_cfg
    = std::make_unique<node_config>(*st->cfg, modules, opts.deterministic);
  st->sys = std::make_unique<caf::actor_system>(*st->caf_cfg);
  st->clock = std::make_unique<caf_clock_source>(st->sys->clock());
  st->shutdown = std::make_unique<runtime::coordinated_shutdown>(
    shutdown_timeouts_from_config(*st->cfg));
  auto* raw = st.get();
  st->shutdown->add_task(shutdown_phase::actor_system_terminate, "stop actors",
                         [raw](const shutdown_context&) {
                           std::vector<caf::strong_actor_ptr> actors;
                           {
                             std::lock_guard guard{raw->mtx};
                             actors.swap(raw->actors);
                           }
                           for (auto& a : actors)
                             caf::anon_send_exit(
                               a, caf::exit_reason::user_shutdown);
                           actors.clear();
                           raw->sys->await_actors_before_shutdown(false);
                         });
  return std::unique_ptr<node>{new node(std::move(st))};
}

node::node(std::unique_ptr<impl> ptr) : impl_(std::move(ptr)) {}

node::~node() {
  shutdown();
  // The actor system goes last: a CAF 0.17 actor handle released after its
  // system was destroyed crashes (its cleanup reaches into the system), and
  // the owners of this node (cluster_system's modules, the application's
  // factories) release theirs only after shutdown() returned.
  impl_->sys.reset();
  flush_logs();
}

caf::actor_system& node::system() noexcept {
  return *impl_->sys;
}

const config& node::cfg() const noexcept {
  return *impl_->cfg;
}

const clock_source& node::clock() const noexcept {
  return *impl_->clock;
}

runtime::coordinated_shutdown& node::coordinated_shutdown() noexcept {
  return *impl_->shutdown;
}

error node::add_shutdown_task(shutdown_phase phase, std::string name,
                              shutdown_task task) {
  return impl_->shutdown->add_task(phase, std::move(name), std::move(task));
}

void node::stop_on_shutdown(caf::strong_actor_ptr actor) {
  std::lock_guard guard{impl_->mtx};
  impl_->actors.push_back(std::move(actor));
}

shutdown_report node::shutdown() {
  {
    std::lock_guard guard{impl_->mtx};
    if (impl_->report)
      return *impl_->report;
  }
  auto report = impl_->shutdown->run_and_wait(shutdown_reason::application);
  // What the tasks captured (module handles, and through them the
  // application's factories with their actor handles) is released now,
  // while the actor system still exists.
  impl_->shutdown->release_tasks();
  flush_logs();
  std::lock_guard guard{impl_->mtx};
  impl_->report = report;
  return report;
}

} // namespace troupe::runtime
