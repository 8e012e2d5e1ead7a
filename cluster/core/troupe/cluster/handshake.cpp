#include "troupe/cluster/handshake.hpp"

#include <cstring>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "troupe/cluster/frame.hpp"
#include "troupe/runtime/assert.hpp"

namespace troupe::cluster {

namespace {

// Handshake message types (first payload byte). hello's first three bytes,
// challenge, proof and refusal are frozen across protocol majors
// (protocol_version.hpp).
enum class msg : uint8_t {
  hello = 1,
  challenge = 2,
  proof = 3,
  welcome = 4,
  refusal = 5,
};

constexpr size_t mac_size = 32;
using mac = std::array<std::byte, mac_size>;

constexpr std::string_view client_label = "troupe handshake v1 client->server";
constexpr std::string_view server_label = "troupe handshake v1 server->client";
constexpr std::string_view refusal_label
  = "troupe handshake v1 refusal server->client";

class writer {
public:
  writer() = default;

  explicit writer(msg type) {
    buf_.push_back(static_cast<std::byte>(type));
  }

  void u8(uint8_t x) {
    buf_.push_back(std::byte{x});
  }

  void u16(uint16_t x) {
    u8(static_cast<uint8_t>(x >> 8));
    u8(static_cast<uint8_t>(x));
  }

  void u64(uint64_t x) {
    for (int shift = 56; shift >= 0; shift -= 8)
      u8(static_cast<uint8_t>(x >> shift));
  }

  // Strings are at most 255 bytes (checked by the callers' settings).
  void str(std::string_view x) {
    u8(static_cast<uint8_t>(x.size()));
    bytes(std::as_bytes(std::span{x.data(), x.size()}));
  }

  void bytes(std::span<const std::byte> x) {
    buf_.insert(buf_.end(), x.begin(), x.end());
  }

  void address(const unique_address& x) {
    str(x.host);
    u16(x.port);
    u64(x.uid);
  }

  void version(protocol_version x) {
    u8(x.major);
    u8(x.minor);
  }

  // The id, then the founding time in ms since the epoch (two's
  // complement).
  void incarnation(const cluster_incarnation& x) {
    u64(x.id);
    u64(static_cast<uint64_t>(x.founded_at.time_since_epoch().count()));
  }

  std::vector<std::byte> take() {
    return std::move(buf_);
  }

private:
  std::vector<std::byte> buf_;
};

// Reads fields; any overrun sets `ok` to false and yields zeros.
class reader {
public:
  explicit reader(std::span<const std::byte> in) : in_(in) {}

  bool ok() const noexcept {
    return ok_;
  }

  bool at_end() const noexcept {
    return pos_ == in_.size();
  }

  uint8_t u8() {
    if (!need(1))
      return 0;
    return std::to_integer<uint8_t>(in_[pos_++]);
  }

  uint16_t u16() {
    uint16_t hi = u8();
    return static_cast<uint16_t>((hi << 8) | u8());
  }

  uint64_t u64() {
    uint64_t x = 0;
    for (int i = 0; i < 8; ++i)
      x = (x << 8) | u8();
    return x;
  }

