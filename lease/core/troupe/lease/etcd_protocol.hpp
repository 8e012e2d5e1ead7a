#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/lease/backend_types.hpp"
#include "troupe/runtime/error.hpp"
#include "troupe/runtime/secret.hpp"

/// @file
/// The etcd v3 JSON gateway protocol as the etcd lease backend speaks it:
/// request bodies and response parsers, pure (no I/O). Shapes are the ones
/// measured on etcd 3.4.23 (backends-notes.md §1):
///
/// - every RPC is a `POST` of one JSON object under `/v3/`;
/// - bytes fields (keys, values) are base64 (standard alphabet, padded);
/// - int64 fields come back as JSON strings (`"ID":"2324035695445400582"`);
///   lease IDs exceed 2^53, so they are never read through `double`. The
///   builders write int64 values as strings, which etcd accepts;
/// - zero values are left out of responses: a failed txn has no
///   `succeeded`, a keepalive for an expired lease has no `TTL`;
/// - errors come in two shapes: unary `{"error":"...","message":"...",
///   "code":N}` with a mapped HTTP status, and the streaming (keepalive)
///   shape `{"error":{"grpc_code":14,"http_code":503,"message":"...",
///   "http_status":"..."}}`, which can arrive with HTTP 200.
///
/// Robustness: every parser accepts arbitrary bytes and never crashes or
/// asserts (they are fuzzed): bodies above `max_body_bytes` are refused,
/// JSON is parsed iteratively (no recursion, so nesting depth is bounded
/// only by the size bound), and every member's type is checked before it is
/// read. Errors are lease errc::backend_unavailable values whose message
/// names the response and the field, e.g. `etcd txn response: field
/// "responses[0].response_range.kvs[0].create_revision": not an int64:
/// "abc"`. Messages quote at most a short, escaped piece of the input, and
/// never any part of an authenticate response (it holds a token).
///
/// Thread-safety: free functions over values; safe from any thread.

namespace troupe::lease::etcd {

/// The largest response body the parsers accept (1 MiB; etcd's own request
/// limit is 1.5 MiB and lease responses are a few hundred bytes).
inline constexpr size_t max_body_bytes = size_t{1} << 20;

// -- paths --------------------------------------------------------------------

inline constexpr std::string_view grant_path = "/v3/lease/grant";
inline constexpr std::string_view keepalive_path = "/v3/lease/keepalive";
inline constexpr std::string_view revoke_path = "/v3/lease/revoke";
inline constexpr std::string_view txn_path = "/v3/kv/txn";
inline constexpr std::string_view range_path = "/v3/kv/range";
inline constexpr std::string_view authenticate_path = "/v3/auth/authenticate";

// -- encoding helpers ---------------------------------------------------------

/// Standard base64 (RFC 4648 §4) with padding, as etcd's gateway writes it.
std::string base64_encode(std::string_view bytes);

/// Decodes standard, padded base64. Errors name the offset and the problem
/// (a character outside the alphabet, a length that is not a multiple of 4,
/// misplaced padding); the message never quotes the input.
runtime::expected<std::string> base64_decode(std::string_view text);

/// Parses a decimal int64 (optional leading '-', no spaces, no '+', no
/// fraction). Errors quote the text (escaped, at most 40 bytes).
runtime::expected<int64_t> parse_int64(std::string_view text);

/// True if `text` is well-formed UTF-8 (no overlong forms, no surrogates,
/// at most U+10FFFF).
bool is_valid_utf8(std::string_view text) noexcept;

/// See backend_types.hpp.
using lease::escape_for_message;

// -- request bodies -----------------------------------------------------------

/// `{"TTL":"<ttl_seconds>"}` for /v3/lease/grant.
std::string grant_request(int64_t ttl_seconds);

/// `{"ID":"<lease_id>"}` for /v3/lease/keepalive and /v3/lease/revoke.
std::string lease_id_request(int64_t lease_id);

/// The acquire transaction: create `key` with `value` attached to
/// `lease_id` if the key does not exist (`create_revision == 0`), otherwise
/// read it:
/// ```json
/// {"compare":[{"key":K,"result":"EQUAL","target":"CREATE",
///              "create_revision":"0"}],
///  "success":[{"request_put":{"key":K,"value":V,"lease":"<id>"}}],
///  "failure":[{"request_range":{"key":K}}]}
/// ```
std::string acquire_txn_request(std::string_view key, std::string_view value,
                                int64_t lease_id);

/// The guarded release: delete `key` only if its value is `value` and it is
/// attached to `lease_id`; otherwise read it (for the log):
/// ```json
/// {"compare":[{"key":K,"result":"EQUAL","target":"VALUE","value":V},
///             {"key":K,"result":"EQUAL","target":"LEASE","lease":"<id>"}],
///  "success":[{"request_delete_range":{"key":K}}],
///  "failure":[{"request_range":{"key":K}}]}
/// ```
std::string release_txn_request(std::string_view key, std::string_view value,
                                int64_t lease_id);

/// `{"key":K}` for /v3/kv/range (a linearizable read of one key).
std::string range_request(std::string_view key);

/// `{"name":"<user>","password":"<password>"}` for /v3/auth/authenticate.
/// The result holds the password: never log it.
std::string authenticate_request(std::string_view user,
                                 const runtime::secret& password);

// -- responses ----------------------------------------------------------------

/// One key-value pair of a range response (bytes decoded). Absent int64
/// fields are 0 (etcd leaves zero values out): `lease` 0 = no lease.
struct kv {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;

