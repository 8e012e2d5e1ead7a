// The Kubernetes lease backend against the Lease API emulator
// (test/support k8s_api_emulator) on real loopback sockets: the backend's
// calls one by one (call_and_wait, manual monotonic clocks for the
// observation rule), and the lease actor over it in real time with short
// settings (scenarios L1, L3, L7, L8, L9, L10, L12, L13), plus bad input
// from a scripted server.

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "troupe/lease/backend_sync.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/errc.hpp"
#include "troupe/lease/kubernetes_lease_backend.hpp"
#include "troupe/lease/kubernetes_lease_config.hpp"
#include "troupe/lease/kubernetes_lease_object.hpp"
#include "troupe/lease/lease_config.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/lease/outcome.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/test/http_test_server.hpp"
#include "troupe/test/k8s_api_emulator.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;
using troupe::test::k8s_api_emulator;
using troupe::test::k8s_api_emulator_options;
using troupe::test::k8s_fault;
using troupe::test::k8s_verb;
namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

namespace {

constexpr const char* ns = "default";

struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "troupe-k8s-XXXXXX");
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out{p, std::ios::trunc};
  out << text;
}

// An emulator plus a token file holding its token.
struct k8s_env {
  temp_dir dir;
  fs::path token_file;
  std::unique_ptr<k8s_api_emulator> emu;

  explicit k8s_env(k8s_api_emulator_options opts = {}) {
    token_file = dir.path / "token";
    write_file(token_file, opts.token + "\n");
    emu = std::make_unique<k8s_api_emulator>(std::move(opts));
  }

  kubernetes_lease_backend_options options() const {
    kubernetes_lease_backend_options o;
    o.api_server = emu->base_url();
    o.namespace_name = ns;
    o.token_file = token_file.string();
    o.allow_insecure_http = true;
    o.request_timeout = 700ms;
    return o;
  }

  std::shared_ptr<kubernetes_lease_backend>
  backend(std::shared_ptr<runtime::manual_clock> clock = {}) const {
    auto o = options();
    o.clock = clock;
    auto b = kubernetes_lease_backend::make(std::move(o));
    REQUIRE(b);
    return *b;
  }

  test::k8s_lease object(const std::string& name) const {
    auto x = emu->lease(ns, name);
    REQUIRE(x);
    return *x;
  }
};

backend_request request(std::string name, std::string owner,
                        uint64_t acquisition, runtime::timespan ttl = 10s) {
  return backend_request{std::move(name), std::move(owner), ttl, acquisition,
                         0};
}

backend_reply call(lease_backend& b, backend_op op, const backend_request& r) {
  auto reply = call_and_wait(b, op, r, 15s);
  REQUIRE(reply);
  return *reply;
}

outcome_kind judge(backend_op op, const backend_reply& reply,
                   const backend_request& r) {
  return classify(op, reply, r.owner, r.acquisition).kind;
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// A real actor system (2 workers) with the lease types. Lease actors
// spawned through `spawn` are stopped before the system goes away (a lease
// actor renews forever otherwise, and the system waits for it).
struct actor_env {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::vector<lease_actor> actors;

  actor_env() {
    cfg.set("scheduler.max-threads", 2);
    runtime::add_runtime_types(cfg);
    add_lease_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  lease_handle spawn(lease_settings s, std::shared_ptr<lease_backend> backend) {
    auto h = lease_handle::spawn(*sys, std::move(s), std::move(backend));
    REQUIRE(h);
    actors.push_back(h->actor());
    return *h;
  }

  ~actor_env() {
    for (auto& a : actors)
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    actors.clear();
    sys.reset();
  }
};

lease_settings short_settings(std::string name, std::string owner) {
  lease_settings s;
  s.name = std::move(name);
  s.owner = std::move(owner);
  s.ttl = 3s;
  s.renewal_interval = 1s;
  s.operation_timeout = 800ms;
  s.safety_margin = 300ms;
  s.acquire_retries = 3;
  s.acquire_retry_delay = 100ms;
  return s;
}

// Records on_lost with the time it fired.
struct lost_probe {
  std::mutex mtx;
  std::vector<std::pair<steady::time_point, lease_lost>> events;
  lost_subscription sub;

  explicit lost_probe(lease_handle& h) {
    sub = h.on_lost([this](const lease_lost& x) {
      std::lock_guard guard{mtx};
      events.emplace_back(steady::now(), x);
    });
  }

  size_t count() {
    std::lock_guard guard{mtx};
    return events.size();
  }

  bool wait(runtime::timespan timeout) {
    auto until = steady::now() + timeout;
    while (steady::now() < until) {
      if (count() > 0)
        return true;
      std::this_thread::sleep_for(10ms);
    }
    return count() > 0;
  }
};

// A backend talking to a scripted server over plain HTTP.
std::shared_ptr<kubernetes_lease_backend>
scripted_backend(test::http_test_server& server,
                 runtime::timespan request_timeout = std::chrono::seconds{2}) {
  kubernetes_lease_backend_options o;
  o.api_server = server.url("/").substr(0, server.url("/").size() - 1);
  o.allow_insecure_http = true;
  o.request_timeout = request_timeout;
  auto b = kubernetes_lease_backend::make(o);
  REQUIRE(b);
  return *b;
}

const std::regex micro_time{R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)"};

} // namespace

// -- one call at a time -------------------------------------------------------

TEST_CASE("kubernetes: acquire creates the Lease, its fields follow the API") {
  k8s_env env;
  auto b = env.backend();
  auto r = request("jobs", "pod-a", 0xa1);
  auto reply = call(*b, backend_op::acquire, r);
  INFO(reply.detail);
  REQUIRE(reply.status == backend_status::ok);
  CHECK(reply.token == 1);
  auto obj = env.object("jobs");
  CHECK(reply.token_scope == obj.uid);
  CHECK_FALSE(obj.uid.empty());
  CHECK(obj.spec.holder_identity == "pod-a");
  CHECK(obj.spec.lease_duration_seconds == 10);
  CHECK(obj.spec.lease_transitions == 1);
  REQUIRE(obj.spec.renew_time);
  REQUIRE(obj.spec.acquire_time);
  CHECK(std::regex_match(*obj.spec.renew_time, micro_time));
  CHECK(std::regex_match(*obj.spec.acquire_time, micro_time));
  CHECK(contains(obj.annotations, "\"troupe.io/acquisition\":\"a1\""));
  // The requests: GET (404), then POST with the bearer token.
  auto reqs = env.emu->requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].method == "GET");
  CHECK(reqs[0].status == 404);
  CHECK(reqs[1].method == "POST");
  CHECK(reqs[1].status == 201);
  REQUIRE(reqs[1].header("Authorization"));
  CHECK(*reqs[1].header("Authorization") == "Bearer k8s-emulator-token");
  REQUIRE(reqs[1].header("Content-Type"));
  CHECK(*reqs[1].header("Content-Type") == "application/json");
}

