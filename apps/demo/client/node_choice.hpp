#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

/// @file
/// Which node the load driver sends each attempt of a deposit to, as it
/// learns which nodes refuse connections (a killed node's port is closed).
/// Pure: time comes in as an argument.

namespace troupe::demo::client {

/// The nodes a deposit's attempts go to. Attempt 0 of deposit n starts at
/// node n mod nodes (the load spreads round-robin); each later attempt goes
/// to the next node after the one before. A node whose connection was
/// refused is *refusing* for `pause` from then: attempts skip it, and a
/// retry after a refusal goes to the next node at once (the deposit never
/// reached a node, so there is no failover to wait for). When every node is
/// refusing, the plain round-robin node is taken (and the caller waits its
/// retry delay first): a refusing node is probed again no later than after
/// `pause`. Any answer from a node, even an error status, clears its mark.
///
/// Does not judge timeouts or error answers: those reached a node, which
/// may be in a failover, and are retried elsewhere after the retry delay.
/// Not thread-safe (the driver guards it with a mutex).
class node_choice {
public:
  using duration = std::chrono::nanoseconds;

  /// `nodes` at least 1; `pause` how long a refusal marks a node.
  node_choice(size_t nodes, duration pause);

  /// The node for attempt 0 of deposit `n` at `now` (time since any fixed
  /// start).
  size_t first(uint64_t n, duration now) const;

  /// The node after `previous` for the next attempt.
  size_t next(size_t previous, duration now) const;

  /// Whether `node` is refusing at `now`.
  bool is_refusing(size_t node, duration now) const;

  /// Whether every node is refusing at `now`.
  bool all_refusing(duration now) const;

  /// Whether the retry to `next_node` waits the retry delay first: not when
  /// the attempt before it was refused and `next_node` is not refusing.
  bool waits_before(size_t next_node, bool previous_refused,
                    duration now) const;

  /// `node` refused a connection at `now`.
  void on_refused(size_t node, duration now);

  /// `node` answered (any status).
  void on_answered(size_t node);

private:
  // The first node from `from` on (round-robin) that is not refusing;
  // `from` itself when all are.
  size_t from_on(size_t from, duration now) const;

  duration pause_;
  /// Per node: refusing until this time (duration::min(): not refusing).
  std::vector<duration> refusing_until_;
};

} // namespace troupe::demo::client
