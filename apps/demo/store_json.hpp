#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

/// @file
/// The demo node's side of the store's HTTP API (/work/demo-contract.md,
/// troupe-demo-store): the request bodies it sends and the answers it
/// reads; and the lines of its history file (history_log.hpp). Pure
/// (RapidJSON only); thread-safe as plain functions.

namespace troupe::demo {

/// `{"token":T,"seq":S,"owner":"O"}`: one fenced ledger record of the
/// scheduler singleton (POST /ledger). `owner` is escaped as JSON.
std::string ledger_body(uint64_t token, uint64_t seq, std::string_view owner);

/// `{"deposit":"D","amount":A,"expected_seq":K,"writer":"W"}` (POST
/// /accounts/{id}/deposits): persist deposit `D` of `amount` (any sign)
/// if the account's current seq is `expected_seq`. `writer` names the
/// entity incarnation that writes (`<address>/<incarnation>`, recorded in
/// the store's journal for the chaos checker); omitted when empty.
std::string deposit_body(std::string_view deposit, int64_t amount,
                         uint64_t expected_seq, std::string_view writer = {});

/// An account's persisted state: its balance and the seq of its last
/// deposit (0: none yet).
struct account_state {
  int64_t balance = 0;
  uint64_t seq = 0;
};

/// Reads `{"balance":B,"seq":K}` (GET /accounts/{id}, and the 200 answer
/// of a deposit). None when the body is not an object with an integer
/// `balance` and a non-negative integer `seq`.
std::optional<account_state> parse_account_state(std::string_view body);

/// The `outcome` of a store's 409 answer to a deposit: "conflict" (the
/// account moved past `expected_seq`) or "duplicate" (this deposit id was
/// applied before); "" when the body has none.
std::string store_outcome(std::string_view body);

/// What an account entity does with the store's answer to a deposit.
enum class deposit_verdict {
  /// 200 with the new state: persisted; acknowledge it.
  persisted,
  /// 409 "duplicate" with the state: an earlier attempt of this deposit id
  /// was persisted (its answer was lost or late); acknowledge it.
  duplicate,
  /// 409 "conflict" with the state: another incarnation wrote since this
  /// one recovered; catch up to the state, refuse this deposit.
  conflict,
  /// Anything else (an error status, a body without a state): the outcome
  /// is unknown; refuse it and recover the seq before the next deposit.
  unknown,
};

/// The verdict for a deposit answered with `status` and `body`, and the
/// account's state the answer carries (none for `unknown`).
std::pair<deposit_verdict, std::optional<account_state>>
judge_deposit_answer(unsigned status, std::string_view body);

/// `{"seq":K,"balance":B}`: the app API's answer to a persisted deposit.
std::string deposit_answer(const account_state& st);

/// `{"error":"..."}` with `why` escaped as JSON: the app API's error body.
std::string error_body(std::string_view why);

/// The `reason` (or `error`) string of a store's JSON error answer, or the
/// body itself cut to 200 bytes when it has neither (never empty: "empty
/// answer").
std::string store_reason(std::string_view body);

/// One field of a history line: a string (escaped as JSON) or an
/// unsigned number.
struct history_field {
  std::string_view key;
  std::variant<std::string_view, uint64_t> value;
};

/// The history line of one event (history_log.hpp), with its newline.
std::string history_line(int64_t mono_ns, std::string_view node,
                         std::string_view address, std::string_view event,
                         std::initializer_list<history_field> fields);

} // namespace troupe::demo