TEST_CASE("kubernetes: contention, renewal, release and token order") {
  k8s_env env;
  auto clock_a = std::make_shared<runtime::manual_clock>();
  auto clock_b = std::make_shared<runtime::manual_clock>();
  auto a = env.backend(clock_a);
  auto b = env.backend(clock_b);
  auto ra = request("jobs", "pod-a", 1);
  auto rb = request("jobs", "pod-b", 2);
  REQUIRE(call(*a, backend_op::acquire, ra).status == backend_status::ok);
  // B sees a live holder.
  auto held = call(*b, backend_op::acquire, rb);
  CHECK(held.status == backend_status::held);
  CHECK(held.holder == "pod-a");
  CHECK(judge(backend_op::acquire, held, rb) == outcome_kind::held_by_other);
  // A renews: a new resourceVersion, the same transitions.
  auto before = env.object("jobs");
  auto renewed = call(*a, backend_op::renew, ra);
  REQUIRE(renewed.status == backend_status::ok);
  CHECK(renewed.token == 1);
  auto after = env.object("jobs");
  CHECK(after.resource_version != before.resource_version);
  CHECK(after.spec.lease_transitions == 1);
  // A releases: empty holder, duration 1 s, transitions kept.
  auto released = call(*a, backend_op::release, ra);
  REQUIRE(released.status == backend_status::ok);
  CHECK(judge(backend_op::release, released, ra) == outcome_kind::success);
  auto free = env.object("jobs");
  CHECK(free.spec.holder_identity.value_or("") == "");
  CHECK(free.spec.lease_duration_seconds == 1);
  CHECK(free.spec.lease_transitions == 1);
  CHECK_FALSE(contains(free.annotations, "troupe.io/acquisition"));
  // B takes it at once: token 2. Then A again after B released: token 3.
  auto got = call(*b, backend_op::acquire, rb);
  REQUIRE(got.status == backend_status::ok);
  CHECK(got.token == 2);
  REQUIRE(call(*b, backend_op::release, rb).status == backend_status::ok);
  auto ra2 = request("jobs", "pod-a", 3);
  auto again = call(*a, backend_op::acquire, ra2);
  REQUIRE(again.status == backend_status::ok);
  CHECK(again.token == 3);
  // Renewing an acquisition that is gone is not ours any more.
  auto stale = call(*b, backend_op::renew, rb);
  CHECK(judge(backend_op::renew, stale, rb) == outcome_kind::lost);
}

TEST_CASE("kubernetes: a contender takes over only after observing no change "
          "for a whole leaseDurationSeconds") {
  k8s_env env;
  auto clock_b = std::make_shared<runtime::manual_clock>();
  auto a = env.backend();
  auto b = env.backend(clock_b);
  auto ra = request("jobs", "pod-a", 1, 10s);
  auto rb = request("jobs", "pod-b", 2, 10s);
  REQUIRE(call(*a, backend_op::acquire, ra).status == backend_status::ok);
  // A stops renewing (crashed). B's first look starts its observation.
  CHECK(call(*b, backend_op::acquire, rb).status == backend_status::held);
  clock_b->advance(9999ms);
  CHECK(call(*b, backend_op::acquire, rb).status == backend_status::held);
  clock_b->advance(1ms);
  auto got = call(*b, backend_op::acquire, rb);
  INFO(got.detail);
  REQUIRE(got.status == backend_status::ok);
  CHECK(got.token == 2);
  CHECK(env.object("jobs").spec.holder_identity == "pod-b");
  // A's renewal now finds another holder: lost.
  auto lost = call(*a, backend_op::renew, ra);
  CHECK(judge(backend_op::renew, lost, ra) == outcome_kind::lost);
  CHECK(lost.holder == "pod-b");
}

