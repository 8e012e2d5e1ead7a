#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

/// @file
/// DIR/client.log, the load driver's record of what it asked for and what
/// it was told (the verdict's input beside the store's files). One event
/// per line, fields separated by one space, `mono_ns` CLOCK_MONOTONIC in
/// nanoseconds (the store's `mono_ns` uses the same clock):
///
///     <mono_ns> sent <deposit_id> <account> <amount>
///     <mono_ns> acked <deposit_id> <account> <amount> <seq> [<node>]
///     <mono_ns> failed <deposit_id> <reason>
///     <mono_ns> unfinished <deposit_id> <reason>
///
/// `sent`: the first attempt of a deposit went out (retries on other nodes
/// reuse the deposit id and are not logged); `acked`: a node answered 200
/// (`seq`: the account's seq the node reported, 0 if it reported none;
/// `node`: the `host:port` of the app API that answered, which tells a
/// partitioned node's own answers from its successors'; optional);
/// `failed`: every attempt failed (`reason`: the last one, free text to the
/// end of the line); `unfinished`: the client stopped while the deposit
/// waited for a retry (never acknowledged; `reason` names the last
/// attempt). Each deposit has one `sent` and at most one `acked`, `failed`
/// or `unfinished`. Deposit ids and account ids contain no spaces; amounts
/// are positive. Pure.

namespace troupe::demo::client {

/// The kinds of client.log lines.
enum class client_event_kind : uint8_t { sent, acked, failed, unfinished };

/// "sent", "acked", "failed" or "unfinished".
const char* to_string(client_event_kind x) noexcept;

/// One client.log line.
struct client_event {
  int64_t mono_ns = 0;
  client_event_kind kind = client_event_kind::sent;
  std::string deposit;
  /// Empty for `failed` and `unfinished`.
  std::string account;
  /// 0 for `failed` and `unfinished`.
  int64_t amount = 0;
  /// For `acked` only.
  uint64_t seq = 0;
  /// For `failed` and `unfinished` only (newlines replaced by spaces when
  /// formatted).
  std::string reason;
  /// For `acked` only: the app API that answered, `host:port` ("" if the
  /// line names none).
  std::string node;

  friend bool operator==(const client_event&, const client_event&) = default;
};

/// The line of `x`, with its newline.
std::string format_client_event(const client_event& x);

/// Parses one line (without its newline); nullopt if malformed (unknown
/// kind, missing or extra fields, a number that does not parse).
std::optional<client_event> parse_client_event(std::string_view line);

} // namespace troupe::demo::client
