// The Beast server of the Lease API emulator: accepts connections, reads
// HTTP/1.1 requests (keep-alive, Expect: 100-continue, body limit), applies
// the chosen fault and writes the answers the request logic
// (k8s_api_emulator.cpp) produces. One strand per connection.

#include <algorithm>
#include <optional>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "troupe/test/k8s_api_emulator_impl.hpp"

namespace troupe::test {

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using impl = k8s_api_emulator::impl;
using namespace std::chrono_literals;

// Body bytes read past the limit before giving up on the connection: a
// body up to limit + slack is read whole (413, connection kept), a larger
// one ends the connection after the 413.
constexpr uint64_t read_slack = 1 << 20;

// Header bytes accepted (Go's net/http default is 1 MiB).
constexpr uint32_t header_limit = 64 * 1024;

bool is_http_error(const error_code& ec) {
  return &ec.category()
         == &http::make_error_code(http::error::bad_target).category();
}

// One accepted connection; kept alive by its pending handlers (or by the
// emulator's list of hung requests).
class session : public std::enable_shared_from_this<session>,
                public k8s_hung_request {
public:
  session(impl& srv, tcp::socket sock)
    : srv_(srv), stream_(std::move(sock), srv.ssl_ctx),
      timer_(stream_.get_executor()) {
    srv_.opened();
  }

  ~session() override {
    srv_.closed();
  }

  void start() {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (!self->srv_.opts.tls)
        return self->read_header();
      self->stream_.async_handshake(ssl::stream_base::server,
                                    [self](error_code ec) {
                                      if (ec) {
                                        self->srv_.tls_failed();
                                        return self->close();
                                      }
                                      self->read_header();
                                    });
    });
  }

  void resume() override {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      self->keep_alive_ = false;
      self->answer(self->srv_.serve(self->req_, self->plan_.seq));
    });
  }

private:
  template <class F>
  void with_stream(F&& f) {
    if (srv_.opts.tls)
      f(stream_);
    else
      f(stream_.next_layer());
  }

  void read_header() {
    parser_.emplace();
    parser_->header_limit(header_limit);
    parser_->body_limit(srv_.opts.max_body_bytes + read_slack);
    with_stream([this](auto& s) {
      http::async_read_header(
        s, buf_, *parser_, [self = shared_from_this()](error_code ec, size_t) {
          self->on_header(ec);
        });
    });
  }

  void on_header(error_code ec) {
    // A Content-Length beyond the body limit fails already here.
    if (ec == http::error::body_limit)
      return on_body(ec);
    if (ec)
      return on_read_error(ec);
    auto& req = parser_->get();
    if (!beast::iequals(req[http::field::expect], "100-continue"))
      return read_body();
    continue_ = {http::status::continue_, req.version()};
    with_stream([this](auto& s) {
      http::async_write(s, continue_,
                        [self = shared_from_this()](error_code ec, size_t) {
                          if (ec)
                            return self->close();
                          self->read_body();
                        });
    });
  }

  void read_body() {
    with_stream([this](auto& s) {
      http::async_read(s, buf_, *parser_,
                       [self = shared_from_this()](error_code ec, size_t) {
                         self->on_body(ec);
                       });
    });
  }

  void on_read_error(error_code ec) {
    if (!is_http_error(ec) || ec == http::error::end_of_stream)
      return close();
    // Not HTTP: answer as Go's net/http does, then close.
    keep_alive_ = false;
    k8s_reply r;
    r.content_type = "text/plain; charset=utf-8";
    r.status = ec == http::error::header_limit ? 431 : 400;
    r.body = r.status == 431 ? "431 Request Header Fields Too Large"
                             : "400 Bad Request";
    answer(std::move(r));
  }

  void on_body(error_code ec) {
    bool truncated = ec == http::error::body_limit;
    if (ec && !truncated)
      return on_read_error(ec);
    auto& req = parser_->get();
    req_ = {};
    req_.method = std::string{req.method_string()};
    req_.target = std::string{req.target()};
    for (const auto& field : req)
      req_.headers.push_back(
        {std::string{field.name_string()}, std::string{field.value()}});
    if (!truncated)
      req_.body = std::move(req.body());
    req_.truncated = truncated;
    keep_alive_ = req.keep_alive() && !truncated;
    unread_body_ = truncated;
    plan_ = srv_.begin(req_);
    if (!plan_.faulted || plan_.fault.delay.count() == 0)
      return act();
    timer_.expires_after(plan_.fault.delay);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec)
        return self->close();
      self->act();
    });
  }

  void act() {
    using action = k8s_fault::action;
    switch (plan_.faulted ? plan_.fault.what : action::none) {
      case action::none:
        return answer(srv_.serve(req_, plan_.seq));
      case action::answer:
        return answer(srv_.fault_reply(req_, plan_.fault, plan_.seq));
      case action::drop:
        return close();
      case action::apply_then_drop:
        srv_.serve(req_, plan_.seq, false);
        return close();
      case action::hang:
        // Parked: nothing is pending, the emulator's list keeps us alive.
        return srv_.park(shared_from_this());
    }
  }

  void answer(k8s_reply reply) {
    res_ = {};
    res_.version(11);
    res_.result(reply.status);
    res_.set(http::field::content_type, reply.content_type);
    res_.set(http::field::cache_control, "no-cache, private");
    for (auto& h : reply.headers)
      res_.set(h.name, h.value);
    res_.body() = std::move(reply.body);
    res_.keep_alive(keep_alive_);
    res_.prepare_payload();
    with_stream([this](auto& s) {
      http::async_write(s, res_,
                        [self = shared_from_this()](error_code ec, size_t) {
                          if (ec)
                            return self->close();
                          if (!self->keep_alive_)
                            return self->finish();
                          self->read_header();
                        });
    });
  }

  // Closes after an answer. With an unread body, first half-closes and
  // drains what the client still sends (briefly), so that closing does not
  // reset the connection before the client has read the answer.
  void finish() {
    if (!unread_body_)
      return close();
    error_code ignored;
    stream_.next_layer().shutdown(tcp::socket::shutdown_send, ignored);
    timer_.expires_after(1s);
    timer_.async_wait(
      [self = shared_from_this()](error_code) { self->close(); });
    drain();
  }

  void drain() {
    stream_.next_layer().async_read_some(
      asio::buffer(sink_), [self = shared_from_this()](error_code ec, size_t) {
        if (ec)
          return self->close();
        self->drain();
      });
  }

  void close() {
    error_code ignored;
    timer_.cancel();
    stream_.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.next_layer().close(ignored);
  }

  impl& srv_;
  ssl::stream<tcp::socket> stream_;
  asio::steady_timer timer_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::empty_body> continue_;
  http::response<http::string_body> res_;
  impl::incoming req_;
  impl::plan plan_;
  bool keep_alive_ = true;
  bool unread_body_ = false;
  char sink_[4096];
};

} // namespace