TEST_CASE("scenario L8: a contender whose wall clock runs 90 s ahead never "
          "steals a live lease") {
  k8s_env env;
  auto clock_b = std::make_shared<runtime::manual_clock>();
  auto a = env.backend();
  auto opts_b = env.options();
  opts_b.clock = clock_b;
  opts_b.wall_clock = [] { return std::chrono::system_clock::now() + 90s; };
  auto b = kubernetes_lease_backend::make(std::move(opts_b));
  REQUIRE(b);
  // Akka's settings: ttl 120 s, heartbeat every 12 s. Under Akka's rule B
  // (clock +90 s) sees the record expire 120 - 24 - 90 = 6 s after each
  // heartbeat.
  auto ra = request("jobs", "pod-a", 1, 120s);
  auto rb = request("jobs", "pod-b", 2, 120s);
  REQUIRE(call(*a, backend_op::acquire, ra).status == backend_status::ok);
  for (int beat = 0; beat < 30; ++beat) { // 6 minutes of B's time
    clock_b->advance(6s);
    auto r = call(**b, backend_op::acquire, rb);
    INFO("beat " << beat << ": " << r.detail);
    REQUIRE(r.status == backend_status::held);
    CHECK(r.holder == "pod-a");
    clock_b->advance(6s);
    REQUIRE(call(*a, backend_op::renew, ra).status == backend_status::ok);
  }
  // A stops; B takes over only after its own 120 s without a change.
  CHECK(call(**b, backend_op::acquire, rb).status == backend_status::held);
  clock_b->advance(119s);
  CHECK(call(**b, backend_op::acquire, rb).status == backend_status::held);
  clock_b->advance(1s);
  auto got = call(**b, backend_op::acquire, rb);
  REQUIRE(got.status == backend_status::ok);
  CHECK(got.token == 2);
}

TEST_CASE("scenario L3: heartbeat applied, reply lost, 409 names self => "
          "still held") {
  k8s_env env;
  auto a = env.backend();
  auto ra = request("jobs", "pod-a", 1);
  REQUIRE(call(*a, backend_op::acquire, ra).status == backend_status::ok);
  auto rv_before = env.object("jobs").resource_version;
  env.emu->add_fault(k8s_fault::apply_then_drop().on("PUT").times(1));
  auto dropped = call(*a, backend_op::renew, ra);
  CHECK(dropped.status == backend_status::unavailable);
  CHECK(judge(backend_op::renew, dropped, ra) == outcome_kind::retry);
  // The write applied: the cached resourceVersion is stale now.
  CHECK(env.object("jobs").resource_version != rv_before);
  auto retried = call(*a, backend_op::renew, ra);
  INFO(retried.detail);
  CHECK(retried.status == backend_status::ok);
  CHECK(judge(backend_op::renew, retried, ra) == outcome_kind::success);
  CHECK(retried.token == 1);
  // The sequence the server saw: PUT (applied, dropped), PUT 409, GET, PUT.
  auto reqs = env.emu->requests();
  REQUIRE(reqs.size() >= 4);
  auto n = reqs.size();
  CHECK(reqs[n - 3].status == 409);
  CHECK(reqs[n - 2].method == "GET");
  CHECK(reqs[n - 1].status == 200);
  // The same lost reply on an acquire: the retry recognises its own write.
  auto rb = request("other", "pod-b", 7);
  env.emu->add_fault(k8s_fault::apply_then_drop().on("POST").times(1));
  CHECK(call(*a, backend_op::acquire, rb).status
        == backend_status::unavailable);
  auto adopted = call(*a, backend_op::acquire, rb);
  CHECK(judge(backend_op::acquire, adopted, rb) == outcome_kind::success);
  CHECK(adopted.token == 1);
}

TEST_CASE("kubernetes: a conflict naming another holder is a loss at once") {
  k8s_env env;
  auto a = env.backend();
  auto ra = request("jobs", "pod-a", 1);
  REQUIRE(call(*a, backend_op::acquire, ra).status == backend_status::ok);
  // Someone else writes the object behind A's back.
  REQUIRE(
    env.emu->put_lease(ns, "jobs",
                       R"({"holderIdentity":"intruder",)"
                       R"("leaseDurationSeconds":10,"leaseTransitions":2})"));
  auto r = call(*a, backend_op::renew, ra);
  CHECK(r.status == backend_status::held);
  CHECK(r.holder == "intruder");
  CHECK(judge(backend_op::renew, r, ra) == outcome_kind::lost);
  // A record with the same holder name but without troupe's acquisition
  // (another program using the identity) is not ours either.
  REQUIRE(env.emu->delete_lease(ns, "jobs"));
  REQUIRE(
    env.emu->put_lease(ns, "jobs",
                       R"({"holderIdentity":"pod-a",)"
                       R"("leaseDurationSeconds":10,"leaseTransitions":3})"));
  auto same_name = call(*a, backend_op::renew, ra);
  CHECK(judge(backend_op::renew, same_name, ra) == outcome_kind::lost);
}

TEST_CASE("scenario L12: release after an in-flight renewal re-reads and "
          "succeeds") {
  k8s_env env;
  auto a = env.backend();
  auto ra = request("jobs", "pod-a", 1);
  REQUIRE(call(*a, backend_op::acquire, ra).status == backend_status::ok);
  // The renewal applies but its reply is lost: the cache is stale.
  env.emu->add_fault(k8s_fault::apply_then_drop().on("PUT").times(1));
  CHECK(call(*a, backend_op::renew, ra).status == backend_status::unavailable);
  auto r = call(*a, backend_op::release, ra);
  INFO(r.detail);
  CHECK(r.status == backend_status::ok);
  auto obj = env.object("jobs");
  CHECK(obj.spec.holder_identity.value_or("") == "");
  CHECK(obj.spec.lease_transitions == 1);
  // Releasing what is not ours any more counts as released.
  auto rb = request("jobs", "pod-b", 2);
  REQUIRE(call(*a, backend_op::acquire, rb).status == backend_status::ok);
  auto not_ours = call(*a, backend_op::release, ra);
  CHECK(judge(backend_op::release, not_ours, ra) == outcome_kind::success);
  CHECK(env.object("jobs").spec.holder_identity == "pod-b");
}

