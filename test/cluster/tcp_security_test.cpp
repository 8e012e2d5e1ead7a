#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <poll.h>
#include <sys/socket.h>

#include "tcp_fixture.hpp"
#include "troupe/cluster/frame.hpp"
#include "troupe/cluster/handshake.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/test/http_test_server.hpp"

using namespace std::chrono_literals;
using namespace troupe::cluster;
using namespace troupe::test;
namespace asio = boost::asio;
namespace rt = troupe::runtime;

namespace {

// A peer that speaks raw bytes (blocking), for violations the transport
// itself never produces.
struct raw_peer {
  asio::io_context ioc;
  asio::ip::tcp::socket socket{ioc};

  explicit raw_peer(uint16_t port) {
    socket.connect({asio::ip::make_address("127.0.0.1"), port});
  }

  void write(const std::vector<std::byte>& bytes) {
    asio::write(socket, asio::buffer(bytes));
  }

  // One frame's payload (blocking), or nothing if the peer closed.
  std::optional<std::vector<std::byte>> read_frame() {
    std::vector<std::byte> header(frame_header_size);
    boost::system::error_code ec;
    asio::read(socket, asio::buffer(header), ec);
    if (ec)
      return std::nullopt;
    frame_header h;
    if (decode_header(header.data(), 1 << 20, h).code != frame_error::none)
      return std::nullopt;
    std::vector<std::byte> payload(h.length);
    asio::read(socket, asio::buffer(payload), ec);
    if (ec)
      return std::nullopt;
    return payload;
  }

  // True once the transport closed the connection (EOF or reset); false
  // if it stayed open for 10 s (Asio's blocking reads would wait forever).
  bool closed_by_peer() {
    auto deadline = std::chrono::steady_clock::now() + 10s;
    char buf[64];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd pfd{socket.native_handle(), POLLIN, 0};
      if (::poll(&pfd, 1, 100) <= 0)
        continue;
      auto n = ::recv(socket.native_handle(), buf, sizeof(buf), 0);
      if (n <= 0)
        return true;
    }
    return false;
  }

  void send_handshake(const std::vector<std::byte>& payload) {
    std::vector<std::byte> frame;
    append_frame(frame, frame_kind::handshake, lane::control, payload);
    write(frame);
  }

  // Runs the client handshake as node `self` against `server`.
  bool authenticate(const tcp_node& server, const unique_address& self) {
    nonce n{};
    n[0] = std::byte{42};
    auto hs = handshake::client({"it", self, rt::secret{test_secret}},
                                server.ep(), n);
    send_handshake(hs.start().send);
    for (;;) {
      auto payload = read_frame();
      if (!payload)
        return false;
      auto step = hs.on_message(*payload);
      if (step.status == handshake_status::established)
        return true;
      if (step.status == handshake_status::failed)
        return false;
      send_handshake(step.send);
    }
  }
};

std::vector<std::byte> raw_header(uint8_t version, uint8_t kind, uint8_t ln,
                                  uint32_t length) {
  std::vector<std::byte> h(frame_header_size);
  encode_header(h.data(), frame_header{version, static_cast<frame_kind>(kind),
                                       static_cast<lane>(ln), length});
  return h;
}

struct log_capture {
  std::shared_ptr<rt::capture_sink> sink = std::make_shared<rt::capture_sink>();
  log_capture() {
    rt::add_log_sink(sink);
  }
  ~log_capture() {
    rt::remove_log_sink(sink);
  }
};

// One PKI for the whole run: GENERATE re-runs a test case per row, and the
// rows hold the file names.
const test_pki& shared_pki() {
  static auto pki = [] {
    auto r = make_test_pki();
    if (!r)
      FAIL(r.error().message);
    return std::move(*r);
  }();
  return *pki;
}

// Expects that `a` cannot get a frame to `b`: both count handshake
// failures, nobody sees the other up.
void expect_refused(tcp_node& a, tcp_node& b) {
  a.send(b.addr(), lane::ordinary, "must not arrive");
  REQUIRE(eventually([&] {
    return a.counters_of(b.ep()).handshake_failures >= 2
           && b.total().handshake_failures >= 2;
  }));
  CHECK(b.events->frame_count() == 0);
  CHECK(a.events->events().empty());
  CHECK(b.events->events().empty());
}

} // namespace

TEST_CASE("tcp security: a wrong secret is refused") {
  tcp_node a{loopback()};
  auto s = loopback();
  s.secret = rt::secret{"another-secret-of-enough-length"};
  tcp_node b{s};
  expect_refused(a, b);
}

