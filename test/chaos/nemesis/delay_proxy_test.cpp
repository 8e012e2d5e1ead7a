// The delay proxy with real sockets on loopback: an echo server upstream,
// clients through the proxy. Timing checks have lower bounds from the delay
// and generous upper bounds (a loaded host), never tight ones.

#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "troupe/chaos/delay_proxy.hpp"

using namespace troupe::chaos;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

/// A TCP echo server on 127.0.0.1 with its own io thread. A connection
/// whose data contains "close" is closed by the server.
class echo_server {
public:
  echo_server() {
    acceptor_.open(tcp::v4());
    acceptor_.set_option(tcp::acceptor::reuse_address(true));
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    accept();
    thread_ = std::thread{[this] { io_.run(); }};
  }

  ~echo_server() {
    io_.stop();
    thread_.join();
  }

  uint16_t port() const {
    return acceptor_.local_endpoint().port();
  }

  /// Connections open on the server's side.
  int open() const {
    return open_;
  }

private:
  struct conn : std::enable_shared_from_this<conn> {
    conn(tcp::socket s, std::atomic<int>& open)
      : sock(std::move(s)), open_(open) {
      ++open_;
    }
    ~conn() {
      --open_;
    }
    void read() {
      sock.async_read_some(
        asio::buffer(buf), [self = shared_from_this()](auto ec, size_t n) {
          if (ec)
            return;
          std::string got(self->buf.data(), n);
          if (got.find("close") != std::string::npos)
            return; // the last reference goes: the socket closes
          asio::async_write(self->sock, asio::buffer(self->buf.data(), n),
                            [self](auto ec, size_t) {
                              if (!ec)
                                self->read();
                            });
        });
    }
    tcp::socket sock;
    std::array<char, 8192> buf{};
    std::atomic<int>& open_;
  };

  void accept() {
    acceptor_.async_accept([this](auto ec, tcp::socket s) {
      if (ec)
        return;
      std::make_shared<conn>(std::move(s), open_)->read();
      accept();
    });
  }

  // Before io_: its pending handlers hold connections that count down.
  std::atomic<int> open_{0};
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  std::thread thread_;
};

/// A blocking client socket connected to 127.0.0.1:`port`.
class client {
public:
  explicit client(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr))
            == 0);
  }

  ~client() {
    close();
  }

  void close() {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = -1;
  }

  void send(const std::string& text) {
    size_t sent = 0;
    while (sent < text.size()) {
      auto n
        = ::send(fd_, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
      REQUIRE(n > 0);
      sent += static_cast<size_t>(n);
    }
  }

  /// Reads until `n` bytes came, EOF, or `bound` passed.
  std::string receive(size_t n, std::chrono::milliseconds bound = 10s) {
    std::string got;
    auto until = std::chrono::steady_clock::now() + bound;
    while (got.size() < n) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0
          || ::poll(&p, 1, static_cast<int>(left.count())) != 1)
        break;
      char buf[65536];
      auto r = ::recv(fd_, buf, std::min(sizeof(buf), n - got.size()), 0);
      if (r <= 0) {
        eof_ = r == 0;
        break;
      }
      got.append(buf, static_cast<size_t>(r));
    }
    return got;
  }

  /// True if the peer closed within `bound` (data before the close is
  /// discarded).
  bool closed_by_peer(std::chrono::milliseconds bound = 10s) {
    receive(std::numeric_limits<size_t>::max() / 2, bound);
    return eof_;
  }

private:
  int fd_;
  bool eof_ = false;
};

std::unique_ptr<delay_proxy> start_proxy(uint16_t upstream,
                                         std::chrono::milliseconds delay) {
  delay_proxy_config cfg;
  cfg.upstream_port = upstream;
  cfg.delay = delay;
  auto p = delay_proxy::start(cfg);
  INFO((p ? std::string{} : p.error().message));
  REQUIRE(p);
  return std::move(*p);
}