TEST_CASE("scenario L7: RBAC without create or update is a backend error, "
          "never 'taken'") {
  k8s_env env;
  auto a = env.backend();
  auto ra = request("jobs", "pod-a", 1);
  env.emu->deny(k8s_verb::create);
  auto r = call(*a, backend_op::acquire, ra);
  INFO(r.detail);
  CHECK(r.status == backend_status::rejected);
  CHECK(judge(backend_op::acquire, r, ra) == outcome_kind::refused);
  CHECK(contains(r.detail, "403"));
  CHECK(contains(r.detail, "cannot create resource \"leases\""));
  CHECK(contains(r.detail, "get, create and update"));
  env.emu->allow_all();
  REQUIRE(call(*a, backend_op::acquire, ra).status == backend_status::ok);
  env.emu->deny(k8s_verb::update);
  auto renew = call(*a, backend_op::renew, ra);
  CHECK(renew.status == backend_status::rejected);
  CHECK(contains(renew.detail, "cannot update resource \"leases\""));
  env.emu->deny(k8s_verb::update, false);
  env.emu->deny(k8s_verb::get);
  auto rb = request("jobs", "pod-b", 2);
  auto get = call(*a, backend_op::acquire, rb);
  CHECK(get.status == backend_status::rejected);
  CHECK(contains(get.detail, "cannot get resource \"leases\""));
  // Through the lease handle: an error, not false.
  env.emu->allow_all();
  env.emu->deny(k8s_verb::create);
  actor_env sys;
  auto h = sys.spawn(short_settings("other", "pod-a"), env.backend());
  auto res = h.acquire(10s);
  REQUIRE_FALSE(res);
  CHECK(res.error().code() == static_cast<uint8_t>(errc::backend_rejected));
  CHECK(contains(runtime::error_message(res.error()), "cannot create"));
}

TEST_CASE("kubernetes: 422 and other refusals are distinct from RBAC") {
  k8s_env env;
  auto a = env.backend();
  auto ra = request("jobs", "pod-a", 1);
  env.emu->add_fault(k8s_fault::answer_status(422).on("POST").times(1));
  auto r = call(*a, backend_op::acquire, ra);
  CHECK(r.status == backend_status::rejected);
  CHECK(contains(r.detail, "HTTP 422"));
  CHECK_FALSE(contains(r.detail, "RBAC"));
}

TEST_CASE("scenario L1: a rotated token is re-read on 401 and periodically") {
  k8s_env env;
  auto clock = std::make_shared<runtime::manual_clock>();
  auto opts = env.options();
  opts.clock = clock;
  opts.token_refresh_interval = 60s;
  auto made = kubernetes_lease_backend::make(opts);
  REQUIRE(made);
  auto& a = **made;
  auto ra = request("jobs", "pod-a", 1);
  REQUIRE(call(a, backend_op::acquire, ra).status == backend_status::ok);
  // The kubelet rewrites the file and the old token is revoked at once.
  write_file(env.token_file, "token-two\n");
  env.emu->set_token("token-two");
  env.emu->clear_requests();
  auto r = call(a, backend_op::renew, ra);
  INFO(r.detail);
  REQUIRE(r.status == backend_status::ok);
  auto reqs = env.emu->requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].status == 401);
  CHECK(*reqs[1].header("Authorization") == "Bearer token-two");
  // Periodic re-read: after token_refresh_interval the new token is used
  // before any 401 (the old one keeps working during a grace period).
  write_file(env.token_file, "token-three\n");
  env.emu->set_token("token-three", 60s);
  clock->advance(61s);
  env.emu->clear_requests();
  REQUIRE(call(a, backend_op::renew, ra).status == backend_status::ok);
  reqs = env.emu->requests();
  REQUIRE(reqs.size() == 1);
  CHECK(*reqs[0].header("Authorization") == "Bearer token-three");
  // A token that stays wrong: rejected after one retry, naming the file
  // and never the token.
  write_file(env.token_file, "wrong-token\n");
  env.emu->set_token("token-four");
  auto bad = call(a, backend_op::renew, ra);
  CHECK(bad.status == backend_status::rejected);
  CHECK(contains(bad.detail, "401"));
  CHECK(contains(bad.detail, env.token_file.string()));
  CHECK_FALSE(contains(bad.detail, "wrong-token"));
  CHECK_FALSE(contains(bad.detail, "token-four"));
}

TEST_CASE("kubernetes: 429 and 5xx are unavailable with the server's "
          "Retry-After") {
  k8s_env env;
  auto a = env.backend();
  auto ra = request("jobs", "pod-a", 1);
  env.emu->add_fault(k8s_fault::too_many_requests(7s).on("GET").times(1));
  auto r = call(*a, backend_op::acquire, ra);
  CHECK(r.status == backend_status::unavailable);
  CHECK(r.retry_after == 7s);
  CHECK(judge(backend_op::acquire, r, ra) == outcome_kind::retry);
  env.emu->add_fault(k8s_fault::answer_status(503).on("GET").times(1));
  auto r503 = call(*a, backend_op::acquire, ra);
  CHECK(r503.status == backend_status::unavailable);
  CHECK(contains(r503.detail, "HTTP 503"));
  env.emu->add_fault(k8s_fault::answer_status(500).on("GET").times(1));
  CHECK(call(*a, backend_op::acquire, ra).status
        == backend_status::unavailable);
  REQUIRE(call(*a, backend_op::acquire, ra).status == backend_status::ok);
}

