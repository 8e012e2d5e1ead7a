#include "store/demo_store_core.hpp"

#include <fmt/format.h>

namespace troupe::demo::store {

const char* to_string(errc x) noexcept {
  switch (x) {
    case errc::none:
      return "none";
    case errc::bad_request:
      return "bad_request";
  }
  return "unknown";
}

const char* to_string(deposit_outcome x) noexcept {
  switch (x) {
    case deposit_outcome::applied:
      return "applied";
    case deposit_outcome::conflict:
      return "conflict";
    case deposit_outcome::duplicate:
      return "duplicate";
  }
  return "unknown";
}

ledger_decision fenced_ledger::offer(const ledger_record& r) {
  ledger_decision d;
  d.highest_before = highest_;
  if (highest_ && r.token < *highest_) {
    ++rejected_;
    d.reason = fmt::format("stale token {} < {}", r.token, *highest_);
    return d;
  }
  ++accepted_;
  highest_ = r.token;
  d.accepted = true;
  return d;
}

deposit_result account_journal::deposit(const std::string& account,
                                        const deposit_request& d) {
  deposit_result r;
  // A refused deposit leaves no trace: the account is created by its first
  // applied deposit only.
  r.account = this->account(account);
  auto key = std::make_pair(account, d.deposit);
  if (auto i = applied_.find(key); i != applied_.end()) {
    ++duplicates_;
    r.outcome = deposit_outcome::duplicate;
    r.reason
      = fmt::format("deposit {} was applied at seq {}", d.deposit, i->second);
    return r;
  }
  if (d.expected_seq != r.account.seq) {
    ++conflicts_;
    r.outcome = deposit_outcome::conflict;
    r.reason = fmt::format("expected seq {} but the account is at seq {}",
                           d.expected_seq, r.account.seq);
    return r;
  }
  auto& acc = accounts_[account];
  acc.seq += 1;
  acc.balance += d.amount;
  applied_.emplace(std::move(key), acc.seq);
  r.account = acc;
  return r;
}

account_state account_journal::account(std::string_view id) const {
  auto i = accounts_.find(id);
  return i == accounts_.end() ? account_state{} : i->second;
}

journal_totals account_journal::totals() const noexcept {
  journal_totals t;
  t.accounts = accounts_.size();
  t.applied = applied_.size();
  t.conflicts = conflicts_;
  t.duplicates = duplicates_;
  for (auto& [id, acc] : accounts_)
    t.balance_sum += acc.balance;
  return t;
}

bool is_valid_account_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > 64)
    return false;
  for (char c : id) {
    auto ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      return false;
  }
  return true;
}

} // namespace troupe::demo::store
