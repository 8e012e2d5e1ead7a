#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "chaos_check_result.hpp"
#include "chaos_checker.hpp"
#include "chaos_history.hpp"

/// @file
/// I4's membership checks (docs/design/chaos.md, "I4"): one membership
/// view on every live node at the end, and never two clusters at once
/// while the run is quiet. Which processes are live comes from the
/// driver's own records (nemesis.jsonl's node_start, kill and node_exit),
/// never from a node's report; what each one's view is comes from
/// views.jsonl, and the checker compares the views itself. Pure.

namespace troupe::chaos {

/// One node process' life as nemesis.jsonl tells it: from its node_start
/// to the first kill or node_exit of its pid (`to_ns` the largest int64
/// while it still ran at the end of the file).
struct process_life {
  std::string node;
  int64_t pid = 0;
  uint64_t start = 0;
  int64_t from_ns = 0;
  int64_t to_ns = std::numeric_limits<int64_t>::max();

  /// True when it lived from `from` through `to`.
  bool lives(int64_t from, int64_t to) const noexcept {
    return from_ns <= from && to < to_ns;
  }
};

/// Every process' life, in node_start order (a second node_start of the
/// same node and start is left out).
std::vector<process_life> process_lives(const chaos_history& h);

/// A stretch of the run in which no node fault is active and nothing
/// happened to a node for `quiet_after` before: [from_ns, to_ns).
struct quiet_period {
  int64_t from_ns = 0;
  int64_t to_ns = 0;
};

/// The quiet periods of the run, in order. Node events are node_start,
/// kill, node_exit, pause, resume, partition, heal, links_slow, links_fast
/// and majority_restart; a fault is active from its start to its end
/// (kill to the node's next node_start, pause to resume or the process'
/// node_exit, partition to its heal or heal 0, links_slow to links_fast or
/// heal 0). etcd's faults and lease_delete do not touch membership and
/// are not counted. A period starts `quiet_after` (run_start's
/// quiet_after_ms) after the last node event when no fault is active then
/// and ends at the next node event or at run_end. Nothing is quiet before
/// the first node event or without a run_start.
std::vector<quiet_period> quiet_periods(const chaos_history& h);

/// Each history file's address -> the name of its process, `node-3.2`
/// (the file `node-3.2.jsonl`), for the checks' words.
std::map<std::string, std::string> process_names(const chaos_history& h);

/// A view in words: `{node-1.1 up, node-2.1 joining unreachable}` (a
/// member with no history file by its address; `incarnation X` appended
/// when the view has one).
std::string view_words(const view_record& r,
                       const std::map<std::string, std::string>& names);

/// Where a views.jsonl record stands.
event_ref ref(const view_record& r);

/// The process a record asked, as `node-3.2`.
std::string asked(const view_record& r);

/// A stamp as seconds from run_start, `+12.345s` (chaos_timeline.hpp's
/// run_origin).
std::string at_words(const chaos_history& h, int64_t mono_ns);

/// Answers in groups of one cluster each: two answers are in one group
/// when a chain of answers links them, each linked to the next by a
/// common member of their `cluster()`s and incarnations that do not
/// differ (either may have none). Groups in the order of their first
/// answer, answers in input order.
std::vector<std::vector<const view_record*>>
clusters_of(const std::vector<const view_record*>& rs);

/// `node-1.1 and node-2.1 see {...}; node-3.1 sees {...}`: each group's
/// processes and the view of its first answer.
std::string
groups_words(const std::vector<std::vector<const view_record*>>& groups,
             const std::map<std::string, std::string>& names);

/// `I4 one membership view`: views.jsonl has a final round; every process
/// that nemesis.jsonl shows live when the round started answered it; all
/// their views list the same members with the same status and
/// reachability and incarnation; every member is up and reachable, every
/// live process' own address is a member, and every member is a live
/// process. A violation names the nodes and their views (two disjoint
/// views: two clusters). Counts the samples, rounds and live nodes.
check_result check_final_view(const chaos_history& h, chaos_summary& s);

/// `I4 no two clusters when quiet`: in each round, among the answers of
/// live processes that are members of a cluster (`in_cluster`) and whose
/// request and answer both fall in one quiet period, no two form
/// different clusters: they are linked when their clusters share a member
/// and their incarnations do not differ (either may have none), and all
/// of them must be linked into one group. Different statuses of the same
/// members (a join or a removal spreading) are fine. Counts the rounds
/// judged and the quiet time.
check_result check_quiet_views(const chaos_history& h, chaos_summary& s);

} // namespace troupe::chaos
