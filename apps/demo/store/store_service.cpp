#include "store/store_service.hpp"

#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace troupe::demo::store {

namespace {

using management::http_request;
using management::http_response;

http_response json(unsigned status, std::string body) {
  return http_response{status, "application/json", std::move(body), {}};
}

store_reply failure(unsigned status, std::string_view what) {
  return store_reply{json(status, render_error(what)), {}, {}};
}

store_reply method_not_allowed(const http_request& req, const char* allow) {
  auto r = failure(405, fmt::format("method {} not allowed here (allowed: {})",
                                    req.method, allow));
  r.response.allow = allow;
  return r;
}

bool is_get(const http_request& req) {
  return req.method == "GET" || req.method == "HEAD";
}

// What `/accounts/...` names: the account and whether `/deposits` follows.
struct account_path {
  std::string id;
  bool deposits = false;
};

// Null when `rest` (after `/accounts/`) is neither `{id}` nor
// `{id}/deposits`; the id is percent-decoded but not validated.
std::optional<account_path> parse_account_path(std::string_view rest) {
  account_path p;
  auto slash = rest.find('/');
  if (slash != std::string_view::npos) {
    if (rest.substr(slash) != "/deposits")
      return std::nullopt;
    p.deposits = true;
    rest = rest.substr(0, slash);
  }
  auto id = management::percent_decode(rest);
  if (!id)
    return account_path{std::string{rest}, p.deposits};
  p.id = std::move(*id);
  return p;
}

} // namespace

store_reply store_service::handle(const http_request& req, const log_time& at) {
  std::string_view path = req.target;
  if (auto q = path.find('?'); q != std::string_view::npos)
    path = path.substr(0, q);
  if (path == "/ledger") {
    if (req.method != "POST")
      return method_not_allowed(req, "POST");
    return post_ledger(req, at);
  }
  if (path == "/summary") {
    if (!is_get(req))
      return method_not_allowed(req, "GET, HEAD");
    return {json(200, render_summary(ledger_, journal_)), {}, {}};
  }
  constexpr std::string_view accounts = "/accounts/";
  if (path.starts_with(accounts)) {
    auto p = parse_account_path(path.substr(accounts.size()));
    if (!p)
      return failure(404, fmt::format("no such path: {}", path));
    if (!is_valid_account_id(p->id))
      return failure(400,
                     fmt::format("account id \"{}\": must be 1 to 64 bytes of "
                                 "A-Z, a-z, 0-9, '.', '_' or '-'",
                                 p->id));
    if (p->deposits) {
      if (req.method != "POST")
        return method_not_allowed(req, "POST");
      return post_deposit(p->id, req, at);
    }
    if (!is_get(req))
      return method_not_allowed(req, "GET, HEAD");
    return {json(200, render_account(journal_.account(p->id))), {}, {}};
  }
  return failure(404, fmt::format("no such path: {}", path));
}

store_reply store_service::post_ledger(const http_request& req,
                                       const log_time& at) {
  auto rec = parse_ledger_record(req.body);
  if (!rec)
    return failure(400, rec.error().message);
  auto d = ledger_.offer(*rec);
  store_reply r;
  r.response = json(d.accepted ? 200 : 409, render_ledger_answer(d));
  r.ledger_line = format_ledger_line(at, *rec, d);
  return r;
}

store_reply store_service::post_deposit(const std::string& account,
                                        const http_request& req,
                                        const log_time& at) {
  auto d = parse_deposit_request(req.body);
  if (!d)
    return failure(400, d.error().message);
  auto res = journal_.deposit(account, *d);
  store_reply r;
  auto ok = res.outcome == deposit_outcome::applied;
  r.response = json(ok ? 200 : 409, render_deposit_answer(res));
  r.journal_line = format_journal_line(at, account, *d, res);
  return r;
}

} // namespace troupe::demo::store
