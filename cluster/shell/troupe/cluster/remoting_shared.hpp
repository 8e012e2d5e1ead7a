#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include "troupe/cluster/published_registry.hpp"
#include "troupe/cluster/remoting_actor.hpp"
#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/log.hpp"

/// @file
/// State shared by the remoting handle, the remoting actor and the
/// transport listener (implementation detail of remoting.hpp).

namespace troupe::cluster {

/// Settings of remoting (the `cluster.remoting.*` keys).
struct remoting_settings {
  /// `cluster.remoting.down_flush_timeout`: how long a down that came on
  /// the control lane waits for its ordinary copy (watch_table.hpp), as
  /// Akka's death-watch-notification-flush-timeout.
  runtime::timespan down_flush_timeout = std::chrono::seconds{3};
  /// `cluster.remoting.deliver_on_io_thread`: decode incoming messages on
  /// the transport's io thread and enqueue them from there, instead of
  /// handing each socket read to the peer's inbound actor
  /// (remoting_listener.hpp compares the two).
  bool deliver_on_io_thread = false;
};

/// Counters of remote messaging on one node.
struct remoting_metrics {
  /// Messages handed to the transport (or delivered locally) by `send`.
  uint64_t sent = 0;
  /// Messages from other nodes delivered to a local actor.
  uint64_t delivered = 0;
  /// Messages for a name nothing is published under (here or, for local
  /// sends, on this node), dropped and logged.
  uint64_t dead_letters = 0;
  /// Payloads from other nodes that could not be decoded, dropped, logged
  /// and recorded as `drop_reason::undecodable` in the transport.
  uint64_t undecodable = 0;
};

/// Told that a handshake with `peer` named another cluster incarnation
/// (`transport_listener::on_foreign_incarnation`); runs on the transport's
/// io thread, must not block.
using foreign_incarnation_handler = std::function<void(
  const unique_address& peer, const cluster_incarnation& theirs)>;

/// The settings from `cluster.remoting.*` in `cfg` (declared by
/// caf_glue.hpp's declare_cluster_config).
remoting_settings remoting_settings_from_config(const runtime::config& cfg);

namespace detail {

struct remoting_counters {
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> delivered{0};
  std::atomic<uint64_t> dead_letters{0};
  std::atomic<uint64_t> undecodable{0};

  remoting_metrics snapshot() const noexcept {
    auto get = [](const std::atomic<uint64_t>& x) {
      return x.load(std::memory_order_relaxed);
    };
    return {get(sent), get(delivered), get(dead_letters), get(undecodable)};
  }

  // Bumps `counter`; true if this count should be logged (1, 2, 4, 8, ...),
  // so a flood of drops makes a few lines, not one per message.
  static bool bump(std::atomic<uint64_t>& counter) noexcept {
    auto n = counter.fetch_add(1, std::memory_order_relaxed) + 1;
    return (n & (n - 1)) == 0;
  }

  // Set when this node's shutdown began (remoting_handle::begin_shutdown).
  std::atomic<bool> shutting_down{false};

  // Counts a dead letter; the level to log it at, or none (only the 1st,
  // 2nd, 4th, ... are logged). Debug once the shutdown began: a stopping
  // node's unpublished regions and singletons still get messages until
  // the others learn it left, which is expected (Akka's
  // log-dead-letters-during-shutdown = off).
  std::optional<runtime::log_level> dead_letter() noexcept {
    if (!bump(dead_letters))
      return std::nullopt;
    return shutting_down.load(std::memory_order_relaxed)
             ? runtime::log_level::debug
             : runtime::log_level::info;
  }
};

class remoting_listener;
struct inbound_context;

struct remoting_shared {
  remoting_shared(caf::actor_system& sys, remoting_settings settings)
    : sys(sys), settings(settings) {}

  caf::actor_system& sys;
  remoting_settings settings;
  std::shared_ptr<published_registry> registry
    = std::make_shared<published_registry>();
  std::shared_ptr<remoting_counters> counters
    = std::make_shared<remoting_counters>();
  std::shared_ptr<remoting_listener> listener;
  std::shared_ptr<cluster::transport> transport;
  unique_address local;
  remoting_actor actor;
  std::atomic<bool> running{true};
  runtime::logger log{"remoting"};
};

} // namespace detail

} // namespace troupe::cluster
