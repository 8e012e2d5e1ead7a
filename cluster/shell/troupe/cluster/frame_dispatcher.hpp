#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include <caf/actor.hpp>
#include <caf/fwd.hpp>
#include <caf/message.hpp>

#include "troupe/cluster/message_codec.hpp"
#include "troupe/cluster/published_registry.hpp"
#include "troupe/cluster/remoting_events.hpp"
#include "troupe/cluster/remoting_shared.hpp"
#include "troupe/cluster/transport.hpp"

/// @file
/// Decoding and delivery of the frames remoting receives (implementation
/// detail of remoting_listener and the inbound actors).

namespace troupe::cluster::detail {

/// What every decoder of incoming frames shares.
struct inbound_context {
  inbound_context(caf::actor_system& sys,
                  std::shared_ptr<published_registry> registry,
                  std::shared_ptr<remoting_counters> counters)
    : sys(sys), registry(std::move(registry)), counters(std::move(counters)) {}

  caf::actor_system& sys;
  std::shared_ptr<published_registry> registry;
  std::shared_ptr<remoting_counters> counters;
  /// The transport (for `record_drop`); set when remoting has started.
  std::atomic<cluster::transport*> transport_ptr{nullptr};
  runtime::logger log{"remoting"};
};

/// Decodes frames and delivers them: message envelopes into the mailbox of
/// the actor published under the target name, watch/unwatch/down envelopes
/// to `post_control` (the remoting actor), undecodable ones counted,
/// logged and recorded as transport drops. Not thread-safe (one per
/// thread or actor: it caches type prototypes and the last target).
class frame_dispatcher {
public:
  explicit frame_dispatcher(std::shared_ptr<inbound_context> ctx)
    : ctx_(std::move(ctx)) {}

  /// Handles one frame from `from`. Targets are enqueued on `host` (the
  /// calling actor's execution unit, so they tend to run on the same
  /// worker thread; nullptr from a foreign thread).
  void dispatch(const unique_address& from, lane lane,
                std::span<const std::byte> payload, caf::execution_unit* host,
                const std::function<void(control_received&&)>& post_control);

  /// Forgets the cached target (call between batches: a name may have been
  /// unpublished meanwhile).
  void reset_target() {
    target_name_.clear();
    target_ = {};
  }

private:
  void drop_undecodable(const unique_address& from, lane lane,
                        const std::string& why);

  std::shared_ptr<inbound_context> ctx_;
  decode_cache cache_;
  std::string target_name_;
  published_registry::target target_;
};

} // namespace troupe::cluster::detail
