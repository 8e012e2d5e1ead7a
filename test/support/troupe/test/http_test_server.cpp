#include "troupe/test/http_test_server.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include "troupe/runtime/errc.hpp"

namespace troupe::test {

namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

bool iequals(std::string_view a, std::string_view b) {
  auto lower = [](char c) {
    return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  };
  return a.size() == b.size()
         && std::equal(a.begin(), a.end(), b.begin(),
                       [&](char x, char y) { return lower(x) == lower(y); });
}

std::string_view trim(std::string_view x) {
  while (!x.empty() && (x.front() == ' ' || x.front() == '\t'))
    x.remove_prefix(1);
  while (!x.empty() && (x.back() == ' ' || x.back() == '\t'))
    x.remove_suffix(1);
  return x;
}

const char* reason(uint16_t status) {
  switch (status) {
    case 200:
      return "OK";
    case 404:
      return "Not Found";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

std::string render(const http_behaviour& b) {
  std::string out
    = fmt::format("HTTP/1.1 {} {}\r\n", b.status, reason(b.status));
  for (const auto& h : b.headers)
    out += fmt::format("{}: {}\r\n", h.name, h.value);
  out += fmt::format("Content-Length: {}\r\nConnection: close\r\n\r\n",
                     b.body.size());
  out += b.body;
  return out;
}

// Parses the request line and headers (everything before the blank line).
recorded_request parse_head(std::string_view head) {
  recorded_request req;
  auto line_end = head.find("\r\n");
  auto line = head.substr(0, line_end);
  auto sp1 = line.find(' ');
  auto sp2 = line.find(' ', sp1 + 1);
  req.method = std::string{line.substr(0, sp1)};
  if (sp1 != std::string_view::npos)
    req.target = std::string{line.substr(sp1 + 1, sp2 - sp1 - 1)};
  head.remove_prefix(line_end == std::string_view::npos ? head.size()
                                                        : line_end + 2);
  while (!head.empty()) {
    auto end = head.find("\r\n");
    auto field = head.substr(0, end);
    if (auto colon = field.find(':'); colon != std::string_view::npos)
      req.headers.push_back({std::string{trim(field.substr(0, colon))},
                             std::string{trim(field.substr(colon + 1))}});
    if (end == std::string_view::npos)
      break;
    head.remove_prefix(end + 2);
  }
  return req;
}

} // namespace

class http_test_server::impl {
public:
  explicit impl(std::optional<http_test_server_tls> tls)
    : ssl_ctx(ssl::context::tls_server), tls_mode(tls.has_value()) {
    if (tls) {
      ssl_ctx.use_certificate_chain_file(tls->cert_file);
      ssl_ctx.use_private_key_file(tls->key_file, ssl::context::pem);
      if (!tls->client_ca_file.empty()) {
        ssl_ctx.load_verify_file(tls->client_ca_file);
        ssl_ctx.set_verify_mode(ssl::verify_peer
                                | ssl::verify_fail_if_no_peer_cert);
      }
    }
    tcp::endpoint ep{asio::ip::make_address("127.0.0.1"), 0};
    acceptor.open(ep.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(ep);
    acceptor.listen(asio::socket_base::max_listen_connections);
    port = acceptor.local_endpoint().port();
    accept();
    thread = std::thread{[this] { ioc.run(); }};
  }

  ~impl() {
    ioc.stop();
    if (thread.joinable())
      thread.join();
  }

  void accept();

  http_behaviour next_behaviour() {
    std::lock_guard<std::mutex> lock{mtx};
    if (queue.empty())
      return fallback;
    auto b = std::move(queue.front());
    queue.pop_front();
    return b;
  }

  void record(recorded_request req) {
    std::lock_guard<std::mutex> lock{mtx};
    received.push_back(std::move(req));
  }

  void opened() {
    std::lock_guard<std::mutex> lock{mtx};
    ++accepted;
    ++open_now;
    max_open = std::max(max_open, open_now);
  }

  void closed() {
    std::lock_guard<std::mutex> lock{mtx};
    --open_now;
  }

  // Declared first: connections touch these while `ioc` destroys them.
  mutable std::mutex mtx;
  std::deque<http_behaviour> queue;
  http_behaviour fallback = http_behaviour::respond(200, {}, "ok");
  std::vector<recorded_request> received;
  size_t accepted = 0;
  size_t open_now = 0;
  size_t max_open = 0;
  std::atomic<size_t> handshake_failures{0};

  ssl::context ssl_ctx;
  bool tls_mode;
  asio::io_context ioc{1};
  tcp::acceptor acceptor{ioc};
  uint16_t port = 0;
  std::thread thread;
};

namespace {

// One accepted connection; kept alive by its pending handlers.
class connection : public std::enable_shared_from_this<connection> {
public:
  connection(http_test_server::impl& srv, tcp::socket sock)
    : srv_(srv), stream_(std::move(sock), srv.ssl_ctx), timer_(srv.ioc),
      behaviour_(srv.next_behaviour()) {
    srv_.opened();
  }

  ~connection() {
    srv_.closed();
  }

  void start() {
    if (behaviour_.what == http_behaviour::kind::close_immediately)
      return close();
    if (!srv_.tls_mode)
      return read_head();
    stream_.async_handshake(ssl::stream_base::server,
                            [self = shared_from_this()](error_code ec) {
                              if (ec) {
                                ++self->srv_.handshake_failures;
                                return self->close();
                              }
                              self->read_head();
                            });
  }

private:
  template <class F>
  void with_stream(F&& f) {
    if (srv_.tls_mode)
      f(stream_);
    else
      f(stream_.next_layer());
  }

  void read_head() {
    with_stream([this](auto& s) {
      asio::async_read_until(
        s, buf_, "\r\n\r\n",
        [self = shared_from_this()](error_code ec, size_t n) {
          if (ec)
            return self->close();
          self->on_head(n);
        });
    });
  }

  void on_head(size_t n) {
    std::string head{asio::buffers_begin(buf_.data()),
                     asio::buffers_begin(buf_.data()) + n - 4};
    buf_.consume(n);
    req_ = parse_head(head);
    size_t length = 0;
    if (auto* cl = req_.header("content-length"))
      length = std::stoul(*cl);
    auto missing = length > buf_.size() ? length - buf_.size() : 0;
    with_stream([this, length, missing](auto& s) {
      asio::async_read(
        s, buf_, asio::transfer_exactly(missing),
        [self = shared_from_this(), length](error_code ec, size_t) {
          if (ec)
            return self->close();
          auto data = self->buf_.data();
          self->req_.body.assign(asio::buffers_begin(data),
                                 asio::buffers_begin(data) + length);
          self->buf_.consume(length);
          self->srv_.record(self->req_);
          self->delay_then_act();
        });
    });
  }

  void delay_then_act() {
    if (behaviour_.delay.count() == 0)
      return act();
    timer_.expires_after(behaviour_.delay);
    timer_.async_wait([self = shared_from_this()](error_code ec) {
      if (ec)
        return self->close();
      self->act();
    });
  }

  void act() {
    using kind = http_behaviour::kind;
    switch (behaviour_.what) {
      case kind::respond:
        return send(render(behaviour_));
      case kind::send_raw:
        return send(behaviour_.raw);
      case kind::oversized: {
        auto b = http_behaviour::respond(200);
        b.body.assign(behaviour_.size, 'x');
        return send(render(b));
      }
      case kind::never_respond:
        return wait_for_close();
      case kind::close_immediately:
        return close();
    }
  }

  void send(std::string bytes) {
    out_ = std::move(bytes);
    with_stream([this](auto& s) {
      asio::async_write(
        s, asio::buffer(out_),
        [self = shared_from_this()](error_code, size_t) { self->close(); });
    });
  }

  // Keeps the connection open (and silent) until the client goes away.
  void wait_for_close() {
    with_stream([this](auto& s) {
      s.async_read_some(asio::buffer(sink_),
                        [self = shared_from_this()](error_code ec, size_t) {
                          if (ec)
                            return self->close();
                          self->wait_for_close();
                        });
    });
  }

  void close() {
    error_code ignored;
    stream_.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.next_layer().close(ignored);
  }

  http_test_server::impl& srv_;
  ssl::stream<tcp::socket> stream_;
  asio::steady_timer timer_;
  http_behaviour behaviour_;
  asio::streambuf buf_;
  recorded_request req_;
  std::string out_;
  char sink_[512];
};

} // namespace

void http_test_server::impl::accept() {
  acceptor.async_accept([this](error_code ec, tcp::socket sock) {
    if (ec)
      return;
    std::make_shared<connection>(*this, std::move(sock))->start();
    accept();
  });
}

http_behaviour
http_behaviour::respond(uint16_t status,
                        std::vector<runtime::http_header> headers,
                        std::string body) {
  http_behaviour b;
  b.what = kind::respond;
  b.status = status;
  b.headers = std::move(headers);
  b.body = std::move(body);
  return b;
}

http_behaviour http_behaviour::never_respond() {
  http_behaviour b;
  b.what = kind::never_respond;
  return b;
}

http_behaviour http_behaviour::close_immediately() {
  http_behaviour b;
  b.what = kind::close_immediately;
  return b;
}

http_behaviour http_behaviour::send_raw(std::string bytes) {
  http_behaviour b;
  b.what = kind::send_raw;
  b.raw = std::move(bytes);
  return b;
}

http_behaviour http_behaviour::oversized(uint64_t n) {
  http_behaviour b;
  b.what = kind::oversized;
  b.size = n;
  return b;
}

http_behaviour http_behaviour::delay_then(std::chrono::milliseconds d,
                                          http_behaviour then) {
  then.delay = d;
  return then;
}

const std::string* recorded_request::header(std::string_view name) const {
  for (const auto& h : headers)
    if (iequals(h.name, name))
      return &h.value;
  return nullptr;
}

http_test_server::http_test_server(std::optional<http_test_server_tls> tls) {
  try {
    impl_ = std::make_shared<impl>(std::move(tls));
  } catch (const std::exception& e) {
    throw std::runtime_error(
      fmt::format("http_test_server: setup failed: {}", e.what()));
  }
}

http_test_server::~http_test_server() = default;

uint16_t http_test_server::port() const noexcept {
  return impl_->port;
}

std::string http_test_server::url(std::string_view target) const {
  return url_with_host("127.0.0.1", target);
}

std::string http_test_server::url_with_host(std::string_view host,
                                            std::string_view target) const {
  return fmt::format("{}://{}:{}{}", impl_->tls_mode ? "https" : "http", host,
                     impl_->port, target);
}

void http_test_server::push(http_behaviour b) {
  std::lock_guard<std::mutex> lock{impl_->mtx};
  impl_->queue.push_back(std::move(b));
}

void http_test_server::set_default(http_behaviour b) {
  std::lock_guard<std::mutex> lock{impl_->mtx};
  impl_->fallback = std::move(b);
}

std::vector<recorded_request> http_test_server::requests() const {
  std::lock_guard<std::mutex> lock{impl_->mtx};
  return impl_->received;
}

size_t http_test_server::connections() const {
  std::lock_guard<std::mutex> lock{impl_->mtx};
  return impl_->accepted;
}

size_t http_test_server::max_concurrent_connections() const {
  std::lock_guard<std::mutex> lock{impl_->mtx};
  return impl_->max_open;
}

size_t http_test_server::tls_failures() const {
  return impl_->handshake_failures.load();
}

uint16_t closed_port() {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc, {asio::ip::make_address("127.0.0.1"), 0}};
  return acceptor.local_endpoint().port();
}

// -- test_pki
// ------------------------------------------------------------------

namespace {

constexpr const char* openssl_cnf = R"([req]
distinguished_name = dn
prompt = no
[dn]
CN = troupe-test
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
[localhost_only_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost
[wrong_name_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:wrong-name.example
[client_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
[node_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost, IP:127.0.0.1
[node_localhost_only_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:localhost
[node_wrong_name_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth, clientAuth
subjectAltName = DNS:wrong-name.example
)";

std::string read_all(const std::string& path) {
  std::ifstream in{path};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

test_pki::~test_pki() {
  if (!dir.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
}

runtime::expected<std::unique_ptr<test_pki>> make_test_pki() {
  auto pki = std::make_unique<test_pki>();
  std::string tmpl
    = (std::filesystem::temp_directory_path() / "troupe-pki-XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr)
    return runtime::make_error(runtime::errc::bad_config_file,
                               fmt::format("make_test_pki: mkdtemp({}) "
                                           "failed",
                                           tmpl));
  pki->dir = tmpl;
  auto path = [&](std::string_view name) {
    return fmt::format("{}/{}", pki->dir, name);
  };
  std::ofstream{path("openssl.cnf")} << openssl_cnf;
  auto log = path("openssl.log");
  auto cnf = path("openssl.cnf");
  auto run = [&](const std::string& args) -> runtime::error {
    auto cmd = fmt::format("openssl {} >>'{}' 2>&1", args, log);
    if (std::system(cmd.c_str()) != 0)
      return runtime::make_error(
        runtime::errc::bad_config_file,
        fmt::format("make_test_pki: `{}` failed: {}", cmd, read_all(log)));
    return {};
  };
  const std::string key_opts
    = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -noenc";
  auto make_ca = [&](std::string_view name, std::string_view cn) {
    return run(fmt::format("req -x509 -config '{}' {} -keyout '{}' -out '{}' "
                           "-days 1 -subj '/CN={}' -extensions ca_ext",
                           cnf, key_opts, path(fmt::format("{}.key", name)),
                           path(fmt::format("{}.pem", name)), cn));
  };
  auto make_leaf
    = [&](std::string_view name, std::string_view cn, std::string_view ext,
          std::string_view ca = "ca") -> runtime::error {
    auto key = path(fmt::format("{}.key", name));
    auto csr = path(fmt::format("{}.csr", name));
    auto pem = path(fmt::format("{}.pem", name));
    if (auto err = run(fmt::format("req -new -config '{}' {} -keyout '{}' "
                                   "-out '{}' -subj '/CN={}'",
                                   cnf, key_opts, key, csr, cn)))
      return err;
    return run(fmt::format("x509 -req -in '{}' -CA '{}' -CAkey '{}' "
                           "-CAcreateserial -CAserial '{}' -out '{}' -days 1 "
                           "-extfile '{}' -extensions {}",
                           csr, path(fmt::format("{}.pem", ca)),
                           path(fmt::format("{}.key", ca)),
                           path(fmt::format("{}.srl", ca)), pem, cnf, ext));
  };
  if (auto err = make_ca("ca", "troupe test CA"))
    return err;
  if (auto err = make_ca("other_ca", "troupe other CA"))
    return err;
  if (auto err = make_leaf("server", "localhost", "server_ext"))
    return err;
  if (auto err = make_leaf("localhost_only", "localhost", "localhost_only_ext"))
    return err;
  if (auto err
      = make_leaf("wrong_name", "wrong-name.example", "wrong_name_ext"))
    return err;
  if (auto err = make_leaf("client", "troupe-test-client", "client_ext"))
    return err;
  if (auto err = make_leaf("node", "localhost", "node_ext"))
    return err;
  if (auto err = make_leaf("node_localhost_only", "localhost",
                           "node_localhost_only_ext"))
    return err;
  if (auto err = make_leaf("node_wrong_name", "wrong-name.example",
                           "node_wrong_name_ext"))
    return err;
  if (auto err
      = make_leaf("node_untrusted", "localhost", "node_ext", "other_ca"))
    return err;
  pki->ca_file = path("ca.pem");
  pki->server_cert = path("server.pem");
  pki->server_key = path("server.key");
  pki->localhost_only_cert = path("localhost_only.pem");
  pki->localhost_only_key = path("localhost_only.key");
  pki->wrong_name_cert = path("wrong_name.pem");
  pki->wrong_name_key = path("wrong_name.key");
  pki->client_cert = path("client.pem");
  pki->client_key = path("client.key");
  pki->other_ca_file = path("other_ca.pem");
  pki->node_cert = path("node.pem");
  pki->node_key = path("node.key");
  pki->node_localhost_only_cert = path("node_localhost_only.pem");
  pki->node_localhost_only_key = path("node_localhost_only.key");
  pki->node_wrong_name_cert = path("node_wrong_name.pem");
  pki->node_wrong_name_key = path("node_wrong_name.key");
  pki->node_untrusted_cert = path("node_untrusted.pem");
  pki->node_untrusted_key = path("node_untrusted.key");
  return pki;
}

} // namespace troupe::test