k8s_api_emulator::impl::impl(k8s_api_emulator_options o)
  : opts(std::move(o)),
    store(k8s_lease_store_options{opts.namespaces, opts.planted_bug}),
    token(opts.token), ssl_ctx(ssl::context::tls_server),
    ioc(static_cast<int>(std::max<size_t>(1, opts.io_threads))), acceptor(ioc) {
}

k8s_api_emulator::impl::~impl() {
  stop_server();
}

void k8s_api_emulator::impl::start_server() {
  if (opts.tls) {
    ssl_ctx.set_options(ssl::context::default_workarounds
                        | ssl::context::no_sslv2 | ssl::context::no_sslv3
                        | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    ssl_ctx.use_certificate_chain_file(opts.cert_file);
    ssl_ctx.use_private_key_file(opts.key_file, ssl::context::pem);
    if (!opts.client_ca_file.empty()) {
      ssl_ctx.load_verify_file(opts.client_ca_file);
      ssl_ctx.set_verify_mode(ssl::verify_peer
                              | ssl::verify_fail_if_no_peer_cert);
    }
  }
  tcp::endpoint ep{asio::ip::make_address(opts.host), opts.port};
  acceptor.open(ep.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  acceptor.bind(ep);
  acceptor.listen(asio::socket_base::max_listen_connections);
  port = acceptor.local_endpoint().port();
  accept();
  for (size_t i = 0; i < std::max<size_t>(1, opts.io_threads); ++i)
    threads.emplace_back([this] { ioc.run(); });
}

void k8s_api_emulator::impl::stop_server() {
  ioc.stop();
  for (auto& t : threads)
    if (t.joinable())
      t.join();
  threads.clear();
  // Hung sessions go now, while the io_context they belong to still exists;
  // outside the lock, as their destructors take it.
  std::vector<std::shared_ptr<k8s_hung_request>> parked;
  {
    std::lock_guard<std::mutex> guard{mtx};
    parked.swap(hung);
  }
}

void k8s_api_emulator::impl::accept() {
  acceptor.async_accept(
    asio::make_strand(ioc), [this](error_code ec, tcp::socket sock) {
      if (ec == asio::error::operation_aborted)
        return;
      if (!ec)
        std::make_shared<session>(*this, std::move(sock))->start();
      accept();
    });
}

void k8s_api_emulator::impl::opened() {
  std::lock_guard<std::mutex> guard{mtx};
  ++counters.connections;
  ++counters.open_connections;
  counters.max_concurrent_connections
    = std::max(counters.max_concurrent_connections, counters.open_connections);
}

void k8s_api_emulator::impl::closed() {
  std::lock_guard<std::mutex> guard{mtx};
  --counters.open_connections;
}

void k8s_api_emulator::impl::tls_failed() {
  std::lock_guard<std::mutex> guard{mtx};
  ++counters.tls_failures;
}

} // namespace troupe::test
