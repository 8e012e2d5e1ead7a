#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/runtime/http_types.hpp"

/// @file
/// The Kubernetes `Status` error body (apimachinery `metav1.Status`) and the
/// apiserver's error constructors (`k8s.io/apimachinery/pkg/api/errors`), as
/// the Lease API emulator (k8s_api_emulator.hpp) answers them. Pure values:
/// no I/O, no clock.
///
/// Every message text follows the Go source named on each factory (read from
/// kubernetes/kubernetes, not run against a cluster); backends-notes.md §2.4
/// quotes the ones also seen in logs of real clusters.

namespace troupe::test {

/// The group and resource the emulator serves.
inline constexpr std::string_view k8s_lease_group = "coordination.k8s.io";
inline constexpr std::string_view k8s_lease_resource = "leases";
inline constexpr std::string_view k8s_lease_kind = "Lease";
inline constexpr std::string_view k8s_lease_api_version
  = "coordination.k8s.io/v1";

/// One entry of `details.causes`: `reason` is the cause type (e.g.
/// `FieldValueInvalid`), `message` the field error's body (e.g. `Invalid
/// value: 0: must be greater than 0`), `field` its path (e.g.
/// `spec.leaseDurationSeconds`).
struct k8s_status_cause {
  std::string reason;
  std::string message;
  std::string field;
};

/// A `metav1.Status`. Rendered as the apiserver's JSON encoder writes it:
/// keys in the Go struct's order (kind, apiVersion, metadata, status,
/// message, reason, details, code), empty fields left out (`omitempty`),
/// `<`, `>`, `&` escaped as `\u003c`..., and a trailing newline.
///
/// `details` is written when `has_details` is set (as `{}` when all its
/// fields are empty: the apiserver's generic 404 and 405 bodies).
struct k8s_status {
  uint16_t code = 0;
  std::string status = "Failure";
  std::string message;
  std::string reason;
  bool has_details = false;
  std::string details_name;
  std::string details_group;
  std::string details_kind;
  std::string details_uid;
  std::vector<k8s_status_cause> causes;
  /// `details.retryAfterSeconds` (0 is left out, as in Go).
  int32_t retry_after_seconds = 0;