template <class Predicate>
bool eventually(Predicate ok, std::chrono::milliseconds bound = 10s) {
  auto until = std::chrono::steady_clock::now() + bound;
  while (!ok()) {
    if (std::chrono::steady_clock::now() > until)
      return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

} // namespace

TEST_CASE("delay proxy: without a delay it passes bytes through both ways") {
  echo_server echo;
  auto proxy = start_proxy(echo.port(), 0ms);
  CHECK(proxy->port() != 0);
  CHECK(proxy->delay() == 0ms);
  client c{proxy->port()};
  c.send("hello");
  CHECK(c.receive(5) == "hello");
  // More than the proxy holds per direction (1 MiB): reading pauses and
  // resumes, nothing is lost or reordered.
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>('a' + i % 26);
  std::thread writer{[&] { c.send(big); }};
  auto back = c.receive(big.size(), 60s);
  writer.join();
  CHECK(back.size() == big.size());
  CHECK(back == big);
  CHECK(proxy->accepted() == 1);
}

TEST_CASE("delay proxy: with a delay of 300ms a round trip takes at least "
          "300ms each way, and setting 0 removes it") {
  echo_server echo;
  auto proxy = start_proxy(echo.port(), 0ms);
  proxy->set_delay(300ms);
  CHECK(proxy->delay() == 300ms);
  client c{proxy->port()};
  for (int i = 0; i < 3; ++i) {
    auto start = std::chrono::steady_clock::now();
    c.send("ping");
    CHECK(c.receive(4) == "ping");
    auto took = std::chrono::steady_clock::now() - start;
    CHECK(took >= 600ms); // 300ms to the upstream, 300ms back
    CHECK(took < 10s);
  }
  proxy->set_delay(0ms);
  auto start = std::chrono::steady_clock::now();
  c.send("fast");
  CHECK(c.receive(4) == "fast");
  // Not a timing assertion: only that the 300ms are gone for a new chunk.
  CHECK(std::chrono::steady_clock::now() - start < 600ms * 10);
  proxy->set_delay(-5ms);
  CHECK(proxy->delay() == 0ms);
}

TEST_CASE("delay proxy: chunks sent in a burst overlap their delays") {
  echo_server echo;
  auto proxy = start_proxy(echo.port(), 200ms);
  client c{proxy->port()};
  auto start = std::chrono::steady_clock::now();
  std::string sent;
  for (int i = 0; i < 10; ++i) {
    auto part = "part" + std::to_string(i) + ";";
    c.send(part);
    sent += part;
    std::this_thread::sleep_for(20ms);
  }
  CHECK(c.receive(sent.size()) == sent);
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 400ms);
  // Ten chunks delayed one after another would take 4s.
  CHECK(took < 4s);
}

TEST_CASE("delay proxy: closing one side closes the other") {
  echo_server echo;
  auto proxy = start_proxy(echo.port(), 50ms);
  SECTION("the client closes: the upstream connection closes") {
    client c{proxy->port()};
    c.send("x");
    CHECK(c.receive(1) == "x");
    CHECK(echo.open() == 1);
    c.close();
    CHECK(eventually([&] { return echo.open() == 0; }));
    CHECK(eventually([&] { return proxy->open_connections() == 0; }));
  }
  SECTION("the upstream closes: the client sees the end") {
    client c{proxy->port()};
    c.send("x");
    CHECK(c.receive(1) == "x");
    c.send("close");
    CHECK(c.closed_by_peer());
    CHECK(eventually([&] { return proxy->open_connections() == 0; }));
  }
  SECTION("no upstream: the client sees the end at once") {
    uint16_t dead_port = 0;
    {
      echo_server gone;
      dead_port = gone.port();
    }
    auto orphan = start_proxy(dead_port, 0ms);
    client c{orphan->port()};
    CHECK(c.closed_by_peer());
  }
}

TEST_CASE("delay proxy: many concurrent connections each get their own "
          "bytes back") {
  echo_server echo;
  auto proxy = start_proxy(echo.port(), 100ms);
  constexpr int n = 64;
  std::vector<std::unique_ptr<client>> cs;
  for (int i = 0; i < n; ++i)
    cs.push_back(std::make_unique<client>(proxy->port()));
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i)
    cs[i]->send("client-" + std::to_string(i) + "|");
  for (int i = 0; i < n; ++i) {
    auto want = "client-" + std::to_string(i) + "|";
    CHECK(cs[i]->receive(want.size()) == want);
  }
  // All in flight together: far less than n round trips of 200ms.
  CHECK(std::chrono::steady_clock::now() - start < 200ms * n / 2);
  CHECK(proxy->accepted() == n);
  CHECK(echo.open() == n);
  cs.clear();
  CHECK(eventually([&] { return proxy->open_connections() == 0; }));
  CHECK(eventually([&] { return echo.open() == 0; }));
}

TEST_CASE("delay proxy: a bad listen address or a port in use is an error "
          "naming it") {
  delay_proxy_config cfg;
  cfg.upstream_port = 1;
  cfg.listen_host = "not-an-ip";
  auto bad = delay_proxy::start(cfg);
  REQUIRE(!bad);
  CHECK(bad.error().category == "chaos.delay_proxy");
  CHECK(bad.error().message
        == "delay proxy: listen address \"not-an-ip\" is not an IP address");
  echo_server taken;
  cfg.listen_host = "127.0.0.1";
  cfg.listen_port = taken.port();
  auto in_use = delay_proxy::start(cfg);
  REQUIRE(!in_use);
  CHECK(in_use.error().message.find("cannot listen on 127.0.0.1:"
                                    + std::to_string(taken.port()))
        != std::string::npos);
}