TEST_CASE("kubernetes: an object deleted by hand is re-created with a higher "
          "token and a new scope") {
  k8s_env env;
  auto a = env.backend();
  auto r1 = request("jobs", "pod-a", 1);
  auto first = call(*a, backend_op::acquire, r1);
  REQUIRE(first.status == backend_status::ok);
  REQUIRE(call(*a, backend_op::release, r1).status == backend_status::ok);
  auto r2 = request("jobs", "pod-a", 2);
  auto second = call(*a, backend_op::acquire, r2);
  REQUIRE(second.status == backend_status::ok);
  REQUIRE(call(*a, backend_op::release, r2).status == backend_status::ok);
  REQUIRE(env.emu->delete_lease(ns, "jobs"));
  auto r3 = request("jobs", "pod-a", 3);
  auto third = call(*a, backend_op::acquire, r3);
  REQUIRE(third.status == backend_status::ok);
  CHECK(first.token == 1);
  CHECK(second.token == 2);
  CHECK(third.token == 3);
  CHECK(third.token_scope != second.token_scope);
}

TEST_CASE("kubernetes: a Lease deleted by hand while held -> the renewal "
          "answers not_found (lost) and does not re-create it, re-acquire "
          "gets a greater token") {
  k8s_env env;
  auto a = env.backend();
  auto r1 = request("jobs", "pod-a", 1);
  // Two acquisitions so the token is above 1 when the object goes.
  REQUIRE(call(*a, backend_op::acquire, request("jobs", "pod-a", 7)).status
          == backend_status::ok);
  REQUIRE(call(*a, backend_op::release, request("jobs", "pod-a", 7)).status
          == backend_status::ok);
  auto first = call(*a, backend_op::acquire, r1);
  REQUIRE(first.status == backend_status::ok);
  REQUIRE(first.token == 2);
  REQUIRE(env.emu->delete_lease(ns, "jobs")); // kubectl delete lease jobs
  auto r = call(*a, backend_op::renew, r1);
  INFO(r.detail);
  CHECK(r.status == backend_status::not_found);
  CHECK(judge(backend_op::renew, r, r1) == outcome_kind::lost);
  CHECK(contains(r.detail, "does not exist"));
  // The renewal's PUT carried the old uid, a precondition that fails on a
  // missing object (409): nothing was re-created behind the loss.
  CHECK_FALSE(env.emu->lease(ns, "jobs"));
  auto r2 = request("jobs", "pod-a", 2);
  auto second = call(*a, backend_op::acquire, r2);
  REQUIRE(second.status == backend_status::ok);
  CHECK(second.token == 3); // highest observed leaseTransitions + 1
  CHECK(second.token_scope != first.token_scope);
  CHECK(env.object("jobs").spec.lease_transitions == 3);
}

TEST_CASE(
  "kubernetes: a renewal answered 201 (a server that re-created the "
  "deleted object despite the uid) is a loss, and the re-created object "
  "is released") {
  using test::http_behaviour;
  auto answer = [](uint16_t status, std::string body) {
    return http_behaviour::respond(
      status, {{"Content-Type", "application/json"}}, std::move(body));
  };
  auto lease = [](const char* rv, const char* uid, const char* holder) {
    return fmt::format(
      R"({{"kind":"Lease","metadata":{{"name":"jobs","resourceVersion":)"
      R"("{}","uid":"{}","annotations":{{"troupe.io/acquisition":"{}"}}}},)"
      R"("spec":{{"holderIdentity":"{}","leaseDurationSeconds":10,)"
      R"("leaseTransitions":4}}}})",
      rv, uid, *holder != 0 ? "1" : "0", holder);
  };
  test::http_test_server server;
  server.push(answer(404, R"({"kind":"Status","reason":"NotFound"})")); // GET
  server.push(answer(201, lease("5", "u1", "pod-a")));                  // POST
  server.push(answer(201, lease("7", "u2", "pod-a"))); // renewal's PUT
  server.push(answer(200, lease("8", "u2", "")));      // the release's PUT
  auto b = scripted_backend(server);
  auto r = request("jobs", "pod-a", 1);
  REQUIRE(call(*b, backend_op::acquire, r).status == backend_status::ok);
  auto reply = call(*b, backend_op::renew, r);
  INFO(reply.detail);
  CHECK(reply.status == backend_status::not_found);
  CHECK(judge(backend_op::renew, reply, r) == outcome_kind::lost);
  CHECK(contains(reply.detail, "was deleted while held"));
  auto reqs = server.requests();
  REQUIRE(reqs.size() == 4);
  CHECK(reqs[2].method == "PUT");
  CHECK(contains(reqs[2].body, R"("uid":"u1")"));
  CHECK(reqs[3].method == "PUT");
  CHECK(contains(reqs[3].body, R"("resourceVersion":"7")"));
  CHECK(contains(reqs[3].body, R"("holderIdentity":"")"));
}

TEST_CASE("kubernetes lease: Lease object deleted by hand while held -> lost "
          "at the next renewal, re-acquire gets a greater token") {
  k8s_env env;
  actor_env sys;
  auto a = sys.spawn(short_settings("jobs", "pod-a"), env.backend());
  REQUIRE(a.acquire(10s) == true);
  auto first = a.token();
  lost_probe lost{a};
  auto deleted_at = steady::now();
  REQUIRE(env.emu->delete_lease(ns, "jobs"));
  // Renewals run every 1s; the local deadline is 2.7s after the last one.
  REQUIRE(lost.wait(5s));
  {
    std::lock_guard guard{lost.mtx};
    auto& [at, x] = lost.events[0];
    INFO(x.reason);
    CHECK(at - deleted_at <= 1500ms);
    CHECK(contains(x.reason, "record is gone"));
    CHECK(contains(x.reason, "lease \"jobs\" does not exist"));
    CHECK(x.token == first);
  }
  CHECK_FALSE(a.check_alive());
  REQUIRE(a.acquire(10s) == true);
  CHECK(a.check_alive());
  CHECK(a.token() > first);
  CHECK(env.object("jobs").spec.holder_identity == "pod-a");
}

