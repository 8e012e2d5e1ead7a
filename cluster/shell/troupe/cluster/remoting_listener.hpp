#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/message.hpp>

#include "troupe/cluster/remoting_shared.hpp"
#include "troupe/cluster/transport.hpp"

/// @file
/// The transport listener of remoting (implementation detail).

namespace troupe::cluster::detail {

/// Receives the transport's callbacks on its io thread.
///
/// Message envelopes are decoded right there and enqueued straight into
/// the mailbox of the actor published under the target name: one hop from
/// the socket to the actor. Watch, unwatch and down envelopes and peer
/// events go to the remoting actor, in arrival order. Events that come
/// before `attach` (the transport starts before the actor exists) wait in
/// a buffer and are posted by `attach`, in order.
class remoting_listener final : public transport_listener {
public:
  remoting_listener(caf::actor_system& sys,
                    std::shared_ptr<published_registry> registry,
                    std::shared_ptr<remoting_counters> counters);

  /// Starts posting events to `actor` (buffered ones first); `t` is the
  /// transport that calls this listener (for `record_drop`).
  void attach(caf::actor actor, transport* t);

  /// Stops posting events (and drops the handle to the actor).
  void detach();

  void on_frames(const unique_address& from,
                 std::span<const received_frame> frames) override;

  void on_frame(const unique_address& from, lane lane,
                std::span<const std::byte> payload) override;

  void on_peer_up(const unique_address& peer, direction dir) override;

  void on_peer_down(const unique_address& peer, direction dir,
                    std::string_view reason) override;

  void on_peer_quarantined(const unique_address& peer,
                           std::string_view reason) override;

  void on_dropped(const unique_address& peer, lane lane, drop_reason reason,
                  uint64_t count) override;

private:
  // Per batch: the last target looked up (most batches go to one actor).
  struct target_cache {
    std::string name;
    caf::actor actor;
  };

  void handle(const unique_address& from, lane lane,
              std::span<const std::byte> payload, target_cache& cache);

  void post(caf::message msg);

  void drop_undecodable(const unique_address& from, lane lane,
                        const std::string& why);

  caf::actor_system& sys_;
  std::shared_ptr<published_registry> registry_;
  std::shared_ptr<remoting_counters> counters_;
  std::atomic<transport*> transport_{nullptr};
  std::mutex mtx_;
  caf::actor actor_;
  bool detached_ = false;
  std::vector<caf::message> buffer_;
  runtime::logger log_{"remoting"};
};

} // namespace troupe::cluster::detail
