#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "troupe/cluster/remote_down.hpp"
#include "troupe/cluster/remote_ref.hpp"
#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// Remote watches of one node, both ends: the local actors watching remote
/// references, and the remote nodes watching names published here.

namespace troupe::cluster {

/// A local watching actor, as the shell identifies it (CAF's actor id).
using watcher_id = uint64_t;

/// Effect: ask `ref.node` to report when `ref.name` goes (control lane).
struct send_watch {
  remote_ref ref;
  friend bool operator==(const send_watch&, const send_watch&) = default;
};

/// Effect: tell `ref.node` that no local actor watches `ref.name` any more.
struct send_unwatch {
  remote_ref ref;
  friend bool operator==(const send_unwatch&, const send_unwatch&) = default;
};

/// Effect: tell node `to` that `name`, published here, is gone; sent on
/// both lanes with the same `seq` (to this node itself: fed back once
/// through `down_received`).
struct send_down {
  unique_address to;
  std::string name;
  down_cause cause = down_cause::actor_stopped;
  uint64_t seq = 0;
  std::string reason;
  friend bool operator==(const send_down&, const send_down&) = default;
};

/// Effect: deliver `down` to the local actor `watcher`.
struct notify_watcher {
  watcher_id watcher = 0;
  remote_down down;
  friend bool operator==(const notify_watcher&, const notify_watcher&)
    = default;
};

/// Effect: call `flush_timer_fired` at `at` (or later).
struct start_flush_timer {
  runtime::timestamp at;
  friend bool operator==(const start_flush_timer&, const start_flush_timer&)
    = default;
};

/// What the shell carries out after a `watch_table` event, in order.
using watch_effect = std::variant<send_watch, send_unwatch, send_down,
                                  notify_watcher, start_flush_timer>;

using watch_effects = std::vector<watch_effect>;

/// Remote watches of one node incarnation (`self`), as Akka's remote death
/// watch: a watch fires (once) when the watched actor stops or is
/// unpublished, or when its node is removed from membership or
/// quarantined, never on a connection blip.
///
/// Watcher end (this node watches `ref` on node B):
/// - The first local watcher of a reference sends a watch request to B;
///   the last one to leave (unwatch, or the watcher stopped) sends an
///   unwatch. A watch of a reference on a node already removed or
///   quarantined fires at once.
/// - B reports a down on both lanes with one `seq`. The ordinary copy
///   fires the watch: it travels behind every ordinary message B sent
///   before, so the watcher sees those first. A control copy that comes
///   first only arms a flush timer (`flush_timeout`, as Akka's
///   death-watch-notification-flush-timeout); if the ordinary copy is lost,
///   the watch fires when the timer runs out. The copy that comes second,
///   and any copy with a `seq` not above the last one fired for that
///   reference, is ignored: each watch fires once.
/// - A peer that went down and came up again (a blip: frames may have been
///   lost in either direction) gets every watch request again; B answers a
///   request for a name nothing is published under with a
///   `not_published` down, which also covers a lost down.
/// - `node_removed` fires every watch on that node at once and remembers
///   the node, so later watches of it fire at once too.
///
/// Watched end (node A watches a name published here): a set of watching
/// nodes per name. `published_gone` sends a down (new `seq`) to each;
/// `watch_received` for a name nothing is published under answers with a
/// `not_published` down; a removed node's entries are forgotten.
///
/// Effects are produced in a deterministic order (references, watchers
/// and nodes in their ordering). Not thread-safe (one actor owns it).
/// What it does not do: talk to the registry of published names (the
/// shell passes `published`), or decide that a node is removed (the
/// membership layer does).
class watch_table {
public:
  /// `self` is this node's incarnation; `flush_timeout` bounds how long a
  /// down that came on the control lane waits for its ordinary copy.
  watch_table(unique_address self, runtime::timespan flush_timeout);

  // -- watcher end ------------------------------------------------------------

  /// `watcher` watches `ref` (idempotent). `ref.node.uid` must not be 0.
  watch_effects watch(watcher_id watcher, const remote_ref& ref);

