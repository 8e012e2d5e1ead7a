// The kubernetes_api contact-point discovery against the Kubernetes API
// emulator (test/support k8s_api_emulator) on real loopback sockets: which
// pods are contact points, pods appearing over time, each status mapping
// (403, 401 and the token re-read, 5xx, 429, a body that is no PodList),
// the discovery timeout; and bad answers from a scripted server.

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/bootstrap/kubernetes_api_discovery.hpp"
#include "troupe/test/child_process.hpp"
#include "troupe/test/eventually.hpp"
#include "troupe/test/http_test_server.hpp"
#include "troupe/test/k8s_api_emulator.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::bootstrap;
using troupe::test::k8s_api_emulator;
using troupe::test::k8s_fault;
using troupe::test::k8s_pod;
using troupe::test::k8s_resource;
using troupe::test::k8s_verb;
namespace fs = std::filesystem;
using troupe::test::temp_dir;
using steady = std::chrono::steady_clock;

namespace {

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out{p, std::ios::trunc};
  out << text;
}

using answer = runtime::expected<std::vector<contact_point>>;

answer discover(contact_point_discovery& d, runtime::timespan timeout = 3s) {
  std::promise<answer> done;
  auto result = done.get_future();
  d.discover(timeout, [&done](answer a) { done.set_value(std::move(a)); });
  REQUIRE(result.wait_for(timeout + 5s) == std::future_status::ready);
  return result.get();
}

std::string text_of(const answer& a) {
  if (!a)
    return "error: " + a.error().message;
  std::string out;
  for (const auto& p : *a)
    out += (out.empty() ? "" : " ") + to_string(p);
  return out;
}

k8s_pod pod(std::string name, std::string ip, std::string phase = "Running",
            std::string app = "troupe") {
  k8s_pod p;
  p.name = std::move(name);
  p.pod_ip = std::move(ip);
  p.phase = std::move(phase);
  p.labels = {{"app", std::move(app)}, {"app.kubernetes.io/component", "node"}};
  p.containers.push_back(
    {"node", "troupe-demo:dev", {{"cluster", 2552}, {"management", 8558}}});
  return p;
}

// An emulator, a token file holding its token, and a discovery over both.
struct k8s_env {
  temp_dir dir;
  fs::path token_file = dir.path / "token";
  k8s_api_emulator emu;

  k8s_env() {
    write_file(token_file, emu.options().token + "\n");
  }

  kubernetes_api_discovery_options options() const {
    kubernetes_api_discovery_options o;
    o.api_server = emu.base_url();
    o.allow_insecure_http = true;
    o.token_file = token_file.string();
    o.pod_namespace = "default";
    o.pod_label_selector = "app=troupe";
    o.request_timeout = 2s;
    return o;
  }

  std::shared_ptr<kubernetes_api_discovery>
  discovery(kubernetes_api_discovery_options o) const {
    auto d = kubernetes_api_discovery::make(std::move(o));
    REQUIRE(d);
    return *d;
  }

  std::shared_ptr<kubernetes_api_discovery> discovery() const {
    return discovery(options());
  }
};

void check_error(const answer& a, errc code, std::string_view needle) {
  REQUIRE_FALSE(a);
  INFO(a.error().message);
  CHECK(a.error().category == "bootstrap");
  CHECK(a.error().code == static_cast<uint8_t>(code));
  CHECK_THAT(a.error().message, Catch::Contains(std::string{needle}));
}

} // namespace

TEST_CASE("kubernetes_api discovery: Running pods with the management port "
          "are the contact points, the request is a list by label selector") {
  k8s_env env;
  env.emu.put_pod(pod("troupe-1", "10.0.0.2"));
  env.emu.put_pod(pod("troupe-0", "10.0.0.1"));
  auto d = env.discovery();
  CHECK(text_of(discover(*d)) == "10.0.0.1:8558 10.0.0.2:8558");
  auto reqs = env.emu.requests();
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0].method == "GET");
  CHECK(reqs[0].target
        == "/api/v1/namespaces/default/pods?labelSelector=app%3Dtroupe");
  CHECK(*reqs[0].header("Authorization")
        == "Bearer " + env.emu.options().token);
  CHECK(reqs[0].status == 200);
}

