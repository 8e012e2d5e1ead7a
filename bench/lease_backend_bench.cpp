// Networked lease backends against real servers, each compared in the same
// run with the same sequence of raw HTTP requests from the same client
// (runtime::http_engine) (DESIGN.md §10):
// - etcd (a real etcd 3.4 on loopback, started here):
//   acquire+release = grant + CREATE==0 txn + guarded-delete txn + revoke;
//   renew = one keepalive POST.
// - Kubernetes (the Lease API emulator on loopback, started here):
//   acquire+release = GET + PUT (acquire) + PUT (release);
//   renew = one PUT.
// The raw baselines build the same bodies (etcd: the backend's own request
// builders; Kubernetes: a fixed JSON template) and read only what the next
// request needs (the lease ID, the resourceVersion). The ratio is the
// backend's overhead: sessions, parsing, classification, callbacks.
// Target: <= 1.10.

#include <atomic>
#include <future>
#include <memory>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "bench_main.hpp"
#include "troupe/lease/backend_sync.hpp"
#include "troupe/lease/etcd_client.hpp"
#include "troupe/lease/etcd_lease_backend.hpp"
#include "troupe/lease/etcd_protocol.hpp"
#include "troupe/lease/kubernetes_lease_backend.hpp"
#include "troupe/runtime/http_engine.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/test/etcd_fixture.hpp"
#include "troupe/test/k8s_api_emulator.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;

namespace {

constexpr auto ttl = std::chrono::seconds{10};
constexpr auto request_timeout = std::chrono::seconds{5};

// One blocking exchange over the engine (the baselines' client).
runtime::http_response exchange(runtime::http_engine& engine,
                                runtime::http_request req) {
  auto p = std::make_shared<
    std::promise<runtime::expected<runtime::http_response>>>();
  auto f = p->get_future();
  engine.start(std::move(req), [p](auto res) { p->set_value(std::move(res)); });
  auto res = f.get();
  if (!res)
    throw std::runtime_error("baseline request failed: " + res.error().message);
  if (res->status >= 300)
    throw std::runtime_error(fmt::format("baseline request failed: HTTP {}: {}",
                                         res->status, res->body));
  return std::move(*res);
}

uint64_t next_acquisition() {
  static std::atomic<uint64_t> n{1};
  return n++;
}

void expect(bool ok, benchmark::State& state, const char* what) {
  if (!ok)
    state.SkipWithError(what);
}

// The subjects: the same loop over any backend.
void acquire_release_loop(benchmark::State& state, lease_backend& backend,
                          const char* name) {
  for (auto _ : state) {
    backend_request r{name, "owner-a", ttl, next_acquisition(), 0};
    auto a = call_and_wait(backend, backend_op::acquire, r);
    expect(a && a->status == backend_status::ok, state, "acquire failed");
    r.token = a ? a->token : 0;
    auto rel = call_and_wait(backend, backend_op::release, r);
    expect(rel && rel->status == backend_status::ok, state, "release failed");
  }
}

void renew_loop(benchmark::State& state, lease_backend& backend,
                const char* name) {
  backend_request r{name, "owner-a", ttl, next_acquisition(), 0};
  auto a = call_and_wait(backend, backend_op::acquire, r);
  if (!a || a->status != backend_status::ok) {
    state.SkipWithError("acquire failed");
    return;
  }
  r.token = a->token;
  for (auto _ : state) {
    auto x = call_and_wait(backend, backend_op::renew, r);
    expect(x && x->status == backend_status::ok, state, "renew failed");
  }
  call_and_wait(backend, backend_op::release, r);
}

// -- etcd ---------------------------------------------------------------------

struct etcd_env {
  test::etcd_server server;
  std::shared_ptr<etcd_lease_backend> backend;
  runtime::http_engine engine;

  etcd_env() {
    etcd_lease_backend_options o;
    o.endpoints = {server.endpoint()};
    o.request_timeout = request_timeout;
    auto b = etcd_lease_backend::make(std::move(o));
    if (!b)
      throw std::runtime_error(b.error().message);
    backend = *b;
  }

  runtime::http_response post(std::string_view path, std::string body) {
    return exchange(engine, make_etcd_http_request(server.endpoint(), path,
                                                   std::move(body), {},
                                                   request_timeout));
  }
};

etcd_env& etcd() {
  static etcd_env env;
  return env;
}

void etcd_acquire_release(benchmark::State& state) {
  acquire_release_loop(state, *etcd().backend, "bench-etcd");
}

void raw_etcd_acquire_release(benchmark::State& state) {
  auto& env = etcd();
  const std::string key = "/troupe/leases/bench-raw";
  for (auto _ : state) {
    auto grant = env.post("/v3/lease/grant", etcd::grant_request(10));
    auto g = etcd::parse_grant_response(grant.body);
    if (!g) {
      state.SkipWithError("grant unparseable");
      break;
    }
    auto txn = env.post("/v3/kv/txn",
                        etcd::acquire_txn_request(key, "owner-a", g->id));
    auto t = etcd::parse_txn_response(txn.body);
    expect(t && t->succeeded, state, "raw txn failed");
    env.post("/v3/kv/txn", etcd::release_txn_request(key, "owner-a", g->id));
    env.post("/v3/lease/revoke", etcd::lease_id_request(g->id));
  }
}

void etcd_renew(benchmark::State& state) {
  renew_loop(state, *etcd().backend, "bench-etcd-renew");
}

void raw_etcd_renew(benchmark::State& state) {
  auto& env = etcd();
  auto grant = env.post("/v3/lease/grant", etcd::grant_request(10));
  auto g = etcd::parse_grant_response(grant.body);
  if (!g) {
    state.SkipWithError("grant unparseable");
    return;
  }
  for (auto _ : state) {
    auto k = env.post("/v3/lease/keepalive", etcd::lease_id_request(g->id));
    auto parsed = etcd::parse_keepalive_response(k.body);
    expect(parsed.has_value(), state, "keepalive unparseable");
  }
  env.post("/v3/lease/revoke", etcd::lease_id_request(g->id));
}

// -- Kubernetes ---------------------------------------------------------------

struct k8s_env {
  test::k8s_api_emulator emu;
  std::shared_ptr<kubernetes_lease_backend> backend;
  runtime::http_engine engine;
  std::string token = "Bearer " + emu.options().token;