  /// `watcher` no longer watches `ref` (no-op if it did not).
  watch_effects unwatch(watcher_id watcher, const remote_ref& ref);

  /// `watcher` stopped: its watches go (no notification to it).
  watch_effects watcher_stopped(watcher_id watcher);

  /// A down for `name` arrived from `from` on `lane` (from this node
  /// itself: its only copy, on any lane).
  watch_effects down_received(const unique_address& from, lane lane,
                              std::string_view name, down_cause cause,
                              uint64_t seq, std::string_view reason,
                              runtime::timestamp now);

  /// The flush timer ran out: fires the downs waiting since before `now -
  /// flush_timeout`.
  watch_effects flush_timer_fired(runtime::timestamp now);

  // -- peers ------------------------------------------------------------------

  /// A connection with `peer` went down (either direction): nothing fires.
  void peer_down(const unique_address& peer);

  /// A connection with `peer` came up: after a `peer_down`, every watch
  /// request for `peer` is sent again.
  watch_effects peer_up(const unique_address& peer);

  /// `node` was removed from membership (`node_removed`) or quarantined
  /// (`node_quarantined`): every watch on it fires with `cause`, and its
  /// watches of names published here are forgotten. Idempotent: a node
  /// fires its watches once, whatever the cause of later calls.
  watch_effects node_removed(const unique_address& node, down_cause cause,
                             std::string_view reason);

  // -- watched end ------------------------------------------------------------

  /// Node `from` asks to hear when `name` goes; `published` says whether
  /// anything is published under `name` here now.
  watch_effects watch_received(const unique_address& from,
                               std::string_view name, bool published);

  /// Node `from` no longer watches `name`.
  void unwatch_received(const unique_address& from, std::string_view name);

  /// The actor published here under `name` stopped (`actor_stopped`) or was
  /// unpublished (`unpublished`): every node watching `name` gets a down.
  watch_effects published_gone(std::string_view name, down_cause cause,
                               std::string_view reason);

  // -- queries ----------------------------------------------------------------

  /// The references `watcher` watches.
  std::vector<remote_ref> watched_by(watcher_id watcher) const;

  /// The local watchers of `ref`.
  std::vector<watcher_id> watchers_of(const remote_ref& ref) const;

  /// The nodes watching `name` here.
  std::vector<unique_address> nodes_watching(std::string_view name) const;

  /// Number of (watcher, reference) pairs.
  size_t size() const noexcept;

  /// True if `node` was removed or quarantined.
  bool is_removed(const unique_address& node) const;

  const unique_address& self() const noexcept {
    return self_;
  }

private:
  // A down whose control copy came first, waiting for the ordinary one.
  struct pending_down {
    uint64_t seq = 0;
    down_cause cause = down_cause::actor_stopped;
    std::string reason;
    runtime::timestamp deadline;
  };

  // Fires every watch of `ref` with (cause, reason) and forgets it.
  void fire(const remote_ref& ref, down_cause cause, std::string_view reason,
            watch_effects& out);

  // Forgets `watcher`'s watch of `ref`; true if `ref` has no watcher left.
  bool drop_watch(watcher_id watcher, const remote_ref& ref);

  // Forgets what is known about `ref` once it has no watcher.
  void forget_unwatched(const remote_ref& ref);

  unique_address self_;
  runtime::timespan flush_timeout_;
  std::map<remote_ref, std::set<watcher_id>> watchers_;
  std::map<watcher_id, std::set<remote_ref>> watched_;
  std::map<remote_ref, pending_down> pending_;
  // Highest down seq fired per reference, until the other copy came.
  std::map<remote_ref, uint64_t> fired_seq_;
  std::map<unique_address, down_cause> removed_;
  std::set<unique_address> disconnected_;
  // Watched end.
  std::map<std::string, std::set<unique_address>, std::less<>> watching_;
  uint64_t next_seq_ = 0;
};

} // namespace troupe::cluster
