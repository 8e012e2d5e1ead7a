#include "troupe/management/http_server.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "troupe/management/errc.hpp"

namespace troupe::management {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

namespace {

// Header bytes accepted per request.
constexpr uint32_t header_limit = 16 * 1024;

class session;

} // namespace

struct http_server::impl : std::enable_shared_from_this<http_server::impl> {
  impl(http_server_settings s, handler h)
    : settings(std::move(s)), on_request(std::move(h)), acceptor(ioc),
      workers(settings.workers) {}

  void accept();

  http_server_settings settings;
  handler on_request;
  asio::io_context ioc;
  tcp::acceptor acceptor;
  // Runs the handler; the answers go back to the io thread.
  asio::thread_pool workers;
  std::thread io_thread;
  uint16_t port = 0;
  std::atomic<bool> stopped{false};
  // Open sessions (io thread only), closed on stop.
  std::set<std::shared_ptr<session>> sessions;
};

namespace {

// One connection: reads requests, answers each with the handler's response.
class session : public std::enable_shared_from_this<session> {
public:
  session(http_server::impl& srv, tcp::socket sock)
    : srv_(srv), stream_(std::move(sock)) {}

  void start() {
    read();
  }

  // Answers 503 and closes: too many connections.
  void refuse() {
    http_response r;
    r.status = 503;
    r.body = R"({"error":"too many management connections"})";
    keep_alive_ = false;
    write(std::move(r), false);
  }

  void close() {
    error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    // tcp_stream's close also cancels its timeout timer.
    stream_.close();
    srv_.sessions.erase(shared_from_this());
  }

private:
  void read() {
    parser_.emplace();
    parser_->header_limit(header_limit);
    parser_->body_limit(srv_.settings.max_body);
    stream_.expires_after(srv_.settings.idle_timeout);
    http::async_read(stream_, buf_, *parser_,
                     [self = shared_from_this()](error_code ec, size_t) {
                       self->on_read(ec);
                     });
  }

  void on_read(error_code ec) {
    if (ec == http::error::end_of_stream || ec == beast::error::timeout
        || ec == asio::error::operation_aborted
        || ec == asio::error::connection_reset || ec == asio::error::eof)
      return close();
    if (ec) {
      keep_alive_ = false;
      http_response r;
      if (ec == http::error::body_limit) {
        r.status = 413;
        r.body = fmt::format(R"({{"error":"the body exceeds {} bytes"}})",
                             srv_.settings.max_body);
      } else if (ec == http::error::header_limit) {
        r.status = 431;
        r.body = R"({"error":"the request's header is too large"})";
      } else {
        r.status = 400;
        r.body = R"({"error":"malformed HTTP request"})";
      }
      return write(std::move(r), false);
    }
    auto& req = parser_->get();
    http_request in;
    in.method = std::string{req.method_string()};
    in.target = std::string{req.target()};
    in.authorization = std::string{req[http::field::authorization]};
    in.content_type = std::string{req[http::field::content_type]};
    in.body = std::move(req.body());
    keep_alive_ = req.keep_alive();
    version_ = req.version();
    auto head = req.method() == http::verb::head;
    if (srv_.settings.answer_inline && srv_.settings.answer_inline(in))
      return write(run_handler(in), head);
    // The io thread must not wait for the handler: it serves every
    // connection. The work guard keeps it running until the answer is
    // back, also during stop (the write then fails on the closed socket).
    asio::post(srv_.workers, [self = shared_from_this(), in = std::move(in),
                              head, guard = asio::make_work_guard(srv_.ioc)] {
      auto out = self->run_handler(in);
      asio::post(self->srv_.ioc, [self, out = std::move(out), head]() mutable {
        self->write(std::move(out), head);
      });
    });
  }

  // On a worker. A handler that throws (anything) answers 500: an
  // exception must not end a worker.
  http_response run_handler(const http_request& in) {
    try {
      return srv_.on_request(in);
    } catch (...) {
      http_response out;
      out.status = 500;
      out.body = R"({"error":"internal error"})";
      return out;
    }
  }

  void write(http_response r, bool head) {
    res_ = {};
    res_.version(version_);
    res_.result(r.status);
    res_.set(http::field::content_type, r.content_type);
    res_.set(http::field::cache_control, "no-store");
    if (!r.allow.empty())
      res_.set(http::field::allow, r.allow);
    res_.keep_alive(keep_alive_);
    auto size = r.body.size();
    if (!head)
      res_.body() = std::move(r.body);
    // HEAD: the length of what GET would send, no body.
    res_.content_length(size);
    stream_.expires_after(srv_.settings.idle_timeout);
    http::async_write(stream_, res_,
                      [self = shared_from_this()](error_code ec, size_t) {
                        if (ec || !self->keep_alive_)
                          return self->close();
                        self->read();
                      });
  }

  http_server::impl& srv_;
  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> res_;
  bool keep_alive_ = true;
  unsigned version_ = 11;
};

} // namespace

void http_server::impl::accept() {
  acceptor.async_accept(
    ioc, [self = shared_from_this()](error_code ec, tcp::socket sock) {
      if (self->stopped.load() || !self->acceptor.is_open())
        return;
      if (!ec) {
        auto s = std::make_shared<session>(*self, std::move(sock));
        auto full = self->sessions.size() >= self->settings.max_connections;
        self->sessions.insert(s);
        if (full)
          s->refuse();
        else
          s->start();
      }
      self->accept();
    });
}

runtime::expected<std::unique_ptr<http_server>>
http_server::start(http_server_settings settings, handler h) {
  if (settings.workers == 0)
    return runtime::make_error(
      errc::invalid_settings,
      "management: an HTTP server needs at least 1 worker (workers = 0)");
  auto x = std::make_shared<impl>(std::move(settings), std::move(h));
  auto bad = [&](const std::string& why) {
    return runtime::make_error(
      errc::invalid_settings,
      fmt::format("management: cannot listen on {}:{}: {}", x->settings.bind,
                  x->settings.port, why));
  };
  error_code ec;
  auto address = asio::ip::make_address(x->settings.bind, ec);
  if (ec)
    return bad("management.bind is not an IP address");
  tcp::endpoint ep{address, x->settings.port};
  x->acceptor.open(ep.protocol(), ec);
  if (!ec)
    x->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec)
    x->acceptor.bind(ep, ec);
  if (!ec)
    x->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return bad(ec.message());
  x->port = x->acceptor.local_endpoint().port();
  x->accept();
  x->io_thread = std::thread{[x] { x->ioc.run(); }};
  return std::unique_ptr<http_server>{new http_server{x}};
}

http_server::http_server(std::shared_ptr<impl> x) : impl_(std::move(x)) {}

http_server::~http_server() {
  stop();
}

uint16_t http_server::port() const noexcept {
  return impl_->port;
}

void http_server::stop() {
  if (impl_->stopped.exchange(true))
    return;
  // Closing the acceptor and every connection completes the pending
  // operations (aborted); the io thread's run() then returns, and no
  // handler keeps `impl` alive.
  asio::post(impl_->ioc, [x = impl_] {
    error_code ec;
    x->acceptor.close(ec);
    auto open = x->sessions;
    for (auto& s : open)
      s->close();
  });
  if (impl_->io_thread.joinable())
    impl_->io_thread.join();
  impl_->workers.join();
}

} // namespace troupe::management