TEST_CASE("kubernetes: HTTPS verifies the API server against the CA") {
  auto made_pki = test::make_test_pki();
  REQUIRE(made_pki);
  auto& pki = **made_pki;
  k8s_api_emulator_options o;
  o.tls = true;
  o.cert_file = pki.server_cert;
  o.key_file = pki.server_key;
  k8s_env env{o};
  auto opts = env.options();
  opts.allow_insecure_http = false;
  opts.ca_file = pki.ca_file;
  auto good = kubernetes_lease_backend::make(opts);
  REQUIRE(good);
  auto ra = request("jobs", "pod-a", 1);
  auto r = call(**good, backend_op::acquire, ra);
  INFO(r.detail);
  CHECK(r.status == backend_status::ok);
  opts.ca_file = pki.other_ca_file;
  auto untrusted = kubernetes_lease_backend::make(opts);
  REQUIRE(untrusted);
  auto refused
    = call(**untrusted, backend_op::acquire, request("jobs", "pod-b", 2));
  CHECK(refused.status == backend_status::unavailable);
  CHECK(contains(refused.detail, "TLS"));
}

// -- bad input ----------------------------------------------------------------

TEST_CASE("kubernetes: bad answers are errors naming the problem, never "
          "'acquired'") {
  using test::http_behaviour;
  struct row {
    const char* name;
    http_behaviour answer;
    const char* expected;
  };
  auto json = [](std::string body, uint16_t status = 200) {
    return http_behaviour::respond(
      status, {{"Content-Type", "application/json"}}, std::move(body));
  };
  auto rows = GENERATE_COPY(values<row>({
    {"malformed JSON", json(R"({"kind":"Lease","metadata":{)"),
     "malformed JSON"},
    {"missing metadata", json(R"({"kind":"Lease","spec":{}})"),
     "metadata is missing"},
    {"missing resourceVersion",
     json(R"({"kind":"Lease","metadata":{"name":"jobs"},"spec":{}})"),
     "metadata.resourceVersion is missing"},
    {"negative leaseDurationSeconds",
     json(R"({"kind":"Lease","metadata":{"name":"jobs","resourceVersion":"5"},)"
          R"("spec":{"holderIdentity":"x","leaseDurationSeconds":-30}})"),
     "spec.leaseDurationSeconds = -30 is outside"},
    {"holder of the wrong type",
     json(R"({"kind":"Lease","metadata":{"name":"jobs","resourceVersion":"5"},)"
          R"("spec":{"holderIdentity":["x"]}})"),
     "spec.holderIdentity is not a string"},
    {"wrong content type",
     http_behaviour::respond(200, {{"Content-Type", "text/html"}},
                             "<html>proxy error</html>"),
     "Content-Type text/html"},
    {"oversized body", http_behaviour::oversized(2 * 1024 * 1024),
     "exceeds max_response_bytes"},
    {"HTML error page",
     http_behaviour::respond(502, {{"Content-Type", "text/html"}}, "<h1>"),
     "HTTP 502"},
    {"truncated", http_behaviour::send_raw("HTTP/1.1 200 OK\r\nContent-"),
     "GET lease \"jobs\""},
  }));
  INFO(rows.name);
  test::http_test_server server;
  server.set_default(rows.answer);
  auto b = scripted_backend(server, 2s);
  auto r = request("jobs", "pod-a", 1);
  auto reply = call(*b, backend_op::acquire, r);
  INFO(reply.detail);
  CHECK(reply.status == backend_status::unavailable);
  CHECK(judge(backend_op::acquire, reply, r) == outcome_kind::retry);
  CHECK(contains(reply.detail, rows.expected));
}

TEST_CASE("kubernetes: a renewTime in the future changes nothing, expiry is "
          "still observed locally") {
  k8s_env env;
  auto clock = std::make_shared<runtime::manual_clock>();
  auto b = env.backend(clock);
  REQUIRE(env.emu->put_lease(ns, "jobs",
                             R"({"holderIdentity":"pod-a",)"
                             R"("leaseDurationSeconds":5,)"
                             R"("renewTime":"2099-01-01T00:00:00.000000Z",)"
                             R"("leaseTransitions":4})"));
  auto rb = request("jobs", "pod-b", 2, 5s);
  CHECK(call(*b, backend_op::acquire, rb).status == backend_status::held);
  clock->advance(5s);
  auto got = call(*b, backend_op::acquire, rb);
  REQUIRE(got.status == backend_status::ok);
  CHECK(got.token == 5);
}

