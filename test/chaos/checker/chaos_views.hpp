#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

/// @file
/// views.jsonl as the checker reads it: what each node said its membership
/// view was when the driver asked (`GET /cluster/members`; the driver's
/// writer is test/chaos/driver/view_log.hpp, which documents the line).
/// The checker reads the nodes' words and compares them across nodes
/// itself (chaos_membership.hpp); it never takes a node's word for
/// whether the cluster is one. Pure.

namespace troupe::chaos {

/// One member as a node listed it.
struct listed_member {
  /// `host:port#uid`.
  std::string address;
  /// "up", "joining", "weakly_up", "leaving", "exiting", "down", "removed".
  std::string status;
  bool reachable = true;

  friend bool operator==(const listed_member&, const listed_member&) = default;
};

/// One views.jsonl line: a node's answer, or why it gave none.
struct view_record {
  size_t line = 0;
  /// When the driver asked and when the answer (or the error) came,
  /// CLOCK_MONOTONIC nanoseconds (0 < sent_ns <= mono_ns).
  int64_t sent_ns = 0;
  int64_t mono_ns = 0;
  /// The driver's round (every live node asked at once) and whether it is
  /// one of the rounds after the probe.
  uint64_t round = 0;
  bool final = false;
  /// The process asked: its node, pid and start number (its history file
  /// `<node>.<start>.jsonl`).
  std::string node;
  int64_t pid = 0;
  uint64_t start = 0;
  /// False when the node gave no view; `error` says why.
  bool answered = false;
  std::string error;
  /// The answer: the node's own unique address, its cluster's incarnation
  /// ("" when the answer has none) and the members in its order.
  std::string self;
  std::string incarnation;
  std::vector<listed_member> members;

  /// The addresses of the members of its cluster: every listed member but
  /// those `down` or `removed` (a down member is on its way out).
  std::set<std::string> cluster() const;

  /// True when `self` is in `cluster()`: the node is a member of a cluster.
  /// A node that has not joined yet has an empty view; one that was downed
  /// lists itself as down.
  bool in_cluster() const;

  /// The members by address.
  std::map<std::string, listed_member> by_address() const;
};

/// Parses views.jsonl. Problems name the line (`views.jsonl line N: ...`):
/// not a JSON object, a field missing or of the wrong type (`mono_ns`,
/// `sent_ns` stamps > 0 and sent_ns <= mono_ns, `round`, `final`, `node`,
/// `pid`, `start`; then either a string `error` or a string `self`, an
/// optional string `incarnation` and an array `members` of objects with
/// string `address` and `status` and boolean `reachable`). A malformed
/// line is left out.
std::vector<view_record> parse_views(std::string_view text,
                                     std::vector<std::string>& problems);

} // namespace troupe::chaos
