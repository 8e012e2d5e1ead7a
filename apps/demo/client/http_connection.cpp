#include "client/http_connection.hpp"

#include <charconv>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "troupe/runtime/errc.hpp"

namespace troupe::demo::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using runtime::errc;

std::optional<endpoint> parse_endpoint(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return std::nullopt;
  auto host = text.substr(0, colon);
  auto port_text = text.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']')
      return std::nullopt;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return std::nullopt;
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(),
                                   port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || end != port_text.data() + port_text.size()
      || port == 0 || port > 65535)
    return std::nullopt;
  return endpoint{std::string{host}, static_cast<uint16_t>(port)};
}

std::string to_string(const endpoint& ep) {
  if (ep.host.find(':') != std::string::npos)
    return fmt::format("[{}]:{}", ep.host, ep.port);
  return fmt::format("{}:{}", ep.host, ep.port);
}

struct http_connection::impl {
  endpoint ep;
  std::chrono::milliseconds timeout;
  asio::io_context ioc;
  beast::tcp_stream stream{ioc};
  beast::flat_buffer buf;
  bool open = false;

  // Starts an async operation with a handler that records its error code,
  // then runs the io context until it completed (the stream's expiry bounds
  // it: beast::error::timeout).
  template <class Start>
  error_code wait(Start start) {
    error_code result = asio::error::would_block;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  void close() {
    error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream.close();
    buf.clear();
    open = false;
  }

  runtime::error connect() {
    tcp::resolver resolver{ioc};
    error_code ec;
    auto found = resolver.resolve(ep.host, std::to_string(ep.port), ec);
    if (ec)
      return runtime::make_error(
        errc::http_connect_failed,
        fmt::format("cannot resolve {}: {}", to_string(ep), ec.message()));
    stream.expires_after(timeout);
    ec = wait([&](auto h) { stream.async_connect(found, std::move(h)); });
    if (ec == beast::error::timeout)
      return runtime::make_error(errc::http_timeout,
                                 fmt::format("connecting to {} took more "
                                             "than {} ms",
                                             to_string(ep), timeout.count()));
    if (ec)
      return runtime::make_error(
        errc::http_connect_failed,
        fmt::format("cannot connect to {}: {}", to_string(ep), ec.message()));
    stream.socket().set_option(tcp::no_delay{true}, ec);
    open = true;
    return {};
  }

  // One exchange on the open connection. `nothing_read` tells whether the
  // failure came before any byte of the answer.
  runtime::expected<http_result>
  exchange(const http::request<http::string_body>& req, bool& nothing_read) {
    nothing_read = true;
    stream.expires_after(timeout);
    auto ec = wait([&](auto h) { http::async_write(stream, req, h); });
    if (!ec) {
      http::response_parser<http::string_body> p;
      p.body_limit(1024 * 1024);
      p.skip(req.method() == http::verb::head);
      ec = wait([&](auto h) { http::async_read(stream, buf, p, h); });
      nothing_read = p.got_some() == false;
      if (!ec) {
        auto res = p.release();
        if (!res.keep_alive())
          close();
        return http_result{res.result_int(), std::move(res.body())};
      }
    }
    close();
    if (ec == beast::error::timeout)
      return runtime::make_error(errc::http_timeout,
                                 fmt::format("{} did not answer within {} ms",
                                             to_string(ep), timeout.count()));
    return runtime::make_error(
      errc::http_malformed_response,
      fmt::format("exchange with {} failed: {}", to_string(ep), ec.message()));
  }
};

http_connection::http_connection(endpoint ep, std::chrono::milliseconds timeout)
  : impl_(std::make_unique<impl>()) {
  impl_->ep = std::move(ep);
  impl_->timeout = timeout;
}

http_connection::~http_connection() {
  impl_->close();
}

runtime::expected<http_result> http_connection::request(std::string_view method,
                                                        std::string_view target,
                                                        std::string_view body) {
  auto verb = http::string_to_verb({method.data(), method.size()});
  if (verb == http::verb::unknown)
    return runtime::make_error(errc::http_bad_request,
                               fmt::format("unknown method {}", method));
  http::request<http::string_body> req{
    verb, beast::string_view{target.data(), target.size()}, 11};
  req.set(http::field::host, to_string(impl_->ep));
  if (!body.empty())
    req.set(http::field::content_type, "application/json");
  req.body() = std::string{body};
  req.keep_alive(true);
  req.prepare_payload();
  auto reused = impl_->open;
  if (!impl_->open)
    if (auto err = impl_->connect())
      return err;
  bool nothing_read = true;
  auto res = impl_->exchange(req, nothing_read);
  if (res || !reused || !nothing_read
      || res.error().code == static_cast<uint8_t>(errc::http_timeout))
    return res;
  // The server closed the idle connection: once more on a fresh one.
  if (auto err = impl_->connect())
    return err;
  return impl_->exchange(req, nothing_read);
}

void http_connection::close() {
  impl_->close();
}

const endpoint& http_connection::peer() const noexcept {
  return impl_->ep;
}

} // namespace troupe::demo::client