TEST_CASE("kubernetes_api discovery: pending, failed, succeeded, terminating "
          "and IP-less pods are no contact points") {
  k8s_env env;
  env.emu.put_pod(pod("ok", "10.0.0.1"));
  env.emu.put_pod(pod("pending", "10.0.0.2", "Pending"));
  env.emu.put_pod(pod("failed", "10.0.0.3", "Failed"));
  env.emu.put_pod(pod("done", "10.0.0.4", "Succeeded"));
  env.emu.put_pod(pod("no-ip", "", "Running"));
  auto leaving = pod("leaving", "10.0.0.6");
  leaving.deletion_timestamp = "2026-12-01T10:00:00Z";
  env.emu.put_pod(leaving);
  auto unnamed = pod("unnamed-port", "10.0.0.7");
  unnamed.containers[0].ports = {{"", 8558}};
  env.emu.put_pod(unnamed);
  auto d = env.discovery();
  CHECK(text_of(discover(*d)) == "10.0.0.1:8558");
  // With a fallback port, the Running pod without a named port takes part;
  // the others still do not.
  auto o = env.options();
  o.fallback_port = 8558;
  CHECK(text_of(discover(*env.discovery(o))) == "10.0.0.1:8558 10.0.0.7:8558");
}

TEST_CASE("kubernetes_api discovery: only the selected pods of the namespace "
          "count") {
  k8s_env env;
  env.emu.put_pod(pod("a", "10.0.0.1"));
  env.emu.put_pod(pod("b", "10.0.0.2", "Running", "other"));
  auto c = pod("c", "10.0.0.3");
  c.ns = "elsewhere";
  env.emu.put_pod(c);
  CHECK(text_of(discover(*env.discovery())) == "10.0.0.1:8558");
  auto o = env.options();
  o.pod_label_selector = "app in (troupe, other),app.kubernetes.io/component";
  CHECK(text_of(discover(*env.discovery(o))) == "10.0.0.1:8558 10.0.0.2:8558");
  o.pod_namespace = "elsewhere";
  CHECK(text_of(discover(*env.discovery(o))) == "10.0.0.3:8558");
  o.pod_namespace = "no-such-namespace"; // an empty list, not an error
  CHECK(text_of(discover(*env.discovery(o))).empty());
}

TEST_CASE("kubernetes_api discovery: pods appearing over time (scheduled, "
          "given an IP, Running, deleted)") {
  k8s_env env;
  auto d = env.discovery();
  CHECK(text_of(discover(*d)).empty());
  env.emu.put_pod(pod("troupe-0", "", "Pending"));
  CHECK(text_of(discover(*d)).empty());
  env.emu.put_pod(pod("troupe-0", "10.0.0.1", "Pending"));
  CHECK(text_of(discover(*d)).empty());
  env.emu.put_pod(pod("troupe-0", "10.0.0.1"));
  CHECK(text_of(discover(*d)) == "10.0.0.1:8558");
  env.emu.put_pod(pod("troupe-1", "10.0.0.2"));
  env.emu.put_pod(pod("troupe-2", "10.0.0.3"));
  CHECK(text_of(discover(*d)) == "10.0.0.1:8558 10.0.0.2:8558 10.0.0.3:8558");
  auto leaving = pod("troupe-1", "10.0.0.2");
  leaving.deletion_timestamp = "2026-12-01T10:00:00Z";
  env.emu.put_pod(leaving);
  CHECK(text_of(discover(*d)) == "10.0.0.1:8558 10.0.0.3:8558");
  REQUIRE(env.emu.delete_pod("default", "troupe-1"));
  CHECK(text_of(discover(*d)) == "10.0.0.1:8558 10.0.0.3:8558");
}

TEST_CASE("kubernetes_api discovery: without RBAC list on pods => "
          "discovery_refused naming the rule and the namespace") {
  k8s_env env;
  env.emu.put_pod(pod("a", "10.0.0.1"));
  env.emu.deny(k8s_resource::pods, k8s_verb::list);
  auto a = discover(*env.discovery());
  check_error(a, errc::discovery_refused, "HTTP 403 Forbidden");
  check_error(a, errc::discovery_refused,
              "the Role needs the verb list on pods (apiGroups [\"\"]) in "
              "namespace default");
  check_error(a, errc::discovery_refused,
              "cannot list resource \"pods\" in API group \"\" in the "
              "namespace \"default\"");
}

TEST_CASE("kubernetes_api discovery: a 401 re-reads the token file and "
          "retries once, a token that stays wrong => discovery_refused") {
  k8s_env env;
  env.emu.put_pod(pod("a", "10.0.0.1"));
  auto d = env.discovery();
  REQUIRE(text_of(discover(*d)) == "10.0.0.1:8558");
  // The token rotates: the cached one is refused, the file has the new one.
  write_file(env.token_file, "token-two\n");
  env.emu.set_token("token-two");
  env.emu.clear_requests();
  CHECK(text_of(discover(*d)) == "10.0.0.1:8558");
  auto reqs = env.emu.requests();
  REQUIRE(reqs.size() == 2);
  CHECK(reqs[0].status == 401);
  CHECK(*reqs[1].header("Authorization") == "Bearer token-two");
  CHECK(reqs[1].status == 200);
  // A token that stays wrong: refused after one retry, naming the file and
  // never the token.
  write_file(env.token_file, "wrong-token\n");
  env.emu.set_token("token-three");
  env.emu.clear_requests();
  auto a = discover(*d);
  check_error(a, errc::discovery_refused,
              "HTTP 401 Unauthorized even after "
              "re-reading the token file");
  check_error(a, errc::discovery_refused, env.token_file.string());
  CHECK_THAT(a.error().message, !Catch::Contains("wrong-token"));
  CHECK_THAT(a.error().message, !Catch::Contains("token-three"));
  CHECK(env.emu.requests().size() == 2);
}

