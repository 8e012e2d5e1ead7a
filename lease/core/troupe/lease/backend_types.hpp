#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "troupe/runtime/clock.hpp"
#include "troupe/runtime/text_escape.hpp"

/// @file
/// What the lease actor asks a backend and what a backend answers. Raw
/// answers; `classify` (outcome.hpp) turns them into meaning.

namespace troupe::lease {

using runtime::timespan;
using runtime::timestamp;

/// The three operations a backend implements.
enum class backend_op : uint8_t { acquire, renew, release };

/// "acquire", "renew" or "release".
std::string_view to_string(backend_op x) noexcept;

/// One backend call.
///
/// `acquisition` identifies one acquisition of this lease by this owner: a
/// random 64-bit number drawn per acquire() sequence. Backends that can store
/// it (in-memory, file) use it to make a retried acquire idempotent and to
/// give a *new* acquisition by the same owner a new fencing token.
/// `token` is the fencing token the caller holds (renew, release; 0 when
/// acquiring).
struct backend_request {
  std::string name;
  std::string owner;
  timespan ttl{0};
  uint64_t acquisition = 0;
  uint64_t token = 0;
};

/// The raw status of a backend call.
enum class backend_status : uint8_t {
  /// The write took effect: acquire/renew now name the caller with `token`;
  /// release removed the caller's record.
  ok,
  /// The record names a current (unexpired) holder in `holder` and the write
  /// did not take effect. The holder may be the caller itself: a reply to an
  /// earlier write of ours was lost (a "self-conflict").
  held,
  /// There is no current record (never created, expired, or deleted).
  not_found,
  /// Concurrent modification without a known holder (optimistic concurrency
  /// lost): re-read and retry.
  conflict,
  /// No usable answer: unreachable, timeout, 5xx. The write may or may not
  /// have taken effect.
  unavailable,
  /// The backend refused the call (permissions, bad request, unsupported
  /// name); retrying will not help.
  rejected,
};

/// "ok", "held", ...
std::string_view to_string(backend_status x) noexcept;

/// The quoting helpers of runtime/text_escape.hpp, used for what a store or
/// server wrote (a holder name, a body) in a `detail` or a log line.
using runtime::escape_controls;
using runtime::escape_for_message;

/// A backend's answer.
///
/// - `holder`, `token`, `acquisition`: the record as the backend saw it
///   (after the write for `ok`). `acquisition` is 0 when the backend does not
///   store it.
/// - `detail`: human-readable context for logs and errors, e.g.
///   `etcd answered HTTP 503 at 127.0.0.1:2379`. Never contains secrets.
/// - `retry_after`: the store asked the client to wait this long before the
///   next call (HTTP 429/503 `Retry-After`, Kubernetes
///   `details.retryAfterSeconds`); 0 when it did not. The lease actor waits
///   at least this long before retrying (bounded by the local deadline).
/// - `token_scope`: what the token is counted within, when the store can
///   restart its counter (the Kubernetes Lease object's `metadata.uid`:
///   deleting and re-creating the object starts a new sequence). Empty for
///   stores whose counter never restarts (in-memory, file, etcd).
struct backend_reply {
  backend_status status = backend_status::unavailable;
  std::string holder;
  uint64_t token = 0;
  uint64_t acquisition = 0;
  std::string detail;
  timespan retry_after{0};
  std::string token_scope;
};

} // namespace troupe::lease
