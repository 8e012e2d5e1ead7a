#include "demo_cluster.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "demo_io.hpp"
#include "troupe/runtime/file_kind.hpp"

namespace fs = std::filesystem;
using steady = std::chrono::steady_clock;

namespace troupe::demo {

namespace {

constexpr const char* loopback = "127.0.0.1";

// 32 random bytes as hex (a cluster secret or a bearer token).
std::string random_hex() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 32; ++i)
    out += fmt::format("{:02x}", rd() & 0xff);
  return out;
}

// Writes `text` to a fresh `path` with mode 0600; false after printing why.
bool write_secret(const fs::path& path, const std::string& text) {
  std::string error;
  int fd = open_regular(path, O_WRONLY | O_CREAT | O_TRUNC, error);
  if (fd < 0)
    return complain(error);
  bool ok = ::fchmod(fd, 0600) == 0
            && ::write(fd, text.data(), text.size())
                 == static_cast<ssize_t>(text.size());
  auto err = errno;
  ::close(fd);
  if (!ok)
    return complain(
      fmt::format("cannot write {}: {}", path.string(), std::strerror(err)));
  return true;
}

// The port of a `listening on HOST:PORT` line, or 0.
uint16_t listening_port(const std::string& line) {
  auto at = line.find("listening on ");
  auto colon = line.rfind(':');
  if (at == std::string::npos || colon == std::string::npos || colon < at)
    return 0;
  unsigned long port = std::strtoul(line.c_str() + colon + 1, nullptr, 10);
  return port > 0 && port < 65536 ? static_cast<uint16_t>(port) : 0;
}

} // namespace

uint16_t free_loopback_port(std::string& error) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = fmt::format("socket: {}", std::strerror(errno));
    return 0;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0
      && ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  else
    error
      = fmt::format("cannot bind a loopback port: {}", std::strerror(errno));
  ::close(fd);
  return port;
}

demo_cluster::demo_cluster(const options& opts, const demo_timing& timing)
  : opts_(opts), timing_(timing), dir_(opts.dir),
    procs_(
      [this](node_proc&, const std::string& line) {
        if (!listening_ && line.find("listening on ") != std::string::npos)
          listening_ = line;
      },
      [](node_proc&) {}) {}

