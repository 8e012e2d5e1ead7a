#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/message.hpp>

#include "troupe/cluster/frame_dispatcher.hpp"
#include "troupe/cluster/remoting_shared.hpp"
#include "troupe/cluster/transport.hpp"

/// @file
/// The transport listener of remoting (implementation detail).

namespace troupe::cluster::detail {

/// Receives the transport's callbacks on its io thread and hands them on,
/// keeping the order of each peer's events.
///
/// Two delivery paths (remoting_settings::deliver_on_io_thread):
/// - batched (default): each socket read becomes one `inbound_batch`
///   message (one copy) to the peer's inbound actor, which decodes on a CAF
///   worker and enqueues the targets on that same worker; control
///   envelopes and peer events travel the same way, so they stay behind
///   the messages before them. Allocation and release of the decoded
///   messages then mostly happen on one thread (glibc's fast path);
/// - on the io thread: each message envelope is decoded right there and
///   enqueued into the target's mailbox; control envelopes and peer events
///   go to the remoting actor.
/// Events before `attach` (the transport starts before the actor exists)
/// wait in a buffer and are handed on by `attach`, in order.
class remoting_listener final : public transport_listener {
public:
  remoting_listener(std::shared_ptr<inbound_context> ctx,
                    bool deliver_on_io_thread);

  /// Starts handing events on to `remoting` (buffered ones first); `t` is
  /// the transport that calls this listener.
  void attach(caf::actor remoting, transport* t);

  /// Stops handing events on; stops the inbound actors.
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

  /// Calls the handler set by `on_foreign_incarnation(handler)` (if any),
  /// on the io thread.
  void on_foreign_incarnation(const unique_address& peer,
                              const cluster_incarnation& theirs) override;

  /// What `on_foreign_incarnation` calls from now on (empty: nothing).
  void set_foreign_incarnation_handler(foreign_incarnation_handler handler);

private:
  // Hands `msg` (a batch, a control envelope or a peer event of `peer`)
  // on, or buffers it before `attach`.
  void post(const unique_address& peer, caf::message msg);

  // Under mtx_, after attach.
  void route(const unique_address& peer, caf::message msg);

  std::shared_ptr<inbound_context> ctx_;
  bool on_io_thread_;
  frame_dispatcher direct_; // io thread only
  std::mutex mtx_;
  caf::actor remoting_;
  bool detached_ = false;
  std::vector<std::pair<unique_address, caf::message>> buffer_;
  std::map<unique_address, caf::actor> inbound_;
  foreign_incarnation_handler foreign_; // under mtx_
};

} // namespace troupe::cluster::detail