TEST_CASE("kubernetes: invalid configuration is refused at construction") {
  k8s_env env;
  auto opts = env.options();
  opts.allow_insecure_http = false;
  auto plain = kubernetes_lease_backend::make(opts);
  REQUIRE_FALSE(plain);
  CHECK(contains(plain.error().message, "allow_insecure_http"));
  opts = env.options();
  opts.namespace_name = "Bad_NS";
  CHECK_FALSE(kubernetes_lease_backend::make(opts));
  opts = env.options();
  opts.api_server = env.emu->base_url() + "/api";
  CHECK_FALSE(kubernetes_lease_backend::make(opts));
  // A token file or CA file that cannot be read is a configuration error
  // naming the option and the file, not a failure of every later call.
  opts = env.options();
  opts.token_file = (env.dir.path / "no-such-token").string();
  auto no_token = kubernetes_lease_backend::make(opts);
  REQUIRE_FALSE(no_token);
  CHECK(contains(no_token.error().message, "token_file"));
  CHECK(contains(no_token.error().message, "no-such-token"));
  opts = env.options();
  opts.api_server = "https://127.0.0.1:6443";
  opts.ca_file = (env.dir.path / "no-such-ca.crt").string();
  auto no_ca = kubernetes_lease_backend::make(opts);
  REQUIRE_FALSE(no_ca);
  CHECK(contains(no_ca.error().message, "ca_file"));
  CHECK(contains(no_ca.error().message, "no-such-ca.crt"));
  auto b = env.backend();
  auto s = short_settings("Jobs_Leader", "pod-a");
  auto err = b->validate(s.with_defaults());
  REQUIRE(err);
  CHECK(contains(err.message, "\"Jobs_Leader\" is not a valid Kubernetes "
                              "object name"));
  s = short_settings("jobs", "pod-a");
  s.ttl = 2500ms;
  err = b->validate(s.with_defaults());
  REQUIRE(err);
  CHECK(contains(err.message, "whole number of seconds"));
  s = short_settings("jobs", "pod-a");
  s.renewal_interval = 600ms; // request_timeout 700ms is not shorter
  err = b->validate(s.with_defaults());
  REQUIRE(err);
  CHECK(contains(err.message, "request_timeout"));
}

TEST_CASE("kubernetes: in-cluster configuration from the environment and "
          "the service account files") {
  temp_dir dir;
  write_file(dir.path / "namespace", "payments\n");
  runtime::config_schema schema;
  declare_lease_config(schema);
  auto cfg = std::make_optional<runtime::config>(schema);
  REQUIRE_FALSE(cfg->set("lease.kubernetes.namespace_file",
                         (dir.path / "namespace").string(), {"test"}));
  auto env = [](const char* name) -> const char* {
    std::string_view n{name};
    if (n == "KUBERNETES_SERVICE_HOST")
      return "fd00::1";
    if (n == "KUBERNETES_SERVICE_PORT")
      return "6443";
    return nullptr;
  };
  auto opts = kubernetes_options_from_config(*cfg, env);
  REQUIRE(opts);
  CHECK(opts->api_server == "https://[fd00::1]:6443");
  CHECK(opts->namespace_name == "payments");
  CHECK(opts->token_file
        == "/var/run/secrets/kubernetes.io/serviceaccount/token");
  auto none = kubernetes_options_from_config(
    *cfg, [](const char*) -> const char* { return nullptr; });
  REQUIRE_FALSE(none);
  CHECK(contains(none.error().message, "KUBERNETES_SERVICE_HOST"));
  REQUIRE_FALSE(cfg->set("lease.kubernetes.namespace_file",
                         (dir.path / "missing").string(), {"test"}));
  auto fallback = kubernetes_options_from_config(*cfg, env);
  REQUIRE(fallback);
  CHECK(fallback->namespace_name == "default");
}

// -- the lease actor over the backend, in real time
// ----------------------------

TEST_CASE("scenario L9: renewals throttled past the deadline => on_lost "
          "before the next holder acquires") {
  k8s_env env;
  actor_env sys;
  auto a = sys.spawn(short_settings("jobs", "pod-a"), env.backend());
  REQUIRE(a.acquire(10s) == true);
  lost_probe lost{a};
  // Every PUT is throttled from now on (A's renewals).
  auto fault = env.emu->add_fault(k8s_fault::too_many_requests(1s).on("PUT"));
  auto last_ok = env.object("jobs");
  auto throttled_at = steady::now();
  REQUIRE(lost.wait(10s));
  auto lost_at = lost.events[0].first;
  CHECK_FALSE(a.check_alive());
  // At most ttl - margin after the last successful renewal, which started
  // before the fault (generous scheduling bound).
  CHECK(lost_at - throttled_at <= 3s - 300ms + 1s);
  CHECK(lost.events[0].second.token == 1);
  env.emu->clear_fault(fault);
  // B acquires only after observing the record unchanged for a ttl: after
  // A's on_lost.
  auto b = sys.spawn(short_settings("jobs", "pod-b"), env.backend());
  bool got = false;
  auto until = steady::now() + 15s;
  while (!got && steady::now() < until) {
    auto r = b.acquire(5s);
    REQUIRE(r);
    got = *r;
    if (!got)
      std::this_thread::sleep_for(200ms);
  }
  REQUIRE(got);
  CHECK(steady::now() > lost_at);
  CHECK(b.token() == 2);
  CHECK(env.object("jobs").resource_version != last_ok.resource_version);
}

TEST_CASE("scenario L10: an API server that accepts and never answers => "
          "each call bounded, on_lost by the deadline") {
  k8s_env env;
  actor_env sys;
  auto a = sys.spawn(short_settings("jobs", "pod-a"), env.backend());
  REQUIRE(a.acquire(10s) == true);
  lost_probe lost{a};
  env.emu->add_fault(k8s_fault::hang().on("PUT"));
  auto hung_at = steady::now();
  REQUIRE(lost.wait(10s));
  CHECK(lost.events[0].first - hung_at <= 3s - 300ms + 1s);
  CHECK_FALSE(a.check_alive());
  CHECK(env.emu->hung_requests() >= 1);
  env.emu->release_hangs();
}

