#include "troupe/runtime/http_engine.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "troupe/runtime/errc.hpp"
#include "troupe/runtime/log.hpp"

// All Beast and Asio code of the runtime lives in this file (compile cost).
// Each exchange is one `session`; every session and the engine's bookkeeping
// run on the single io thread, so nothing here needs a strand or a lock
// except the `stopped_` flag that `start` and `shutdown` share.

namespace troupe::runtime {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

const logger& http_log() {
  static const logger instance{"http"};
  return instance;
}

long long to_ms(timespan d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

// "GET https://host/x", for messages; never shows user info.
std::string describe(const http_request& req) {
  if (auto url = parse_url(req.url))
    return fmt::format("{} {}", req.method, url->to_string());
  return fmt::format("{} <invalid URL>", req.method);
}

bool has_header(const http_request& req, std::string_view name) {
  auto lower = [](char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  };
  return std::any_of(req.headers.begin(), req.headers.end(), [&](auto& h) {
    return h.name.size() == name.size()
           && std::equal(h.name.begin(), h.name.end(), name.begin(),
                         [&](char a, char b) { return lower(a) == lower(b); });
  });
}

// Empty if `path` can be opened for reading, else the reason (OpenSSL's own
// message for a missing file is an unhelpful "asio.ssl error").
std::string unreadable(const std::string& path) {
  errno = 0;
  if (std::ifstream{path})
    return {};
  return errno != 0 ? std::strerror(errno) : "cannot open";
}

// Loads the client-side TLS context; returns an error naming the file.
error load_tls(const http_tls_settings& tls,
               std::unique_ptr<ssl::context>& out) {
  auto fail = [](std::string what) {
    return make_error(errc::http_tls_failed,
                      fmt::format("TLS setup failed: {}", what));
  };
  try {
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
    beast::error_code ec;
    ctx->set_options(
      ssl::context::default_workarounds | ssl::context::no_compression, ec);
    ctx->set_verify_mode(ssl::verify_peer, ec);
    if (ec)
      return fail(fmt::format("cannot enable verification: {}", ec.message()));
    for (auto* path :
         {&tls.ca_file, &tls.client_cert_file, &tls.client_key_file})
      if (!path->empty())
        if (auto why = unreadable(*path); !why.empty())
          return fail(fmt::format("cannot read \"{}\": {}", *path, why));
    if (!tls.ca_file.empty()) {
      ctx->load_verify_file(tls.ca_file, ec);
      if (ec)
        return fail(fmt::format("cannot load CA file \"{}\": {}", tls.ca_file,
                                ec.message()));
    } else {
      ctx->set_default_verify_paths(ec);
      if (ec)
        return fail(
          fmt::format("cannot load the system CA store: {}", ec.message()));
    }
    if (tls.client_cert_file.empty() != tls.client_key_file.empty())
      return fail("client_cert_file and client_key_file must be set together");
    if (!tls.client_cert_file.empty()) {
      ctx->use_certificate_chain_file(tls.client_cert_file, ec);
      if (ec)
        return fail(fmt::format("cannot load client certificate \"{}\": {}",
                                tls.client_cert_file, ec.message()));
      ctx->use_private_key_file(tls.client_key_file, ssl::context::pem, ec);
      if (ec)
        return fail(fmt::format("cannot load client key \"{}\": {}",
                                tls.client_key_file, ec.message()));
      if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
        return fail(fmt::format("client key \"{}\" does not match "
                                "certificate \"{}\"",
                                tls.client_key_file, tls.client_cert_file));
    }
    out = std::move(ctx);
    return {};
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

class session;

} // namespace

class http_engine::impl : public std::enable_shared_from_this<impl> {
public:
  explicit impl(http_tls_settings tls) : tls_settings(std::move(tls)) {
    tls_error = load_tls(tls_settings, tls_ctx);
    if (tls_error)
      http_log().warning("{}", tls_error.message);
  }

  ~impl();

  void launch() {
    thread = std::thread{[self = shared_from_this()] { self->run(); }};
  }

  void run() {
    for (;;) {
      try {
        ioc.run();
        return;
      } catch (const std::exception& e) {
        // Handlers catch their own errors; this is a last line of defence
        // that keeps the io thread (and every other exchange) alive.
        http_log().error("io thread: unexpected exception: {}", e.what());
      }
    }
  }

  void start(http_request req, callback done);
  void shutdown();
  void begin(http_request req, callback done);
  void abort_all();

  static void invoke(callback& done, expected<http_response> result) {
    try {
      done(std::move(result));
    } catch (const std::exception& e) {
      http_log().error("completion callback threw: {}", e.what());
    }
  }

  http_tls_settings tls_settings;
  std::unique_ptr<ssl::context> tls_ctx;
  error tls_error;
  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
    guard{ioc.get_executor()};
  std::thread thread;

  std::mutex mtx;
  bool stopped = false; // guarded by mtx

  // io thread only:
  uint64_t next_id = 0;
  bool draining = false;
  std::unordered_map<uint64_t, std::shared_ptr<session>> sessions;
};

namespace {

// One exchange. Lives on the io thread; kept alive by its pending handlers
// and by the engine's `sessions` map until it finishes.
class session : public std::enable_shared_from_this<session> {
public:
  session(http_engine::impl& owner, uint64_t id, http_request req,
          parsed_url url, http_engine::callback done)
    : owner_(owner), id_(id), req_(std::move(req)), url_(std::move(url)),
      where_(fmt::format("{} {}", req_.method, url_.to_string())),
      done_(std::move(done)), started_(steady::now()),
      deadline_(started_ + req_.timeout), resolver_(owner.ioc),
      resolve_timer_(owner.ioc), plain_(owner.ioc) {}

  void run() {
    if (url_.is_tls())
      tls_.emplace(owner_.ioc, *owner_.tls_ctx);
    stage_ = "resolve";
    resolve_timer_.expires_at(deadline_);
    // The resolver is not covered by the stream's timer (getaddrinfo runs on
    // Asio's resolver thread), hence a timer of our own for this stage.
    resolve_timer_.async_wait([self = shared_from_this()](auto ec) {
      if (!ec)
        self->fail(beast::error::timeout);
    });
    resolver_.async_resolve(url_.host, std::to_string(url_.port),
                            [self = shared_from_this()](auto ec, auto results) {
                              self->on_resolve(ec, std::move(results));
                            });
  }

  /// Completes the exchange with `code` (e.g. on engine shutdown).
  void abort(errc code, std::string_view what) {
    finish(make_error(code, fmt::format("{}: {}", where_, what)));
  }

private:
  beast::tcp_stream& tcp() {
    return tls_ ? tls_->next_layer() : plain_;
  }

  template <class F>
  void with_stream(F&& f) {
    if (tls_)
      f(*tls_);
    else
      f(plain_);
  }

  void on_resolve(beast::error_code ec, tcp::resolver::results_type results) {
    if (finished_)
      return;
    resolve_timer_.cancel();
    if (ec)
      return fail(ec);
    stage_ = "connect";
    // From here on Beast's stream timer enforces the deadline; it keeps
    // running across connect, handshake, write and read.
    tcp().expires_at(deadline_);
    tcp().async_connect(results,
                        [self = shared_from_this()](auto ec, const auto&) {
                          self->on_connect(ec);
                        });
  }

  void on_connect(beast::error_code ec) {
    if (finished_)
      return;
    if (ec)
      return fail(ec);
    if (!tls_)
      return write();
    stage_ = "TLS handshake";
    auto* native = tls_->native_handle();
    bool ok = true;
    if (url_.is_ip_literal()) {
      // RFC 6066 forbids IP literals in SNI; verify the IP SAN instead.
      ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(native),
                                         url_.host.c_str())
           == 1;
    } else {
      ok = SSL_set_tlsext_host_name(native, url_.host.c_str()) == 1
           && SSL_set1_host(native, url_.host.c_str()) == 1;
    }
    if (!ok)
      return finish(make_error(
        errc::http_tls_failed,
        fmt::format("{}: TLS handshake failed: cannot set the expected host "
                    "name for verification",
                    where_)));
    tls_->async_handshake(
      ssl::stream_base::client,
      [self = shared_from_this()](auto ec) { self->on_handshake(ec); });
  }

  void on_handshake(beast::error_code ec) {
    if (finished_)
      return;
    if (ec)
      return fail(ec);
    write();
  }

  void write() {
    stage_ = "write";
    request_.method_string(req_.method);
    request_.target(url_.target);
    request_.version(11);
    if (!has_header(req_, "host"))
      request_.set(http::field::host, url_.authority());
    if (!has_header(req_, "user-agent"))
      request_.set(http::field::user_agent, "troupe");
    for (const auto& h : req_.headers)
      request_.insert(h.name, h.value);
    // One exchange per connection: no pool to bound or to go stale.
    request_.set(http::field::connection, "close");
    request_.body() = req_.body;
    request_.prepare_payload();
    with_stream([this](auto& stream) {
      http::async_write(
        stream, request_,
        [self = shared_from_this()](auto ec, auto) { self->on_write(ec); });
    });
  }

  void on_write(beast::error_code ec) {
    if (finished_)
      return;
    if (ec)
      return fail(ec);
    stage_ = "read";
    parser_.emplace();
    auto max = req_.max_response_bytes;
    // Beast's fields throw (std::length_error) on a name or value of 64 KiB
    // or more, out of the read handler: the exchange would never complete.
    // A header of at most max_header_bytes cannot hold such a field.
    parser_->header_limit(static_cast<uint32_t>(
      std::min<uint64_t>(max, http_engine::max_header_bytes)));
    parser_->body_limit(max);
    if (req_.method == "HEAD")
      parser_->skip(true);
    with_stream([this](auto& stream) {
      http::async_read_header(stream, buffer_, *parser_,
                              [self = shared_from_this()](auto ec, auto n) {
                                self->on_read_header(ec, n);
                              });
    });
  }

  void on_read_header(beast::error_code ec, size_t header_bytes) {
    if (finished_)
      return;
    if (ec)
      return fail(ec);
    // max_response_bytes bounds header plus body: the body gets the rest.
    auto rest = req_.max_response_bytes
                - std::min<uint64_t>(header_bytes, req_.max_response_bytes);
    if (auto len = parser_->content_length(); len && *len > rest)
      return fail(http::error::body_limit);
    parser_->body_limit(rest);
    if (parser_->is_done())
      return succeed();
    with_stream([this](auto& stream) {
      http::async_read(
        stream, buffer_, *parser_,
        [self = shared_from_this()](auto ec, auto) { self->on_read(ec); });
    });
  }

  void on_read(beast::error_code ec) {
    if (finished_)
      return;
    // A body delimited by EOF over TLS ends with a close without
    // close_notify (stream_truncated): complete if the parser accepts EOF.
    if (ec == ssl::error::stream_truncated && parser_->need_eof()) {
      beast::error_code eof_ec;
      parser_->put_eof(eof_ec);
      if (!eof_ec && parser_->is_done())
        ec = {};
    }
    if (ec)
      return fail(ec);
    succeed();
  }

  void succeed() {
    auto msg = parser_->release();
    http_response res;
    res.status = static_cast<uint16_t>(msg.result_int());
    for (const auto& field : msg)
      res.headers.push_back(
        {std::string{field.name_string()}, std::string{field.value()}});
    res.body = std::move(msg.body());
    http_log().debug("{} -> {} ({} body bytes, {} ms)", where_, res.status,
                     res.body.size(), to_ms(steady::now() - started_));
    finish(std::move(res));
  }

  // Maps a failed stage to troupe's error codes (see http_engine.hpp).
  void fail(beast::error_code ec) {
    if (finished_)
      return;
    auto code = errc::http_connect_failed;
    std::string what;
    if (ec == beast::error::timeout || steady::now() >= deadline_) {
      code = errc::http_timeout;
      what = fmt::format("timed out after {} ms (during {})",
                         to_ms(req_.timeout), stage_);
    } else if (ec == http::error::header_limit
               && req_.max_response_bytes > http_engine::max_header_bytes) {
      code = errc::http_response_too_large;
      what = fmt::format("response header exceeds {} bytes",
                         http_engine::max_header_bytes);
    } else if (ec == http::error::body_limit || ec == http::error::header_limit
               || ec == http::error::buffer_overflow) {
      code = errc::http_response_too_large;
      what = fmt::format("response exceeds max_response_bytes ({} bytes)",
                         req_.max_response_bytes);
    } else if (stage_ == std::string_view{"resolve"}
               || stage_ == std::string_view{"connect"}) {
      what = fmt::format("{} failed: {}", stage_, ec.message());
    } else if (stage_ == std::string_view{"TLS handshake"}) {
      code = errc::http_tls_failed;
      what = fmt::format("TLS handshake failed: {}", ec.message());
      auto verify = SSL_get_verify_result(tls_->native_handle());
      if (verify != X509_V_OK)
        what += fmt::format(" ({})", X509_verify_cert_error_string(verify));
    } else if (ec.category() == asio::error::get_ssl_category()) {
      // A TLS alert after the handshake, e.g. TLS 1.3 servers reject a
      // missing client certificate only when the client starts reading.
      code = errc::http_tls_failed;
      what = fmt::format("TLS error during {}: {}", stage_, ec.message());
    } else if (ec.category()
                 == http::make_error_code(http::error::end_of_stream).category()
               || ec == asio::error::eof
               || ec == ssl::error::stream_truncated) {
      code = errc::http_malformed_response;
      if (ec == http::error::end_of_stream || ec == asio::error::eof
          || ec == http::error::partial_message
          || ec == ssl::error::stream_truncated)
        what = fmt::format("connection closed before a complete response "
                           "(during {})",
                           stage_);
      else
        what = fmt::format("malformed response: {}", ec.message());
    } else {
      what
        = fmt::format("connection failed during {}: {}", stage_, ec.message());
    }
    auto err = make_error(code, fmt::format("{}: {}", where_, what));
    http_log().debug("{}", err.message);
    finish(std::move(err));
  }

  void finish(expected<http_response> result) {
    if (finished_)
      return;
    finished_ = true;
    resolve_timer_.cancel();
    resolver_.cancel();
    beast::error_code ignored;
    tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    tcp().close();
    owner_.sessions.erase(id_);
    auto done = std::move(done_);
    http_engine::impl::invoke(done, std::move(result));
  }

  http_engine::impl& owner_;
  uint64_t id_;
  http_request req_;
  parsed_url url_;
  std::string where_;
  http_engine::callback done_;
  steady::time_point started_;
  steady::time_point deadline_;
  const char* stage_ = "start";
  bool finished_ = false;
  tcp::resolver resolver_;
  asio::steady_timer resolve_timer_;
  beast::tcp_stream plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
  http::request<http::string_body> request_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::string_body>> parser_;
};

} // namespace

http_engine::impl::~impl() {
  // Sessions still referenced here (only if run() never drained them) go
  // before the io_context that their sockets belong to.
  sessions.clear();
}

void http_engine::impl::start(http_request req, callback done) {
  {
    std::lock_guard<std::mutex> lock{mtx};
    if (!stopped) {
      // Posted before `shutdown` posts abort_all (same lock), so abort_all
      // sees this exchange.
      asio::post(ioc, [self = shared_from_this(), req = std::move(req),
                       done = std::move(done)]() mutable {
        self->begin(std::move(req), std::move(done));
      });
      return;
    }
  }
  invoke(done,
         make_error(errc::http_shutdown,
                    fmt::format("{}: HTTP client shut down", describe(req))));
}

void http_engine::impl::begin(http_request req, callback done) {
  if (draining)
    return invoke(done, make_error(errc::http_shutdown,
                                   fmt::format("{}: HTTP client shut down",
                                               describe(req))));
  if (auto err = validate_request(req))
    return invoke(done, std::move(err));
  auto url = parse_url(req.url);
  if (url->is_tls() && tls_error)
    return invoke(done,
                  make_error(errc::http_tls_failed,
                             fmt::format("{} {}: {}", req.method,
                                         url->to_string(), tls_error.message)));
  auto id = ++next_id;
  auto where = describe(req);
  std::shared_ptr<session> s;
  try {
    // `done` is copied, not moved: it must survive a throwing constructor.
    s = std::make_shared<session>(*this, id, std::move(req), std::move(*url),
                                  done);
    sessions.emplace(id, s);
    s->run();
  } catch (const std::exception& e) {
    // Allocation or socket creation failed: the exchange cannot start.
    auto what = fmt::format("cannot start exchange: {}", e.what());
    if (s)
      s->abort(errc::http_connect_failed, what);
    else
      invoke(done, make_error(errc::http_connect_failed,
                              fmt::format("{}: {}", where, what)));
  }
}

void http_engine::impl::abort_all() {
  draining = true;
  auto pending = std::move(sessions);
  sessions.clear();
  if (!pending.empty())
    http_log().debug("shutting down with {} pending exchange(s)",
                     pending.size());
  for (auto& [id, s] : pending)
    s->abort(errc::http_shutdown, "HTTP client shut down");
}

void http_engine::impl::shutdown() {
  {
    std::lock_guard<std::mutex> lock{mtx};
    if (stopped)
      return;
    stopped = true;
  }
  asio::post(ioc, [self = shared_from_this()] { self->abort_all(); });
  guard.reset();
  if (!thread.joinable())
    return;
  if (thread.get_id() == std::this_thread::get_id())
    thread.detach(); // the thread holds `impl` alive until run() returns
  else
    thread.join();
}

http_engine::http_engine(http_tls_settings tls)
  : impl_(std::make_shared<impl>(std::move(tls))) {
  impl_->launch();
}

http_engine::~http_engine() {
  shutdown();
}

void http_engine::start(http_request req, callback done) {
  impl_->start(std::move(req), std::move(done));
}

void http_engine::shutdown() {
  impl_->shutdown();
}

const error& http_engine::tls_setup_error() const noexcept {
  return impl_->tls_error;
}

} // namespace troupe::runtime
