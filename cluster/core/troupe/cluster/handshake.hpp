#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "troupe/cluster/cluster_incarnation.hpp"
#include "troupe/cluster/protocol_version.hpp"
#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/secret.hpp"

/// @file
/// The transport handshake: a pure state machine per connection side that
/// authenticates both nodes with the shared cluster secret and compares
/// their wire protocol versions (protocol_version.hpp).
///
/// ```
/// client (dialer)                                server (acceptor)
///   hello {major, minor, cluster name, client
///          unique_address, Nc, dialed host:port,
///          client's cluster incarnation
///          [, extensions of a higher minor]}      ->
///                                               <-  challenge {Ns}
///   proof {HMAC(K, "client" transcript)}        ->
///                                                   verify proof; check
///                                                   major, cluster,
///                                                   dialed == own endpoint
///                                               <-  welcome {major, minor,
///                                                   server unique_address,
///                                                   server's cluster
///                                                   incarnation,
///                                                   HMAC(K, "server"
///                                                   transcript + address
///                                                   + version +
///                                                   incarnation)}
///   verify welcome; check the address is the
///   dialed host:port
/// ```
/// K is the cluster secret; Nc and Ns are 32 random bytes per connection
/// (passed in: the core draws no randomness). The client transcript is
/// `label-client || hello bytes || Ns`, the server transcript
/// `label-server || hello bytes || Ns || server address || major || minor`,
/// so each MAC binds both nonces, both addresses, the cluster name, both
/// versions and the direction. Consequences (tested in handshake_test.cpp):
/// - the dialer proves first, and the acceptor sends nothing but random
///   bytes before the proof verifies: a peer without the secret learns
///   nothing (not even the cluster name, uid or protocol version) and gets
///   a closed connection;
/// - a challenge, proof or welcome recorded on another connection fails
///   (the other side's nonce differs); a MAC reflected back to its sender
///   fails (the direction label differs);
/// - a connection relayed to another node of the cluster fails (the dialed
///   host:port is in the transcript and checked by the acceptor).
/// MACs are HMAC-SHA256 (OpenSSL; pure computation) and compared in
/// constant time. Failure reasons are for the local log only: the other
/// side only sees the connection close, with one exception below.
///
/// Protocol versions: a hello of another major is read only as far as its
/// version (the rest is that major's format); the acceptor still sends the
/// challenge and verifies the proof over the hello's bytes, and only then,
/// to a peer that holds the secret, answers with a refusal {major, minor,
/// HMAC(K, "refusal" transcript + version)} before it closes. The dialer
/// verifies the refusal and fails with `protocol_mismatch`'s message (both
/// versions and what to do); the acceptor fails with the same message.
/// This exchange (hello's first three bytes, challenge, proof, refusal) is
/// frozen across majors. A hello of the same major and a higher minor may
/// carry trailing extension bytes: they are covered by both MACs and
/// ignored. Both sides record the peer's version
/// (`handshake_step::peer_protocol`).
///
/// Cluster incarnations (cluster_incarnation.hpp, protocol 2.0): each side
/// sends the incarnation of the cluster it is a member of (id 0: none
/// yet), covered by the MACs, and records the peer's
/// (`handshake_step::peer_incarnation`). A different incarnation does not
/// fail the handshake: the transport reports it
/// (`transport_listener::on_foreign_incarnation`) and the two nodes talk,
/// so that the merge rule can run (cluster_merge.hpp).
///
/// The handshake does not protect the frames that follow against an
/// active attacker on the path (no per-frame MAC): that is what TLS is for
/// (docs/design/transport.md, threat model).

