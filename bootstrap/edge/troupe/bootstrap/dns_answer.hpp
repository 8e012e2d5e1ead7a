#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "troupe/runtime/error.hpp"

/// @file
/// The decoding half of `dns_discovery`: what a c-ares status means for
/// discovery, and the addresses and SRV records of a DNS answer (the raw
/// message as c-ares hands it to a query callback). Pure functions over
/// bytes: no sockets, no clock, no c-ares channel. c-ares' own parsers
/// read the answer section; the additional section (RFC 2782: the server
/// may add the targets' A/AAAA records there), which c-ares 1.18 does not
/// expose, is read here.
///
/// Errors are bootstrap errc::bad_discovery_answer whose message says what
/// is malformed (the caller adds the method, name and server).

namespace troupe::bootstrap::dns {

/// The record types dns_discovery asks for (RFC 1035, RFC 3596, RFC 2782).
enum class query_type : uint16_t {
  a = 1,
  aaaa = 28,
  srv = 33,
};

/// "A", "AAAA" or "SRV".
const char* to_string(query_type x) noexcept;

/// What one query's c-ares status means for a discovery.
enum class query_outcome : uint8_t {
  /// NOERROR with records: decode the answer.
  answered,
  /// NXDOMAIN or NOERROR without records of the type (NODATA): nothing
  /// found yet (pods not ready), an empty contribution, not an error.
  nothing_found,
  /// SERVFAIL, no answer in time, connection refused, out of memory, ...:
  /// errc::discovery_unavailable, try again later.
  unavailable,
  /// REFUSED, NOTIMP, FORMERR, a name c-ares cannot send: the same query
  /// will fail again (errc::discovery_refused).
  refused,
  /// An answer c-ares could not decode (errc::bad_discovery_answer).
  bad_answer,
};

/// The outcome of an `ARES_*` status, as the table above.
query_outcome classify(int ares_status) noexcept;

/// A sentence naming the DNS condition behind an `ARES_*` status, for
/// error messages: `the server refused the query (REFUSED)`, `no answer
/// (timeout)`, ...
std::string describe_status(int ares_status);

/// The addresses of the A (`type` a) or AAAA (`type` aaaa) records of
/// `answer`, CNAMEs followed, as text (IPv4 dotted, IPv6 as inet_ntop
/// writes it, without brackets), in answer order. An answer with no such
/// record gives an empty list. Errors: the answer does not decode.
runtime::expected<std::vector<std::string>>
parse_addresses(std::span<const unsigned char> answer, query_type type);

/// One SRV record (RFC 2782). `target` is the host name without the
/// trailing dot; empty for ".", which means "no such service here".
struct srv_record {
  std::string target;
  uint16_t port = 0;
  uint16_t priority = 0;
  uint16_t weight = 0;
};

/// The addresses of one name, by family, each as `parse_addresses` writes
/// them, in answer order.
struct address_set {
  std::vector<std::string> ipv4;
  std::vector<std::string> ipv6;

  bool empty() const noexcept {
    return ipv4.empty() && ipv6.empty();
  }
};

/// The SRV records of an answer and the addresses its additional section
/// gives, by owner name (lower-cased, without the trailing dot).
struct srv_answer {
  std::vector<srv_record> records;
  std::map<std::string, address_set> additional;
};

/// The SRV records and additional A/AAAA records of `answer`. Errors: the
/// answer does not decode (c-ares' parser refuses it, or a record of the
/// additional section runs past the end of the message).
runtime::expected<srv_answer> parse_srv(std::span<const unsigned char> answer);

/// `name` with ASCII letters lower-cased (DNS names compare without case,
/// RFC 4343).
std::string lower_case(std::string name);

} // namespace troupe::bootstrap::dns
