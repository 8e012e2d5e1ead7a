// The node bootstrap: configuration errors, logging setup, shutdown tasks.

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include <caf/actor_system.hpp>

#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/node.hpp"

using namespace troupe::runtime;

namespace {

node_options options(std::vector<std::string> args) {
  node_options opts;
  opts.sources = make_config_sources(args, {});
  opts.deterministic = true;
  return opts;
}

// Restores the process-wide log setup a node changes.
struct log_guard {
  log_level level = current_log_level();
  ~log_guard() {
    set_log_sinks({make_stderr_sink()});
    set_log_level(level);
  }
};

} // namespace

TEST_CASE("node: bad configuration is refused, naming every problem") {
  log_guard guard;
  auto n = node::start(options({"--log.level=loud", "--scheduler.threads=2"}));
  REQUIRE_FALSE(n);
  CHECK_THAT(n.error().message, Catch::Contains("\"loud\" for log.level"));
  CHECK_THAT(n.error().message, Catch::Contains("scheduler.threads"));
}

TEST_CASE("node: application keys and module keys are declared") {
  log_guard guard;
  auto opts = options({"--app.greeting=hi", "--log.level=warning"});
  opts.declare_app_config = [](config_schema& schema) {
    config_key key;
    key.name = "app.greeting";
    key.default_value = "hello";
    key.description = "test key";
    schema.add(key);
  };
  auto n = node::start(std::move(opts));
  REQUIRE(n);
  CHECK((*n)->cfg().get<std::string>("app.greeting") == "hi");
  CHECK((*n)->cfg().origin("app.greeting").text == "flag --app.greeting");
  CHECK(current_log_level() == log_level::warning);
}

TEST_CASE("node: shutdown runs the phases in order, each task once, with "
          "the application reason") {
  log_guard guard;
  auto n = node::start(options({"--log.stderr=false"}));
  REQUIRE(n);
  std::mutex mtx;
  std::vector<std::string> order;
  auto note = [&](std::string what) {
    return [&, what](const shutdown_context& ctx) {
      std::lock_guard g{mtx};
      order.push_back(what + ":" + std::string{to_string(ctx.reason)});
    };
  };
  // Added out of order: the phases decide.
  REQUIRE_FALSE((*n)->add_shutdown_task(shutdown_phase::release_leases,
                                        "leases", note("leases")));
  REQUIRE_FALSE((*n)->add_shutdown_task(shutdown_phase::service_unbind,
                                        "unbind", note("unbind")));
  REQUIRE_FALSE((*n)->add_shutdown_task(shutdown_phase::cluster_leave, "leave",
                                        note("leave")));
  auto report = (*n)->shutdown();
  (*n)->shutdown(); // idempotent
  CHECK(order
        == std::vector<std::string>{"unbind:application", "leave:application",
                                    "leases:application"});
  CHECK(report.reason == shutdown_reason::application);
  CHECK(report.clean());
  CHECK(report.phases.size() == shutdown_phase_count);
  n->reset(); // the destructor does not run them again
  CHECK(order.size() == 3);
}

TEST_CASE("node: the coordinated_shutdown keys set the phase timeouts") {
  log_guard guard;
  auto n = node::start(
    options({"--log.stderr=false",
             "--coordinated_shutdown.cluster_exiting.timeout=250ms"}));
  REQUIRE(n);
  auto& t = (*n)->coordinated_shutdown().timeouts();
  CHECK(t.of(shutdown_phase::cluster_exiting)
        == std::chrono::milliseconds{250});
  CHECK(t.of(shutdown_phase::cluster_leave) == std::chrono::seconds{5});
  auto bad = node::start(options(
    {"--log.stderr=false", "--coordinated_shutdown.cluster_leave.timeout=0s"}));
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message,
             Catch::Contains("coordinated_shutdown.cluster_leave.timeout"));
}

TEST_CASE("node: the JSON log file receives the node's records") {
  log_guard guard;
  char path[] = "/tmp/troupe-node-log-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  {
    auto n = node::start(
      options({"--log.stderr=false", std::string{"--log.json_file="} + path}));
    REQUIRE(n);
    (*n)->add_shutdown_task(shutdown_phase::service_stop, "noted",
                            [](const shutdown_context&) {});
  }
  std::ifstream in{path};
  std::string text{std::istreambuf_iterator<char>{in}, {}};
  CHECK_THAT(text, Catch::Contains("\"message\":\"phase service_stop: 1 "
                                   "task(s), timeout 5s\""));
  std::remove(path);
}
