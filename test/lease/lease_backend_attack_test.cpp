// Adversarial probes of the networked lease backends and the lease handle
// that held up (kept as regression tests), plus one known defect that is not
// fixed here (compiled only with -DLEASE_ATTACK_UNFIXED, see below). The
// defects that were fixed have their tests next to the code they concern
// (etcd_*, kubernetes_lease_backend_test.cpp, outcome_test.cpp,
// runtime/http_client_test.cpp).

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

#include <dirent.h>

#include "troupe/lease/backend_sync.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/kubernetes_lease_backend.hpp"
#include "troupe/lease/lease_config.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/test/k8s_api_emulator.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;

namespace {

std::unique_ptr<runtime::node> start_node() {
  runtime::node_options opts;
  opts.modules = {lease_module()};
  opts.sources = runtime::sources_from_process(
    std::vector<std::string>{"--lease.backend=in_memory", "--lease.ttl=3s"},
    nullptr);
  auto node = runtime::node::start(std::move(opts));
  REQUIRE(node);
  return std::move(*node);
}

size_t entries(const char* dir) {
  size_t n = 0;
  if (auto* d = ::opendir(dir)) {
    while (auto* e = ::readdir(d))
      if (e->d_name[0] != '.')
        ++n;
    ::closedir(d);
  }
  return n;
}

std::shared_ptr<kubernetes_lease_backend>
k8s_backend(const test::k8s_api_emulator& emu) {
  kubernetes_lease_backend_options o;
  o.api_server = emu.base_url();
  o.allow_insecure_http = true;
  o.request_timeout = 2s;
  auto b = kubernetes_lease_backend::make(std::move(o));
  REQUIRE(b);
  return *b;
}

test::k8s_api_emulator_options open_emulator() {
  test::k8s_api_emulator_options eo;
  eo.token = ""; // every request is the service account (kubectl proxy)
  return eo;
}

} // namespace

// The reported "lease_handle destroyed after node::shutdown() segfaults in
// caf::local_actor::cleanup", as lease_contender does it: does not happen
// for a handle spawned through the node (the node stops its actor).
TEST_CASE("attack: a lease_handle spawned through the node outlives "
          "node::shutdown() without crashing") {
  for (int round = 0; round < 50; ++round) {
    auto node = start_node();
    auto lease = lease_handle::spawn_from_config(*node, "jobs", "node-a");
    REQUIRE(lease);
    auto got = lease->acquire(2s);
    REQUIRE(got);
    CHECK(*got);
    node->shutdown();
    // `lease` is destroyed after the actor system is gone.
  }
}

#ifdef LEASE_ATTACK_UNFIXED
// Known defect, not fixed here (runtime::node's shutdown policy): a handle
// spawned with lease_handle::spawn(node.system(), ...) is not registered
// with the node, node::shutdown() destroys the actor system without waiting
// (await_actors_before_shutdown(false)), the lease actor is never
// terminated, and when the handle's last caf::actor reference drops, CAF's
// actor_storage::data_dtor -> local_actor::on_destroy -> cleanup runs
// against the freed actor system: SIGSEGV in caf::local_actor::cleanup.
TEST_CASE("attack: a lease_handle spawned on node.system() outlives "
          "node::shutdown() without crashing") {
  auto node = start_node();
  auto backend = backend_from_config(node->cfg(), node->clock());
  REQUIRE(backend);
  auto lease = lease_handle::spawn(
    node->system(), settings_from_config(node->cfg(), "jobs", "node-a"),
    *backend);
  REQUIRE(lease);
  auto got = lease->acquire(2s);
  REQUIRE(got);
  CHECK(*got);
  node->shutdown();
}
#endif

// int32 is the API's type of leaseTransitions: the next acquisition would
// need 2147483648. The answer is an error naming the field, never "ok".
TEST_CASE("attack: kubernetes leaseTransitions at the int32 maximum is a "
          "refusal naming the field, never acquired") {
  test::k8s_api_emulator emu{open_emulator()};
  REQUIRE(emu.put_lease("default", "jobs",
                        R"({"holderIdentity":"",)"
                        R"("leaseTransitions":2147483647})"));
  auto b = k8s_backend(emu);
  backend_request r{"jobs", "pod-a", 10s, 1, 0};
  auto reply = call_and_wait(*b, backend_op::acquire, r, 10s);
  REQUIRE(reply);
  INFO(reply->detail);
  CHECK(reply->status == backend_status::rejected);
  CHECK(reply->detail.find("leaseTransitions") != std::string::npos);
  CHECK(emu.lease("default", "jobs")->spec.holder_identity.value_or("") == "");
}

// Thousands of calls leave no connection or thread behind.
TEST_CASE("attack: kubernetes acquire/renew/release cycles leak neither "
          "file descriptors nor threads") {
  test::k8s_api_emulator emu{open_emulator()};
  auto b = k8s_backend(emu);
  size_t fds = 0;
  size_t threads = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    backend_request r{"jobs", "pod-a", 10s, 100 + i, 0};
    for (auto op :
         {backend_op::acquire, backend_op::renew, backend_op::release}) {
      auto reply = call_and_wait(*b, op, r, 10s);
      REQUIRE(reply);
      INFO(to_string(op) << ": " << reply->detail);
      REQUIRE(reply->status == backend_status::ok);
    }
    if (i == 10) {
      fds = entries("/proc/self/fd");
      threads = entries("/proc/self/task");
    }
  }
  // The emulator's own sockets may come and go by one or two.
  CHECK(entries("/proc/self/fd") <= fds + 2);
  CHECK(entries("/proc/self/task") == threads);
}
