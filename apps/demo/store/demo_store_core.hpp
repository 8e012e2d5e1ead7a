#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "troupe/runtime/error.hpp"

/// @file
/// The demo store's rules (the oracle's data: the nodes never judge
/// themselves): a fenced ledger and an account journal, the JSON requests
/// that feed them and the JSON answers and log lines they produce.
/// Pure: no I/O, no clock reads, no CAF; time comes in as arguments.
/// Not thread-safe: the store's server calls it from one thread.

namespace troupe::demo::store {

/// The store's operating errors. Zero is reserved for "no error".
enum class errc : uint8_t {
  none = 0,
  /// A request body or path that does not say what to do (the field
  /// named).
  bad_request,
};

/// The enumerator's name, e.g. "bad_request".
const char* to_string(errc x) noexcept;

/// The error category of this enum: "demo.store".
inline const char* category_name(errc) noexcept {
  return "demo.store";
}

// -- the fenced ledger -------------------------------------------------------

/// One record a singleton instance writes (`POST /ledger`): the fencing
/// token of the lease it holds, its own sequence number and its name.
struct ledger_record {
  uint64_t token = 0;
  uint64_t seq = 0;
  std::string owner;

  friend bool operator==(const ledger_record&, const ledger_record&) = default;
};

/// What the ledger made of one record.
struct ledger_decision {
  bool accepted = false;
  /// The highest token accepted before this record (nullopt: none yet).
  std::optional<uint64_t> highest_before;
  /// For a rejection: `stale token N < M` (N the record's token, M the
  /// highest accepted one); empty when accepted.
  std::string reason;
};

/// A ledger that accepts a record iff its fencing token is at least the
/// highest token it accepted so far (equal tokens: the same lease holder's
/// next record). This is the downstream check that makes a fencing token
/// worth having (Kleppmann, "How to do distributed locking"): a writer
/// that lost its lease without noticing is refused once its successor
/// wrote. Invariant: the accepted tokens, in order, never decrease.
/// It does not check `seq` (a new holder restarts its own sequence).
class fenced_ledger {
public:
  /// Accepts or rejects `r` (see the class comment).
  ledger_decision offer(const ledger_record& r);

  /// The highest accepted token; nullopt before the first accept.
  std::optional<uint64_t> highest_token() const noexcept {
    return highest_;
  }

  uint64_t accepted() const noexcept {
    return accepted_;
  }

  uint64_t rejected() const noexcept {
    return rejected_;
  }

private:
  std::optional<uint64_t> highest_;
  uint64_t accepted_ = 0;
  uint64_t rejected_ = 0;
};

// -- the account journal -----------------------------------------------------

/// The largest amount of one deposit: with it a balance cannot overflow
/// an int64 within 9 billion deposits.
inline constexpr int64_t max_deposit_amount = 1'000'000'000;

/// One deposit (`POST /accounts/{id}/deposits`): the client's deposit id
/// (unique per account; a retry reuses it), a positive amount and the seq
/// the writer believes the account is at (optimistic concurrency).
struct deposit_request {
  std::string deposit;
  int64_t amount = 0;
  uint64_t expected_seq = 0;
  /// Who writes (optional; the demo's account entities send
  /// `<node address>/<incarnation>`): journalled for the chaos checker,
  /// not judged here.
  std::string writer;

  friend bool operator==(const deposit_request&, const deposit_request&)
    = default;
};

/// What became of a deposit.
enum class deposit_outcome : uint8_t {
  /// Applied: the account's seq grew by one.
  applied,
  /// Refused: `expected_seq` is not the account's seq (another writer got
  /// there first, e.g. a second live incarnation of the entity).
  conflict,
  /// Refused: this deposit id was applied to the account before (at the
  /// seq the reason names); nothing changed.
  duplicate,
};

/// "applied", "conflict" or "duplicate".
const char* to_string(deposit_outcome x) noexcept;

/// An account's state: 0 and 0 for an account never written.
struct account_state {
  int64_t balance = 0;
  /// The number of deposits applied (the seq of the last one).
  uint64_t seq = 0;

