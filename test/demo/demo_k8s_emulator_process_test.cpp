// troupe-k8s-emulator as a process: troupe's real Kubernetes lease backend
// (hello-lease) acquires a lease through it over plain HTTP with a bearer
// token from a file; anonymous requests are refused; SIGTERM exits 0; an
// empty token file is refused, named.

#include <catch2/catch.hpp>

#include <string>

#include "demo_process_support.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::demo::test_support;
using troupe::test::child;
using troupe::test::temp_dir;

TEST_CASE("k8s emulator process: the Kubernetes lease backend holds a lease "
          "through it, anonymous requests get 403, SIGTERM exits 0") {
  temp_dir tmp;
  auto token = tmp.path / "token";
  std::ofstream{token} << "demo-token-0123456789\n";
  auto out = tmp.path / "emulator.out";
  child emulator{
    "emulator",
    {TROUPE_K8S_EMULATOR, "--port", "0", "--token-file", token.string()},
    out};
  auto ep = wait_listening(out);
  REQUIRE(ep);
  demo::client::http_connection c{*ep, 5s};
  auto health = c.request("GET", "/healthz");
  REQUIRE(health);
  CHECK(health->status == 200);
  auto anonymous
    = c.request("GET", "/apis/coordination.k8s.io/v1/namespaces/default/"
                       "leases");
  REQUIRE(anonymous);
  CHECK(anonymous->status == 403);
  auto holder_out = tmp.path / "hello.out";
  child holder{
    "hello-lease",
    {TROUPE_HELLO_LEASE, "--lease.backend=kubernetes",
     "--lease.kubernetes.api_server=http://" + demo::client::to_string(*ep),
     "--lease.kubernetes.allow_insecure_http=true",
     "--lease.kubernetes.token_file=" + token.string(),
     "--lease.kubernetes.namespace=default"},
    holder_out};
  CHECK(test::eventually(
    [&] {
      return slurp(holder_out).find("holding \"jobs\" with fencing token 1")
             != std::string::npos;
    },
    20s, 50ms));
  INFO(slurp(holder_out));
  holder.signal(SIGTERM);
  CHECK(exit_code(holder) == 0);
  emulator.signal(SIGTERM);
  CHECK(exit_code(emulator) == 0);
  CHECK_THAT(slurp(out), Catch::Contains("troupe-k8s-emulator: stopped ("));
  CHECK_THAT(slurp(out), Catch::Contains(" 1 leases)"));
}

TEST_CASE("k8s emulator process: an empty token file and a bad flag are "
          "refused, named (exit 2)") {
  temp_dir tmp;
  auto token = tmp.path / "token";
  std::ofstream{token} << "\n";
  auto out = tmp.path / "emulator.out";
  {
    child emulator{
      "emulator", {TROUPE_K8S_EMULATOR, "--token-file", token.string()}, out};
    CHECK(exit_code(emulator) == 2);
    CHECK_THAT(slurp(out), Catch::Contains("the first line is empty"));
  }
  {
    child emulator{"emulator", {TROUPE_K8S_EMULATOR, "--port", "x"}, out};
    CHECK(exit_code(emulator) == 2);
    CHECK_THAT(slurp(out), Catch::Contains("--port"));
  }
}
