#include "troupe/cluster/transport_config.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "troupe/cluster/errc.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::cluster {

namespace {

using runtime::config_type;
using runtime::make_config_key;

runtime::error invalid(std::string what) {
  return runtime::make_error(errc::invalid_settings, std::move(what));
}

void add_string(runtime::config_schema& schema, std::string name,
                std::string default_value, std::string description) {
  schema.add(make_config_key(std::move(name), config_type::string,
                             std::move(default_value), std::move(description)));
}

void add_integer(runtime::config_schema& schema, std::string name,
                 std::string default_value, int64_t min, int64_t max,
                 std::string description) {
  auto key = make_config_key(std::move(name), config_type::integer,
                             std::move(default_value), std::move(description));
  key.min_integer = min;
  key.max_integer = max;
  schema.add(std::move(key));
}

void add_duration(runtime::config_schema& schema, std::string name,
                  std::string default_value, std::string description) {
  auto key = make_config_key(std::move(name), config_type::duration,
                             std::move(default_value), std::move(description));
  key.min_duration = std::chrono::milliseconds{1};
  schema.add(std::move(key));
}

// The secret in `path`, without trailing whitespace (editors add newlines).
runtime::expected<runtime::secret> read_secret_file(const std::string& path) {
  errno = 0;
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return invalid(
      fmt::format("cluster.secret_file \"{}\" cannot be read: {}", path,
                  errno != 0 ? std::strerror(errno) : "cannot open"));
  std::stringstream ss;
  ss << in.rdbuf();
  auto text = ss.str();
  while (!text.empty()
         && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '
             || text.back() == '\t'))
    text.pop_back();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0)
    runtime::logger{"transport"}.warning(
      "cluster.secret_file \"{}\" is readable by group or others (mode "
      "{:o}); chmod 600 it",
      path, st.st_mode & 0777);
  return runtime::secret{std::move(text)};
}

} // namespace

void declare_transport_config(runtime::config_schema& schema) {
  add_string(schema, "cluster.name", "troupe",
             "Name of the cluster; nodes with another name are refused at "
             "the handshake.");
  add_string(schema, "cluster.host", "127.0.0.1",
             "Advertised host of this node (IP or DNS name), exactly as "
             "every other node configures it; part of the node's unique "
             "address.");
  add_integer(schema, "cluster.port", "2552", 0, 65535,
              "Advertised TCP port of the cluster transport (0: an ephemeral "
              "port, for tests).");
  add_string(schema, "cluster.bind_host", "",
             "Address to listen on; empty means cluster.host (so the "
             "default listens on loopback only). 0.0.0.0 or :: listen on "
             "every interface (containers, NAT).");
  schema.add(make_config_key("cluster.secret", config_type::secret, "",
                             "Shared cluster secret (at least 16 bytes) for "
                             "the HMAC handshake. Required: this or "
                             "cluster.secret_file."));
  add_string(schema, "cluster.secret_file", "",
             "File holding the cluster secret (trailing newline ignored; "
             "keep it mode 600). Alternative to cluster.secret.");
  add_string(schema, "cluster.tls.ca_file", "",
             "CA certificate(s) that peer node certificates must chain to. "
             "The three cluster.tls keys together turn on mutual TLS.");
  add_string(schema, "cluster.tls.cert_file", "",
             "This node's certificate chain (PEM); needs serverAuth and "
             "clientAuth and a subjectAltName matching cluster.host.");
  add_string(schema, "cluster.tls.key_file", "",
             "The private key of cluster.tls.cert_file (PEM).");
  add_integer(schema, "cluster.transport.max_frame_size", "1048576", 1024,
              int64_t{1} << 28,
              "Largest message payload in bytes; a larger incoming frame "
              "closes the connection, a larger outgoing one is refused.");
  add_integer(schema, "cluster.transport.outbound_queue_size", "3072", 1,
              10'000'000,
              "Ordinary frames queued per peer; when full the oldest is "
              "dropped (counted and logged).");
  add_integer(schema, "cluster.transport.control_queue_size", "20000", 1,
              10'000'000,
              "Control frames (heartbeats, gossip) queued per peer; when "
              "full the oldest is dropped.");
  add_duration(schema, "cluster.transport.handshake_timeout", "10s",
               "Limit from connect (or accept) to an authenticated peer, "
               "TLS included.");
  add_duration(schema, "cluster.transport.reconnect_backoff_min", "100ms",
               "First delay before re-dialling a peer after a failure; "
               "doubles per failure, minus up to 20% jitter.");
  add_duration(schema, "cluster.transport.reconnect_backoff_max", "5s",
               "Largest delay between re-dial attempts.");
}

runtime::expected<tcp_transport_settings>
transport_settings_from_config(const runtime::config& cfg, uint64_t uid) {
  tcp_transport_settings s;
  s.cluster_name = cfg.get<std::string>("cluster.name");
  s.local.host = cfg.get<std::string>("cluster.host");
  s.local.port = static_cast<uint16_t>(cfg.get<int64_t>("cluster.port"));
  s.local.uid = uid;
  s.bind_host = cfg.get<std::string>("cluster.bind_host");
  auto& inline_secret = cfg.get<runtime::secret>("cluster.secret");
  auto& secret_file = cfg.get<std::string>("cluster.secret_file");
  if (!inline_secret.empty() && !secret_file.empty())
    return invalid("set either cluster.secret or cluster.secret_file, not "
                   "both");
  if (inline_secret.empty() && secret_file.empty())
    return invalid("cluster.secret or cluster.secret_file is required: "
                   "nodes authenticate each other with it (generate one "
                   "with `openssl rand -hex 32`)");
  if (!secret_file.empty()) {
    auto secret = read_secret_file(secret_file);
    if (!secret)
      return secret.error();
    s.secret = std::move(*secret);
  } else {
    s.secret = inline_secret;
  }
  s.tls.ca_file = cfg.get<std::string>("cluster.tls.ca_file");
  s.tls.cert_file = cfg.get<std::string>("cluster.tls.cert_file");
  s.tls.key_file = cfg.get<std::string>("cluster.tls.key_file");
  s.max_frame_size = static_cast<uint32_t>(
    cfg.get<int64_t>("cluster.transport.max_frame_size"));
  s.outbound_queue_size = static_cast<size_t>(
    cfg.get<int64_t>("cluster.transport.outbound_queue_size"));
  s.control_queue_size = static_cast<size_t>(
    cfg.get<int64_t>("cluster.transport.control_queue_size"));
  s.handshake_timeout
    = cfg.get<runtime::timespan>("cluster.transport.handshake_timeout");
  s.reconnect_backoff_min
    = cfg.get<runtime::timespan>("cluster.transport.reconnect_backoff_min");
  s.reconnect_backoff_max
    = cfg.get<runtime::timespan>("cluster.transport.reconnect_backoff_max");
  if (auto err = validate(s))
    return err;
  return s;
}

} // namespace troupe::cluster