  /// The JSON body (with the trailing newline Go's encoder writes).
  std::string render() const;
};

/// An answer of the emulated apiserver before the HTTP layer adds
/// Content-Type and the like: status code, body, extra headers.
struct k8s_reply {
  uint16_t status = 200;
  std::string body;
  std::vector<runtime::http_header> headers;
  /// `application/json` unless set (e.g. `text/plain` for /healthz).
  std::string content_type = "application/json";
};

/// A reply carrying `s` (code and rendered body).
k8s_reply to_reply(const k8s_status& s);

// -- the apiserver's errors (apimachinery api/errors/errors.go) ---------------

/// 404 NotFound: `leases.coordination.k8s.io "NAME" not found`, details
/// {name, group, kind: leases}.
k8s_status k8s_not_found(std::string_view name);

/// 404 NotFound for a missing namespace (NamespaceLifecycle admission):
/// `namespaces "NS" not found`, details {name, kind: namespaces}.
k8s_status k8s_namespace_not_found(std::string_view ns);

/// 409 AlreadyExists: `leases.coordination.k8s.io "NAME" already exists`.
k8s_status k8s_already_exists(std::string_view name);

/// 409 Conflict: `Operation cannot be fulfilled on QUALIFIED "NAME": WHY`,
/// details {name, group, kind}. `qualified_kind` is `leases` for the
/// storage's conflicts and `Lease` for the delete preconditions
/// (rest/delete.go uses the kind there).
k8s_status k8s_conflict(std::string_view qualified_kind, std::string_view name,
                        std::string_view why);

/// The optimistic-lock text of store.go (`OptimisticLockErrorMsg`).
inline constexpr std::string_view k8s_optimistic_lock_message
  = "the object has been modified; please apply your changes to the latest "
    "version and try again";

/// 409 Conflict with `k8s_optimistic_lock_message` (§2.4's exact body).
k8s_status k8s_stale_conflict(std::string_view name);

/// 422 Invalid: `QUALIFIED "NAME" is invalid: ERRS` where ERRS is the one
/// cause `field: message` or `[a, b]` for several (Go's aggregate, duplicates
/// dropped); details {name, group, kind, causes}. `kind` is `Lease` for
/// validation errors and `leases` for the storage's resourceVersion checks.
k8s_status k8s_invalid(std::string_view kind, std::string_view name,
                       std::vector<k8s_status_cause> causes);

/// 400 BadRequest with `message` and no details.
k8s_status k8s_bad_request(std::string message);

/// 401 Unauthorized: message and reason `Unauthorized`, no details.
k8s_status k8s_unauthorized();

/// 403 Forbidden, the authorization filter's shape:
/// `leases.coordination.k8s.io "NAME" is forbidden: User "USER" cannot VERB
/// resource "leases" in API group "coordination.k8s.io" in the namespace
/// "NS"`; without a name (create, list) the quoted name is left out; without
/// a namespace it ends `at the cluster scope`.
k8s_status k8s_forbidden(std::string_view user, std::string_view verb,
                         std::string_view ns, std::string_view name);

/// 403 Forbidden for any resource: `RESOURCE[.GROUP][ "NAME"] is forbidden:
/// User "USER" cannot VERB resource "RESOURCE" in API group "GROUP" in the
/// namespace "NS"`; details {name, group, kind: RESOURCE} with empty fields
/// left out. For the core group (`group` ""), e.g. listing pods:
/// `pods is forbidden: User "system:serviceaccount:default:default" cannot
/// list resource "pods" in API group "" in the namespace "default"`, details
/// {kind: pods} (the authorization filter, endpoints/filters/
/// authorization.go, and apimachinery errors.NewForbidden).
k8s_status k8s_forbidden_resource(std::string_view user, std::string_view verb,
                                  std::string_view resource,
                                  std::string_view group, std::string_view ns,
                                  std::string_view name);

/// 403 Forbidden of a PUT that would create (handlers/update.go
/// `withAuthorization`): `leases.coordination.k8s.io "NAME" is forbidden: `
/// followed by the authorizer's reason, which RBAC leaves empty.
k8s_status k8s_forbidden_create_on_update(std::string_view name);

/// 415 UnsupportedMediaType: `the body of the request was in an unknown
/// format - accepted media types include: A, B` (no details).
k8s_status k8s_unsupported_media_type(const std::vector<std::string>& accepted);

/// 413 RequestEntityTooLarge: `Request entity too large: limit is N`.
k8s_status k8s_entity_too_large(uint64_t limit);

/// 404 NotFound of an unknown path: `the server could not find the requested
/// resource`, details `{}`.
k8s_status k8s_path_not_found();

/// 405 MethodNotAllowed: `the server does not allow this method on the
/// requested resource`, details `{}`.
k8s_status k8s_method_not_allowed();

/// An error that is not an API status (Go `ErrorToAPIStatus`): code 500, no
/// reason, no details, `message` verbatim.
k8s_status k8s_unknown_error(std::string message);

/// A server-side failure as injected by a fault, shaped like the apiserver's
/// own for that code: 500 InternalError (`Internal error occurred: M`,
/// details.causes [{message M}]), 503 ServiceUnavailable, 504 Timeout
/// (`Timeout: M`), 429 TooManyRequests, 409 Conflict (the optimistic-lock
/// text for `name`), anything else without a reason. `message` empty: the
/// default text of that code. `retry_after_seconds` > 0 goes into details.
k8s_status k8s_server_error(uint16_t code, std::string_view name,
                            std::string message, int32_t retry_after_seconds);

/// Go's `json.Marshal` string escaping on top of RapidJSON's output: `<`,
/// `>`, `&`, U+2028 and U+2029 become `\u003c`... (they only occur inside
/// strings, so the whole document can be rewritten).
std::string k8s_escape_html(std::string json);

} // namespace troupe::test
