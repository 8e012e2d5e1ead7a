#include "troupe/test/dnsmasq_fixture.hpp"

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include "troupe/test/free_ports.hpp"

namespace troupe::test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

namespace {

[[noreturn]] void fail(std::string message) {
  throw std::runtime_error("dnsmasq fixture: " + message);
}

// A socket of `type` bound to 127.0.0.1:`port` (0: any), or -1.
int bind_loopback(int type, uint16_t port) {
  int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

uint16_t port_of(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    fail(fmt::format("getsockname: {}", std::strerror(errno)));
  return ntohs(addr.sin_port);
}

// A port free for TCP (free_ports) and UDP alike: dnsmasq binds both.
uint16_t free_dns_port() {
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto port = free_ports(1).at(0);
    int fd = bind_loopback(SOCK_DGRAM, port);
    if (fd >= 0) {
      ::close(fd);
      return port;
    }
  }
  fail("no port free for both TCP and UDP on 127.0.0.1 in 50 attempts");
}

// A DNS query (RFC 1035 4.1) for the A record of `name`, with id `id`.
std::vector<unsigned char> make_query(uint16_t id, std::string_view name) {
  // Header: id, RD set, one question.
  std::vector<unsigned char> q{static_cast<unsigned char>(id >> 8),
                               static_cast<unsigned char>(id & 0xff),
                               0x01,
                               0x00,
                               0,
                               1,
                               0,
                               0,
                               0,
                               0,
                               0,
                               0};
  auto encoded = encode_dns_name(name);
  q.insert(q.end(), encoded.begin(), encoded.end());
  q.insert(q.end(), {0, 1, 0, 1}); // type A, class IN
  return q;
}

// True if a DNS server at 127.0.0.1:`port` answers a query within 100 ms.
bool answers(uint16_t port, std::string_view name) {
  int fd = bind_loopback(SOCK_DGRAM, 0);
  if (fd < 0)
    return false;
  static uint16_t next_id = 1;
  auto id = next_id++;
  auto query = make_query(id, name);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(port);
  bool ok = false;
  if (::sendto(fd, query.data(), query.size(), 0,
               reinterpret_cast<sockaddr*>(&to), sizeof(to))
      > 0) {
    pollfd p{fd, POLLIN, 0};
    std::array<unsigned char, 512> buf{};
    if (::poll(&p, 1, 100) == 1) {
      auto n = ::recv(fd, buf.data(), buf.size(), 0);
      ok = n >= 2 && buf[0] == (id >> 8) && buf[1] == (id & 0xff);
    }
  }
  ::close(fd);
  return ok;
}

} // namespace

std::vector<unsigned char> encode_dns_name(std::string_view name) {
  std::vector<unsigned char> out;
  while (!name.empty()) {
    auto dot = name.find('.');
    auto label = name.substr(0, dot);
    out.push_back(static_cast<unsigned char>(label.size()));
    out.insert(out.end(), label.begin(), label.end());
    name = dot == std::string_view::npos ? "" : name.substr(dot + 1);
  }
  out.push_back(0);
  return out;
}

