#include "troupe/chaos/delay_proxy.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <list>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

namespace troupe::chaos {

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;
using boost::system::error_code;

/// What one direction holds before reading pauses.
constexpr size_t max_queued_bytes = 1 << 20;

/// Counters shared by the proxy and its sessions.
struct counters {
  std::atomic<int64_t> delay_ms{0};
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> open{0};
};

/// One accepted connection and its upstream connection.
class session : public std::enable_shared_from_this<session> {
public:
  session(tcp::socket client, counters& stats)
    : client_(std::move(client)), upstream_(client_.get_executor()),
      stats_(stats), up_(client_, upstream_), down_(upstream_, client_) {
    ++stats_.open;
  }

  ~session() {
    --stats_.open;
  }

  void start(const tcp::resolver::results_type& upstream) {
    asio::async_connect(upstream_, upstream,
                        [self = shared_from_this()](error_code ec, auto&&) {
                          if (ec)
                            return self->close();
                          self->read(self->up_);
                          self->read(self->down_);
                        });
  }

  void close() {
    if (closed_)
      return;
    closed_ = true;
    error_code ignored;
    up_.timer.cancel();
    down_.timer.cancel();
    client_.close(ignored);
    upstream_.close(ignored);
  }

private:
  struct chunk {
    std::vector<char> bytes;
    clock_type::time_point due;
  };

  /// Bytes from `from` to `to`, in order, each chunk held until its due
  /// time.
  struct direction {
    direction(tcp::socket& f, tcp::socket& t)
      : from(f), to(t), timer(f.get_executor()) {}
    tcp::socket& from;
    tcp::socket& to;
    asio::steady_timer timer;
    std::array<char, 16384> buf{};
    std::deque<chunk> queue;
    size_t queued_bytes = 0;
    clock_type::time_point last_due{};
    bool writing = false;
    bool paused = false;
    bool eof = false;
  };

  void read(direction& d) {
    d.from.async_read_some(asio::buffer(d.buf), [self = shared_from_this(),
                                                 &d](error_code ec, size_t n) {
      self->on_read(d, ec, n);
    });
  }

  void on_read(direction& d, error_code ec, size_t n) {
    if (closed_)
      return;
    if (ec) {
      // EOF or an error: deliver what was read, then close both.
      d.eof = true;
      if (!d.writing)
        write_next(d);
      return;
    }
    auto delay = std::chrono::milliseconds{
      std::max<int64_t>(0, stats_.delay_ms.load(std::memory_order_relaxed))};
    // Never before an earlier chunk: a lowered delay keeps the order.
    d.last_due = std::max(d.last_due, clock_type::now() + delay);
    d.queue.push_back(
      chunk{std::vector<char>(d.buf.data(), d.buf.data() + n), d.last_due});
    d.queued_bytes += n;
    if (!d.writing)
      write_next(d);
    if (d.queued_bytes < max_queued_bytes)
      read(d);
    else
      d.paused = true;
  }

  void write_next(direction& d) {
    if (closed_)
      return;
    if (d.queue.empty()) {
      d.writing = false;
      if (d.eof)
        close();
      return;
    }
    d.writing = true;
    auto due = d.queue.front().due;
    if (due <= clock_type::now())
      return write_front(d);
    d.timer.expires_at(due);
    d.timer.async_wait([self = shared_from_this(), &d](error_code ec) {
      if (!ec && !self->closed_)
        self->write_front(d);
    });
  }

  void write_front(direction& d) {
    asio::async_write(d.to, asio::buffer(d.queue.front().bytes),
                      [self = shared_from_this(), &d](error_code ec, size_t) {
                        self->on_written(d, ec);
                      });
  }

  void on_written(direction& d, error_code ec) {
    if (ec || closed_)
      return close();
    d.queued_bytes -= d.queue.front().bytes.size();
    d.queue.pop_front();
    if (d.paused && d.queued_bytes < max_queued_bytes) {
      d.paused = false;
      read(d);
    }
    write_next(d);
  }

