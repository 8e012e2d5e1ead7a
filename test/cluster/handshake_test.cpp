#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "troupe/cluster/frame.hpp"
#include "troupe/cluster/handshake.hpp"

using namespace troupe::cluster;
using troupe::runtime::secret;

namespace {

const std::string the_secret = "correct horse battery staple";

nonce make_nonce(uint8_t seed) {
  nonce n{};
  for (size_t i = 0; i < n.size(); ++i)
    n[i] = static_cast<std::byte>(seed + i * 7);
  return n;
}

handshake_settings node(std::string host, uint16_t port, uint64_t uid,
                        std::string cluster = "prod",
                        std::string key = the_secret) {
  return {std::move(cluster), unique_address{std::move(host), port, uid},
          secret{std::move(key)}};
}

const handshake_settings a = node("10.0.0.1", 2552, 11);
const handshake_settings b = node("10.0.0.2", 2552, 22);

// The four messages of one run, recorded for replays; `tamper` may rewrite
// a message in flight (index 0..3: hello, challenge, proof, welcome).
struct transcript {
  std::vector<std::vector<std::byte>> messages;
  handshake_step client_end;
  handshake_step server_end;
};

using tamper_fn = std::function<void(size_t, std::vector<std::byte>&)>;

transcript run(handshake client, handshake server, tamper_fn tamper = {}) {
  transcript t;
  auto step = client.start();
  bool to_server = true;
  size_t index = 0;
  while (!step.send.empty()) {
    auto msg = step.send;
    if (tamper)
      tamper(index, msg);
    t.messages.push_back(msg);
    ++index;
    auto& receiver = to_server ? server : client;
    step = receiver.on_message(msg);
    (to_server ? t.server_end : t.client_end) = step;
    to_server = !to_server;
    if (step.status == handshake_status::failed)
      break;
  }
  return t;
}

transcript run_ab(const handshake_settings& client_settings,
                  const handshake_settings& server_settings,
                  endpoint dialed = {"10.0.0.2", 2552}, uint8_t seed = 1,
                  tamper_fn tamper = {}) {
  return run(
    handshake::client(client_settings, std::move(dialed), make_nonce(seed)),
    handshake::server(server_settings, make_nonce(seed + 100)),
    std::move(tamper));
}

} // namespace

TEST_CASE("handshake: matching secrets and names establish both sides") {
  auto t = run_ab(a, b);
  REQUIRE(t.messages.size() == 4);
  CHECK(t.server_end.status == handshake_status::established);
  CHECK(t.server_end.peer == a.local);
  CHECK(t.client_end.status == handshake_status::established);
  CHECK(t.client_end.peer == b.local);
  // Every message fits a pre-authentication frame.
  for (auto& m : t.messages)
    CHECK(m.size() <= handshake_max_frame_size);
}

TEST_CASE("handshake: before the proof the acceptor reveals only its nonce") {
  // Whatever the client claims, the server answers the hello with the same
  // shape: one type byte and 32 random bytes (no name, no uid, no MAC).
  for (auto& client : {a, node("10.0.0.1", 2552, 11, "other-cluster"),
                       node("10.0.0.1", 2552, 11, "prod", "wrong secret!!")}) {
    auto server = handshake::server(b, make_nonce(9));
    auto c = handshake::client(client, {"10.0.0.2", 2552}, make_nonce(1));
    auto challenge = server.on_message(c.start().send);
    CHECK(challenge.status == handshake_status::in_progress);
    REQUIRE(challenge.send.size() == 1 + nonce_size);
    auto n = make_nonce(9);
    CHECK(std::equal(n.begin(), n.end(), challenge.send.begin() + 1));
  }
}

TEST_CASE("handshake: refusals") {
  using row = std::tuple<std::string, handshake_settings, handshake_settings,
                         endpoint, std::string, std::string>;
  // label, client, server, dialed, server's reason, client's reason (""
  // when the client only sees the connection close)
  auto [label, client, server, dialed, server_reason, client_reason]
    = GENERATE(table<std::string, handshake_settings, handshake_settings,
                     endpoint, std::string, std::string>({
      row{"client has the wrong secret",
          node("10.0.0.1", 2552, 11, "prod", "not the secret"), b,
          endpoint{"10.0.0.2", 2552}, "does not verify (wrong cluster secret",
          ""},
      row{"server has the wrong secret", a,
          node("10.0.0.2", 2552, 22, "prod", "not the secret"),
          endpoint{"10.0.0.2", 2552}, "does not verify (wrong cluster secret",
          ""},
      row{"wrong cluster name", node("10.0.0.1", 2552, 11, "staging"), b,
          endpoint{"10.0.0.2", 2552},
          "belongs to cluster \"staging\", not \"prod\"", ""},
      row{"dialed another node (relayed connection)", a, b,
          endpoint{"10.0.0.3", 2552},
          "dialed 10.0.0.3:2552, but this node is "
          "10.0.0.2:2552",
          ""},
      row{"client claims uid 0", node("10.0.0.1", 2552, 0), b,
          endpoint{"10.0.0.2", 2552}, "not a valid node address", ""},
      row{"client claims the server's own address", node("10.0.0.2", 2552, 99),
          b, endpoint{"10.0.0.2", 2552}, "claims this node's own address", ""},
    }));
  INFO(label);
  auto t = run_ab(client, server, dialed);
  CHECK(t.server_end.status == handshake_status::failed);
  CHECK(t.server_end.send.empty()); // nothing at all goes back
  CHECK(t.server_end.reason.find(server_reason) != std::string::npos);
  CHECK(t.client_end.status == handshake_status::in_progress);
  CHECK(t.server_end.reason.find(the_secret) == std::string::npos);
  CHECK(t.server_end.reason.find("not the secret") == std::string::npos);
  (void)client_reason;
}

