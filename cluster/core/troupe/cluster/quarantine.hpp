#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>

#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/error.hpp"

/// @file
/// Which incarnation lives at each host:port, and which uids are
/// quarantined.

namespace troupe::cluster {

/// The incarnation rules of the transport, as Akka Artery's association
/// registry: per endpoint (host:port) the uid currently living there, and
/// the uids quarantined there.
///
/// - The first authenticated handshake at an endpoint makes its uid
///   current.
/// - A handshake with another, non-quarantined uid at the same endpoint is
///   a new incarnation: it replaces the current one, whose uid is
///   quarantined (`admission::replaced`).
/// - A quarantined uid is refused for good (the old process must restart,
///   which gives it a new uid). The membership layer quarantines removed
///   nodes with `quarantine`.
/// - Per endpoint at most `max_per_endpoint` uids are remembered, oldest
///   forgotten first; a forgotten uid could be admitted again only if that
///   long-dead incarnation came back, which a restarted process cannot do.
///
/// Only authenticated peers reach `admit`, so an attacker without the
/// secret cannot grow the table. A plain value; not thread-safe.
class quarantine_registry {
public:
  /// The result of `admit`.
  struct admission {
    /// False if the peer's uid is quarantined: refuse the connection.
    bool admitted = false;
    /// The incarnation this peer replaced (now quarantined), if any.
    std::optional<unique_address> replaced;
  };

  explicit quarantine_registry(size_t max_per_endpoint = 64)
    : max_per_endpoint_(max_per_endpoint == 0 ? 1 : max_per_endpoint) {}

  /// A handshake with `peer` completed: admits it (and makes it current,
  /// possibly replacing and quarantining the current uid) or refuses it.
  admission admit(const unique_address& peer);

  /// Quarantines `peer`'s uid (membership removed it). Returns true if it
  /// was not quarantined before. A uid of 0 is ignored (false).
  bool quarantine(const unique_address& peer);

  /// True if `peer`'s uid is quarantined at its endpoint.
  bool is_quarantined(const unique_address& peer) const;

  /// The uid currently living at `ep`, if a handshake named one and it
  /// was not quarantined since.
  std::optional<uint64_t> current_uid(const endpoint& ep) const;

private:
  struct entry {
    std::optional<uint64_t> current;
    std::deque<uint64_t> quarantined; // oldest first
  };

  bool contains(const entry& e, uint64_t uid) const;
  void add(entry& e, uint64_t uid);

  size_t max_per_endpoint_;
  std::map<endpoint, entry> entries_;
};

/// The checks every transport's `send` makes before it queues a frame, in
/// this order (transport.hpp documents the errors):
/// `frame_too_large` (payload above `max_frame_size`),
/// `invalid_destination` (empty or overlong host, port 0, this node's
/// own endpoint), `quarantined` (`to.uid` quarantined), and
/// `incarnation_mismatch` (`established_uid` is the uid of an established
/// outbound connection to `to`'s endpoint and `to.uid` is neither 0 nor
/// that uid). Returns an empty error when the frame may be queued.
runtime::error check_send(const unique_address& local, const unique_address& to,
                          size_t payload_size, uint32_t max_frame_size,
                          const quarantine_registry& registry,
                          std::optional<uint64_t> established_uid);

} // namespace troupe::cluster