TEST_CASE("scenario L2: one failed renewal is retried, no on_lost") {
  k8s_env env;
  actor_env sys;
  auto a = sys.spawn(short_settings("jobs", "pod-a"), env.backend());
  REQUIRE(a.acquire(10s) == true);
  lost_probe lost{a};
  env.emu->add_fault(k8s_fault::answer_status(503).on("PUT").times(1));
  env.emu->add_fault(k8s_fault::apply_then_drop().on("PUT").times(1));
  // Hold for more than two ttls across both faults.
  std::this_thread::sleep_for(6s);
  CHECK(lost.count() == 0);
  CHECK(a.check_alive());
  CHECK(env.object("jobs").spec.holder_identity == "pod-a");
  CHECK(env.emu->counters().faults_fired == 2);
}

TEST_CASE("scenario L13: three candidates and a restarting holder: one "
          "candidate wins within a ttl plus a retry, no livelock") {
  k8s_env env;
  actor_env sys;
  std::vector<lease_handle> handles;
  for (auto owner : {"pod-a", "pod-b", "pod-c"}) {
    auto h = sys.spawn(short_settings("jobs", owner), env.backend());
    handles.push_back(h);
  }
  std::set<uint64_t> tokens;
  for (int round = 0; round < 3; ++round) {
    // Everyone contends at once.
    std::vector<std::thread> threads;
    std::atomic<int> winners{0};
    for (auto& h : handles)
      threads.emplace_back([&h, &winners] {
        auto r = h.acquire(5s);
        if (r && *r)
          ++winners;
      });
    for (auto& t : threads)
      t.join();
    // Either someone won now, or the record was still live; within a ttl
    // plus a retry period one of them must win.
    auto start = steady::now();
    while (winners == 0 && steady::now() - start < 3s + 2s) {
      for (auto& h : handles) {
        auto r = h.acquire(2s);
        if (r && *r) {
          ++winners;
          break;
        }
      }
    }
    REQUIRE(winners == 1);
    size_t alive = 0;
    for (auto& h : handles)
      if (h.check_alive()) {
        ++alive;
        tokens.insert(h.token());
      }
    REQUIRE(alive == 1);
    // The holder "restarts": it releases (a graceful restart) and the next
    // round begins; the crash case is covered by the takeover test.
    for (auto& h : handles)
      if (h.check_alive())
        REQUIRE_FALSE(h.release(5s));
  }
  CHECK(tokens.size() == 3);
}

TEST_CASE("kubernetes: an acquire retry that finds its own earlier write "
          "refreshes the record: a contender's observation restarts") {
  // The first acquire applied at t0 but its reply was lost; the lease actor
  // retries at t1 and, on success, counts its deadline from t1. A contender
  // that saw the record at t0 must not be able to take it over before
  // t1 + leaseDurationSeconds: the retry has to write, not just read.
  k8s_env env;
  auto clock_b = std::make_shared<runtime::manual_clock>();
  auto a = env.backend();
  auto b = env.backend(clock_b);
  auto ra = request("jobs", "pod-a", 1, 10s);
  auto rb = request("jobs", "pod-b", 2, 10s);
  env.emu->add_fault(k8s_fault::apply_then_drop().on("POST").times(1));
  CHECK(call(*a, backend_op::acquire, ra).status
        == backend_status::unavailable);
  // B looks at t0 and keeps looking.
  CHECK(call(*b, backend_op::acquire, rb).status == backend_status::held);
  clock_b->advance(9s);
  // A's retry at t1 = t0 + 9 s succeeds: A's deadline is t1 + ttl - margin.
  auto retry = call(*a, backend_op::acquire, ra);
  INFO(retry.detail);
  REQUIRE(judge(backend_op::acquire, retry, ra) == outcome_kind::success);
  CHECK(retry.token == 1);
  // At t0 + 10 s (t1 + 1 s) B must still see a live holder.
  clock_b->advance(1s);
  auto late = call(*b, backend_op::acquire, rb);
  INFO(late.detail);
  CHECK(late.status == backend_status::held);
  CHECK(late.holder == "pod-a");
}

TEST_CASE("kubernetes: a 200 to our write whose Lease does not name us is "
          "never 'acquired'") {
  // A proxy, a cache or a broken server answering our PUT with an object
  // that is not what we wrote must not count as our write.
  using test::http_behaviour;
  auto json = [](std::string body) {
    return http_behaviour::respond(200, {{"Content-Type", "application/json"}},
                                   std::move(body));
  };
  const std::string free_lease
    = R"({"kind":"Lease","metadata":{"name":"jobs","resourceVersion":"5",)"
      R"("uid":"u1"},"spec":{"holderIdentity":"","leaseTransitions":3}})";
  auto written_by = [](std::string holder) {
    return R"({"kind":"Lease","metadata":{"name":"jobs","resourceVersion":)"
           R"("6","uid":"u1"},"spec":{"holderIdentity":")"
           + holder + R"(","leaseDurationSeconds":10,"leaseTransitions":4}})";
  };
  test::http_test_server server;
  server.push(json(free_lease));          // GET
  server.push(json(free_lease));          // PUT answered unchanged
  server.push(json(free_lease));          // GET
  server.push(json(written_by("pod-b"))); // PUT answered for another
  auto b = scripted_backend(server);
  auto r = request("jobs", "pod-a", 1);
  for (int i = 0; i < 2; ++i) {
    auto reply = call(*b, backend_op::acquire, r);
    INFO(reply.detail);
    CHECK(reply.status == backend_status::unavailable);
    CHECK(judge(backend_op::acquire, reply, r) == outcome_kind::retry);
    CHECK(contains(reply.detail, "does not name"));
  }
}
