#include <catch2/catch.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <openssl/evp.h>
#include <openssl/hmac.h>

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
    // A failed step ends the run, but for a refusal it still sends.
    if (step.status == handshake_status::failed && step.send.empty())
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

// The client's proof over `hello` and the server's nonce, computed here
// after the wire format (handshake.cpp): HMAC-SHA256(K, 1 || label || 0 ||
// u64 length || hello || Ns), for a hello the handshake core cannot write
// (one with an extension of a later minor).
std::vector<std::byte> proof_over(const std::vector<std::byte>& hello,
                                  const std::vector<std::byte>& server_nonce) {
  std::string label = "troupe handshake v1 client->server";
  std::vector<std::byte> data{std::byte{1}};
  for (char c : label)
    data.push_back(static_cast<std::byte>(c));
  data.push_back(std::byte{0});
  for (int shift = 56; shift >= 0; shift -= 8)
    data.push_back(static_cast<std::byte>(uint64_t{hello.size()} >> shift));
  data.insert(data.end(), hello.begin(), hello.end());
  data.insert(data.end(), server_nonce.begin(), server_nonce.end());
  std::vector<std::byte> out{std::byte{3}};
  out.resize(1 + 32);
  unsigned int len = 0;
  HMAC(EVP_sha256(), the_secret.data(), static_cast<int>(the_secret.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(),
       reinterpret_cast<unsigned char*>(out.data() + 1), &len);
  return out;
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

TEST_CASE("handshake: each side learns the other's cluster incarnation, "
          "another one still establishes") {
  auto x = a;
  auto y = b;
  x.incarnation = cluster_incarnation{0x1111, wall_time{std::chrono::hours{1}}};
  y.incarnation = cluster_incarnation{0x2222, wall_time{std::chrono::hours{2}}};
  auto t = run_ab(x, y);
  REQUIRE(t.server_end.status == handshake_status::established);
  REQUIRE(t.client_end.status == handshake_status::established);
  CHECK(t.server_end.peer_incarnation == x.incarnation);
  CHECK(t.client_end.peer_incarnation == y.incarnation);
  // A node that is in no cluster yet says so (id 0).
  auto none = run_ab(a, y);
  CHECK(none.server_end.peer_incarnation == cluster_incarnation{});
  CHECK_FALSE(none.server_end.peer_incarnation.is_set());
  CHECK(none.client_end.peer_incarnation == y.incarnation);
}

TEST_CASE("handshake: the incarnations are covered by the MACs") {
  auto x = a;
  auto y = b;
  x.incarnation = cluster_incarnation{0x1111, wall_time{std::chrono::hours{1}}};
  y.incarnation = cluster_incarnation{0x2222, wall_time{std::chrono::hours{2}}};
  // The server's incarnation is the 16 bytes before the welcome's MAC; the
  // client's, the last 16 of the hello: flip a bit of each id.
  auto welcome = run_ab(x, y, {"10.0.0.2", 2552}, 1,
                        [](size_t i, std::vector<std::byte>& m) {
                          if (i == 3)
                            m[m.size() - 32 - 9] ^= std::byte{1};
                        });
  CHECK(welcome.client_end.status == handshake_status::failed);
  CHECK_THAT(welcome.client_end.reason, Catch::Contains("does not verify"));
  auto hello = run_ab(x, y, {"10.0.0.2", 2552}, 1,
                      [](size_t i, std::vector<std::byte>& m) {
                        if (i == 0)
                          m[m.size() - 9] ^= std::byte{1};
                      });
  CHECK(hello.server_end.status == handshake_status::failed);
  CHECK_THAT(hello.server_end.reason, Catch::Contains("does not verify"));
}

TEST_CASE("handshake: before the proof the acceptor reveals only its nonce") {
  // Whatever the client claims, the server answers the hello with the same
  // shape: one type byte and 32 random bytes (no name, no uid, no MAC).
  auto other_major = a;
  other_major.protocol = {static_cast<uint8_t>(protocol_major + 1), 0};
  for (auto& client :
       {a, node("10.0.0.1", 2552, 11, "other-cluster"),
        node("10.0.0.1", 2552, 11, "prod", "wrong secret!!"), other_major}) {
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

TEST_CASE("handshake: protocol versions: the same major establishes "
          "whatever the minors, another major is refused with both versions "
          "named") {
  using row = std::tuple<std::string, protocol_version, protocol_version>;
  // label, client's version, server's version
  auto [label, cv, sv]
    = GENERATE(table<std::string, protocol_version, protocol_version>({
      row{"same version", {1, 0}, {1, 0}},
      row{"the server has a newer minor", {1, 0}, {1, 7}},
      row{"the server has an older minor", {1, 7}, {1, 0}},
      row{"the server has a newer major", {1, 3}, {2, 0}},
      row{"the server has an older major", {2, 1}, {1, 3}},
    }));
  INFO(label);
  auto client = a;
  client.protocol = cv;
  auto server = b;
  server.protocol = sv;
  auto t = run_ab(client, server);
  REQUIRE(t.messages.size() == 4);
  if (cv.major == sv.major) {
    CHECK(t.server_end.status == handshake_status::established);
    CHECK(t.client_end.status == handshake_status::established);
    // Each side records the other's version (the minor gates features).
    CHECK(t.server_end.peer_protocol == cv);
    CHECK(t.client_end.peer_protocol == sv);
    return;
  }
  // The acceptor refuses after the proof verified, and says why.
  CHECK(t.server_end.status == handshake_status::failed);
  CHECK(t.server_end.reason == protocol_mismatch(sv, cv, "the dialing node"));
  REQUIRE_FALSE(t.server_end.send.empty());
  CHECK(std::to_integer<int>(t.server_end.send[0]) == 5); // the refusal
  // The dialer verifies the refusal and fails with the same story.
  CHECK(t.client_end.status == handshake_status::failed);
  CHECK(t.client_end.reason == protocol_mismatch(cv, sv, "10.0.0.2:2552"));
  CHECK(t.client_end.reason.find("speaks troupe wire protocol " + to_string(sv)
                                 + " and this node " + to_string(cv))
        != std::string::npos);
  CHECK(t.client_end.peer_protocol == sv);
}

TEST_CASE("handshake: another major without the secret learns nothing, and "
          "a forged refusal fails") {
  auto stranger = node("10.0.0.1", 2552, 11, "prod", "not the secret");
  stranger.protocol = {static_cast<uint8_t>(protocol_major + 1), 0};
  auto t = run_ab(stranger, b);
  CHECK(t.server_end.status == handshake_status::failed);
  CHECK(t.server_end.send.empty());
  CHECK(t.server_end.reason.find("does not verify") != std::string::npos);
  CHECK(t.client_end.status == handshake_status::in_progress);
  // A refusal whose MAC does not verify is not believed.
  auto newer = a;
  newer.protocol = {static_cast<uint8_t>(protocol_major + 1), 0};
  auto forged = run_ab(newer, b, {"10.0.0.2", 2552}, 1,
                       [](size_t i, std::vector<std::byte>& m) {
                         if (i == 3)
                           m.back() ^= std::byte{1};
                       });
  CHECK(forged.client_end.status == handshake_status::failed);
  CHECK(forged.client_end.reason.find("refusal does not verify")
        != std::string::npos);
}

TEST_CASE("handshake: a hello of a higher minor may carry extensions, which "
          "are ignored, a lower or equal minor may not") {
  using row = std::tuple<std::string, protocol_version, bool>;
  // label, client's version (server: 1.2), established
  auto [label, cv, established]
    = GENERATE(table<std::string, protocol_version, bool>({
      row{"a higher minor", {1, 3}, true},
      row{"the same minor", {1, 2}, false},
      row{"a lower minor", {1, 1}, false},
    }));
  INFO(label);
  auto client_settings = a;
  client_settings.protocol = cv;
  auto server_settings = b;
  server_settings.protocol = {1, 2};
  auto server = handshake::server(server_settings, make_nonce(9));
  auto client
    = handshake::client(client_settings, {"10.0.0.2", 2552}, make_nonce(1));
  auto hello = client.start().send;
  hello.push_back(std::byte{0x42}); // an extension of a later minor
  auto challenge = server.on_message(hello);
  REQUIRE(challenge.status
          == (established ? handshake_status::in_progress
                          : handshake_status::failed));
  if (!established) {
    CHECK(challenge.reason == "malformed hello");
    return;
  }
  // The proof of a client that sent this hello (covering the extension).
  std::vector<std::byte> nonce_bytes(challenge.send.begin() + 1,
                                     challenge.send.end());
  auto proof = proof_over(hello, nonce_bytes);
  auto step = server.on_message(proof);
  CHECK(step.status == handshake_status::established);
  CHECK(step.peer_protocol == cv);
  CHECK(step.peer == a.local);
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
  overlong[3] = std::byte{200};
  using row = std::tuple<std::string, bool, bytes, std::string>;
  auto [label, to_client, msg, reason]
    = GENERATE_COPY(table<std::string, bool, bytes, std::string>({
      row{"empty message", false, bytes{}, "empty handshake message"},
      row{"unknown type", false, bytes{std::byte{9}},
          "unknown handshake message type 9"},
      row{"hello of protocol major 0", false,
          bytes{std::byte{1}, std::byte{0}, std::byte{0}}, "malformed hello"},
      row{"refusal sent to a server", false, bytes(35, std::byte{5}),
          "unexpected handshake message refusal"},
      row{"refusal before the challenge", true, bytes(35, std::byte{5}),
          "unexpected handshake message refusal"},
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
