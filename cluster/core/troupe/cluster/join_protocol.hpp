#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "troupe/cluster/app_version.hpp"
#include "troupe/cluster/join_config_checker.hpp"
#include "troupe/cluster/transport.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// Joining a cluster through seed nodes: Akka's `FirstSeedNodeProcess`,
/// `JoinSeedNodeProcess` and the joining part of `ClusterCoreDaemon`
/// (`joinSeedNodes`, `join`, `tryingToJoin`, `welcome`, the retry and the
/// give-up deadline) as one pure state machine, plus the join messages.
///
/// The rules (docs/design/cluster.md draws the states):
/// - No seed nodes: nothing happens (a join must be requested later).
/// - This node is the only seed: it joins itself at once.
/// - This node is the FIRST seed: it sends `init_join` to the other seeds
///   at once and every `init_join_interval` (1s), and joins the first that
///   acks compatibly. It joins itself (founding a new cluster) only when
///   every other seed answered `init_join_nack` (not a member yet): a seed
///   that stays silent (dead, or its answers lost in a partition) keeps
///   the first seed asking, so a first seed restarted while cut off from a
///   running cluster does not found a second one (troupe's default, ADR
///   0010). With `first_seed_founds_on_timeout = true` it also founds when
///   `seed_node_timeout` (5s) passes without an ack: Akka's
///   FirstSeedNodeProcess, which founds beside a cluster it cannot reach.
/// - Any other node sends `init_join` to every seed except itself, joins the
///   first that acks compatibly, and starts a new round every
///   `seed_node_timeout` until one does; when every seed answered
///   `init_join_nack` (all alive, none a member yet) the next round starts
///   `init_join_interval` after the last instead. It never founds a
///   cluster.
/// - After sending `join` it waits for `welcome` from that node; when none
///   comes within `retry_unsuccessful_join_after` (10s; off allowed) the
///   seed process starts over.
/// - With `shutdown_after_unsuccessful_join_seed_nodes` (off by default) the
///   process gives up when it has not joined within that time.
/// - Incompatible configuration: a seed's ack says so (the seed checked this
///   node's `join_config`), or this node's own check of the seed's values
///   finds a mismatch. Such a seed counts as answered; the process gives up
///   with every mismatch in the reason when no seed acked compatibly by the
///   time every other seed answered or the round (first seed: the
///   `seed_node_timeout`) ended. A first seed never founds a cluster after
///   an incompatible answer: that seed is in a running cluster.
///
/// Differences from Akka, and why:
/// - Akka gives up (shuts down) at the FIRST incompatible ack; troupe waits
///   for the other seeds until the round ends, so a compatible seed still
///   wins during a rolling change of an `ignore_if_missing` key. The bound
///   is one round.
/// - A non-first seed's round is `seed_node_timeout` from its start; Akka
///   uses an idle timeout that any answer (even a nack) restarts. The same
///   unless answers trickle in.
/// - When every seed nacked, Akka still waits `seed_node_timeout` (5s)
///   before asking again; troupe asks again after `init_join_interval`
///   (1s). Nodes started together with their seeds (a fresh deployment)
///   would otherwise all wait 5 s for the founding seed they just heard
///   from; the cost is one small message per seed per second while no
///   seed is a member. docs/design/cluster.md §13 has the effect on
///   formation time.
/// - Acks, nacks and welcomes from nodes that are not seeds of the current
///   process are ignored (Akka accepts a Welcome from anyone while
///   uninitialized); a late welcome from a seed is accepted.
/// - `init_join` carries the sender, so the seed can answer without
///   relying on the transport's notion of a sender.
/// - `join::app_version` is troupe's app_version (app_version.hpp), a
///   stricter Akka Version: 0.0.0 when not configured.
/// - The welcome's gossip is left to the membership core; `welcome` here
///   carries only the sender.

namespace troupe::cluster {

using runtime::timespan;
using runtime::timestamp;

// -- messages -----------------------------------------------------------------

/// "May I join?", sent by a joining node to the seed nodes. `config` holds
/// the joining node's values of every registered key.
struct init_join {
  unique_address from;
  join_config config;