  std::string str() {
    auto n = u8();
    if (!need(n))
      return {};
    std::string x(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return x;
  }

  template <size_t N>
  std::array<std::byte, N> fixed() {
    std::array<std::byte, N> x{};
    if (need(N)) {
      std::memcpy(x.data(), in_.data() + pos_, N);
      pos_ += N;
    }
    return x;
  }

  unique_address address() {
    unique_address x;
    x.host = str();
    x.port = u16();
    x.uid = u64();
    return x;
  }

  protocol_version version() {
    protocol_version x;
    x.major = u8();
    x.minor = u8();
    return x;
  }

  cluster_incarnation incarnation() {
    cluster_incarnation x;
    x.id = u64();
    x.founded_at
      = wall_time{std::chrono::milliseconds{static_cast<int64_t>(u64())}};
    return x;
  }

private:
  bool need(size_t n) {
    if (!ok_ || in_.size() - pos_ < n) {
      ok_ = false;
      return false;
    }
    return true;
  }

  std::span<const std::byte> in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

// HMAC-SHA256 over label || 0 || u64 length || hello || Ns || suffix (the
// server's address and version in a welcome, its version in a refusal).
mac compute_mac(const runtime::secret& key, std::string_view label,
                std::span<const std::byte> hello, const nonce& server_nonce,
                std::span<const std::byte> suffix = {}) {
  writer w{msg::hello}; // the type byte doubles as a domain separator
  w.bytes(std::as_bytes(std::span{label.data(), label.size()}));
  w.u8(0);
  w.u64(hello.size());
  w.bytes(hello);
  w.bytes(server_nonce);
  w.bytes(suffix);
  auto data = w.take();
  mac out{};
  unsigned int len = 0;
  auto& k = key.reveal();
  HMAC(EVP_sha256(), k.data(), static_cast<int>(k.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(),
       reinterpret_cast<unsigned char*>(out.data()), &len);
  OPENSSL_cleanse(data.data(), data.size());
  return out;
}

bool equal_macs(const mac& x, const mac& y) {
  return CRYPTO_memcmp(x.data(), y.data(), mac_size) == 0;
}

// What the welcome's MAC covers after the transcript.
std::vector<std::byte> welcome_suffix(const unique_address& server,
                                      protocol_version version,
                                      const cluster_incarnation& incarnation) {
  writer w;
  w.address(server);
  w.version(version);
  w.incarnation(incarnation);
  return w.take();
}

// What the refusal's MAC covers after the transcript.
std::vector<std::byte> refusal_suffix(protocol_version version) {
  writer w;
  w.version(version);
  return w.take();
}

std::optional<msg> type_of(std::span<const std::byte> payload) {
  if (payload.empty())
    return std::nullopt;
  auto t = std::to_integer<uint8_t>(payload[0]);
  if (t < 1 || t > 5)
    return std::nullopt;
  return static_cast<msg>(t);
}

const char* name_of(msg x) {
  switch (x) {
    case msg::hello:
      return "hello";
    case msg::challenge:
      return "challenge";
    case msg::proof:
      return "proof";
    case msg::welcome:
      return "welcome";
    case msg::refusal:
      return "refusal";
  }
  return "?";
}

} // namespace

const char* to_string(handshake_status x) noexcept {
  switch (x) {
    case handshake_status::in_progress:
      return "in_progress";
    case handshake_status::established:
      return "established";
    case handshake_status::failed:
      return "failed";
  }
  return "unknown";
}

handshake::handshake(handshake_settings settings, bool client, endpoint dialed,
                     const nonce& n)
  : settings_(std::move(settings)), client_(client), dialed_(std::move(dialed)),
    own_nonce_(n) {
  // Validated by the transport settings and `send`; the wire format has one
  // length byte per string.
  TROUPE_ASSERT(settings_.cluster_name.size() <= max_name_size);
  TROUPE_ASSERT(settings_.local.host.size() <= max_name_size);
  TROUPE_ASSERT(dialed_.host.size() <= max_name_size);
  TROUPE_ASSERT(settings_.protocol.major != 0);
  phase_ = client ? phase::start : phase::server_wait_hello;
}

handshake handshake::client(handshake_settings settings, endpoint dialed,
                            const nonce& n) {
  return handshake{std::move(settings), true, std::move(dialed), n};
}

handshake handshake::server(handshake_settings settings, const nonce& n) {
  return handshake{std::move(settings), false, endpoint{}, n};
}

handshake_step handshake::fail(std::string reason) {
  phase_ = phase::done;
  status_ = handshake_status::failed;
  handshake_step step;
  step.status = status_;
  step.reason = std::move(reason);
  return step;
}

handshake_step handshake::advance(phase next, std::vector<std::byte> send) {
  phase_ = next;
  handshake_step step;
  step.send = std::move(send);
  return step;
}

handshake_step handshake::establish(unique_address peer,
                                    std::vector<std::byte> send) {
  auto step = advance(phase::done, std::move(send));
  status_ = handshake_status::established;
  step.status = status_;
  step.peer = std::move(peer);
  step.peer_protocol = peer_protocol_;
  step.peer_incarnation = peer_incarnation_;
  return step;
}

handshake_step handshake::start() {
  if (!client_ || phase_ != phase::start)
    return {};
  writer w{msg::hello};
  w.version(settings_.protocol);
  w.str(settings_.cluster_name);
  w.address(settings_.local);
  w.bytes(own_nonce_);
  w.str(dialed_.host);
  w.u16(dialed_.port);
  w.incarnation(settings_.incarnation);
  hello_ = w.take();
  return advance(phase::client_wait_challenge, hello_);
}

handshake_step handshake::on_message(std::span<const std::byte> payload) {
  auto type = type_of(payload);
  if (!type)
    return fail(payload.empty()
                  ? "empty handshake message"
                  : fmt::format("unknown handshake message type "
                                "{}",
                                std::to_integer<int>(payload[0])));
  auto unexpected = [&] {
    return fail(fmt::format("unexpected handshake message {}", name_of(*type)));
  };
  switch (phase_) {
    case phase::client_wait_challenge:
      return *type == msg::challenge ? on_challenge(payload) : unexpected();
    case phase::client_wait_welcome:
      if (*type == msg::refusal)
        return on_refusal(payload);
      return *type == msg::welcome ? on_welcome(payload) : unexpected();
    case phase::server_wait_hello:
      return *type == msg::hello ? on_hello(payload) : unexpected();
    case phase::server_wait_proof:
      return *type == msg::proof ? on_proof(payload) : unexpected();
    default:
      return unexpected();
  }
}

handshake_step handshake::on_challenge(std::span<const std::byte> payload) {
  reader r{payload.subspan(1)};
  peer_nonce_ = r.fixed<nonce_size>();
  if (!r.ok() || !r.at_end())
    return fail("malformed challenge");
  auto m = compute_mac(settings_.secret, client_label, hello_, peer_nonce_);
  writer w{msg::proof};
  w.bytes(m);
  return advance(phase::client_wait_welcome, w.take());
}

handshake_step handshake::on_welcome(std::span<const std::byte> payload) {
  reader r{payload.subspan(1)};
  auto version = r.version();
  auto server = r.address();
  auto incarnation = r.incarnation();
  auto their_mac = r.fixed<mac_size>();
  if (!r.ok() || !r.at_end())
    return fail("malformed welcome");
  auto expected
    = compute_mac(settings_.secret, server_label, hello_, peer_nonce_,
                  welcome_suffix(server, version, incarnation));
  if (!equal_macs(expected, their_mac))
    return fail("the peer's proof does not verify (wrong cluster secret, or "
                "a forged or replayed welcome)");
  if (endpoint_of(server) != dialed_)
    return fail(fmt::format("the peer is {}, not the dialed {}",
                            to_string(server), to_string(dialed_)));
  if (server.uid == 0)
    return fail("the peer's uid is 0");
  // A correct peer refuses another major instead of welcoming it.
  if (!is_compatible(settings_.protocol, version))
    return fail(
      protocol_mismatch(settings_.protocol, version, to_string(dialed_)));
  peer_protocol_ = version;
  peer_incarnation_ = incarnation;
  return establish(std::move(server), {});
}

handshake_step handshake::on_refusal(std::span<const std::byte> payload) {
  reader r{payload.subspan(1)};
  auto version = r.version();
  auto their_mac = r.fixed<mac_size>();
  if (!r.ok() || !r.at_end())
    return fail("malformed refusal");
  auto expected = compute_mac(settings_.secret, refusal_label, hello_,
                              peer_nonce_, refusal_suffix(version));
  if (!equal_macs(expected, their_mac))
    return fail("the peer's refusal does not verify (wrong cluster secret, "
                "or a forged or replayed refusal)");
  auto step = fail(
    is_compatible(settings_.protocol, version)
      ? fmt::format("{} refused this node's wire protocol {} although it "
                    "speaks {}",
                    to_string(dialed_), to_string(settings_.protocol),
                    to_string(version))
      : protocol_mismatch(settings_.protocol, version, to_string(dialed_)));
  step.peer_protocol = version;
  return step;
}

handshake_step handshake::on_hello(std::span<const std::byte> payload) {
  reader r{payload.subspan(1)};
  peer_protocol_ = r.version();
  if (!r.ok() || peer_protocol_.major == 0)
    return fail("malformed hello");
  if (!is_compatible(settings_.protocol, peer_protocol_)) {
    // The rest is the other major's format. Challenge as usual: only a
    // peer that proves the secret learns of the refusal (on_proof).
    hello_.assign(payload.begin(), payload.end());
    writer w{msg::challenge};
    w.bytes(own_nonce_);
    return advance(phase::server_wait_proof, w.take());
  }
  peer_cluster_ = r.str();
  peer_ = r.address();
  auto n = r.fixed<nonce_size>();
  peer_dialed_.host = r.str();
  peer_dialed_.port = r.u16();
  peer_incarnation_ = r.incarnation();
  // A higher minor may append extensions (covered by the MACs, ignored).
  bool may_extend = peer_protocol_.minor > settings_.protocol.minor;
  if (!r.ok() || (!r.at_end() && !may_extend))
    return fail("malformed hello");
  (void)n; // part of the transcript through hello_
  hello_.assign(payload.begin(), payload.end());
  writer w{msg::challenge};
  w.bytes(own_nonce_);
  return advance(phase::server_wait_proof, w.take());
}

handshake_step handshake::on_proof(std::span<const std::byte> payload) {
  reader r{payload.subspan(1)};
  auto their_mac = r.fixed<mac_size>();
  if (!r.ok() || !r.at_end())
    return fail("malformed proof");
  auto expected
    = compute_mac(settings_.secret, client_label, hello_, own_nonce_);
  bool foreign = !is_compatible(settings_.protocol, peer_protocol_);
  if (!equal_macs(expected, their_mac))
    return fail(fmt::format("proof from {} does not verify (wrong cluster "
                            "secret, or a forged or replayed proof)",
                            foreign ? std::string{"the dialing node"}
                                    : to_string(peer_)));
  if (foreign) {
    // The peer holds the secret: tell it why, authenticated, then close.
    auto version = settings_.protocol;
    auto m = compute_mac(settings_.secret, refusal_label, hello_, own_nonce_,
                         refusal_suffix(version));
    writer w{msg::refusal};
    w.version(version);
    w.bytes(m);
    auto step = fail(protocol_mismatch(settings_.protocol, peer_protocol_,
                                       "the dialing node"));
    step.send = w.take();
    step.peer_protocol = peer_protocol_;
    return step;
  }
  // Checked only now, so that a peer without the secret learns nothing.
  if (peer_cluster_ != settings_.cluster_name)
    return fail(fmt::format("{} belongs to cluster \"{}\", not \"{}\"",
                            to_string(peer_), peer_cluster_,
                            settings_.cluster_name));
  auto local = endpoint_of(settings_.local);
  if (peer_dialed_ != local)
    return fail(fmt::format("{} dialed {}, but this node is {}",
                            to_string(peer_), to_string(peer_dialed_),
                            to_string(local)));
  if (peer_.uid == 0 || peer_.port == 0 || peer_.host.empty())
    return fail(
      fmt::format("{} is not a valid node address", to_string(peer_)));
  if (endpoint_of(peer_) == local)
    return fail(
      fmt::format("{} claims this node's own address", to_string(peer_)));
  auto m = compute_mac(
    settings_.secret, server_label, hello_, own_nonce_,
    welcome_suffix(settings_.local, settings_.protocol, settings_.incarnation));
  writer w{msg::welcome};
  w.version(settings_.protocol);
  w.address(settings_.local);
  w.incarnation(settings_.incarnation);
  w.bytes(m);
  return establish(peer_, w.take());
}

} // namespace troupe::cluster