TEST_CASE("handshake: wrong protocol version in the hello") {
  auto t = run_ab(a, b, {"10.0.0.2", 2552}, 1,
                  [](size_t i, std::vector<std::byte>& m) {
                    if (i == 0)
                      m[1] = std::byte{2}; // version byte after the type
                  });
  CHECK(t.server_end.status == handshake_status::failed);
  CHECK(t.server_end.reason == "peer speaks protocol version 2 (expected 1)");
  CHECK(t.server_end.send.empty());
}

TEST_CASE("handshake: replayed and reflected messages fail") {
  // Connection 1 between a and b, recorded by an attacker.
  auto first = run_ab(a, b, {"10.0.0.2", 2552}, 1);
  REQUIRE(first.messages.size() == 4);
  using row = std::tuple<std::string, size_t, size_t, bool>;
  // label, message index replaced in connection 2, taken from connection 1's
  // index, whose side fails (true: client)
  auto [label, index, source, client_fails]
    = GENERATE(table<std::string, size_t, size_t, bool>({
      row{"challenge replayed from another connection", 1, 1, false},
      row{"proof replayed from another connection", 2, 2, false},
      row{"welcome replayed from another connection", 3, 3, true},
    }));
  INFO(label);
  auto second = run_ab(a, b, {"10.0.0.2", 2552}, 50,
                       [&](size_t i, std::vector<std::byte>& m) {
                         if (i == index)
                           m = first.messages[source];
                       });
  auto& failing = client_fails ? second.client_end : second.server_end;
  CHECK(failing.status == handshake_status::failed);
  CHECK(failing.reason.find("does not verify") != std::string::npos);
  // The client never counts the server as authenticated.
  CHECK(second.client_end.status != handshake_status::established);
}

TEST_CASE("handshake: the server's MAC reflected as the client's proof fails") {
  // An attacker without the secret who could obtain a server MAC over the
  // same transcript still cannot use it as a client proof: the direction
  // label differs. Build the reflection with the server's own nonce.
  auto server = handshake::server(b, make_nonce(9));
  auto client = handshake::client(a, {"10.0.0.2", 2552}, make_nonce(1));
  auto hello = client.start().send;
  auto challenge = server.on_message(hello).send;
  auto proof = client.on_message(challenge).send;
  // A second server with the same nonce yields the welcome MAC.
  auto twin = handshake::server(b, make_nonce(9));
  twin.on_message(hello);
  auto welcome = twin.on_message(proof).send;
  REQUIRE(welcome.size() > 32);
  std::vector<std::byte> reflected{std::byte{3}};
  reflected.insert(reflected.end(), welcome.end() - 32, welcome.end());
  auto step = server.on_message(reflected);
  CHECK(step.status == handshake_status::failed);
}

TEST_CASE("handshake: malformed and out-of-order messages fail cleanly") {
  using bytes = std::vector<std::byte>;
  auto hello
    = handshake::client(a, {"10.0.0.2", 2552}, make_nonce(1)).start().send;
  auto truncated = hello;
  truncated.resize(hello.size() - 1);
  auto trailing = hello;
  trailing.push_back(std::byte{0});
  auto overlong = hello; // cluster name length byte says 200
  overlong[2] = std::byte{200};
  using row = std::tuple<std::string, bool, bytes, std::string>;
  auto [label, to_client, msg, reason]
    = GENERATE_COPY(table<std::string, bool, bytes, std::string>({
      row{"empty message", false, bytes{}, "empty handshake message"},
      row{"unknown type", false, bytes{std::byte{9}},
          "unknown handshake message type 9"},
      row{"truncated hello", false, truncated, "malformed hello"},
      row{"hello with a trailing byte", false, trailing, "malformed hello"},
      row{"hello with an overlong string", false, overlong, "malformed hello"},
      row{"proof before hello", false, bytes(33, std::byte{3}),
          "unexpected handshake message proof"},
      row{"welcome sent to a server", false, bytes{std::byte{4}},
          "unexpected handshake message welcome"},
      row{"hello sent to a client", true, hello,
          "unexpected handshake message hello"},
      row{"short challenge", true, bytes(10, std::byte{2}),
          "malformed challenge"},
    }));
  INFO(label);
  auto h = to_client ? [] {
    auto c = handshake::client(a, {"10.0.0.2", 2552}, make_nonce(1));
    c.start();
    return c;
  }()
                     : handshake::server(b, make_nonce(2));
  auto step = h.on_message(msg);
  CHECK(step.status == handshake_status::failed);
  CHECK(step.reason == reason);
  CHECK(step.send.empty());
  // Input after failure keeps failing.
  CHECK(h.on_message(hello).status == handshake_status::failed);
}

TEST_CASE("handshake: input after establishment fails") {
  auto server = handshake::server(b, make_nonce(9));
  auto client = handshake::client(a, {"10.0.0.2", 2552}, make_nonce(1));
  auto challenge = server.on_message(client.start().send).send;
  auto welcome = server.on_message(client.on_message(challenge).send).send;
  REQUIRE(client.on_message(welcome).status == handshake_status::established);
  CHECK(client.on_message(welcome).status == handshake_status::failed);
  CHECK(server.on_message(challenge).status == handshake_status::failed);
}

TEST_CASE("handshake: a forged welcome with a guessed MAC fails") {
  auto t = run_ab(a, b, {"10.0.0.2", 2552}, 1,
                  [](size_t i, std::vector<std::byte>& m) {
                    if (i == 3)
                      m.back() ^= std::byte{1};
                  });
  CHECK(t.client_end.status == handshake_status::failed);
  CHECK(t.client_end.reason.find("does not verify") != std::string::npos);
}