namespace troupe::cluster {

/// Longest cluster name or host name the handshake carries, in bytes.
inline constexpr size_t max_name_size = 255;

/// Size of a handshake nonce in bytes.
inline constexpr size_t nonce_size = 32;

/// Fresh random bytes for one handshake (from a CSPRNG in production, a
/// seeded generator in tests and the simulator).
using nonce = std::array<std::byte, nonce_size>;

/// The local side's parameters.
struct handshake_settings {
  /// `cluster.name`; at most 255 bytes.
  std::string cluster_name;
  /// This node's unique_address (host at most 255 bytes, uid not 0).
  unique_address local;
  /// The shared cluster secret (HMAC key); never logged.
  runtime::secret secret;
  /// The wire protocol this node speaks: `current_protocol` (a test plays a
  /// node of another release with another value). The major must not be 0.
  protocol_version protocol = current_protocol;
  /// This node's cluster incarnation when the connection starts (not set
  /// before it joined a cluster).
  cluster_incarnation incarnation;
};

/// Where a handshake is.
enum class handshake_status : uint8_t {
  in_progress,
  /// The peer is authenticated (`handshake_step::peer`).
  established,
  /// The handshake failed (`handshake_step::reason`); close the
  /// connection without sending anything more.
  failed,
};

/// "in_progress", "established" or "failed".
const char* to_string(handshake_status x) noexcept;

/// The output of one handshake input.
struct handshake_step {
  handshake_status status = handshake_status::in_progress;
  /// A handshake message to send as the payload of a `frame_kind::handshake`
  /// frame on the control lane (empty: nothing to send). On the server's
  /// final step this is the welcome: the caller may still refuse the peer
  /// (e.g. a quarantined uid) by closing instead of sending it. On a
  /// `failed` step it is empty, except for the server's refusal of another
  /// protocol major: send it, then close.
  std::vector<std::byte> send;
  /// The authenticated peer, once `established`.
  unique_address peer;
  /// The peer's wire protocol version, once `established` (same major as
  /// this node's; the minor gates features, protocol_version.hpp), or the
  /// other major's version on a version refusal.
  protocol_version peer_protocol;
  /// The peer's cluster incarnation, once `established` (not set: the peer
  /// is not a member of a cluster yet).
  cluster_incarnation peer_incarnation;
  /// Why the handshake failed, for the local log (never secret material).
  std::string reason;
};

/// One side of one connection's handshake. Not thread-safe (one per
/// connection); a plain value otherwise. Any byte sequence fed to it ends
/// in `failed` or continues; nothing crashes (fuzzed).
class handshake {
public:
  /// The dialing side, connecting to `dialed` (the host:port it dialed, as
  /// advertised by the peer), with its fresh nonce. Names longer than
  /// `max_name_size` are a programmer error (asserts).
  static handshake client(handshake_settings settings, endpoint dialed,
                          const nonce& n);

  /// The accepting side, with its fresh nonce.
  static handshake server(handshake_settings settings, const nonce& n);

  /// The first step: the client's hello; nothing for the server.
  handshake_step start();

  /// Feeds the payload of one handshake frame from the peer. Input after
  /// `established` or `failed` fails.
  handshake_step on_message(std::span<const std::byte> payload);

  handshake_status status() const noexcept {
    return status_;
  }

  bool is_client() const noexcept {
    return client_;
  }

private:
  enum class phase : uint8_t {
    start,
    client_wait_challenge,
    client_wait_welcome,
    server_wait_hello,
    server_wait_proof,
    done,
  };

  handshake(handshake_settings settings, bool client, endpoint dialed,
            const nonce& n);

  handshake_step fail(std::string reason);
  handshake_step advance(phase next, std::vector<std::byte> send);
  handshake_step establish(unique_address peer, std::vector<std::byte> send);
  handshake_step on_challenge(std::span<const std::byte> payload);
  handshake_step on_welcome(std::span<const std::byte> payload);
  handshake_step on_refusal(std::span<const std::byte> payload);
  handshake_step on_hello(std::span<const std::byte> payload);
  handshake_step on_proof(std::span<const std::byte> payload);

  handshake_settings settings_;
  bool client_;
  endpoint dialed_;
  nonce own_nonce_;
  phase phase_ = phase::start;
  handshake_status status_ = handshake_status::in_progress;
  // The hello as sent (client) or received (server): the transcript's core.
  std::vector<std::byte> hello_;
  // Server: the hello's fields, checked after the proof verifies.
  unique_address peer_;
  std::string peer_cluster_;
  protocol_version peer_protocol_;
  cluster_incarnation peer_incarnation_;
  endpoint peer_dialed_;
  // Client: the server's nonce.
  nonce peer_nonce_{};
};

} // namespace troupe::cluster