TEST_CASE("tcp security: a wrong cluster name is refused") {
  tcp_node a{loopback()};
  auto s = loopback();
  s.cluster_name = "other";
  log_capture logs;
  tcp_node b{s};
  expect_refused(a, b);
  CHECK(logs.sink->contains("belongs to cluster \"it\", not \"other\""));
}

TEST_CASE("tcp security: settings without a usable secret are refused") {
  auto s = loopback();
  s.secret = rt::secret{"short"};
  auto t = tcp_transport::make(s, std::make_shared<recording_listener>());
  REQUIRE(!t);
  CHECK(t.error().message.find("cluster.secret") != std::string::npos);
  CHECK(t.error().message.find("short") == std::string::npos);
}

TEST_CASE("tcp security: mutual TLS between trusted nodes works") {
  auto& pki = shared_pki();
  auto tls = [&](std::string cert, std::string key) {
    auto s = loopback();
    s.tls = {pki.ca_file, std::move(cert), std::move(key)};
    return s;
  };
  tcp_node a{tls(pki.node_cert, pki.node_key)};
  tcp_node b{tls(pki.node_cert, pki.node_key)};
  a.send(b.addr(), lane::ordinary, "over TLS");
  b.send(a.addr(), lane::control, "back over TLS");
  REQUIRE(eventually([&] {
    return b.events->frame_count() == 1 && a.events->frame_count() == 1;
  }));
  CHECK(b.events->payloads(a.ep(), lane::ordinary)
        == std::vector<std::string>{"over TLS"});
}

TEST_CASE("tcp security: TLS refusals") {
  auto& p = shared_pki();
  using row = std::tuple<std::string, std::string, std::string, std::string,
                         std::string, std::string>;
  // label, dialer cert, key, acceptor cert, key, expected log text
  auto [label, a_cert, a_key, b_cert, b_key, text]
    = GENERATE_REF(table<std::string, std::string, std::string, std::string,
                         std::string, std::string>({
      row{"acceptor's certificate from an untrusted CA", p.node_cert,
          p.node_key, p.node_untrusted_cert, p.node_untrusted_key,
          "certificate verify failed"},
      row{"dialer's certificate from an untrusted CA", p.node_untrusted_cert,
          p.node_untrusted_key, p.node_cert, p.node_key,
          "TLS handshake "
          "failed"},
      row{"acceptor's certificate names another host", p.node_cert, p.node_key,
          p.node_wrong_name_cert, p.node_wrong_name_key, "IP address mismatch"},
      row{"dialer's certificate does not match the host it claims",
          p.node_localhost_only_cert, p.node_localhost_only_key, p.node_cert,
          p.node_key, "does not match its host 127.0.0.1"},
      row{"a client-only certificate cannot accept", p.node_cert, p.node_key,
          p.client_cert, p.client_key, "TLS handshake failed"},
    }));
  INFO(label);
  log_capture logs;
  auto tls = [&](std::string cert, std::string key) {
    auto s = loopback();
    s.tls = {p.ca_file, std::move(cert), std::move(key)};
    return s;
  };
  tcp_node a{tls(a_cert, a_key)};
  tcp_node b{tls(b_cert, b_key)};
  a.send(b.addr(), lane::ordinary, "must not arrive");
  REQUIRE(
    eventually([&] { return a.counters_of(b.ep()).handshake_failures >= 2; }));
  CHECK(b.events->frame_count() == 0);
  CHECK(!a.events->has_event("up outbound " + to_string(b.addr())));
  INFO(logs.sink->dump());
  CHECK(logs.sink->contains(text));
}

TEST_CASE("tcp security: a plain client cannot talk to a TLS node") {
  auto& pki = shared_pki();
  auto s = loopback();
  s.tls = {pki.ca_file, pki.node_cert, pki.node_key};
  tcp_node b{s};
  raw_peer raw{b.addr().port};
  CHECK(!raw.authenticate(b, {"127.0.0.1", 1, 7}));
  CHECK(b.events->events().empty());
}

