#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "troupe/cluster/membership_state.hpp"
#include "troupe/runtime/unique_address.hpp"
#include "troupe/singleton/singleton_settings.hpp"

/// @file
/// The singleton proxy's logic as a pure state machine: Akka's
/// ClusterSingletonProxy (akka.cluster.singleton) without the actor, plus
/// the fix of scenario S5 (Akka.NET's proxy never looked the singleton up
/// again after it restarted on the same oldest node).
///
/// The proxy knows the instance (a `Target`, the owner's reference to it)
/// or it does not. While it does not, it asks the expected host (the
/// singleton target: the oldest up or leaving member with the role among
/// those of the highest app_version, the managers' rule,
/// `membership_state::singleton_target`) every
/// identification_interval, and buffers what is sent (bounded; the oldest
/// message is dropped and counted when full). It forgets the instance,
/// and asks again at once, when:
/// - the instance is gone (`on_instance_gone`: the owner's watch fired,
///   e.g. the instance stopped for a lease loss and will restart on the
///   same node: S5), or
/// - the expected host changed (Akka's proxy on OldestChanged; here also
///   when a member of a higher app_version comes up).
/// An answer from a host that is no longer the expected one is still
/// taken: the instance it names is alive at that moment, and its watch
/// tells when it is gone.
///
/// Not thread-safe; owned by one actor (or one simulated node).
namespace troupe::singleton {

/// What the owner must do after one call: `identify` (ask the manager on
/// this node for the instance), then `deliver` every message to the target,
/// in order.
template <class Message>
struct proxy_effects {
  std::optional<runtime::unique_address> identify;
  std::vector<Message> deliver;
};

/// The proxy of one singleton type on one node.
template <class Message, class Target>
class proxy_core {
public:
  explicit proxy_core(proxy_settings settings)
    : settings_(std::move(settings)) {
    // nop
  }

  /// The membership changed: recomputes the expected host.
  proxy_effects<Message> on_membership(const cluster::membership_state& state,
                                       runtime::timestamp now) {
    std::optional<runtime::unique_address> host;
    if (auto m = state.singleton_target(role()))
      host = m->address;
    proxy_effects<Message> out;
    if (host != host_) {
      host_ = std::move(host);
      target_.reset();
      identify(now, out);
    }
    return out;
  }

  /// The manager on `host` named the running instance: deliver the buffer.
  proxy_effects<Message> on_identified(Target target, runtime::timestamp now) {
    static_cast<void>(now);
    proxy_effects<Message> out;
    target_ = std::move(target);
    next_identify_.reset();
    out.deliver.assign(std::make_move_iterator(buffer_.begin()),
                       std::make_move_iterator(buffer_.end()));
    buffer_.clear();
    return out;
  }

  /// The instance the proxy knew is gone (its watch fired): ask again now.
  proxy_effects<Message> on_instance_gone(runtime::timestamp now) {
    proxy_effects<Message> out;
    target_.reset();
    identify(now, out);
    return out;
  }

  /// A message for the singleton: deliver now when the instance is known,
  /// else buffer it (dropping the oldest when full).
  proxy_effects<Message> send(Message msg) {
    proxy_effects<Message> out;
    if (target_) {
      out.deliver.push_back(std::move(msg));
      return out;
    }
    if (settings_.buffer_size == 0) {
      ++dropped_;
      return out;
    }
    if (buffer_.size() >= settings_.buffer_size) {
      buffer_.pop_front();
      ++dropped_;
    }
    buffer_.push_back(std::move(msg));
    return out;
  }

  /// Asks again when due.
  proxy_effects<Message> tick(runtime::timestamp now) {
    proxy_effects<Message> out;
    if (!target_ && next_identify_ && *next_identify_ <= now)
      identify(now, out);
    return out;
  }

  /// When `tick` is due next.
  std::optional<runtime::timestamp> next_tick() const {
    return target_ ? std::nullopt : next_identify_;
  }

  const std::optional<Target>& target() const noexcept {
    return target_;
  }
  const std::optional<runtime::unique_address>& expected_host() const noexcept {
    return host_;
  }
  size_t buffered() const noexcept {
    return buffer_.size();
  }
  /// Messages dropped because the buffer was full (or size 0).
  uint64_t dropped() const noexcept {
    return dropped_;
  }

private:
  std::optional<std::string_view> role() const {
    if (settings_.role.empty())
      return std::nullopt;
    return std::string_view{settings_.role};
  }

  void identify(runtime::timestamp now, proxy_effects<Message>& out) {
    out.identify = host_;
    next_identify_ = now + settings_.identification_interval;
  }

  proxy_settings settings_;
  std::optional<runtime::unique_address> host_;
  std::optional<Target> target_;
  std::deque<Message> buffer_;
  std::optional<runtime::timestamp> next_identify_;
  uint64_t dropped_ = 0;
};

} // namespace troupe::singleton