  k8s_env() {
    kubernetes_lease_backend_options o;
    o.api_server = emu.base_url();
    o.allow_insecure_http = true;
    o.request_timeout = request_timeout;
    o.token_file = token_file();
    auto b = kubernetes_lease_backend::make(std::move(o));
    if (!b)
      throw std::runtime_error(b.error().message);
    backend = *b;
  }

  std::string token_file() {
    static std::string path = [this] {
      auto p = fmt::format("/tmp/troupe-bench-k8s-token-{}", ::getpid());
      auto f = std::fopen(p.c_str(), "w");
      std::fputs(emu.options().token.c_str(), f);
      std::fclose(f);
      return p;
    }();
    return path;
  }

  runtime::http_response call(std::string method, std::string path,
                              std::string body = {}) {
    runtime::http_request req;
    req.method = std::move(method);
    req.url = emu.base_url() + path;
    req.timeout = request_timeout;
    req.headers = {{"Accept", "application/json"}, {"Authorization", token}};
    if (!body.empty())
      req.headers.push_back({"Content-Type", "application/json"});
    req.body = std::move(body);
    return exchange(engine, std::move(req));
  }
};

k8s_env& k8s() {
  static k8s_env env;
  return env;
}

std::string resource_version_of(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("metadata"))
    return {};
  auto& meta = doc["metadata"];
  if (!meta.IsObject() || !meta.HasMember("resourceVersion")
      || !meta["resourceVersion"].IsString())
    return {};
  return meta["resourceVersion"].GetString();
}

std::string lease_body(const std::string& name, const std::string& rv,
                       const std::string& holder, int transitions) {
  return fmt::format(
    R"({{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
    R"("metadata":{{"name":"{}","namespace":"default","resourceVersion":"{}"}},)"
    R"("spec":{{"holderIdentity":"{}","leaseDurationSeconds":10,)"
    R"("acquireTime":"2026-11-29T10:00:00.000000Z",)"
    R"("renewTime":"2026-11-29T10:00:00.000000Z","leaseTransitions":{}}}}})",
    name, rv, holder, transitions);
}

constexpr const char* lease_path
  = "/apis/coordination.k8s.io/v1/namespaces/default/leases/";

void k8s_acquire_release(benchmark::State& state) {
  acquire_release_loop(state, *k8s().backend, "bench-k8s");
}

void raw_k8s_acquire_release(benchmark::State& state) {
  auto& env = k8s();
  const std::string name = "bench-k8s-raw";
  // A PUT on a missing Lease creates it (AllowCreateOnUpdate); Google
  // Benchmark calls this function several times.
  static int transitions = [&] {
    env.call("PUT", lease_path + name, lease_body(name, "1", "", 0));
    return 0;
  }();
  for (auto _ : state) {
    auto get = env.call("GET", lease_path + name);
    auto rv = resource_version_of(get.body);
    auto put = env.call("PUT", lease_path + name,
                        lease_body(name, rv, "owner-a", ++transitions));
    auto rel = env.call(
      "PUT", lease_path + name,
      lease_body(name, resource_version_of(put.body), "", transitions));
    expect(!resource_version_of(rel.body).empty(), state, "raw release failed");
  }
}

void k8s_renew(benchmark::State& state) {
  renew_loop(state, *k8s().backend, "bench-k8s-renew");
}

void raw_k8s_renew(benchmark::State& state) {
  auto& env = k8s();
  const std::string name = "bench-k8s-raw-renew";
  static std::string rv = [&] {
    auto put
      = env.call("PUT", lease_path + name, lease_body(name, "1", "owner-a", 1));
    return resource_version_of(put.body);
  }();
  for (auto _ : state) {
    auto next
      = env.call("PUT", lease_path + name, lease_body(name, rv, "owner-a", 1));
    rv = resource_version_of(next.body);
    expect(!rv.empty(), state, "raw renew failed");
  }
}

} // namespace

// Interleaved subject/baseline pairs, real time (the work is on other
// threads and processes).
BENCHMARK(raw_etcd_acquire_release)
  ->UseRealTime()
  ->Unit(benchmark::kMicrosecond);
BENCHMARK(etcd_acquire_release)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_etcd_renew)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(etcd_renew)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_k8s_acquire_release)
  ->UseRealTime()
  ->Unit(benchmark::kMicrosecond);
BENCHMARK(k8s_acquire_release)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(raw_k8s_renew)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(k8s_renew)->UseRealTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  runtime::set_log_level(runtime::log_level::warning);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  troupe::bench::ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  // UseRealTime() appends "/real_time" to each name.
  bool complete = reporter.print_ratios({
    {"etcd_acquire_release/real_time", "raw_etcd_acquire_release/real_time"},
    {"etcd_renew/real_time", "raw_etcd_renew/real_time"},
    {"k8s_acquire_release/real_time", "raw_k8s_acquire_release/real_time"},
    {"k8s_renew/real_time", "raw_k8s_renew/real_time"},
  });
  benchmark::Shutdown();
  return complete ? 0 : 1;
}
