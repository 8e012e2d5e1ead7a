#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "troupe/runtime/unique_address.hpp"

/// @file
/// The messages between the shard regions of one entity type and their
/// shard coordinator (Akka's ShardCoordinator/ShardRegion protocol:
/// Register, RegisterProxy, RegisterAck, GetShardHome, ShardHome,
/// HostShard, ShardStarted, BeginHandOff, BeginHandOffAck, HandOff,
/// ShardStopped, GracefulShutdownReq), docs/design/sharding.md.
///
/// Shapes: a region is named by the address of its node (one region per
/// node and entity type); a shard by its id (the extractor's string). The
/// sender is never part of a message: the transport authenticates the
/// sending node (remoting.hpp) and both sides judge every message by it.
///
/// Order: every message of this protocol travels on the ordinary lane, so
/// the messages of one sender to one receiver arrive in send order, with
/// possible gaps, never duplicated. The protocol relies on it (e.g. a
/// `begin_hand_off` never overtakes an earlier `shard_home`).
///
/// Differences from Akka, and why:
/// - `register_region` lists the shards the region hosts, and a new
///   coordinator asks every member's region for it (`coordinator_hello`):
///   the coordinator's state is rebuilt from the regions' own reports, not
///   kept in a replicated store (the argument that no shard ever gets two
///   homes is in docs/design/sharding.md, "Failover").
/// - `register_region` carries `number_of_shards`: a region whose count
///   differs is refused with a reason naming both values (the join check
///   refuses such a node earlier; this catches regions started with other
///   options).
/// - `graceful_shutdown_ack` tells the region that no shard will be
///   allocated to it any more.
///
/// Wire format: CAF 0.17's inspect (the shell registers every type as
/// "troupe.sharding.<name>").
namespace troupe::sharding {

using runtime::unique_address;
using shard_id = std::string;

// -- region -> coordinator ----------------------------------------------------

/// A region registers (at start, and in answer to `coordinator_hello`),
/// listing every shard it hosts now (running or handing off). A proxy-only
/// region registers with `proxy` set and no shards.
struct register_region {
  bool proxy = false;
  uint32_t number_of_shards = 0;
  std::vector<shard_id> shards;
  friend bool operator==(const register_region&, const register_region&)
    = default;
};

/// Where does `shard` live? Answered with `shard_home` once it has a home.
struct get_shard_home {
  shard_id shard;
  friend bool operator==(const get_shard_home&, const get_shard_home&)
    = default;
};

/// The region started hosting `shard` (answer to `host_shard`, or to a
/// `shard_home` naming itself).
struct shard_started {
  shard_id shard;
  friend bool operator==(const shard_started&, const shard_started&) = default;
};

/// The region forgot where `shard` lives and buffers its messages.
struct begin_hand_off_ack {
  shard_id shard;
  friend bool operator==(const begin_hand_off_ack&, const begin_hand_off_ack&)
    = default;
};

/// Every entity of `shard` on the sending region has terminated and the
/// region does not host it any more (answer to `hand_off`; also sent
/// unasked when a region gives a shard up).
struct shard_stopped {
  shard_id shard;
  friend bool operator==(const shard_stopped&, const shard_stopped&) = default;
};

/// The region shuts down gracefully: allocate nothing more to it and hand
/// its shards off.
struct graceful_shutdown_request {
  friend bool operator==(graceful_shutdown_request, graceful_shutdown_request)
    = default;
};

// -- coordinator -> region ----------------------------------------------------

/// A new coordinator asks the region to register (with its shards).
struct coordinator_hello {
  friend bool operator==(coordinator_hello, coordinator_hello) = default;
};

/// The registration was accepted (`accepted`) or refused with `reason`
/// (e.g. a different number_of_shards, named with both values).
struct register_ack {
  bool accepted = true;
  std::string reason;
  friend bool operator==(const register_ack&, const register_ack&) = default;
};

/// `shard` lives in the region of node `region`. When `region` is the
/// receiving node, the region hosts the shard (as with `host_shard`).
struct shard_home {
  shard_id shard;
  unique_address region;
  friend bool operator==(const shard_home&, const shard_home&) = default;
};

/// Host `shard` (answer with `shard_started`).
struct host_shard {
  shard_id shard;
  friend bool operator==(const host_shard&, const host_shard&) = default;
};

/// `shard` is about to move: forget its home, buffer its messages, ack.
struct begin_hand_off {
  shard_id shard;
  friend bool operator==(const begin_hand_off&, const begin_hand_off&)
    = default;
};

/// Stop every entity of `shard` (with the stop message), then answer
/// `shard_stopped`. A region that does not host the shard answers at once.
struct hand_off {
  shard_id shard;
  friend bool operator==(const hand_off&, const hand_off&) = default;
};

/// Answer to `graceful_shutdown_request`: nothing more is allocated to the
/// region; its shards are being handed off.
struct graceful_shutdown_ack {
  friend bool operator==(graceful_shutdown_ack, graceful_shutdown_ack)
    = default;
};

/// What a region sends to the coordinator.
using to_coordinator
  = std::variant<register_region, get_shard_home, shard_started,
                 begin_hand_off_ack, shard_stopped, graceful_shutdown_request>;

/// What the coordinator sends to a region.
using to_region
  = std::variant<coordinator_hello, register_ack, shard_home, host_shard,
                 begin_hand_off, hand_off, graceful_shutdown_ack>;

/// The message's name in Akka's terms, for logs: "register_region", ...
const char* message_name(const to_coordinator& x) noexcept;
const char* message_name(const to_region& x) noexcept;

// -- inspection (CAF-free, STYLE.md §4) --------------------------------------

template <class Inspector>
auto inspect(Inspector& f, register_region& x) {
  return f(x.proxy, x.number_of_shards, x.shards);
}

template <class Inspector>
auto inspect(Inspector& f, get_shard_home& x) {
  return f(x.shard);
}

template <class Inspector>
auto inspect(Inspector& f, shard_started& x) {
  return f(x.shard);
}

template <class Inspector>
auto inspect(Inspector& f, begin_hand_off_ack& x) {
  return f(x.shard);
}

template <class Inspector>
auto inspect(Inspector& f, shard_stopped& x) {
  return f(x.shard);
}

template <class Inspector>
auto inspect(Inspector& f, graceful_shutdown_request& x) {
  static_cast<void>(x);
  return f();
}

template <class Inspector>
auto inspect(Inspector& f, coordinator_hello& x) {
  static_cast<void>(x);
  return f();
}

template <class Inspector>
auto inspect(Inspector& f, register_ack& x) {
  return f(x.accepted, x.reason);
}

template <class Inspector>
auto inspect(Inspector& f, shard_home& x) {
  return f(x.shard, x.region);
}

template <class Inspector>
auto inspect(Inspector& f, host_shard& x) {
  return f(x.shard);
}

template <class Inspector>
auto inspect(Inspector& f, begin_hand_off& x) {
  return f(x.shard);
}

template <class Inspector>
auto inspect(Inspector& f, hand_off& x) {
  return f(x.shard);
}

template <class Inspector>
auto inspect(Inspector& f, graceful_shutdown_ack& x) {
  static_cast<void>(x);
  return f();
}

} // namespace troupe::sharding
