#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "troupe/cluster/transport_config.hpp"
#include "troupe/runtime/config_loader.hpp"

using namespace std::chrono_literals;
using namespace troupe;

namespace {

runtime::expected<cluster::tcp_transport_settings>
settings(std::vector<std::string> args) {
  runtime::config_schema schema;
  cluster::declare_transport_config(schema);
  auto cfg
    = runtime::load_config(schema, runtime::make_config_sources(args, {}));
  if (!cfg)
    return cfg.error();
  return cluster::transport_settings_from_config(*cfg, 42);
}

struct temp_file {
  std::string path = (std::filesystem::temp_directory_path()
                      / ("troupe-secret-" + std::to_string(::getpid())))
                       .string();
  explicit temp_file(const std::string& content) {
    std::ofstream{path} << content;
    std::filesystem::permissions(path, std::filesystem::perms::owner_read
                                         | std::filesystem::perms::owner_write);
  }
  ~temp_file() {
    std::remove(path.c_str());
  }
};

} // namespace

TEST_CASE("transport_config: keys map to settings") {
  auto s = settings({"--cluster.secret=0123456789abcdef0123",
                     "--cluster.name=prod", "--cluster.host=10.0.0.5",
                     "--cluster.port=2600", "--cluster.bind_host=0.0.0.0",
                     "--cluster.transport.max_frame_size=65536",
                     "--cluster.transport.outbound_queue_size=100",
                     "--cluster.transport.handshake_timeout=3s",
                     "--cluster.transport.reconnect_backoff_min=50ms",
                     "--cluster.transport.reconnect_backoff_max=2s"});
  REQUIRE(s);
  CHECK(s->cluster_name == "prod");
  CHECK(s->local == cluster::unique_address{"10.0.0.5", 2600, 42});
  CHECK(s->bind_host == "0.0.0.0");
  CHECK(s->secret.reveal() == "0123456789abcdef0123");
  CHECK(s->max_frame_size == 65536);
  CHECK(s->outbound_queue_size == 100);
  CHECK(s->control_queue_size == 20000);
  CHECK(s->handshake_timeout == 3s);
  CHECK(s->reconnect_backoff_min == 50ms);
  CHECK(s->reconnect_backoff_max == 2s);
  CHECK(!s->tls.enabled());
}

TEST_CASE("transport_config: defaults are loopback-only") {
  auto s = settings({"--cluster.secret=0123456789abcdef0123"});
  REQUIRE(s);
  CHECK(s->local.host == "127.0.0.1");
  CHECK(s->local.port == 2552);
  CHECK(s->bind_host.empty()); // = cluster.host
  CHECK(s->max_frame_size == 1u << 20);
  CHECK(s->outbound_queue_size == 3072);
  CHECK(s->handshake_timeout == 10s);
}

TEST_CASE("transport_config: the secret from a file") {
  temp_file f{"file-secret-0123456789\n"};
  auto s = settings({"--cluster.secret_file=" + f.path});
  REQUIRE(s);
  CHECK(s->secret.reveal() == "file-secret-0123456789");
}

TEST_CASE("transport_config: refusals name the key, never the secret") {
  using row = std::tuple<std::string, std::vector<std::string>, std::string>;
  auto [label, args, text]
    = GENERATE(table<std::string, std::vector<std::string>, std::string>({
      row{"no secret",
          {},
          "cluster.secret or cluster.secret_file is "
          "required"},
      row{"short secret",
          {"--cluster.secret=tooshort"},
          "must hold at least 16 bytes"},
      row{"both secret keys",
          {"--cluster.secret=0123456789abcdef0123", "--cluster.secret_file=/x"},
          "either cluster.secret or cluster.secret_file"},
      row{"unreadable secret file",
          {"--cluster.secret_file=/nonexistent/troupe-secret"},
          "\"/nonexistent/troupe-secret\" cannot be read"},
      row{"half a TLS setup",
          {"--cluster.secret=0123456789abcdef0123",
           "--cluster.tls.ca_file=/ca.pem"},
          "must be set together"},
      row{"backoff min above max",
          {"--cluster.secret=0123456789abcdef0123",
           "--cluster.transport.reconnect_backoff_min=10s"},
          "reconnect_backoff_min must be > 0 and <= reconnect_backoff_max"},
    }));
  INFO(label);
  auto s = settings(args);
  REQUIRE(!s);
  CHECK_THAT(s.error().message, Catch::Contains(text));
  CHECK_THAT(s.error().message, !Catch::Contains("tooshort"));
  CHECK_THAT(s.error().message, !Catch::Contains("0123456789abcdef0123"));
}

TEST_CASE("transport_config: bad values are refused by the schema") {
  auto s = settings({"--cluster.secret=0123456789abcdef0123",
                     "--cluster.transport.max_frame_size=100"});
  REQUIRE(!s);
  CHECK_THAT(s.error().message,
             Catch::Contains("cluster.transport.max_frame_size"));
}
