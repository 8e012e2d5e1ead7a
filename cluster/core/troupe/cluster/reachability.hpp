#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "troupe/runtime/unique_address.hpp"

/// @file
/// Who can reach whom: Akka Cluster's `Reachability` table.

namespace troupe::cluster {

using runtime::unique_address;

/// What an observer's failure detector says about a subject.
enum class reachability_status : uint8_t {
  reachable = 0,
  unreachable,
  /// The subject is known to be gone for good (e.g. quarantined by the
  /// transport); it stays terminated for this observer until removed.
  terminated,
};

/// "reachable", "unreachable" or "terminated".
const char* to_string(reachability_status x) noexcept;

/// One observation: `observer` sees `subject` as `status`, written when the
/// observer's version was `version`.
struct reachability_record {
  unique_address observer;
  unique_address subject;
  reachability_status status = reachability_status::reachable;
  uint64_t version = 0;

  friend bool operator==(const reachability_record&, const reachability_record&)
    = default;
};

template <class Inspector>
auto inspect(Inspector& f, reachability_record& x) {
  return f(x.observer, x.subject, x.status, x.version);
}

/// The reachability table of a gossip, as Akka's `Reachability`: records
/// (observer, subject, status, version) plus one version per observer.
///
/// Only an observer changes its own records, and every change bumps that
/// observer's version, so the rows with the higher version are the newer
/// ones when two tables merge. Every observer sees every node as reachable
/// by default: when all of an observer's records would say reachable, its
/// rows are dropped (its version stays), so a healthy cluster keeps no
/// records at all. The aggregated status of a subject is terminated if any
/// observer says terminated, else unreachable if any says unreachable,
/// else reachable.
///
/// Records are kept sorted by (observer, subject), so equal tables compare
/// equal with `==`. A plain value; thread-safe as any value. The table does
/// not know which nodes are members: the gossip filters it with its member
/// set (`merge`'s `allowed`, `remove`).
class reachability {
public:
  /// `observer` now sees `subject` as unreachable.
  void unreachable(const unique_address& observer,
                   const unique_address& subject);

  /// `observer` now sees `subject` as reachable again.
  void reachable(const unique_address& observer, const unique_address& subject);

  /// `observer` sees `subject` as terminated (final for this observer).
  void terminated(const unique_address& observer,
                  const unique_address& subject);

  /// The status `observer` has recorded for `subject` (reachable when
  /// there is no record).
  reachability_status status(const unique_address& observer,
                             const unique_address& subject) const;

  /// The aggregated status of `subject` over all observers.
  reachability_status status(const unique_address& subject) const;

  /// True when no observer records `subject` as unreachable or terminated.
  bool is_reachable(const unique_address& subject) const;

  /// True when `observer` has no unreachable/terminated record of
  /// `subject`.
  bool is_reachable(const unique_address& observer,
                    const unique_address& subject) const;

  /// True when there are no records at all.
  bool is_all_reachable() const noexcept {
    return records_.empty();
  }

  /// Subjects some observer sees as unreachable, minus those some observer
  /// sees as terminated (Akka's `allUnreachable`).
  std::set<unique_address> all_unreachable() const;

  /// Subjects some observer sees as unreachable or terminated.
  std::set<unique_address> all_unreachable_or_terminated() const;

  /// Subjects `observer` sees as unreachable (terminated not included).
  std::set<unique_address>
  all_unreachable_from(const unique_address& observer) const;

  /// For every subject some observer sees as unreachable: the observers
  /// that do (Akka's `observersGroupedByUnreachable`; the split brain
  /// resolver uses it to find indirectly connected nodes).
  std::map<unique_address, std::set<unique_address>>
  observers_grouped_by_unreachable() const;

  /// Every observer that has records.
  std::set<unique_address> all_observers() const;

  /// The records of `observer`, ordered by subject.
  std::span<const reachability_record>
  records_from(const unique_address& observer) const;

  /// Drops every record whose observer or subject is in `nodes`, and the
  /// versions of `nodes` (for removed members).
  void remove(const std::set<unique_address>& nodes);

  /// Drops the records and versions of the observers in `nodes` (e.g. to
  /// ignore what downed members observed).
  void remove_observers(const std::set<unique_address>& nodes);

  /// All records, ordered by (observer, subject).
  const std::vector<reachability_record>& records() const noexcept {
    return records_;
  }

  /// The version of every observer that ever recorded something.
  const std::map<unique_address, uint64_t>& versions() const noexcept {
    return versions_;
  }

  friend bool operator==(const reachability&, const reachability&) = default;

  /// Akka's `Reachability.merge`: for each observer in `allowed`, the rows
  /// of the side with the higher observer version, restricted to subjects
  /// in `allowed`; versions are the per-observer maximum, restricted to
  /// `allowed`. Observers not in `allowed` are dropped.
  ///
  /// Difference from Akka: when both sides have the same version for an
  /// observer but different rows (impossible between correct nodes, since
  /// only the observer writes its rows and every write bumps its version),
  /// Akka keeps its second argument's rows; here the lexicographically
  /// larger row set wins, so that the merge is commutative for any input.
  friend reachability merge(const std::set<unique_address>& allowed,
                            const reachability& x, const reachability& y);

  template <class Inspector>
  friend auto inspect(Inspector& f, reachability& x) {
    return f(x.records_, x.versions_);
  }

private:
  void change(const unique_address& observer, const unique_address& subject,
              reachability_status status);

  std::vector<reachability_record> records_;
  std::map<unique_address, uint64_t> versions_;
};

reachability merge(const std::set<unique_address>& allowed,
                   const reachability& x, const reachability& y);

/// Renders one line per record, e.g.
/// `a:1#1 -> b:1#2: unreachable (3)`, records separated by "; ".
std::string to_string(const reachability& x);

} // namespace troupe::cluster
