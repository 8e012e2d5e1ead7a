#include "troupe/lease/etcd_client.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "troupe/lease/errc.hpp"
#include "troupe/runtime/errc.hpp"

namespace troupe::lease {

namespace {

using etcd::answer_kind;

runtime::error invalid(std::string message) {
  return runtime::make_error(errc::invalid_settings, std::move(message));
}

// What etcd said, for a detail: its message, or a piece of the body.
std::string describe_answer(const etcd::answer& a, std::string_view body) {
  auto text = a.error ? etcd::escape_for_message(a.error->message, 200)
                      : etcd::escape_for_message(body);
  if (text.empty())
    return fmt::format("HTTP {}", a.status);
  return fmt::format("HTTP {}: {}", a.status, text);
}

// Removes one trailing line break (password files usually end with one).
std::string chomp(std::string x) {
  if (!x.empty() && x.back() == '\n')
    x.pop_back();
  if (!x.empty() && x.back() == '\r')
    x.pop_back();
  return x;
}

} // namespace

runtime::http_request make_etcd_http_request(std::string_view endpoint,
                                             std::string_view path,
                                             std::string body,
                                             const runtime::secret& auth_token,
                                             runtime::timespan timeout) {
  runtime::http_request req;
  req.method = "POST";
  req.url.reserve(endpoint.size() + path.size());
  req.url.append(endpoint).append(path);
  req.headers.push_back({"Content-Type", "application/json"});
  // etcd wants the token raw: `Bearer <token>` is answered with 401.
  if (!auth_token.empty())
    req.headers.push_back({"Authorization", auth_token.reveal()});
  req.body = std::move(body);
  req.timeout = timeout;
  req.max_response_bytes = 2 * etcd::max_body_bytes;
  return req;
}

runtime::expected<std::shared_ptr<etcd_client>>
etcd_client::make(etcd_client_options opts) {
  if (opts.endpoints.empty())
    return invalid("lease.etcd.endpoints: no endpoint configured");
  bool any_tls = false;
  for (auto& e : opts.endpoints) {
    auto url = runtime::parse_url(e);
    if (!url)
      return invalid(
        fmt::format("lease.etcd.endpoints: {}", url.error().message));
    if (url->target != "/")
      return invalid(fmt::format("lease.etcd.endpoints: \"{}\" has a path; "
                                 "give the base URL only, e.g. "
                                 "http://127.0.0.1:2379",
                                 url->to_string()));
    any_tls = any_tls || url->is_tls();
    // Canonical form without the trailing slash: paths start with "/".
    e = fmt::format("{}://{}", url->scheme, url->authority());
  }
  if (opts.request_timeout <= runtime::timespan{0})
    return invalid("lease.etcd.request_timeout must be positive");
  if (opts.user.empty()
      && (!opts.password.empty() || !opts.password_file.empty()))
    return invalid("lease.etcd.password / lease.etcd.password_file are set "
                   "but lease.etcd.user is empty");
  if (!opts.password.empty() && !opts.password_file.empty())
    return invalid("lease.etcd.password and lease.etcd.password_file are "
                   "both set; set one");
  std::shared_ptr<etcd_client> result{new etcd_client(std::move(opts))};
  if (!result->opts_.password_file.empty())
    if (auto pw = result->read_password(); !pw)
      return invalid(pw.error().message);
  if (any_tls && result->tls_setup_error())
    return invalid(fmt::format("lease.etcd TLS settings: {}",
                               result->tls_setup_error().message));
  return result;
}

etcd_client::etcd_client(etcd_client_options opts)
  : opts_(std::move(opts)), engine_(opts_.tls) {}

etcd_client::~etcd_client() {
  shutdown();
}

void etcd_client::shutdown() {
  engine_.shutdown();
}

std::string etcd_client::endpoints_text() const {
  return fmt::format("{}", fmt::join(opts_.endpoints, ","));
}

etcd_client_stats etcd_client::stats() const {
  return {requests_.load(), authentications_.load()};
}

runtime::secret etcd_client::token() const {
  std::lock_guard guard{mtx_};
  return token_;
}

void etcd_client::set_token(runtime::secret token, bool auth_disabled) {
  std::lock_guard guard{mtx_};
  token_ = std::move(token);
  auth_disabled_ = auth_disabled;
}

runtime::expected<runtime::secret> etcd_client::read_password() const {
  if (opts_.password_file.empty())
    return opts_.password;
  std::ifstream in{opts_.password_file, std::ios::binary};
  if (!in)
    return runtime::make_error(
      errc::backend_rejected,
      fmt::format("lease.etcd.password_file {}: cannot read: {}",
                  opts_.password_file, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return runtime::secret{chomp(text.str())};
}

void etcd_client::post(std::string_view path, std::string body, handler then) {
  auto c = std::make_shared<call>();
  c->path = std::string{path};
  c->body = std::move(body);
  c->then = std::move(then);
  start(std::move(c));
}

void etcd_client::start(std::shared_ptr<call> c) {
  bool need_auth = false;
  if (has_user()) {
    std::lock_guard guard{mtx_};
    need_auth = token_.empty() && !auth_disabled_;
  }
  if (need_auth)
    authenticate_then_send(std::move(c));
  else
    send(std::move(c));
}

void etcd_client::advance(size_t turn) {
  // Only the first failure of a turn moves on: concurrent failures at one
  // endpoint must not skip the next one.
  turn_.compare_exchange_strong(turn, turn + 1);
}

void etcd_client::send(std::shared_ptr<call> c) {
  auto turn = turn_.load();
  auto endpoint = opts_.endpoints[turn % opts_.endpoints.size()];
  auto req = make_etcd_http_request(endpoint, c->path, c->body, token(),
                                    opts_.request_timeout);
  ++requests_;
  engine_.start(std::move(req), [self = shared_from_this(), c, turn, endpoint](
                                  runtime::expected<runtime::http_response> r) {
    self->on_answer(c, turn, endpoint, std::move(r));
  });
}

void etcd_client::on_answer(std::shared_ptr<call> c, size_t turn,
                            std::string endpoint,
                            runtime::expected<runtime::http_response> r) {
  etcd_result out;
  out.where = fmt::format("etcd {} {}", endpoint, c->path);
  if (!r) {
    // The engine's message names the method, URL and stage; never headers.
    auto code = static_cast<runtime::errc>(r.error().code);
    bool refused = code == runtime::errc::http_tls_failed
                   || code == runtime::errc::http_bad_request;
    out.kind = refused ? answer_kind::rejected : answer_kind::unavailable;
    out.detail = fmt::format("etcd: {}", r.error().message);
    out.shut_down = code == runtime::errc::http_shutdown;
    if (code != runtime::errc::http_bad_request)
      advance(turn);
    return c->then(std::move(out));
  }
  auto a = etcd::classify_answer(r->status, r->body);
  out.kind = a.kind;
  out.retry_after = r->retry_after();
  if (a.kind == answer_kind::ok) {
    out.body = std::move(r->body);
    return c->then(std::move(out));
  }
  out.detail = fmt::format("{}: {}", out.where, describe_answer(a, r->body));
  switch (a.kind) {
    case answer_kind::unauthenticated:
    case answer_kind::user_name_empty:
      if (!has_user()) {
        out.kind = answer_kind::rejected;
        out.detail += " (etcd requires authentication: set lease.etcd.user "
                      "and a password)";
        break;
      }
      if (c->retried)
        break;
      c->retried = true;
      set_token({}, false);
      return authenticate_then_send(std::move(c));
    case answer_kind::auth_not_enabled:
      if (c->retried)
        break;
      c->retried = true;
      set_token({}, true);
      return send(std::move(c));
    case answer_kind::unavailable:
      advance(turn);
      break;
    default:
      break;
  }
  c->then(std::move(out));
}

void etcd_client::authenticate_then_send(std::shared_ptr<call> c) {
  auto pw = read_password();
  if (!pw) {
    etcd_result out;
    out.kind = answer_kind::rejected;
    out.where = fmt::format("etcd {}", endpoints_text());
    out.detail = pw.error().message;
    return c->then(std::move(out));
  }
  auto turn = turn_.load();
  auto endpoint = opts_.endpoints[turn % opts_.endpoints.size()];
  auto req = make_etcd_http_request(endpoint, etcd::authenticate_path,
                                    etcd::authenticate_request(opts_.user, *pw),
                                    {}, opts_.request_timeout);
  ++requests_;
  ++authentications_;
  auto on_auth = [self = shared_from_this(), c, turn,
                  endpoint](runtime::expected<runtime::http_response> r) {
    etcd_result out;
    out.where = fmt::format("etcd {} {}", endpoint, etcd::authenticate_path);
    if (!r)
      return self->on_answer(c, turn, endpoint, std::move(r));
    auto a = etcd::classify_answer(r->status, r->body);
    if (a.kind == answer_kind::ok) {
      auto token = etcd::parse_authenticate_response(r->body);
      if (token) {
        self->set_token(std::move(*token), false);
        return self->send(c);
      }
      out.kind = answer_kind::unavailable;
      out.detail = fmt::format("{}: {}", out.where, token.error().message);
      self->advance(turn);
      return c->then(std::move(out));
    }
    if (a.kind == answer_kind::auth_not_enabled) {
      self->set_token({}, true);
      return self->send(c);
    }
    out.kind = a.kind == answer_kind::unavailable ? answer_kind::unavailable
                                                  : answer_kind::rejected;
    out.retry_after = r->retry_after();
    // etcd's message names the problem ("authentication failed, invalid
    // user ID or password"); the body of an auth answer is never quoted.
    out.detail = fmt::format(
      "{}: authentication as user \"{}\" failed: HTTP {}{}{}", out.where,
      etcd::escape_for_message(self->opts_.user), a.status, a.error ? ": " : "",
      a.error ? etcd::escape_for_message(a.error->message, 200) : "");
    if (a.kind == answer_kind::unavailable)
      self->advance(turn);
    c->then(std::move(out));
  };
  engine_.start(std::move(req), std::move(on_auth));
}

} // namespace troupe::lease
