#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "troupe/cluster/cluster_incarnation.hpp"
#include "troupe/cluster/gossip.hpp"
#include "troupe/runtime/clock.hpp"

/// @file
/// Two clusters of one name that meet: what each side tells the other,
/// the pure merge rule, and what a node remembers of the other clusters it
/// met (docs/design/cluster.md, "A second cluster is detected and healed").
/// troupe's own; Akka has no counterpart (it relies on Cluster Bootstrap
/// never forming two clusters, and an operator when it does).
///
/// The rule: the smaller cluster leaves (every member runs its coordinated
/// shutdown with reason `cluster_merge` and is restarted by its supervisor,
/// which joins it to the other); at equal sizes the younger incarnation
/// leaves. Only the OLDER side of a meeting decides (it "judges"): when it
/// finds that the younger side must leave it tells it so (a verdict), and
/// when it finds that it must leave itself it marks its own gossip. The
/// younger side never decides on its own sizes. So two nodes of one
/// meeting cannot both decide that their own side leaves from two
/// different readings of the sizes (the flip-flop the issue warns about);
/// docs/design/cluster.md argues the remaining cases.
///
/// Plain values and pure functions; thread-safe as any value.

namespace troupe::cluster {

/// The members that count in a cluster's size for the merge rule: joining,
/// weakly_up and up (unreachable ones too: they are members until downed).
/// Leaving and exiting members are on their way out, and down and removed
/// ones are gone: a cluster's size is how many members would have to
/// restart if it left.
bool counts_for_size(member_status s) noexcept;

/// The members of `g` that `counts_for_size`.
uint32_t cluster_size(const gossip& g) noexcept;

/// What a node tells another about its cluster in an incarnation probe or
/// its answer.
struct cluster_info {
  /// The sender's cluster (never "none": only members probe and answer).
  cluster_incarnation incarnation;
  /// `cluster_size` of the sender's view.
  uint32_t size = 0;
  /// Set when the sender's cluster is leaving to join that incarnation
  /// (its gossip is marked; gossip::merging_into).
  cluster_incarnation merging_into;

  friend bool operator==(const cluster_info&, const cluster_info&) = default;
};

template <class Inspector>
auto inspect(Inspector& f, cluster_info& x) {
  return f(x.incarnation, x.size, x.merging_into);
}

/// "Which cluster are you?", sent every `cluster.incarnation_probe_interval`
/// by each member to every endpoint of its contact list that is not a
/// member of its view (uid 0: whoever lives there), and at once to a node
/// met in a handshake or through a gossip of another incarnation. A member
/// answers with `incarnation_probe_answer`; a node that is not a member
/// does not answer.
struct incarnation_probe {
  unique_address from;
  cluster_info info;
  /// Set only by the judge of the meeting (the older incarnation, which is
  /// the sender's): "your cluster leaves and joins mine". The receiver
  /// obeys only when this is the sender's incarnation and older than its
  /// own.
  cluster_incarnation verdict;

  friend bool operator==(const incarnation_probe&, const incarnation_probe&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, incarnation_probe& x) {
  return f(x.from, x.info, x.verdict);
}

/// A member's answer to `incarnation_probe`: its cluster, and, when it is
/// the judge and found that the prober's cluster must leave, the verdict
/// (as in the probe).
struct incarnation_probe_answer {
  unique_address from;
  cluster_info info;
  cluster_incarnation verdict;

  friend bool operator==(const incarnation_probe_answer&,
                         const incarnation_probe_answer&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, incarnation_probe_answer& x) {
  return f(x.from, x.info, x.verdict);
}

/// One side of a meeting as the rule sees it.
struct cluster_side {
  cluster_incarnation incarnation;
  uint32_t size = 0;
};

/// Which side of a meeting leaves.
enum class merge_verdict : uint8_t {
  /// The deciding node's own cluster leaves.
  this_side_leaves,
  /// The other cluster leaves.
  other_side_leaves,
};

/// "this_side_leaves" or "other_side_leaves".
const char* to_string(merge_verdict x) noexcept;

/// The merge rule: the side with fewer members leaves; at equal sizes the
/// younger incarnation (founded later, then the larger id) leaves.
/// Antisymmetric: `decide_merge(a, b)` and `decide_merge(b, a)` always
/// name the same side. Precondition: the incarnations are set and differ
/// (asserts).
merge_verdict decide_merge(const cluster_side& self, const cluster_side& other);

/// True if a node of incarnation `self` decides meetings with `other`:
/// it is the older one (both set and different).
inline bool judges(const cluster_incarnation& self,
                   const cluster_incarnation& other) noexcept {
  return is_older(self, other);
}

/// How long a member of a merging cluster lingers before it stops, unless
/// every member has seen the merge mark sooner: three gossip intervals
/// (with the gossip speed-up nine rounds, enough for the mark to reach
/// every member of a cluster of hundreds). Meanwhile it keeps gossiping
/// and refuses joins (`init_join_nack`), so that a restarted member finds
/// the other cluster.
inline runtime::timespan merge_linger(runtime::timespan gossip_interval) {
  return 3 * gossip_interval;
}

/// What a node remembers of another cluster of its name that it met.
struct foreign_cluster {
  cluster_incarnation incarnation;
  /// Its size as last reported (none: met without a size, e.g. in a
  /// handshake or a gossip status).
  std::optional<uint32_t> size;
  /// The node through which it was last seen.
  unique_address seen_via;
  /// When it was last seen (wall clock, for people).
  wall_time last_seen{};
  /// When it was last seen (this node's monotonic clock, for expiry).
  runtime::timestamp last_seen_at{};
  /// Set when that cluster was last reported leaving to join this
  /// incarnation.
  cluster_incarnation merging_into;
  /// True once this node, as the judge, told that cluster to leave (the
  /// verdict is repeated on every later meeting, logged only once).
  bool told_to_leave = false;

  friend bool operator==(const foreign_cluster&, const foreign_cluster&)
    = default;
};

/// What a node knows of its own cluster incarnation and of the other
/// clusters of its name that it met (management's `/cluster/members`; the
/// cluster daemon publishes it, cluster_handle::incarnation reads it).
struct incarnation_report {
  /// This node's cluster incarnation (not set before it joined).
  cluster_incarnation incarnation;
  /// Set while this node's cluster leaves to join that incarnation.
  cluster_incarnation merging_into;
  /// The other clusters it met and has not forgotten, oldest first.
  std::vector<foreign_cluster> foreign;

  friend bool operator==(const incarnation_report&, const incarnation_report&)
    = default;
};

/// One line for logs and traces, e.g. `00000000000004d2@2023-11-14T22:13:
/// 20.000Z (3 members) via 10.0.0.2:2552#7`.
std::string to_string(const foreign_cluster& x);

} // namespace troupe::cluster
