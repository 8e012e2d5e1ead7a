#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// The Kubernetes API server's `Status` body (apimachinery `metav1.Status`),
/// which it sends with every error answer (backends-notes.md §2.4), as a
/// value and its parser. Shared by every troupe client of the Kubernetes API
/// (the lease backend, the kubernetes_api contact-point discovery). Pure;
/// free functions over values.

namespace troupe::runtime {

/// The fields of a `Status` troupe reads: `code`, `reason` (e.g. Conflict,
/// AlreadyExists, NotFound, Invalid, Forbidden, Unauthorized,
/// TooManyRequests), `message`, `details.retryAfterSeconds` (capped at one
/// hour).
struct kubernetes_status {
  int64_t code = 0;
  std::string reason;
  std::string message;
  std::chrono::seconds retry_after{0};
};

/// Parses a `Status` body (a JSON object with `kind` "Status", at most
/// 1 MiB). Total: any byte string yields a value or an error
/// (errc::http_malformed_response) saying why the body is not one
/// (malformed JSON at offset N, not an object, kind is not "Status").
expected<kubernetes_status> parse_kubernetes_status(std::string_view json);

/// The server's message for an error message: the Status body's `message`
/// with control bytes escaped, or `(no Status body: WHY)` when the body is
/// not a Status.
std::string kubernetes_status_text(std::string_view json);

} // namespace troupe::runtime
