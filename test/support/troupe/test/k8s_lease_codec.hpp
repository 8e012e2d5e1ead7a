#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "troupe/test/k8s_status.hpp"

/// @file
/// JSON decoding, validation and rendering of `coordination.k8s.io/v1`
/// Lease objects for the Lease API emulator, following the apiserver's Go
/// code (read, not run; sources on each function). Pure: no I/O, no clock.

namespace troupe::test {

/// `LeaseSpec`'s known fields, parsed (all optional pointers in Go).
/// MicroTimes are kept in the canonical form the apiserver writes
/// (`2006-01-02T15:04:05.000000Z`, UTC). `strategy` and `preferredHolder`
/// are the Coordinated Leader Election fields (validated as if the feature
/// gate were on).
struct k8s_lease_spec {
  std::optional<std::string> holder_identity;
  std::optional<int32_t> lease_duration_seconds;
  std::optional<std::string> acquire_time;
  std::optional<std::string> renew_time;
  std::optional<int32_t> lease_transitions;
  std::optional<std::string> strategy;
  std::optional<std::string> preferred_holder;

  friend bool operator==(const k8s_lease_spec&, const k8s_lease_spec&)
    = default;
};

/// A stored Lease as the emulator keeps and renders it.
///
/// - `resource_version`: the emulator's global counter at the last write, a
///   decimal string (clients must treat it as opaque).
/// - `creation_timestamp`: RFC 3339 with seconds (`metav1.Time`), UTC.
/// - `labels`, `annotations`: the JSON object text as the client sent it
///   (re-serialized), or empty when absent.
/// - `spec_json`: the spec as stored and returned: the known fields in the
///   Go struct's order (MicroTimes canonical, nulls dropped), then every
///   other field the client sent, in its order (a real apiserver drops
///   fields it does not know; the emulator keeps them to model a newer
///   server whose fields the client does not know).
struct k8s_lease {
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string creation_timestamp;
  std::string labels;
  std::string annotations;
  k8s_lease_spec spec;
  std::string spec_json = "{}";

  /// The object as GET answers it (kind, apiVersion, metadata, spec; no
  /// managedFields), without the trailing newline.
  std::string json() const;
};

/// A decoded request body of kind Lease.
///
/// `name`, `ns`, `uid`, `resource_version` are the metadata strings (empty
/// when absent or null). Other metadata fields (managedFields,
/// ownerReferences, finalizers, generateName...) are ignored.
struct k8s_lease_body {
  std::string name;
  std::string ns;
  std::string uid;
  std::string resource_version;
  std::string labels;
  std::string annotations;
  k8s_lease_spec spec;
  std::string spec_json = "{}";
};

/// Parses a MicroTime value exactly as `metav1.MicroTime.UnmarshalJSON`
/// does, i.e. Go's `time.Parse("2006-01-02T15:04:05.000000Z07:00", v)`:
/// exactly six fractional digits, `Z` or `±hh:mm`. On success `canonical`
/// holds the UTC rendering the apiserver writes back; on failure `error`
/// holds Go's `time.ParseError` text, e.g. `parsing time "2024-05-01T10:00:
/// 00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as
/// ".000000"`.
struct k8s_micro_time {
  std::string canonical;
  std::string error;
};
k8s_micro_time k8s_parse_micro_time(std::string_view value);

/// `IsDNS1123Subdomain`'s messages for `name` (empty when valid): at most
/// 253 characters; lowercase alphanumerics, '-' and '.', starting and
/// ending with an alphanumeric in each dot-separated label.
std::vector<std::string> k8s_dns1123_subdomain_errors(std::string_view name);

/// Decodes a PUT/POST body as the apiserver's JSON decoder does. Errors are
/// 400 BadRequest Status values whose message starts like the apiserver's
/// (`transformDecodeError`): malformed JSON gives `the object provided is
/// unrecognized (must be of type Lease): couldn't get version/kind; json
/// parse error: ...`; a field of the wrong type or a bad MicroTime gives
/// `Lease in version "v1" cannot be handled as a Lease: ...`; another
/// apiVersion gives `the API version in the data (X) does not match the
/// expected API version (coordination.k8s.io/v1)`. The text after the last
/// colon imitates Go's `encoding/json` and `time` errors; malformed-JSON
/// texts are approximations of Go's.
std::variant<k8s_lease_body, k8s_status>
k8s_decode_lease(std::string_view body);

/// `ValidateLease`'s spec part (pkg/apis/coordination/validation):
/// leaseDurationSeconds > 0, leaseTransitions >= 0, strategy one of
/// "OldestEmulationVersion" (or a qualified name with '/'), preferredHolder
/// only with a strategy.
std::vector<k8s_status_cause> k8s_validate_lease_spec(const k8s_lease_spec&);

/// `ValidateObjectMeta`'s name rule: Required when empty, else one
/// FieldValueInvalid cause per `k8s_dns1123_subdomain_errors` message.
std::vector<k8s_status_cause> k8s_validate_lease_name(std::string_view name);

/// DeleteOptions preconditions (`{"preconditions":{"uid":..,
/// "resourceVersion":..}}`); absent fields are nullopt.
struct k8s_delete_preconditions {
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
};

/// Decodes a DELETE body (empty: no preconditions). Malformed JSON is a 500
/// without reason, as the delete handler passes the decoder's error through.
std::variant<k8s_delete_preconditions, k8s_status>
k8s_decode_delete_options(std::string_view body);

/// Applies a JSON merge patch (RFC 7386) to `target` (a JSON object text).
/// A patch that is not valid JSON is a 400 BadRequest.
std::variant<std::string, k8s_status> k8s_merge_patch(std::string_view target,
                                                      std::string_view patch);

/// Renders a LeaseList (`items` without kind/apiVersion, as the apiserver
/// writes list items), with `metadata.resourceVersion`.
std::string k8s_render_lease_list(const std::vector<const k8s_lease*>& items,
                                  std::string_view resource_version);

} // namespace troupe::test
