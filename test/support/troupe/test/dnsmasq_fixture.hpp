#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "troupe/test/server_process.hpp"

/// @file
/// A real DNS server for integration tests: Debian's dnsmasq (package
/// dnsmasq-base, installed by scripts/install-deps) on 127.0.0.1 at a free
/// port, serving only the records a test gives it.

namespace troupe::test {

/// Where the fixture looks for dnsmasq.
inline constexpr const char* dnsmasq_binary = "/usr/sbin/dnsmasq";

/// The records a dnsmasq_server serves.
struct dns_records {
  /// One SRV record (dnsmasq's --srv-host).
  struct srv_record {
    /// The owner name, e.g. `_management._tcp.troupe.test`.
    std::string name;
    /// The target host name (serve its addresses in `hosts`); empty: the
    /// target "." (RFC 2782: no such service at this name).
    std::string target;
    uint16_t port = 0;
    uint16_t priority = 0;
    uint16_t weight = 0;

    friend bool operator==(const srv_record&, const srv_record&) = default;
  };

  /// (name, IPv4 or IPv6 address) pairs: the A and AAAA records, served
  /// from a hosts file (`--addn-hosts`).
  std::vector<std::pair<std::string, std::string>> hosts;
  std::vector<srv_record> srv;
  /// (alias, canonical name) pairs (`--cname`; dnsmasq answers for an
  /// alias only when the canonical name is in `hosts`).
  std::vector<std::pair<std::string, std::string>> cnames;
};

/// One dnsmasq on 127.0.0.1 at a free UDP and TCP port, in the foreground
/// (`--no-daemon`: no fork, no change of user, log on stderr), with no
/// configuration file, no upstream servers (`--no-resolv`), no /etc/hosts
/// and no DHCP: it answers the given records, NXDOMAIN for other names
/// under `local_domain` (`--local`), and REFUSED for every other name (it
/// has nowhere to forward them). The constructor waits until it answers a
/// query (deadline 5 s).
///
/// Records change with `set_records`: A/AAAA records by rewriting the
/// hosts file and SIGHUP (dnsmasq re-reads --addn-hosts files; the call
/// waits until its log says so), SRV and CNAME records by a restart on the
/// same port (dnsmasq reads them from its command line only).
///
/// Files live in a fresh temporary directory, removed by the destructor
/// (kept when KEEP_TEST_TMP is set; the log is `<dir>/dnsmasq.log`).
/// Errors (test setup) throw std::runtime_error naming the step and the
/// log's tail; a missing `/usr/sbin/dnsmasq` throws too, so that in CI
/// (CI=true) the test fails instead of skipping.
///
/// Thread-safety: not thread-safe; drive it from the test's thread (see
/// server_process for why).
class dnsmasq_server {
public:
  explicit dnsmasq_server(dns_records records = {},
                          std::string local_domain = "test");
  ~dnsmasq_server();

  dnsmasq_server(const dnsmasq_server&) = delete;
  dnsmasq_server& operator=(const dnsmasq_server&) = delete;

  uint16_t port() const noexcept {
    return port_;
  }

  /// `127.0.0.1:<port>`, as cluster.bootstrap.dns.server takes it.
  std::string address() const;

  /// Serves `records` from now on (see the class comment).
  void set_records(dns_records records);

  /// SIGTERM, and waits for the exit: the port then answers ICMP "port
  /// unreachable".
  void stop();

  /// The temporary directory (hosts file and log).
  const std::string& dir() const noexcept {
    return dir_;
  }

  /// The last lines of dnsmasq's log.
  std::string log_tail(size_t lines = 20) const;

private:
  void write_hosts() const;
  void start();
  void wait_answering();
  void wait_reloaded(size_t reads_before);
  size_t count_hosts_reads() const;

  dns_records records_;
  std::string local_domain_;
  std::string dir_;
  std::string hosts_path_;
  std::string log_path_;
  uint16_t port_ = 0;
  server_process process_;
};

/// A UDP socket on 127.0.0.1 that receives DNS queries and never answers
/// them: a DNS server that does not respond (closed by the destructor).
class silent_udp_server {
public:
  silent_udp_server();
  ~silent_udp_server();

  silent_udp_server(const silent_udp_server&) = delete;
  silent_udp_server& operator=(const silent_udp_server&) = delete;

  /// `127.0.0.1:<port>`.
  std::string address() const;

private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

/// `name` in DNS wire form (RFC 1035 3.1): length-prefixed labels and the
/// root label, without compression (`svc.test` -> `\3svc\4test\0`).
std::vector<unsigned char> encode_dns_name(std::string_view name);

/// A UDP port on 127.0.0.1 that was free a moment ago (a socket bound to
/// it and closed): queries to it meet ICMP "port unreachable".
uint16_t free_udp_port();

} // namespace troupe::test
