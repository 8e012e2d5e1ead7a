// Decoding DNS answers for the dns discovery method: c-ares statuses, A,
// AAAA and SRV answers, and malformed ones (messages built byte by byte:
// no server needed).

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include <ares.h>

#include "troupe/bootstrap/dns_answer.hpp"
#include "troupe/bootstrap/errc.hpp"
#include "troupe/test/dnsmasq_fixture.hpp"

using namespace troupe;
using namespace troupe::bootstrap;
using namespace troupe::bootstrap::dns;

namespace {

using bytes = std::vector<unsigned char>;

// Writes a DNS message (RFC 1035 4.1): a header, then names and records.
struct message {
  bytes b;

  message(uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar) {
    // id 7, QR (answer) and RD/RA, rcode NOERROR
    b = {0, 7, 0x81, 0x80};
    for (auto n : {qd, an, ns, ar})
      u16(n);
  }

  message& u16(uint16_t v) {
    b.push_back(static_cast<unsigned char>(v >> 8));
    b.push_back(static_cast<unsigned char>(v & 0xff));
    return *this;
  }

  message& name(std::string_view n) {
    auto encoded = test::encode_dns_name(n);
    b.insert(b.end(), encoded.begin(), encoded.end());
    return *this;
  }

  // A compression pointer to the name at byte `offset`.
  message& pointer(uint16_t offset) {
    return u16(static_cast<uint16_t>(0xc000 | offset));
  }

  message& question(std::string_view n, query_type t) {
    return name(n).u16(static_cast<uint16_t>(t)).u16(1);
  }

  // Type, class IN, TTL 30 and `data` (the owner name was written).
  message& record(query_type t, const bytes& data) {
    u16(static_cast<uint16_t>(t)).u16(1).u16(0).u16(30);
    u16(static_cast<uint16_t>(data.size()));
    b.insert(b.end(), data.begin(), data.end());
    return *this;
  }

  message& srv(uint16_t port, std::string_view target) {
    message data{0, 0, 0, 0};
    data.b.clear();
    data.u16(0).u16(5).u16(port).name(target);
    return record(query_type::srv, data.b);
  }

  std::span<const unsigned char> span() const {
    return {b.data(), b.size()};
  }
};

const bytes ip4_a = {10, 0, 0, 1};
const bytes ip4_b = {10, 0, 0, 2};
const bytes ip6_local = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
const bytes ip6_fd = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0a};

// An SRV answer for _management._tcp.svc.test with one record (target
// pod-1.svc.test, port 8558) and `additional` records after it.
message srv_answer_with(uint16_t additional) {
  message m{1, 1, 0, additional};
  m.question("_management._tcp.svc.test", query_type::srv);
  m.pointer(12).srv(8558, "pod-1.svc.test");
  return m;
}

} // namespace

TEST_CASE("dns discovery: answer: c-ares statuses map to discovery outcomes") {
  using row = std::tuple<int, query_outcome>;
  auto [status, outcome] = GENERATE(table<int, query_outcome>({
    row{ARES_SUCCESS, query_outcome::answered},
    row{ARES_ENOTFOUND, query_outcome::nothing_found},
    row{ARES_ENODATA, query_outcome::nothing_found},
    row{ARES_ESERVFAIL, query_outcome::unavailable},
    row{ARES_ETIMEOUT, query_outcome::unavailable},
    row{ARES_ECONNREFUSED, query_outcome::unavailable},
    row{ARES_ENOMEM, query_outcome::unavailable},
    row{ARES_EREFUSED, query_outcome::refused},
    row{ARES_ENOTIMP, query_outcome::refused},
    row{ARES_EFORMERR, query_outcome::refused},
    row{ARES_EBADNAME, query_outcome::refused},
    row{ARES_EBADRESP, query_outcome::bad_answer},
  }));
  CAPTURE(status, ares_strerror(status));
  CHECK(classify(status) == outcome);
}

TEST_CASE("dns discovery: answer: statuses are described as DNS conditions") {
  CHECK(describe_status(ARES_ESERVFAIL)
        == "the server failed to answer (SERVFAIL)");
  CHECK(describe_status(ARES_EREFUSED).find("(REFUSED") != std::string::npos);
  CHECK(describe_status(ARES_ENOTFOUND) == "no such name (NXDOMAIN)");
  CHECK(describe_status(ARES_ECONNREFUSED)
        == "could not contact the server (connection refused)");
  CHECK(describe_status(ARES_ENOMEM) == "Out of memory (c-ares status 15)");
}

