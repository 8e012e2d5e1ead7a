#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>

#include "troupe/runtime/error.hpp"
#include "troupe/runtime/unique_address.hpp"

/// @file
/// The names under which local actors are reachable from other nodes.

namespace troupe::cluster {

/// The local actors reachable by name: published ones and reply references
/// (`$<actor id>`). Both hold a strong handle: a CAF actor that nothing
/// references is destroyed, and an actor waiting for messages from other
/// nodes must not be, so publishing or exposing keeps it alive until it
/// stops (or, for a name, is unpublished), as an Akka actor lives until
/// stopped.
///
/// Thread-safe: the io thread looks names up while actors publish, so
/// every member takes a lock (shared for lookups).
class published_registry {
public:
  /// Takes the tagged messages for a published name on the receiving thread
  /// (see remoting_handle::publish): the sender's node, the tag, and the
  /// message's elements (no sender element).
  using tagged_receiver = std::function<void(
    const runtime::unique_address& from, std::string_view tag, caf::message)>;

  /// A published name's target.
  struct target {
    caf::actor actor;
    /// Null: the name takes no tagged messages.
    std::shared_ptr<const tagged_receiver> receiver;
  };

  /// Publishes `actor` under `name` (checked: validate_published_name),
  /// with an optional tagged receiver. Errors: remoting_errc::invalid_name,
  /// invalid_actor, name_taken (by another actor; the same actor again is
  /// fine, and a receiver given then replaces the previous one).
  runtime::error add(const std::string& name, const caf::actor& actor,
                     std::shared_ptr<const tagged_receiver> receiver = {});

  /// Unpublishes `name`; true if it was published.
  bool remove(std::string_view name);

  /// Unpublishes `name` if `actor` is published under it; true if so.
  bool remove_if(std::string_view name, const caf::actor_addr& actor);

  /// The names `actor` is published under (reply name not included).
  std::vector<std::string> names_of(const caf::actor_addr& actor) const;

  /// Exposes `actor` under its reply name `$<actor id>` (idempotent);
  /// returns the name and whether it was new.
  std::pair<std::string, bool> expose(const caf::actor& actor);

  /// Forgets the reply name of actor `id`; true if it was exposed.
  bool forget_exposed(uint64_t id);

  /// The actor reachable under `name` (published or reply name), or an
  /// invalid handle.
  caf::actor find(std::string_view name) const;

  /// `find` with the name's tagged receiver (none for reply names).
  target find_target(std::string_view name) const;

  /// True if `find(name)` would find an actor.
  bool contains(std::string_view name) const;

  /// Forgets every name (remoting stopped).
  void clear();

  /// Every published name, sorted.
  std::vector<std::string> names() const;

  /// The reply name of actor `id`.
  static std::string reply_name(uint64_t id);

private:
  struct string_hash {
    using is_transparent = void;
    size_t operator()(std::string_view x) const noexcept {
      return std::hash<std::string_view>{}(x);
    }
  };

  mutable std::shared_mutex mtx_;
  std::unordered_map<std::string, target, string_hash, std::equal_to<>> named_;
  std::unordered_map<uint64_t, caf::actor> exposed_;
};

} // namespace troupe::cluster