  tcp::socket client_;
  tcp::socket upstream_;
  counters& stats_;
  direction up_;
  direction down_;
  bool closed_ = false;
};

} // namespace

struct delay_proxy::impl {
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work
    = asio::make_work_guard(io);
  tcp::acceptor acceptor{io};
  tcp::resolver::results_type upstream;
  counters stats;
  uint16_t port = 0;
  /// The sessions, for closing them on stop (io thread only).
  std::list<std::weak_ptr<session>> sessions;
  std::thread thread;

  void accept() {
    acceptor.async_accept([this](error_code ec, tcp::socket s) {
      if (ec)
        return; // closed by stop (or out of descriptors: stop accepting)
      ++stats.accepted;
      auto ses = std::make_shared<session>(std::move(s), stats);
      sessions.remove_if([](auto& w) { return w.expired(); });
      sessions.push_back(ses);
      ses->start(upstream);
      accept();
    });
  }

  void stop() {
    asio::post(io, [this] {
      error_code ignored;
      acceptor.close(ignored);
      for (auto& w : sessions)
        if (auto s = w.lock())
          s->close();
    });
    work.reset();
    if (thread.joinable())
      thread.join();
  }
};

const char* to_string(delay_proxy_errc x) noexcept {
  switch (x) {
    case delay_proxy_errc::none:
      return "none";
    case delay_proxy_errc::listen_failed:
      return "listen_failed";
    case delay_proxy_errc::bad_upstream:
      return "bad_upstream";
  }
  return "?";
}

runtime::expected<std::unique_ptr<delay_proxy>>
delay_proxy::start(const delay_proxy_config& cfg) {
  auto p = std::make_unique<impl>();
  auto listen = cfg.listen_host + ":" + std::to_string(cfg.listen_port);
  error_code ec;
  auto address = asio::ip::make_address(cfg.listen_host, ec);
  if (ec)
    return runtime::make_error(delay_proxy_errc::listen_failed,
                               "delay proxy: listen address \""
                                 + cfg.listen_host + "\" is not an IP address");
  tcp::endpoint ep{address, cfg.listen_port};
  auto& a = p->acceptor;
  a.open(ep.protocol(), ec);
  if (!ec)
    a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec)
    a.bind(ep, ec);
  if (!ec)
    a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return runtime::make_error(delay_proxy_errc::listen_failed,
                               "delay proxy: cannot listen on " + listen + ": "
                                 + ec.message());
  p->port = p->acceptor.local_endpoint().port();
  tcp::resolver resolver{p->io};
  p->upstream = resolver.resolve(cfg.upstream_host,
                                 std::to_string(cfg.upstream_port), ec);
  if (ec)
    return runtime::make_error(delay_proxy_errc::bad_upstream,
                               "delay proxy: upstream " + cfg.upstream_host
                                 + ":" + std::to_string(cfg.upstream_port)
                                 + " does not resolve: " + ec.message());
  p->stats.delay_ms = cfg.delay.count();
  p->accept();
  p->thread = std::thread{[io = &p->io] { io->run(); }};
  return std::unique_ptr<delay_proxy>{new delay_proxy{std::move(p)}};
}

delay_proxy::delay_proxy(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

delay_proxy::~delay_proxy() {
  impl_->stop();
}

uint16_t delay_proxy::port() const noexcept {
  return impl_->port;
}

void delay_proxy::set_delay(std::chrono::milliseconds d) noexcept {
  impl_->stats.delay_ms = std::max<int64_t>(0, d.count());
}

std::chrono::milliseconds delay_proxy::delay() const noexcept {
  return std::chrono::milliseconds{impl_->stats.delay_ms.load()};
}

uint64_t delay_proxy::accepted() const noexcept {
  return impl_->stats.accepted.load();
}

uint64_t delay_proxy::open_connections() const noexcept {
  return impl_->stats.open.load();
}

} // namespace troupe::chaos