TEST_CASE(
  "dns discovery: answer: A and AAAA records give their addresses in order") {
  message a{1, 2, 0, 0};
  a.question("svc.test", query_type::a);
  a.pointer(12).record(query_type::a, ip4_a);
  a.pointer(12).record(query_type::a, ip4_b);
  auto v4 = parse_addresses(a.span(), query_type::a);
  REQUIRE(v4);
  CHECK(*v4 == std::vector<std::string>{"10.0.0.1", "10.0.0.2"});

  message aaaa{1, 2, 0, 0};
  aaaa.question("svc.test", query_type::aaaa);
  aaaa.pointer(12).record(query_type::aaaa, ip6_local);
  aaaa.pointer(12).record(query_type::aaaa, ip6_fd);
  auto v6 = parse_addresses(aaaa.span(), query_type::aaaa);
  REQUIRE(v6);
  CHECK(*v6 == std::vector<std::string>{"::1", "fd00::a"});
}

TEST_CASE(
  "dns discovery: answer: an answer without records of the type is empty") {
  message m{1, 1, 0, 0};
  m.question("svc.test", query_type::a);
  m.pointer(12).record(query_type::aaaa, ip6_local);
  auto v4 = parse_addresses(m.span(), query_type::a);
  REQUIRE(v4);
  CHECK(v4->empty());
}

TEST_CASE(
  "dns discovery: answer: a truncated A answer is a bad_discovery_answer") {
  message m{1, 1, 0, 0};
  m.question("svc.test", query_type::a);
  m.pointer(12).record(query_type::a, ip4_a);
  m.b.resize(m.b.size() - 2);
  auto r = parse_addresses(m.span(), query_type::a);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == static_cast<uint8_t>(errc::bad_discovery_answer));
  CHECK(r.error().message.rfind("malformed answer: A records: ", 0) == 0);
}

TEST_CASE(
  "dns discovery: answer: SRV records come with the additional section's "
  "addresses by lower-cased owner name") {
  auto m = srv_answer_with(3);
  m.name("POD-1.svc.test").record(query_type::a, ip4_a);
  m.name("pod-1.svc.test").record(query_type::aaaa, ip6_fd);
  m.name("other.svc.test").record(query_type::a, ip4_b);
  auto r = parse_srv(m.span());
  REQUIRE(r);
  REQUIRE(r->records.size() == 1);
  CHECK(r->records[0].target == "pod-1.svc.test");
  CHECK(r->records[0].port == 8558);
  CHECK(r->records[0].weight == 5);
  REQUIRE(r->additional.count("pod-1.svc.test") == 1);
  CHECK(r->additional["pod-1.svc.test"].ipv4
        == std::vector<std::string>{"10.0.0.1"});
  CHECK(r->additional["pod-1.svc.test"].ipv6
        == std::vector<std::string>{"fd00::a"});
  CHECK(r->additional["other.svc.test"].ipv4
        == std::vector<std::string>{"10.0.0.2"});
}

TEST_CASE("dns discovery: answer: the SRV target \".\" means no service (empty "
          "target)") {
  message m{1, 1, 0, 0};
  m.question("_management._tcp.svc.test", query_type::srv);
  m.pointer(12).srv(8558, "");
  auto r = parse_srv(m.span());
  REQUIRE(r);
  REQUIRE(r->records.size() == 1);
  CHECK(r->records[0].target.empty());
}

TEST_CASE("dns discovery: answer: a malformed additional section is a "
          "bad_discovery_answer naming the record") {
  using row = std::tuple<std::string, std::string>;
  auto [damage, expected] = GENERATE(table<std::string, std::string>({
    row{"cut", "malformed answer: additional record 1: 4 bytes of data run "
               "past the end"},
    row{"short address", "malformed answer: additional record 1 "
                         "(pod-1.svc.test) has 3 bytes of address"},
    row{"missing record", "malformed answer: additional record 2: bad name"},
  }));
  CAPTURE(damage);
  auto m = srv_answer_with(damage == "missing record" ? 2 : 1);
  m.name("pod-1.svc.test");
  if (damage == "short address")
    m.record(query_type::a, {10, 0, 0});
  else
    m.record(query_type::a, ip4_a);
  if (damage == "cut")
    m.b.resize(m.b.size() - 1);
  auto r = parse_srv(m.span());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == static_cast<uint8_t>(errc::bad_discovery_answer));
  CAPTURE(r.error().message);
  CHECK(r.error().message.rfind(expected, 0) == 0);
}

TEST_CASE("dns discovery: answer: an SRV answer c-ares cannot parse is a "
          "bad_discovery_answer") {
  message m{1, 1, 0, 0};
  m.question("_management._tcp.svc.test", query_type::srv);
  m.pointer(12).record(query_type::srv, {0, 0, 0}); // 3 bytes, needs >= 7
  auto r = parse_srv(m.span());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == static_cast<uint8_t>(errc::bad_discovery_answer));
  CHECK(r.error().message.rfind("malformed answer: SRV records: ", 0) == 0);
}