TEST_CASE("kubernetes_api discovery: 5xx and 429 => discovery_unavailable, "
          "the next call succeeds") {
  k8s_env env;
  env.emu.put_pod(pod("a", "10.0.0.1"));
  auto d = env.discovery();
  auto [status, needle] = GENERATE(table<uint16_t, const char*>({
    {500, "HTTP 500: Internal error occurred"},
    {503, "HTTP 503: the server is currently unable"},
    {429, "HTTP 429: Too many requests"},
  }));
  env.emu.add_fault(k8s_fault::answer_status(status).on("GET").times(1));
  check_error(discover(*d), errc::discovery_unavailable, needle);
  CHECK(text_of(discover(*d)) == "10.0.0.1:8558");
}

TEST_CASE("kubernetes_api discovery: a 2xx that is no PodList => "
          "bad_discovery_answer") {
  k8s_env env;
  auto d = env.discovery();
  // A Status body with code 200, and a text/plain body.
  env.emu.add_fault(k8s_fault::answer_status(200).on("GET").times(1));
  check_error(discover(*d), errc::bad_discovery_answer,
              "HTTP 200: PodList: kind is \"Status\", not \"PodList\"");
  auto plain = k8s_fault::answer_status(200, "hello");
  plain.plain_text = true;
  env.emu.add_fault(plain.on("GET").times(1));
  check_error(discover(*d), errc::bad_discovery_answer,
              "Content-Type text/plain, expected application/json");
  // Malformed JSON, an object without items, from a scripted server.
  test::http_test_server server;
  server.push(test::http_behaviour::respond(
    200, {{"Content-Type", "application/json"}}, R"({"kind":"PodList",)"));
  server.push(test::http_behaviour::respond(
    200, {{"Content-Type", "application/json"}}, R"({"kind":"PodList"})"));
  auto o = env.options();
  o.api_server = server.url("/").substr(0, server.url("/").size() - 1);
  o.token_file.clear();
  auto scripted = env.discovery(o);
  check_error(discover(*scripted), errc::bad_discovery_answer,
              "PodList: malformed JSON");
  check_error(discover(*scripted), errc::bad_discovery_answer,
              "PodList: items is missing");
  REQUIRE(server.requests().size() == 2);
  CHECK(server.requests()[0].header("Authorization") == nullptr);
}

TEST_CASE("kubernetes_api discovery: an API server that does not answer => "
          "discovery_unavailable within the discovery timeout") {
  k8s_env env;
  auto d = env.discovery();
  env.emu.add_fault(k8s_fault::hang().on("GET").times(1));
  auto start = steady::now();
  auto a = discover(*d, 300ms);
  auto took = steady::now() - start;
  check_error(a, errc::discovery_unavailable,
              "no answer within the discovery timeout of 300 ms");
  CHECK(took >= 300ms);
  CHECK(took < 2s); // the request_timeout of 2s did not apply
  env.emu.release_hangs();
}

TEST_CASE("kubernetes_api discovery: destroying it completes a pending call "
          "with discovery_unavailable") {
  k8s_env env;
  auto d = env.discovery();
  env.emu.add_fault(k8s_fault::hang().on("GET").times(1));
  std::promise<answer> done;
  auto result = done.get_future();
  d->discover(10s, [&done](answer a) { done.set_value(std::move(a)); });
  REQUIRE(test::eventually([&] { return env.emu.hung_requests() == 1; }));
  d.reset();
  REQUIRE(result.wait_for(5s) == std::future_status::ready);
  check_error(result.get(), errc::discovery_unavailable, "list pods");
  env.emu.release_hangs();
}

TEST_CASE("kubernetes_api discovery: a token file that disappears after "
          "start => discovery_unavailable naming the file") {
  k8s_env env;
  auto d = env.discovery();
  fs::remove(env.token_file);
  check_error(discover(*d), errc::discovery_unavailable,
              "cannot read the Kubernetes token file "
                + env.token_file.string());
  CHECK(env.emu.requests().empty());
  write_file(env.token_file, env.emu.options().token + "\n");
  CHECK(text_of(discover(*d)).empty());
}
