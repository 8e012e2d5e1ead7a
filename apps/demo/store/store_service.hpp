#pragma once

#include <string>

#include "store/demo_store_core.hpp"
#include "troupe/management/router.hpp"

/// @file
/// The demo store's HTTP API as a function from request to response (the
/// server is store_main.cpp; the nodes and the launcher are its clients).
/// Pure: the caller reads the clocks and appends the log lines to the
/// files.
///
/// - `POST /ledger` `{"token":N,"seq":S,"owner":"..."}`: 200
///   `{"accepted":true}`, or 409 `{"accepted":false,"reason":"stale token
///   N < M","highest":M}`.
/// - `POST /accounts/{id}/deposits` `{"deposit":"D","amount":A,
///   "expected_seq":K}`: 200 `{"seq":K+1,"balance":B}`, or 409 with the
///   account's current `seq` and `balance`, `outcome` (`conflict` or
///   `duplicate`) and `reason`.
/// - `GET /accounts/{id}`: `{"balance":B,"seq":S}` (zeros for an account
///   never written).
/// - `GET /summary`: render_summary's totals.
///
/// A body or account id that does not parse is 400 `{"error":"..."}`
/// naming the field; an unknown path 404; another method 405 with `Allow`.
/// The query string is ignored. Not thread-safe (one server thread).

namespace troupe::demo::store {

/// One answered request and what to append to the files ("" for nothing).
struct store_reply {
  management::http_response response;
  /// A ledger.jsonl line (with its newline) for every accept and reject.
  std::string ledger_line;
  /// A journal.jsonl line (with its newline) for every deposit decided.
  std::string journal_line;
};

/// The store's state (a fenced ledger and an account journal) behind its
/// HTTP API.
class store_service {
public:
  /// Answers `req`; `at` stamps the log lines. Never throws (but for
  /// std::bad_alloc).
  store_reply handle(const management::http_request& req, const log_time& at);

  const fenced_ledger& ledger() const noexcept {
    return ledger_;
  }

  const account_journal& journal() const noexcept {
    return journal_;
  }

private:
  store_reply post_ledger(const management::http_request& req,
                          const log_time& at);
  store_reply post_deposit(const std::string& account,
                           const management::http_request& req,
                           const log_time& at);

  fenced_ledger ledger_;
  account_journal journal_;
};

} // namespace troupe::demo::store
