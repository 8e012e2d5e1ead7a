#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/kubernetes_status.hpp"

/// @file
/// The pure part of the Kubernetes lease backend: the `coordination.k8s.io/v1`
/// Lease object as a value, its parser and writer, MicroTime, DNS-1123
/// names, and the client-go expiry rule.
///
/// Semantics follow the real API server and client-go (backends-notes.md §2):
/// - `resourceVersion` is an opaque string, compared for equality only.
/// - MicroTime is written as `2006-01-02T15:04:05.000000Z` (exactly six
///   fractional digits, UTC), the only layout the server's decoder accepts.
/// - Expiry is judged by local observation only (client-go
///   `tryAcquireOrRenew`): a record is expired when it has not changed for
///   its `leaseDurationSeconds`, measured on the reader's monotonic clock from
///   the moment the reader first saw its current `resourceVersion`.
///   `renewTime` and `acquireTime` are written for humans and never compared
///   with a local clock (scenario L8; Akka's Kubernetes lease does compare
///   them and can be stolen under clock skew).
///
/// Every parser is total: any byte string yields a value or an error whose
/// message names the field that was wrong; nothing throws or asserts
/// (fuzzed: test/fuzz). Thread-safety: free functions over values.

namespace troupe::lease {

/// The annotation in which troupe records the acquisition id (hex) of the
/// current holder, so that a retried acquire whose reply was lost recognises
/// its own write, and a second process with the same holder identity does
/// not.
inline constexpr std::string_view kubernetes_acquisition_annotation
  = "troupe.io/acquisition";

/// The fields of a Lease troupe reads. Absent optional fields are
/// `std::nullopt` (the API marks every spec field optional).
struct kubernetes_lease_object {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::string resource_version;
  /// `metadata.annotations["troupe.io/acquisition"]` parsed as hex; 0 when
  /// absent or not a troupe holder.
  uint64_t acquisition = 0;
  std::optional<std::string> holder_identity;
  std::optional<int64_t> lease_duration_seconds;
  std::optional<int64_t> lease_transitions;
  std::optional<std::string> acquire_time;
  std::optional<std::string> renew_time;
  /// The whole object as the server sent it: writes start from it, so
  /// fields troupe does not know (labels, newer spec fields) survive.
  std::string raw;

  /// The holder, or "" when there is none (absent, null or empty).
  std::string holder() const {
    return holder_identity.value_or(std::string{});
  }
};

/// Parses a Lease object (`kind` Lease, `metadata.name` and
/// `metadata.resourceVersion` non-empty strings). Errors name the field:
/// malformed JSON, wrong types, a negative or out-of-range
/// `leaseDurationSeconds` or `leaseTransitions` (int32 in the API), a
/// non-string holder, a string that is not UTF-8 (raw bytes or an escaped
/// lone UTF-16 surrogate such as `\udc00`). Everything parsed renders back.
runtime::expected<kubernetes_lease_object>
parse_kubernetes_lease(std::string_view json);

/// The API server's `Status` body and its parser
/// (runtime/kubernetes_status.hpp, shared with the other Kubernetes API
/// clients).
using runtime::kubernetes_status;
using runtime::parse_kubernetes_status;

/// What troupe writes into a Lease.
struct kubernetes_lease_write {
  std::string name;
  std::string namespace_name;
  /// Sent as `metadata.resourceVersion` (precondition of a PUT); empty for
  /// a POST.
  std::string resource_version;
  /// "" writes an empty holder (release).
  std::string holder_identity;
  int64_t lease_duration_seconds = 0;
  int64_t lease_transitions = 0;
  /// MicroTime strings; `acquire_time` empty keeps the base's value.
  std::string acquire_time;
  std::string renew_time;
  /// Written to the acquisition annotation; 0 removes it.
  uint64_t acquisition = 0;
};

/// The JSON body of a POST or PUT: `base` (a raw Lease from the server, or
/// empty for a new object) with the fields of `w` set. Unknown fields of
/// `base` are kept; server-managed fields (`managedFields`) are dropped.
/// Fails only when `base` is not a JSON object.
runtime::expected<std::string>
render_kubernetes_lease(std::string_view base, const kubernetes_lease_write& w);

/// MicroTime text of `t`: UTC, exactly six fractional digits, `Z`.
std::string format_micro_time(std::chrono::system_clock::time_point t);

/// Parses MicroTime (six fractional digits, `Z` or `+hh:mm`/`-hh:mm`).
runtime::expected<std::chrono::system_clock::time_point>
parse_micro_time(std::string_view text);

/// Checks a DNS-1123 subdomain (Kubernetes object names): 1..253
/// characters, lowercase alphanumerics, '-' and '.', each dot-separated
/// label starting and ending with an alphanumeric. The error names the
/// offending character or rule; nothing is truncated or mapped.
runtime::error validate_dns1123_subdomain(std::string_view name,
                                          std::string_view what);

/// A reader's observation of one Lease record (client-go's `observedRecord`
/// plus `observedTime`).
struct kubernetes_observation {
  std::string resource_version;
  runtime::timestamp since{};
};

/// Updates `obs` with a freshly read record at local time `now`: when the
/// resourceVersion differs from the observed one, the record changed and
/// the observation restarts at `now`.
void observe(kubernetes_observation& obs, const kubernetes_lease_object& x,
             runtime::timestamp now);

/// True if the record names a holder that is still live by the reader's
/// observation: it has not been unchanged for `duration` yet. `duration`
/// is the record's `leaseDurationSeconds` when positive, else `fallback`
/// (the reader's own ttl), so that a record without a valid duration is
/// never judged expired early.
bool held_by_observation(const kubernetes_lease_object& x,
                         const kubernetes_observation& obs,
                         runtime::timestamp now, runtime::timespan fallback);

} // namespace troupe::lease
