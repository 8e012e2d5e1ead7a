#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

/// @file
/// The version of troupe's wire protocol (frame format, handshake and the
/// cluster's own messages): a major and a minor (docs/design/transport.md
/// §2, "Protocol versions").
///
/// Rules:
/// - Nodes talk only within one major. A peer of another major is refused
///   in the handshake, after it proved the cluster secret, with a message
///   that names both versions and what to do (`protocol_mismatch`): the
///   accepting node logs it, and the dialing node gets it in an
///   authenticated refusal and logs it too. A rolling upgrade is possible
///   only between releases of one major.
/// - Any minor of the same major is accepted, newer or older. A minor bump
///   only adds optional things that a node of a lower minor can ignore
///   (e.g. trailing fields of the hello). A feature added in minor m is
///   used towards a peer only when the peer's minor, recorded at the
///   handshake (`handshake_step::peer_protocol`, `peer_metrics::protocol`),
///   is at least m; anything else needs a new major.
/// - Frozen across majors, so that two majors can tell each other apart
///   with a message instead of garbage: the 8-byte frame header (byte 0 is
///   the sender's major), and the handshake's version preamble (the hello
///   starts with type 1, major, minor; the challenge, the proof and the
///   refusal keep their layout and MACs).
///
/// Plain values; thread-safe as any value.

namespace troupe::cluster {

/// A wire protocol version, e.g. 1.0.
struct protocol_version {
  uint8_t major = 0;
  uint8_t minor = 0;

  friend auto operator<=>(const protocol_version&, const protocol_version&)
    = default;
};

/// The protocol this build speaks. History:
/// - 1.0, the first versioned protocol (builds before it sent a single,
///   unversioned byte and cannot talk to it);
/// - 2.0, the cluster incarnation (cluster_incarnation.hpp) in the hello,
///   the welcome, every gossip and gossip status, and the incarnation
///   probe messages: a major, because a 1.x node could neither decode the
///   new gossip nor be trusted to keep two clusters' gossip apart
///   (docs/adr/0011-cluster-incarnation-protocol-major.md).
inline constexpr protocol_version current_protocol{2, 0};

/// The major of `current_protocol`: byte 0 of every frame this build
/// sends, and the value of the join configuration key
/// `troupe.protocol_major`.
inline constexpr uint8_t protocol_major = current_protocol.major;

/// "1.0".
std::string to_string(protocol_version x);

/// Whether a node speaking `local` may talk to a peer speaking `peer`: the
/// same major, whatever the minors.
constexpr bool is_compatible(protocol_version local,
                             protocol_version peer) noexcept {
  return local.major == peer.major;
}

/// Why the peer `who` is refused and what to do, for the log of either
/// side, e.g. `10.0.0.2:2552 speaks troupe wire protocol 2.0 and this node
/// 1.3: nodes of different protocol majors cannot form one cluster. ...`.
/// Precondition: `!is_compatible(local, peer)`.
std::string protocol_mismatch(protocol_version local, protocol_version peer,
                              std::string_view who);

} // namespace troupe::cluster