bool demo_cluster::prepare() {
  auto leases = dir_ / "leases";
  struct stat st {};
  if (::lstat(leases.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    return complain(fmt::format("{} is {}, not a directory (the lease files go "
                                "there)",
                                leases.string(),
                                runtime::file_kind(st.st_mode)));
  std::error_code ec;
  fs::create_directories(leases, ec);
  if (ec)
    return complain(fmt::format("{}: {}", leases.string(), ec.message()));
  if (!write_secret(dir_ / "cluster.secret", random_hex()))
    return false;
  if (opts_.lease == lease_kind::kubernetes
      && !write_secret(dir_ / "k8s.token", random_hex()))
    return false;
  std::string error;
  for (int i = 1; i <= opts_.nodes; ++i) {
    node_ports p{fmt::format("node-{}", i), free_loopback_port(error),
                 free_loopback_port(error), free_loopback_port(error)};
    if (p.cluster == 0 || p.management == 0 || p.api == 0)
      return complain(error);
    ports_.push_back(p);
  }
  return true;
}

bool demo_cluster::start_server(const std::string& name,
                                std::vector<std::string> argv,
                                std::chrono::milliseconds bound,
                                uint16_t& port) {
  auto log = dir_ / (name + ".log");
  std::string error;
  int fd = open_regular(log, O_WRONLY | O_CREAT | O_TRUNC, error);
  if (fd < 0)
    return complain(error);
  listening_.reset();
  if (auto why = procs_.spawn(name, log, std::move(argv), fd); !why.empty())
    return complain(why);
  auto* p = procs_.find(name);
  auto until = steady::now() + bound;
  while (!listening_ && p->running() && steady::now() < until)
    procs_.pump(std::chrono::milliseconds{50});
  port = listening_ ? listening_port(*listening_) : 0;
  if (port != 0)
    return true;
  auto tail = read_tail(log);
  return complain(fmt::format(
    "{} {} (see {}){}{}", name,
    p->running()
      ? fmt::format("printed no `listening on` line within {}ms", bound.count())
      : describe_status(*p->status),
    log.string(), tail.empty() ? "" : ": ", tail));
}

bool demo_cluster::start_store(std::chrono::milliseconds bound) {
  auto bin = fs::path{opts_.bin_dir} / "troupe-demo-store";
  return start_server(
    "store",
    {bin.string(), "--bind", loopback, "--port", "0", "--dir", dir_.string()},
    bound, store_port_);
}

bool demo_cluster::start_emulator(std::chrono::milliseconds bound) {
  auto bin = fs::path{opts_.bin_dir} / "troupe-k8s-emulator";
  return start_server("k8s-emulator",
                      {bin.string(), "--bind", loopback, "--port", "0",
                       "--token-file", (dir_ / "k8s.token").string()},
                      bound, k8s_port_);
}

std::string demo_cluster::seed_nodes() const {
  std::string out;
  for (const auto& p : ports_)
    out += fmt::format("{}{}:{}", out.empty() ? "" : ",", loopback, p.cluster);
  return out;
}

std::vector<std::string> demo_cluster::node_argv(size_t i) const {
  auto& p = ports_[i];
  auto bin = fs::path{opts_.bin_dir} / "troupe-demo-node";
  std::vector<std::string> argv{
    bin.string(),
    "--cluster.name=troupe-demo",
    fmt::format("--cluster.host={}", loopback),
    fmt::format("--cluster.port={}", p.cluster),
    // Every node a seed (ADR 0010): a restarted node always finds a member
    // that answers, and never founds a second cluster beside the others.
    "--cluster.seed_nodes=" + seed_nodes(),
    "--cluster.secret_file=" + (dir_ / "cluster.secret").string(),
    fmt::format("--management.port={}", p.management),
    fmt::format("--demo.api_port={}", p.api),
    "--demo.store_url=" + store_url(),
    "--log.level=info",
  };
  for (auto& f : timing_.node_flags())
    argv.push_back(f);
  // The partition is made through /faults (loopback only).
  if (opts_.failure == failure_kind::partition)
    argv.push_back("--management.fault_injection=true");
  switch (opts_.lease) {
    case lease_kind::file:
      argv.push_back("--lease.backend=file");
      argv.push_back("--lease.file.directory=" + (dir_ / "leases").string());
      break;
    case lease_kind::etcd:
      argv.push_back("--lease.backend=etcd");
      // Shorter than the renewal interval (ttl / 3), as the backend requires.
      argv.push_back("--lease.etcd.request_timeout=500ms");
      argv.push_back("--lease.etcd.endpoints=http://" + opts_.etcd_endpoint);
      break;
    case lease_kind::kubernetes:
      argv.push_back("--lease.backend=kubernetes");
      argv.push_back(fmt::format("--lease.kubernetes.api_server=http://{}:{}",
                                 loopback, k8s_port_));
      argv.push_back("--lease.kubernetes.allow_insecure_http=true");
      argv.push_back("--lease.kubernetes.request_timeout=500ms");
      argv.push_back("--lease.kubernetes.namespace=default");
      argv.push_back("--lease.kubernetes.token_file="
                     + (dir_ / "k8s.token").string());
      break;
  }
  return argv;
}

bool demo_cluster::start_nodes() {
  for (size_t i = 0; i < ports_.size(); ++i) {
    auto log = dir_ / (ports_[i].name + ".log");
    std::string error;
    int fd = open_regular(log, O_WRONLY | O_CREAT | O_TRUNC, error);
    if (fd < 0)
      return complain(error);
    if (auto why = procs_.spawn(ports_[i].name, log, node_argv(i), fd);
        !why.empty())
      return complain(why);
  }
  return true;
}

const node_ports* demo_cluster::node_at(std::string_view address) const {
  auto hash = address.find('#');
  auto host_port = address.substr(0, hash);
  for (auto& p : ports_)
    if (host_port == fmt::format("{}:{}", loopback, p.cluster))
      return &p;
  return nullptr;
}

std::string demo_cluster::name_of(std::string_view address) const {
  auto* p = node_at(address);
  return p ? p->name : std::string{address};
}

std::string demo_cluster::management_url(const node_ports& n) const {
  return fmt::format("http://{}:{}", loopback, n.management);
}

std::string demo_cluster::store_url() const {
  return fmt::format("http://{}:{}", loopback, store_port_);
}

} // namespace troupe::demo
