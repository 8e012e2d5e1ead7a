// The cluster.bootstrap.kubernetes_api.* keys and the discovery's
// construction checks (no API server needed: nothing here sends a request).

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <tuple>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/bootstrap/kubernetes_api_discovery_config.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/test/child_process.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::bootstrap;
namespace fs = std::filesystem;
using troupe::test::temp_dir;

namespace {

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out{p, std::ios::trunc};
  out << text;
}

runtime::config load(std::vector<std::string> args) {
  static runtime::config_schema schema = [] {
    runtime::config_schema s;
    declare_kubernetes_api_discovery_config(s);
    return s;
  }();
  auto cfg
    = runtime::load_config(schema, runtime::make_config_sources(args, {}));
  if (!cfg)
    FAIL(cfg.error().message);
  return std::move(*cfg);
}

const char* in_pod(const char* name) {
  std::string_view n{name};
  if (n == "KUBERNETES_SERVICE_HOST")
    return "10.96.0.1";
  if (n == "KUBERNETES_SERVICE_PORT")
    return "443";
  return nullptr;
}

const char* no_env(const char*) {
  return nullptr;
}

} // namespace

TEST_CASE("kubernetes_api config: in-cluster defaults from the environment "
          "and the service account's namespace file") {
  temp_dir dir;
  write_file(dir.path / "namespace", "payments\n");
  auto cfg = load({"--cluster.bootstrap.kubernetes_api.namespace_file="
                   + (dir.path / "namespace").string()});
  auto opts = kubernetes_api_discovery_options_from_config(cfg, in_pod, 8558);
  REQUIRE(opts);
  CHECK(opts->api_server == "https://10.96.0.1:443");
  CHECK(opts->pod_namespace == "payments");
  CHECK(opts->pod_label_selector == "app=troupe");
  CHECK(opts->pod_port_name == "management");
  CHECK(opts->token_file
        == "/var/run/secrets/kubernetes.io/serviceaccount/token");
  CHECK(opts->ca_file
        == "/var/run/secrets/kubernetes.io/serviceaccount/"
           "ca.crt");
  CHECK_FALSE(opts->allow_insecure_http);
  CHECK(opts->request_timeout == 2s);
  CHECK(opts->fallback_port == 8558);
  CHECK(opts->log_component == "bootstrap.kubernetes_api");
  // An explicit namespace wins; a missing namespace file means default.
  cfg = load({"--cluster.bootstrap.kubernetes_api.pod_namespace=shop"});
  CHECK(
    kubernetes_api_discovery_options_from_config(cfg, in_pod, 0)->pod_namespace
    == "shop");
  cfg = load({"--cluster.bootstrap.kubernetes_api.namespace_file="
              + (dir.path / "missing").string()});
  CHECK(
    kubernetes_api_discovery_options_from_config(cfg, in_pod, 0)->pod_namespace
    == "default");
}

TEST_CASE("kubernetes_api config: a good configuration builds the discovery, "
          "which describes what it lists") {
  temp_dir dir;
  write_file(dir.path / "token", "t0k3n\n");
  auto cfg = load(
    {"--cluster.bootstrap.kubernetes_api.api_server=http://127.0.0.1:8001",
     "--cluster.bootstrap.kubernetes_api.allow_insecure_http=true",
     "--cluster.bootstrap.kubernetes_api.pod_namespace=shop",
     "--cluster.bootstrap.kubernetes_api.pod_label_selector=app=troupe,"
     "tier in (a, b)",
     "--cluster.bootstrap.kubernetes_api.token_file="
       + (dir.path / "token").string()});
  auto d = kubernetes_api_discovery_from_config(cfg, no_env, 0);
  REQUIRE(d);
  CHECK((*d)->describe()
        == "Kubernetes pods in namespace shop with labels app=troupe,tier in "
           "(a, b) (port management) at http://127.0.0.1:8001");
  CHECK((*d)->list_path()
        == "/api/v1/namespaces/shop/pods?labelSelector="
           "app%3Dtroupe%2Ctier%20in%20%28a%2C%20b%29");
  CHECK_THAT((*d)->describe(), !Catch::Contains("t0k3n"));
}

