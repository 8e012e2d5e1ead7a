#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "troupe/bootstrap/contact_point_discovery.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// Contact points from DNS (Akka Discovery's `akka-dns` method, as Akka
/// Management's Cluster Bootstrap uses it on Kubernetes), through c-ares.
///
/// Two questions, by `record_type`:
/// - `a`: the A and AAAA records of `service_name`, a headless service
///   (one record per pod). Each address is a contact point on
///   `contact_point_port`, since A records carry no port.
/// - `srv`: the SRV records of `_<port_name>._<protocol>.<service_name>`
///   (`_management._tcp.troupe.default.svc.cluster.local`), each record a
///   pod's named port. Each record is one contact point: its target's
///   address and the record's port.
///
/// The host of an SRV contact point is the target's IP address, not its
/// name. Akka keeps the name (`ResolvedTarget.host`) but orders contact
/// points and recognises itself by the resolved address beside it
/// (`ResolvedTarget.address`, the first A record of the target); troupe's
/// contact_point has one host, so it carries what Akka orders by: the
/// lowest address is then the same value on every node and equal to what
/// an A/AAAA lookup or the config list gives, a node finds itself among
/// contact points by its own address (a pod knows its IP, not the name a
/// Deployment's SRV record gives it, `10-0-0-1.svc...`), two names for one
/// pod collapse into one contact point, and a probe goes to the address
/// that was discovered instead of resolving again. The target's address
/// comes from the answer's additional section when the server put it there
/// (CoreDNS and dnsmasq do), else from A and AAAA queries of the target;
/// of several, the lowest IPv4 address is taken, else the lowest IPv6
/// address (one contact point per record, as Akka takes one address). A
/// target without any address yet, and the target "." (RFC 2782: no
/// service), give no contact point.
///
/// Answers: NXDOMAIN or no records of the type is an empty list (nothing
/// found yet: pods not ready), not an error. Errors (bootstrap errc), each
/// naming the question, the server and the cause (`DNS SRV
/// _management._tcp.troupe.test at 127.0.0.1:5353: A pod-1.troupe.test: the
/// server failed to answer (SERVFAIL)`):
/// - discovery_unavailable: SERVFAIL, no answer within the timeout,
///   connection refused, c-ares could not start.
/// - discovery_refused: REFUSED, NOTIMP, FORMERR, a name that is not a
///   valid DNS name: the same question will fail again (the interface's
///   meaning of the code; a server answers REFUSED for a zone it does not
///   serve when it does not recurse).
/// - bad_discovery_answer: an answer that does not decode, an SRV record
///   with port 0.
///
/// The resolver: `server` empty means the system resolver as c-ares reads
/// it from /etc/resolv.conf (its servers, `search` domains and `ndots`,
/// like getaddrinfo; a name with a trailing dot is absolute); `host:port`
/// asks that server (an IP address; cluster DNS at a non-standard address,
/// tests) without search domains. Each discover call has a c-ares channel
/// of its own (destroyed when the call ends, which cancels what it still
/// waits for): c-ares retries a query once after half the timeout, and
/// the call's deadline is `timeout` whatever happens.
///
/// Thread-safety: as contact_point_discovery. The object owns one io thread
/// that polls the c-ares sockets (c-ares 1.18 has no event thread of its
/// own); `done` runs there and must not block or destroy the discovery.

namespace troupe::bootstrap {

/// The records a dns_discovery asks for (`cluster.bootstrap.dns.
/// record_type`).
enum class dns_record_type : uint8_t {
  /// A and AAAA records of the service name.
  a,
  /// SRV records of `_<port_name>._<protocol>.<service_name>`.
  srv,
};

/// "a" or "srv".
const char* to_string(dns_record_type x) noexcept;

/// Parses "a" or "srv" (lower case, as the config key).
std::optional<dns_record_type> parse_dns_record_type(std::string_view text);

/// What a dns_discovery asks, and where.
struct dns_discovery_options {
  /// The service's DNS name (`troupe.default.svc.cluster.local`).
  std::string service_name;
  dns_record_type record_type = dns_record_type::a;
  /// The SRV port name, without the underscore (`management`).
  std::string port_name = "management";
  /// The SRV protocol, without the underscore (`tcp`).
  std::string protocol = "tcp";
  /// Empty: the system resolver; else `ip:port` (`[ipv6]:port`).
  std::string server;
  /// The management port of a contact point found by an A/AAAA record
  /// (1-65535; unused for `srv`).
  uint16_t contact_point_port = 0;
};

/// What is wrong with one field of dns_discovery_options.
struct dns_option_problem {
  /// The field's name as written above (`service_name`, `server`, ...).
  std::string_view option;
  /// Why, quoting the value (`"10.0.0.1" has no ":port"`).
  std::string reason;
};

/// The first problem of `opts`, if any: service_name empty or longer than
/// 253 characters; for `srv` port_name or protocol empty or not one label
/// (a dot); server not `ip:port`; for `a` contact_point_port 0.
std::optional<dns_option_problem> check(const dns_discovery_options& opts);

/// The name the lookup asks: service_name, or for `srv`
/// `_<port_name>._<protocol>.<service_name>` (Akka Discovery's SRV name).
std::string query_name(const dns_discovery_options& opts);

/// Contact points from DNS; see the file comment.
class dns_discovery final : public contact_point_discovery {
public:
  /// A discovery asking as `opts` says, its io thread started. Errors:
  /// errc::invalid_settings naming the option (`check`), or
  /// discovery_unavailable when the thread or its wake-up descriptor
  /// cannot be created.
  static runtime::expected<std::unique_ptr<dns_discovery>>
  make(dns_discovery_options opts);

  /// Completes pending calls with discovery_unavailable ("stopped") and
  /// joins the io thread (detaches it when called on that thread).
  ~dns_discovery() override;

  dns_discovery(const dns_discovery&) = delete;
  dns_discovery& operator=(const dns_discovery&) = delete;

  /// Starts one lookup; returns at once (see the interface).
  void discover(runtime::timespan timeout, callback done) override;

  /// `DNS A/AAAA troupe.test at 127.0.0.1:5353` or `DNS SRV
  /// _management._tcp.troupe.test at the system resolver`.
  std::string describe() const override;

  class impl;

private:
  explicit dns_discovery(std::shared_ptr<impl> ptr);

  std::shared_ptr<impl> impl_;
};

} // namespace troupe::bootstrap