  friend bool operator==(const init_join&, const init_join&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, init_join& x) {
  return f(x.from, x.config);
}

/// A member's answer to `init_join`: join me. `compat` is the member's
/// check of the joining node's config (the member is "local" in it);
/// `config` holds the member's values of the keys the joining node sent
/// (empty when incompatible).
struct init_join_ack {
  unique_address address;
  compat_result compat;
  join_config config;

  friend bool operator==(const init_join_ack&, const init_join_ack&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, init_join_ack& x) {
  return f(x.address, x.compat, x.config);
}

/// The answer of a node that is not a member (yet), or is down or exiting,
/// to `init_join`.
struct init_join_nack {
  unique_address address;

  friend bool operator==(const init_join_nack&, const init_join_nack&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, init_join_nack& x) {
  return f(x.address);
}

/// "Add me as joining", sent to the member that acked.
struct join {
  unique_address node;
  std::set<std::string> roles;
  /// The node's `cluster.app_version` (its member record carries it).
  cluster::app_version app_version;

  friend bool operator==(const join&, const join&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, join& x) {
  return f(x.node, x.roles, x.app_version);
}

/// The member's reply to `join`. (The membership core adds the gossip.)
struct welcome {
  unique_address from;

  friend bool operator==(const welcome&, const welcome&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, welcome& x) {
  return f(x.from);
}

/// A member's answer to `request` (Akka's `initJoin`): a nack when
/// `accepting` is false (this node is not a member yet, or is down or
/// exiting), else an ack with `checker`'s check of the request's config
/// against `local` and, when compatible, `local`'s values of the requested
/// keys.
std::variant<init_join_ack, init_join_nack>
answer_init_join(const init_join& request, const unique_address& self,
                 bool accepting, const join_config_checker& checker,
                 const join_config& local);

// -- the process --------------------------------------------------------------

/// Settings of the join process (field: default; key).
struct join_settings {
  /// (empty); cluster.seed_nodes. The first is the founding seed.
  std::vector<endpoint> seed_nodes;
  /// 5s; cluster.seed_node_timeout.
  timespan seed_node_timeout = std::chrono::seconds{5};
  /// false (ADR 0010; Akka: true); cluster.first_seed_founds_on_timeout.
  /// false: the first seed founds only when every other seed nacked;
  /// silent seeds keep it asking (every init_join_interval) instead. true:
  /// also when seed_node_timeout passes without an ack (Akka's rule).
  bool first_seed_founds_on_timeout = false;
  /// 10s; cluster.retry_unsuccessful_join_after (nullopt: off, wait for
  /// the welcome forever).
  std::optional<timespan> retry_unsuccessful_join_after
    = std::chrono::seconds{10};
  /// off; cluster.shutdown_after_unsuccessful_join_seed_nodes.
  std::optional<timespan> shutdown_after_unsuccessful_join_seed_nodes;
  /// 1s (fixed in Akka); how often the first seed re-sends init_join.
  timespan init_join_interval = std::chrono::seconds{1};
};

/// This node as the join process presents it.
struct joining_node {
  unique_address self;
  std::set<std::string> roles;
  cluster::app_version app_version;
  /// Values of the registered keys (sent in init_join).
  join_config config;
};

/// Send `message` to each of `to`.
struct send_init_join {
  std::vector<endpoint> to;
  init_join message;
};

/// Send `message` to `to`.
struct send_join {
  unique_address to;
  cluster::join message;
};

/// Join this node itself: it becomes the first member of a new cluster.
struct join_self {};

/// A welcome was accepted: this node is now joining the cluster of `from`.
struct joined {
  unique_address from;
};

/// Why the process gave up.
enum class give_up_reason : uint8_t {
  /// No seed accepted this node's configuration.
  incompatible_configuration = 0,
  /// Not joined within shutdown_after_unsuccessful_join_seed_nodes.
  join_timeout,
};

/// "incompatible_configuration" or "join_timeout".
const char* to_string(give_up_reason x) noexcept;

/// Stop trying; the node should shut down (Akka runs CoordinatedShutdown).
/// `message` names the seeds, the keys and values, or the time limit.
struct give_up {
  give_up_reason reason = give_up_reason::join_timeout;
  std::string message;
};

using join_effect
  = std::variant<send_init_join, send_join, join_self, joined, give_up>;

/// The states of the join process.
enum class join_state : uint8_t {
  /// No seed nodes: waiting for `join_seed_nodes`.
  idle = 0,
  /// Akka's FirstSeedNodeProcess.
  first_seed,
  /// Akka's JoinSeedNodeProcess.
  joining_seed,
  /// `join` sent, waiting for `welcome` (Akka's tryingToJoin).
  awaiting_welcome,
  /// Done: self-joined or welcomed.
  joined,
  /// Done: gave up.
  gave_up,
};

/// "idle", "first_seed", ...
const char* to_string(join_state x) noexcept;

/// The join process of one node; see the file comment for the rules.
/// Inputs are events with `now`; outputs are effects, which the shell
/// carries out in order. The shell calls `tick` at `next_tick()` (or
/// periodically). A plain value; not thread-safe.
class join_process {
public:
  /// `settings.seed_node_timeout` and `init_join_interval` must be
  /// positive (asserts).
  join_process(joining_node self, join_config_checker checker,
               join_settings settings);