  friend bool operator==(const kv&, const kv&) = default;
};

/// /v3/lease/grant: the lease ID and the TTL etcd granted (seconds; etcd
/// silently raises values below its minimum).
struct grant_response {
  int64_t id = 0;
  int64_t ttl = 0;
};

/// /v3/kv/txn: whether the compare held (`succeeded`, absent = false), the
/// store's revision after the txn (`header.revision`; on success this is
/// the revision of the txn's writes, e.g. the put's), the kvs of range
/// responses in order, and the count of deleted keys.
struct txn_response {
  bool succeeded = false;
  int64_t revision = 0;
  std::vector<kv> range_kvs;
  int64_t deleted = 0;
};

/// /v3/lease/keepalive: the lease ID and its TTL after the keepalive
/// (seconds; 0 = `TTL` absent: the lease is gone).
struct keepalive_response {
  int64_t id = 0;
  int64_t ttl = 0;
};

/// An error body of either shape. `http_code` is 0 for the unary shape
/// (its status is the HTTP response's); `grpc_code` is the gRPC status
/// code (`code` in the unary shape), -1 when absent.
struct error_body {
  int grpc_code = -1;
  int http_code = 0;
  std::string message;
};

/// Parses a grant response; requires `ID` (non-zero) and `TTL` (> 0).
runtime::expected<grant_response> parse_grant_response(std::string_view body);

/// Parses a txn response; requires `header.revision`. Each element of
/// `responses` must hold `response_put`, `response_range` or
/// `response_delete_range`.
runtime::expected<txn_response> parse_txn_response(std::string_view body);

/// Parses a /v3/kv/range response: its kvs (none for a missing key, which
/// etcd answers without `kvs`).
runtime::expected<std::vector<kv>> parse_range_response(std::string_view body);

/// Parses the first JSON object of a keepalive response (the body holds one
/// `{"result":{...}}` line per request object); requires `result.ID`. A
/// body holding the streaming error shape is an error naming etcd's
/// message (classify_answer sees it first in the backend).
runtime::expected<keepalive_response>
parse_keepalive_response(std::string_view body);

/// Parses an authenticate response; requires a non-empty `token` string.
/// Error messages never quote the body.
runtime::expected<runtime::secret>
parse_authenticate_response(std::string_view body);

/// Parses an error body of either shape (for keepalive: its first line).
/// Missing members are defaults; `message` falls back to `error` when it
/// is a string. Errors when the body is not a JSON object with an `error`
/// member (e.g. the text/plain `404 page not found` of an unknown path).
runtime::expected<error_body> parse_error_body(std::string_view body);

// -- classification -----------------------------------------------------------

/// What an etcd answer means to the backend (before the body is parsed).
enum class answer_kind : uint8_t {
  ok,                ///< 2xx without an error body: parse the response
  unauthenticated,   ///< 401 / code 16 (`invalid auth token`: expired,
                     ///< bad, or sent while auth is disabled)
  user_name_empty,   ///< 400 `user name is empty`: auth is on, no token
  auth_not_enabled,  ///< 412 `authentication is not enabled`
  lease_not_found,   ///< 404 `requested lease not found`
  permission_denied, ///< 403 / code 7
  unavailable,       ///< 5xx, 408, 429, or a 2xx carrying a 5xx
                     ///< stream error; also anything unexpected (1xx, 3xx)
  rejected,          ///< any other 4xx: retrying will not help
};

/// "ok", "unauthenticated", ...
std::string_view to_string(answer_kind x) noexcept;

/// A classified answer: the kind and, when the body held one, the error.
struct answer {
  answer_kind kind = answer_kind::unavailable;
  /// The HTTP status that decided: the response's, or a stream error's
  /// `http_code` inside a 2xx body.
  uint16_t status = 0;
  std::optional<error_body> error;
};

/// Classifies an HTTP answer of etcd's gateway (backends-notes.md §1.6):
/// the status first, then the message for the 400/404/412 cases that need
/// it. A 2xx body whose first line is the streaming error shape is
/// classified by that error's `http_code` (or its gRPC code when the HTTP
/// code is missing). Never fails: an unparseable error body just leaves
/// `error` empty.
answer classify_answer(uint16_t http_status, std::string_view body);

} // namespace troupe::lease::etcd