TEST_CASE("kubernetes_api config: bad settings => invalid_settings naming "
          "the key") {
  // One directory for every row: GENERATE builds the table once.
  static temp_dir dir;
  write_file(dir.path / "token", "t\n");
  auto token = "--cluster.bootstrap.kubernetes_api.token_file="
               + (dir.path / "token").string();
  auto http = std::string{"--cluster.bootstrap.kubernetes_api.api_server="
                          "http://127.0.0.1:8001"};
  auto insecure
    = std::string{"--cluster.bootstrap.kubernetes_api.allow_insecure_http="
                  "true"};
  using row
    = std::tuple<const char*, std::vector<std::string>, bool, const char*>;
  auto [what, args, env, expected] = GENERATE_COPY(
    table<const char*, std::vector<std::string>, bool, const char*>({
      row{"not in a pod",
          {token},
          false,
          "cluster.bootstrap.kubernetes_api.api_server is empty and "
          "KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT are not set"},
      row{"a URL that is none",
          {token, "--cluster.bootstrap.kubernetes_api.api_server=ftp://x"},
          false,
          "cluster.bootstrap.kubernetes_api.api_server: "},
      row{
        "a URL with a path",
        {token, insecure, http + "/api"},
        false,
        "cluster.bootstrap.kubernetes_api.api_server http://127.0.0.1:8001/api "
        "must not have a path"},
      row{"http:// without allow_insecure_http",
          {token, http},
          false,
          "set cluster.bootstrap.kubernetes_api.allow_insecure_http"},
      row{"an unreadable token file",
          {insecure, http,
           "--cluster.bootstrap.kubernetes_api.token_file=/no/such/token"},
          false,
          "cluster.bootstrap.kubernetes_api.token_file /no/such/token: cannot "
          "read"},
      row{"an unreadable CA file",
          {token, "--cluster.bootstrap.kubernetes_api.ca_file=/no/such/ca.crt"},
          true,
          "cluster.bootstrap.kubernetes_api.ca_file /no/such/ca.crt"},
      row{
        "a namespace that is no DNS label",
        {token, insecure, http,
         "--cluster.bootstrap.kubernetes_api.pod_namespace=Shop_1"},
        false,
        "cluster.bootstrap.kubernetes_api.pod_namespace: namespace \"Shop_1\" "
        "is not a DNS-1123 label"},
      row{"an empty selector",
          {token, insecure, http,
           "--cluster.bootstrap.kubernetes_api.pod_label_selector="},
          false,
          "cluster.bootstrap.kubernetes_api.pod_label_selector is empty: it "
          "would select every pod of namespace default"},
      row{"a port name of 16 characters",
          {token, insecure, http,
           "--cluster.bootstrap.kubernetes_api.pod_port_name="
           "management-port1"},
          false,
          "cluster.bootstrap.kubernetes_api.pod_port_name \"management-port1\" "
          "is not a container port name"},
      row{"a port name without a letter",
          {token, insecure, http,
           "--cluster.bootstrap.kubernetes_api.pod_port_name=8558"},
          false,
          "cluster.bootstrap.kubernetes_api.pod_port_name \"8558\""},
    }));
  INFO(what);
  auto cfg = load(args);
  auto d = kubernetes_api_discovery_from_config(
    cfg, env ? runtime::env_reader{in_pod} : runtime::env_reader{no_env}, 0);
  REQUIRE_FALSE(d);
  CHECK(d.error().category == "bootstrap");
  CHECK(d.error().code == static_cast<uint8_t>(errc::invalid_settings));
  CHECK_THAT(d.error().message, Catch::Contains(expected));
}

TEST_CASE("kubernetes_api config: request_timeout must be a positive "
          "duration (the schema names the key)") {
  runtime::config_schema schema;
  declare_kubernetes_api_discovery_config(schema);
  std::vector<std::string> args{
    "--cluster.bootstrap.kubernetes_api.request_timeout=0s"};
  auto cfg
    = runtime::load_config(schema, runtime::make_config_sources(args, {}));
  REQUIRE_FALSE(cfg);
  CHECK_THAT(cfg.error().message,
             Catch::Contains("cluster.bootstrap.kubernetes_api.request_"
                             "timeout"));
}