  /// Starts joining the configured seed nodes.
  std::vector<join_effect> start(timestamp now);

  /// Starts over with `seeds` (Akka's JoinSeedNodes; resets the give-up
  /// deadline). Ignored once joined. Duplicates are dropped.
  std::vector<join_effect> join_seed_nodes(std::vector<endpoint> seeds,
                                           timestamp now);

  /// Time passed: re-sends, retries, founds a cluster or gives up.
  std::vector<join_effect> tick(timestamp now);

  std::vector<join_effect> on_init_join_ack(const init_join_ack& ack,
                                            timestamp now);

  std::vector<join_effect> on_init_join_nack(const init_join_nack& nack,
                                             timestamp now);

  std::vector<join_effect> on_welcome(const welcome& msg, timestamp now);

  join_state state() const noexcept {
    return state_;
  }

  /// When `tick` has something to do next (nullopt: nothing).
  std::optional<timestamp> next_tick() const;

  /// The node `join` was sent to (awaiting_welcome) or that welcomed us.
  const std::optional<unique_address>& join_target() const noexcept {
    return join_target_;
  }

  /// The seed nodes in use (duplicates dropped, in the given order).
  const std::vector<endpoint>& seed_nodes() const noexcept {
    return seeds_;
  }

  /// Rounds of init_join sent by the current seed process.
  uint32_t attempts() const noexcept {
    return attempts_;
  }

private:
  std::vector<join_effect> begin_seed_process(timestamp now);
  std::vector<join_effect> send_round(timestamp now);
  std::vector<join_effect> maybe_conclude(bool deadline_passed);
  std::vector<join_effect> become_joined_self();
  std::vector<join_effect> become_gave_up(give_up_reason reason,
                                          std::string message);
  bool is_seed_state() const noexcept;

  joining_node self_;
  endpoint self_endpoint_;
  join_config_checker checker_;
  join_settings settings_;
  join_state state_ = join_state::idle;
  std::vector<endpoint> seeds_;
  std::set<endpoint> others_;
  // Seeds that answered without a compatible ack (nack or incompatible):
  // across rounds for the first seed (Akka's remainingSeedNodes), per
  // round for the others.
  std::set<endpoint> answered_;
  // Why each incompatible seed refused.
  std::map<endpoint, std::string> incompatible_;
  uint32_t attempts_ = 0;
  timestamp next_send_{};
  timestamp round_start_{};
  timestamp round_end_{};
  std::optional<timestamp> welcome_deadline_;
  std::optional<timestamp> give_up_deadline_;
  std::optional<unique_address> join_target_;
};

} // namespace troupe::cluster