dnsmasq_server::dnsmasq_server(dns_records records, std::string local_domain)
  : records_(std::move(records)), local_domain_(std::move(local_domain)) {
  if (::access(dnsmasq_binary, X_OK) != 0)
    fail(fmt::format("{} is missing or not executable: install the Debian "
                     "package dnsmasq-base (scripts/install-deps)",
                     dnsmasq_binary));
  auto tmpl = (fs::temp_directory_path() / "troupe-dnsmasq-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    fail(fmt::format("mkdtemp({}): {}", tmpl, std::strerror(errno)));
  dir_ = tmpl;
  hosts_path_ = dir_ + "/hosts";
  log_path_ = dir_ + "/dnsmasq.log";
  port_ = free_dns_port();
  write_hosts();
  start();
}

dnsmasq_server::~dnsmasq_server() {
  process_.terminate(3s);
  if (std::getenv("KEEP_TEST_TMP") == nullptr) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

std::string dnsmasq_server::address() const {
  return fmt::format("127.0.0.1:{}", port_);
}

void dnsmasq_server::write_hosts() const {
  auto tmp = hosts_path_ + ".new";
  {
    std::ofstream out{tmp};
    for (const auto& [name, address] : records_.hosts)
      out << address << ' ' << name << '\n';
    if (!out)
      fail(fmt::format("cannot write {}", tmp));
  }
  fs::rename(tmp, hosts_path_); // dnsmasq never reads a half-written file
}

void dnsmasq_server::start() {
  std::vector<std::string> args{dnsmasq_binary,
                                "--no-daemon",
                                "--conf-file=/dev/null",
                                "--no-resolv",
                                "--no-hosts",
                                "--bind-interfaces",
                                "--listen-address=127.0.0.1",
                                fmt::format("--port={}", port_),
                                fmt::format("--addn-hosts={}", hosts_path_),
                                fmt::format("--local=/{}/", local_domain_),
                                "--log-facility=-",
                                "--log-queries"};
  for (const auto& s : records_.srv)
    args.push_back(s.target.empty()
                     ? fmt::format("--srv-host={}", s.name) // target "."
                     : fmt::format("--srv-host={},{},{},{},{}", s.name,
                                   s.target, s.port, s.priority, s.weight));
  for (const auto& [alias, target] : records_.cnames)
    args.push_back(fmt::format("--cname={},{}", alias, target));
  process_.spawn(args, log_path_);
  wait_answering();
}

void dnsmasq_server::wait_answering() {
  auto deadline = steady::now() + 5s;
  auto probe = fmt::format("fixture-ready-check.{}", local_domain_);
  while (steady::now() < deadline) {
    if (!process_.running())
      fail(fmt::format("dnsmasq exited during startup; log tail:\n{}",
                       log_tail()));
    if (answers(port_, probe))
      return;
  }
  fail(fmt::format("dnsmasq does not answer at {} within 5s; log tail:\n{}",
                   address(), log_tail()));
}

size_t dnsmasq_server::count_hosts_reads() const {
  std::ifstream in{log_path_};
  auto needle = fmt::format("read {} - ", hosts_path_);
  size_t n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos)
      ++n;
  return n;
}

void dnsmasq_server::wait_reloaded(size_t reads_before) {
  auto deadline = steady::now() + 5s;
  while (steady::now() < deadline) {
    if (count_hosts_reads() > reads_before)
      return;
    std::this_thread::sleep_for(5ms);
  }
  fail(fmt::format("dnsmasq did not re-read {} within 5s of SIGHUP; log "
                   "tail:\n{}",
                   hosts_path_, log_tail()));
}

void dnsmasq_server::set_records(dns_records records) {
  bool restart = !process_.running() || records.srv != records_.srv
                 || records.cnames != records_.cnames;
  records_ = std::move(records);
  auto reads = count_hosts_reads();
  write_hosts();
  if (restart) {
    process_.terminate(3s);
    start();
    return;
  }
  process_.signal(SIGHUP);
  wait_reloaded(reads);
}

void dnsmasq_server::stop() {
  process_.terminate(3s);
}

std::string dnsmasq_server::log_tail(size_t lines) const {
  return file_tail(log_path_, lines);
}

// -- silent_udp_server --------------------------------------------------------

silent_udp_server::silent_udp_server() {
  fd_ = bind_loopback(SOCK_DGRAM, 0);
  if (fd_ < 0)
    fail(fmt::format("silent UDP server: bind 127.0.0.1:0: {}",
                     std::strerror(errno)));
  port_ = port_of(fd_);
}

silent_udp_server::~silent_udp_server() {
  ::close(fd_);
}

std::string silent_udp_server::address() const {
  return fmt::format("127.0.0.1:{}", port_);
}

uint16_t free_udp_port() {
  int fd = bind_loopback(SOCK_DGRAM, 0);
  if (fd < 0)
    fail(fmt::format("bind UDP 127.0.0.1:0: {}", std::strerror(errno)));
  auto port = port_of(fd);
  ::close(fd);
  return port;
}

} // namespace troupe::test