  friend bool operator==(const account_state&, const account_state&) = default;
};

/// The journal's answer to one deposit.
struct deposit_result {
  deposit_outcome outcome = deposit_outcome::applied;
  /// The account after the call (unchanged unless applied).
  account_state account;
  /// Why it was refused; empty when applied. Conflict: `expected seq K but
  /// the account is at seq S`; duplicate: `deposit D was applied at seq S`.
  std::string reason;
};

/// Totals over the journal (`GET /summary`).
struct journal_totals {
  uint64_t accounts = 0;
  uint64_t applied = 0;
  uint64_t conflicts = 0;
  uint64_t duplicates = 0;
  /// The sum of every balance.
  int64_t balance_sum = 0;
};

/// Accounts with a balance and a seq, changed only by deposits that name
/// the current seq (compare-and-set, as an etcd transaction or a Lease's
/// resourceVersion) and whose id was not applied to that account before.
/// A duplicate is checked first: a retry of an applied deposit is named a
/// duplicate whatever seq it expects. Invariants: an account's seq equals
/// its number of applied deposits; its balance equals their sum.
/// It does not validate the request (see `parse_deposit_request`).
class account_journal {
public:
  /// Applies `d` to `account` or refuses it (see the class comment).
  deposit_result deposit(const std::string& account, const deposit_request& d);

  /// The account's state (zeros if never written).
  account_state account(std::string_view id) const;

  journal_totals totals() const noexcept;

  /// Every account written, by id.
  const std::map<std::string, account_state, std::less<>>&
  accounts() const noexcept {
    return accounts_;
  }

private:
  std::map<std::string, account_state, std::less<>> accounts_;
  /// (account, deposit id) -> the seq it was applied at.
  std::map<std::pair<std::string, std::string>, uint64_t> applied_;
  uint64_t conflicts_ = 0;
  uint64_t duplicates_ = 0;
};

// -- requests ----------------------------------------------------------------

/// Parses a `POST /ledger` body: a JSON object with `token` and `seq`
/// (unsigned integers) and `owner` (a string of 1 to 256 bytes); other
/// fields are ignored. Errors (errc::bad_request) name the field and the
/// fault: `field "token": must be an unsigned integer`.
runtime::expected<ledger_record> parse_ledger_record(std::string_view body);

/// Parses a deposit body: a JSON object with `deposit` (a string of 1 to
/// 128 bytes), `amount` (an integer from 1 to max_deposit_amount),
/// `expected_seq` (an unsigned integer) and optionally `writer` (a string
/// of 1 to 256 bytes); other fields are ignored. Errors
/// as `parse_ledger_record`.
runtime::expected<deposit_request> parse_deposit_request(std::string_view body);

/// True for an account id of 1 to 64 bytes of `[A-Za-z0-9._-]`.
bool is_valid_account_id(std::string_view id) noexcept;

// -- rendering ---------------------------------------------------------------

/// When a line was written: CLOCK_MONOTONIC and the wall clock (the store
/// reads both once per request).
struct log_time {
  /// CLOCK_MONOTONIC, ns.
  int64_t mono_ns = 0;
  std::chrono::system_clock::time_point wall;
};

/// `2026-11-30T11:50:00.123Z` (UTC, milliseconds).
std::string format_wall_time(std::chrono::system_clock::time_point t);

/// One ledger.jsonl line (with its newline): `{"mono_ns":N,"wall":"...",
/// "token":T,"seq":S,"owner":"...","accepted":true|false,"highest":M|null,
/// "reason":"..."}` (`highest`: the highest token accepted before it;
/// `reason` only for a rejection).
std::string format_ledger_line(const log_time& at, const ledger_record& r,
                               const ledger_decision& d);

/// One journal.jsonl line (with its newline): `{"mono_ns":N,"wall":"...",
/// "account":"...","deposit":"...","amount":A,"expected_seq":K,
/// "outcome":"applied|conflict|duplicate","seq":S,"balance":B,
/// "writer":"...","reason":"..."}` (`seq` and `balance`: the account after
/// the call; `writer` only when the request named one; `reason` only for a
/// refusal).
std::string format_journal_line(const log_time& at, const std::string& account,
                                const deposit_request& d,
                                const deposit_result& r);

/// `{"accepted":true}` or `{"accepted":false,"reason":"...","highest":M}`.
std::string render_ledger_answer(const ledger_decision& d);

/// Applied: `{"seq":S,"balance":B}`; refused: `{"seq":S,"balance":B,
/// "outcome":"conflict|duplicate","reason":"...","error":"..."}` (the
/// account's current state, so a writer can catch up).
std::string render_deposit_answer(const deposit_result& r);

/// `{"balance":B,"seq":S}`.
std::string render_account(const account_state& a);

/// `{"ledger":{"accepted":N,"rejected":M,"highest_token":T|null},
/// "journal":{"accounts":A,"applied":D,"conflicts":C,"duplicates":U,
/// "balance_sum":S},"accounts":{"ID":{"balance":B,"seq":S},...}}`.
std::string render_summary(const fenced_ledger& l, const account_journal& j);

/// `{"error":"<what>"}`.
std::string render_error(std::string_view what);

} // namespace troupe::demo::store