TEST_CASE("tcp security: protocol violations close the connection") {
  log_capture logs;
  tcp_node b{loopback()};
  const uint8_t v = protocol_major;
  using bytes = std::vector<std::byte>;
  auto http = bytes_of("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  using row = std::tuple<std::string, bool, bytes, std::string>;
  // label, authenticate first, bytes to send, log text
  auto [label, auth, junk, text]
    = GENERATE_COPY(table<std::string, bool, bytes, std::string>({
      row{"an HTTP request", false, http, "frame version 71"},
      row{"a message frame of another major", false, raw_header(v + 1, 2, 1, 3),
          "frame version " + std::to_string(v + 1) + " (expected "
            + std::to_string(v) + ")"},
      row{"message before the handshake", false, raw_header(v, 2, 1, 0),
          "a message frame before the handshake"},
      row{"oversized handshake frame", false, raw_header(v, 1, 0, 5000),
          "frame length 5000 exceeds max_frame_size 1024"},
      row{"oversized frame after the handshake", true,
          raw_header(v, 2, 1, (1 << 20) + 1),
          "frame length 1048577 exceeds max_frame_size 1048576"},
      row{"handshake frame after the handshake", true, raw_header(v, 1, 0, 0),
          "a handshake frame after the handshake"},
      row{"bad lane after the handshake", true, raw_header(v, 2, 7, 0),
          "frame lane 7"},
    }));
  INFO(label);
  raw_peer raw{b.addr().port};
  unique_address self{"127.0.0.1", 1, 77};
  if (auth)
    REQUIRE(raw.authenticate(b, self));
  raw.write(junk);
  CHECK(raw.closed_by_peer());
  REQUIRE(eventually([&] { return b.total().protocol_violations == 1; }));
  INFO(logs.sink->dump());
  CHECK(logs.sink->contains(text));
  if (auth)
    CHECK(b.counters_of(endpoint_of(self)).protocol_violations == 1);
  // The node is still fine: a proper peer gets through.
  tcp_node a{loopback()};
  a.send(b.addr(), lane::ordinary, "still alive");
  REQUIRE(eventually([&] { return b.events->frame_count() == 1; }));
}

TEST_CASE("tcp security: a node of a newer protocol minor is accepted and "
          "its minor recorded, one of another major is refused with a message "
          "naming both versions on both sides") {
  log_capture logs;
  tcp_node b{loopback()};
  SECTION("a newer minor") {
    auto s = loopback();
    s.protocol
      = {protocol_major, static_cast<uint8_t>(current_protocol.minor + 5)};
    tcp_node a{s};
    a.send(b.addr(), lane::ordinary, "from a newer minor");
    b.send(a.addr(), lane::ordinary, "back from the current one");
    REQUIRE(eventually([&] {
      return b.events->frame_count() == 1 && a.events->frame_count() == 1;
    }));
    CHECK(b.events->payloads(a.ep(), lane::ordinary)
          == std::vector<std::string>{"from a newer minor"});
    // Each side recorded the other's version (the minor gates features).
    CHECK(b.transport->metrics().find(a.ep())->protocol == s.protocol);
    CHECK(a.transport->metrics().find(b.ep())->protocol == current_protocol);
    CHECK(b.total().handshake_failures == 0);
  }
  SECTION("another major") {
    auto s = loopback();
    protocol_version other{static_cast<uint8_t>(protocol_major + 1), 0};
    s.protocol = other;
    tcp_node a{s};
    expect_refused(a, b);
    INFO(logs.sink->dump());
    // The accepting node's line, and the dialing node's, which learned it
    // from the authenticated refusal.
    CHECK(logs.sink->contains(
      protocol_mismatch(current_protocol, other, "the dialing node")));
    CHECK(logs.sink->contains(
      protocol_mismatch(other, current_protocol, to_string(b.ep()))));
    CHECK(b.total().protocol_violations == 0);
  }
}

TEST_CASE("tcp security: a silent connection times out in the handshake") {
  auto s = loopback();
  s.handshake_timeout = 300ms;
  tcp_node b{s};
  raw_peer raw{b.addr().port};
  auto t0 = std::chrono::steady_clock::now();
  CHECK(raw.closed_by_peer());
  auto took = std::chrono::steady_clock::now() - t0;
  CHECK(took >= 250ms);
  CHECK(took < 5s);
  REQUIRE(eventually([&] { return b.total().handshake_failures == 1; }));
}

TEST_CASE("tcp security: truncated handshake then close is a clean failure") {
  tcp_node b{loopback()};
  {
    raw_peer raw{b.addr().port};
    auto h = raw_header(protocol_major, 1, 0, 100);
    h.resize(h.size() + 10); // 10 of 100 payload bytes, then close
    raw.write(h);
  }
  REQUIRE(eventually([&] { return b.total().handshake_failures == 1; }));
  CHECK(b.events->events().empty());
}
