// tcp_transport: construction (validation, TLS, bind), the public API that
// callers' threads use, metrics and shutdown. The io thread's peer logic is
// in tcp_peer.cpp, connections in tcp_connection.cpp.

#include "troupe/cluster/tcp_transport.hpp"

#include <cerrno>
#include <cstring>
#include <exception>
#include <fstream>
#include <random>

#include <sys/socket.h>
#include <sys/uio.h>

#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/tcp_transport_impl.hpp"

namespace troupe::cluster {

namespace {

runtime::error invalid(std::string what) {
  return runtime::make_error(errc::invalid_settings, std::move(what));
}

// Empty if `path` can be opened for reading, else the reason.
std::string unreadable(const std::string& path) {
  errno = 0;
  if (std::ifstream{path})
    return {};
  return errno != 0 ? std::strerror(errno) : "cannot open";
}

uint64_t random_uid() {
  uint64_t uid = 0;
  while (uid == 0) {
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&uid), sizeof(uid)) != 1)
      uid = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
  }
  return uid;
}

} // namespace

runtime::error validate(const tcp_transport_settings& s) {
  if (s.cluster_name.empty() || s.cluster_name.size() > max_name_size)
    return invalid(
      fmt::format("cluster.name must have 1 to {} bytes", max_name_size));
  if (s.local.host.empty() || s.local.host.size() > max_name_size)
    return invalid(
      fmt::format("cluster.host must have 1 to {} bytes", max_name_size));
  if (s.secret.reveal().size() < 16)
    return invalid("cluster.secret (or cluster.secret_file) must hold at "
                   "least 16 bytes; generate one with `openssl rand -hex 32`");
  if (s.tls.enabled()
      && (s.tls.ca_file.empty() || s.tls.cert_file.empty()
          || s.tls.key_file.empty()))
    return invalid("cluster.tls.ca_file, cluster.tls.cert_file and "
                   "cluster.tls.key_file must be set together");
  if (s.max_frame_size < min_max_frame_size || s.max_frame_size > (1u << 28))
    return invalid(fmt::format("cluster.transport.max_frame_size must be "
                               "between {} and {} bytes (got {})",
                               min_max_frame_size, 1u << 28, s.max_frame_size));
  if (s.outbound_queue_size == 0 || s.control_queue_size == 0)
    return invalid("cluster.transport.outbound_queue_size and "
                   "control_queue_size must be at least 1");
  if (s.protocol.major == 0)
    return invalid("the wire protocol major must not be 0");
  if (s.handshake_timeout.count() <= 0)
    return invalid("cluster.transport.handshake_timeout must be > 0");
  if (s.reconnect_backoff_min.count() <= 0
      || s.reconnect_backoff_min > s.reconnect_backoff_max)
    return invalid("cluster.transport.reconnect_backoff_min must be > 0 and "
                   "<= reconnect_backoff_max");
  return {};
}

// -- peer_state ---------------------------------------------------------------

peer_state::peer_state(asio::io_context& ioc, endpoint e,
                       const tcp_transport_settings& s)
  : ep(std::move(e)), pending{{frame_queue{s.control_queue_size},
                               frame_queue{s.outbound_queue_size}}},
    inflight{
      {frame_queue{s.control_queue_size}, frame_queue{s.outbound_queue_size}}},
    backoff(s.reconnect_backoff_min, s.reconnect_backoff_max),
    reconnect_timer(ioc), delay_timer(ioc), inbound_delay_timer(ioc) {}

// -- impl: setup --------------------------------------------------------------

tcp_transport::impl::impl(tcp_transport_settings settings,
                          std::shared_ptr<transport_listener> listener)
  : local(settings.local), settings_(std::move(settings)),
    listener_(std::move(listener)) {
  if (local.uid == 0)
    local.uid = random_uid();
  rng_.seed(settings_.seed != 0 ? settings_.seed : local.uid);
}

tcp_transport::impl::~impl() {
  // Connections and timers go before the io_context they belong to.
  inbound_.clear();
  handshaking_.clear();
  peers_.clear();
}

runtime::error tcp_transport::impl::open() {
  if (settings_.tls.enabled()) {
    auto fail = [](std::string what) {
      return runtime::make_error(errc::tls_setup_failed, std::move(what));
    };
    auto& tls = settings_.tls;
    for (auto* path : {&tls.ca_file, &tls.cert_file, &tls.key_file})
      if (auto why = unreadable(*path); !why.empty())
        return fail(fmt::format("cannot read \"{}\": {}", *path, why));
    try {
      auto ctx = std::make_unique<ssl::context>(ssl::context::tls);
      // Both ends are troupe nodes on OpenSSL 3: no reason for older TLS.
      SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_3_VERSION);
      ctx->set_options(ssl::context::default_workarounds
                       | ssl::context::no_compression);
      ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      boost::system::error_code ec;
      ctx->load_verify_file(tls.ca_file, ec);
      if (ec)
        return fail(fmt::format("cannot load CA file \"{}\": {}", tls.ca_file,
                                ec.message()));
      ctx->use_certificate_chain_file(tls.cert_file, ec);
      if (ec)
        return fail(fmt::format("cannot load certificate \"{}\": {}",
                                tls.cert_file, ec.message()));
      ctx->use_private_key_file(tls.key_file, ssl::context::pem, ec);
      if (ec)
        return fail(fmt::format("cannot load key \"{}\": {}", tls.key_file,
                                ec.message()));
      if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
        return fail(fmt::format("key \"{}\" does not match certificate "
                                "\"{}\"",
                                tls.key_file, tls.cert_file));
      tls_ctx_ = std::move(ctx);
    } catch (const std::exception& e) {
      return fail(fmt::format("TLS setup failed: {}", e.what()));
    }
  }
  auto bind_host
    = settings_.bind_host.empty() ? local.host : settings_.bind_host;
  auto where = fmt::format("{}:{}", bind_host, local.port);
  auto fail = [&](const boost::system::error_code& ec) {
    return runtime::make_error(
      errc::bind_failed,
      fmt::format("cannot listen on {}: {}", where, ec.message()));
  };
  boost::system::error_code ec;
  tcp::resolver resolver{ioc};
  auto results = resolver.resolve(bind_host, std::to_string(local.port),
                                  tcp::resolver::passive, ec);
  if (ec || results.empty())
    return fail(ec);
  auto ep = results.begin()->endpoint();
  acceptor_.open(ep.protocol(), ec);
  if (!ec)
    acceptor_.set_option(tcp::acceptor::reuse_address{true}, ec);
  if (!ec)
    acceptor_.bind(ep, ec);
  if (!ec)
    acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return fail(ec);
  if (local.port == 0)
    local.port = acceptor_.local_endpoint().port();
  return {};
}

void tcp_transport::impl::launch() {
  asio::post(ioc, [self = shared_from_this()] { self->accept(); });
  thread_ = std::thread{[self = shared_from_this()] { self->run(); }};
  log_.info("{} listening (cluster \"{}\", {})", to_string(local),
            settings_.cluster_name, tls_ctx_ ? "mutual TLS" : "no TLS");
}

void tcp_transport::impl::run() {
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      // Handlers catch their own errors; a last line of defence that keeps
      // the io thread (and every other peer) alive.
      log_.error("io thread: unexpected exception: {}", e.what());
    }
  }
}

nonce tcp_transport::impl::make_nonce() {
  nonce n{};
  if (RAND_bytes(reinterpret_cast<unsigned char*>(n.data()),
                 static_cast<int>(n.size()))
      != 1) {
    std::random_device dev;
    for (auto& b : n)
      b = static_cast<std::byte>(dev());
  }
  return n;
}

handshake_settings tcp_transport::impl::handshake_params() const {
  std::lock_guard guard{incarnation_mtx_};
  return {settings_.cluster_name, local, settings_.secret, settings_.protocol,
          incarnation_};
}

void tcp_transport::impl::set_incarnation(const cluster_incarnation& x) {
  std::lock_guard guard{incarnation_mtx_};
  incarnation_ = x;
}

void tcp_transport::impl::accept() {
  acceptor_.async_accept(
    [self = shared_from_this()](auto ec, tcp::socket socket) {
      if (self->quiet_ || !self->acceptor_.is_open())
        return;
      if (ec) {
        self->log_.warning("accept failed: {}", ec.message());
      } else if (self->pending_inbound_ >= max_pending_inbound) {
        self->log_.warning("refusing a connection: {} handshakes pending",
                           self->pending_inbound_);
        self->count_handshake_failure(std::nullopt);
      } else {
        ++self->pending_inbound_;
        auto c = std::make_shared<tcp_connection>(
          *self, direction::inbound, std::move(socket), std::nullopt);
        self->handshaking_.push_back(c);
        c->start_inbound();
      }
      self->accept();
    });
}

// -- impl: public API (any thread)
// ----------------------------------------------

std::shared_ptr<peer_state>
tcp_transport::impl::peer_locked(const endpoint& ep) {
  auto& p = peers_[ep];
  if (!p)
    p = std::make_shared<peer_state>(ioc, ep, settings_);
  return p;
}

void tcp_transport::impl::post_flush_locked(
  const std::shared_ptr<peer_state>& p) {
  if (p->flush_posted)
    return;
  p->flush_posted = true;
  asio::post(ioc, [self = shared_from_this(), p] { self->flush(p); });
}

void tcp_transport::impl::count_drop_locked(peer_state& p, lane ln,
                                            drop_reason r, uint64_t n) {
  auto i = static_cast<size_t>(r);
  p.counters.drops[i] += n;
  p.unreported[static_cast<size_t>(ln)][i] += n;
}

link_fault tcp_transport::impl::fault_locked(const endpoint& ep,
                                             direction dir) const {
  auto i = faults_.find({ep, dir});
  return i == faults_.end() ? link_fault{} : i->second;
}

bool tcp_transport::impl::draw_drop_locked(const link_fault& f) {
  if (f.drop_probability <= 0.0)
    return false;
  std::uniform_real_distribution<double> unit{0.0, 1.0};
  return unit(rng_) < std::min(f.drop_probability, 1.0);
}

void tcp_transport::impl::enqueue_locked(peer_state& p, lane ln, uint64_t uid,
                                         std::span<const std::byte> payload) {
  auto& q = p.pending[static_cast<size_t>(ln)];
  if (q.push(ln, uid, payload) == 0)
    return;
  count_drop_locked(p, ln, drop_reason::queue_overflow, 1);
  if (!p.overflowing) {
    p.overflowing = true;
    log_.warning("{} queue to {} is full ({} frames): dropping the oldest "
                 "frames",
                 to_string(ln), to_string(p.ep), q.size());
  }
}

runtime::error tcp_transport::impl::send(const unique_address& to, lane ln,
                                         std::span<const std::byte> payload) {
  std::unique_lock guard{mtx_};
  if (stopped_)
    return runtime::make_error(errc::shutting_down,
                               fmt::format("cannot send to {}: the transport "
                                           "is shut down",
                                           to_string(to)));
  auto ep = endpoint_of(to);
  auto i = peers_.find(ep);
  std::optional<uint64_t> established;
  if (i != peers_.end())
    established = i->second->established_uid;
  if (auto err = check_send(local, to, payload.size(), settings_.max_frame_size,
                            registry_, established)) {
    auto code = static_cast<errc>(err.code);
    if (code == errc::quarantined || code == errc::incarnation_mismatch) {
      auto p = peer_locked(ep);
      count_drop_locked(*p, ln,
                        code == errc::quarantined
                          ? drop_reason::quarantined
                          : drop_reason::incarnation_mismatch,
                        1);
      post_flush_locked(p);
    }
    return err;
  }
  auto p = i != peers_.end() ? i->second : peer_locked(ep);
  auto fault = fault_locked(ep, direction::outbound);
  if (fault.blackhole || draw_drop_locked(fault)) {
    count_drop_locked(
      *p, ln, fault.blackhole ? drop_reason::blackholed : drop_reason::injected,
      1);
    post_flush_locked(p);
    return {};
  }
  if (fault.delay.count() > 0 || !p->delayed.empty()) {
    // Test-only path: copies the payload; order kept behind earlier ones.
    auto due = std::chrono::steady_clock::now() + fault.delay;
    if (!p->delayed.empty())
      due = std::max(due, p->delayed.back().due);
    p->delayed.push_back(
      delayed_frame{due, ln, to.uid, {payload.begin(), payload.end()}});
    asio::post(ioc,
               [self = shared_from_this(), p] { self->arm_delay_timer(p); });
    return {};
  }
  enqueue_locked(*p, ln, to.uid, payload);
  if (p->direct_ready && !p->writing && !p->flush_posted)
    write_direct(guard, p);
  else
    post_flush_locked(p);
  return {};
}

// A sending thread writes what is queued for an idle connection itself,
// without waiting for the io thread to wake up: one non-blocking sendmsg of
// both lanes (control first). What the socket does not take goes to the io
// thread.
void tcp_transport::impl::write_direct(std::unique_lock<std::mutex>& guard,
                                       const std::shared_ptr<peer_state>& p) {
  p->writing = true;
  for (auto ln : {lane::control, lane::ordinary}) {
    auto& in = p->inflight[static_cast<size_t>(ln)];
    if (in.empty())
      in.swap(p->pending[static_cast<size_t>(ln)]);
  }
  size_t n_control = 0;
  size_t n_ordinary = 0;
  auto control = p->inflight[0].front(SIZE_MAX, n_control);
  auto ordinary = p->inflight[1].front(max_ordinary_batch, n_ordinary);
  auto generation = p->generation;
  guard.unlock();
  std::array<iovec, 2> iov{
    iovec{const_cast<std::byte*>(control.data()), control.size()},
    iovec{const_cast<std::byte*>(ordinary.data()), ordinary.size()}};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = iov.size();
  ssize_t written = -1;
  int err = ENOTCONN;
  {
    std::lock_guard fd_guard{p->fd_mtx};
    if (p->direct_fd >= 0) {
      written = ::sendmsg(p->direct_fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
      err = written < 0 ? errno : 0;
    }
  }
  guard.lock();
  p->writing = false;
  if (written < 0 && err != EAGAIN && err != EWOULDBLOCK && err != EINTR
      && err != ENOTCONN) {
    // The connection broke (the io thread learns it from its read): these
    // frames may or may not have arrived and are not sent again, as after
    // a failed async write.
    p->inflight[0].pop(n_control);
    p->inflight[1].pop(n_ordinary);
    if (n_control > 0)
      count_drop_locked(*p, lane::control, drop_reason::connection_lost,
                        n_control);
    if (n_ordinary > 0)
      count_drop_locked(*p, lane::ordinary, drop_reason::connection_lost,
                        n_ordinary);
  } else if (written > 0) {
    auto n = static_cast<size_t>(written);
    auto to_control = std::min(n, control.size());
    auto frames = p->inflight[0].consume(to_control);
    frames += p->inflight[1].consume(n - to_control);
    p->counters.bytes_out += n;
    p->counters.messages_out += frames;
  }
  if (generation != p->generation)
    drop_partial_locked(*p);
  // Always hand over to the io thread afterwards: until its flush runs,
  // further sends queue instead of writing (one direct write per io-thread
  // round). A stream of sends thus still goes out in batches, one syscall
  // for many frames, while a lone request pays no wake-up before its
  // write; the flush also writes what the socket did not take and reports
  // drops.
  post_flush_locked(p);
}

void tcp_transport::impl::drop_partial_locked(peer_state& p) {
  for (auto ln : {lane::control, lane::ordinary})
    if (p.inflight[static_cast<size_t>(ln)].drop_partial() > 0)
      count_drop_locked(p, ln, drop_reason::connection_lost, 1);
}

void tcp_transport::impl::remove_node(const unique_address& node) {
  {
    std::lock_guard guard{mtx_};
    if (stopped_ || !registry_.quarantine(node))
      return;
  }
  asio::post(ioc, [self = shared_from_this(), node] {
    self->on_quarantined(node, "removed from membership");
  });
}

bool tcp_transport::impl::is_quarantined(const unique_address& node) const {
  std::lock_guard guard{mtx_};
  return registry_.is_quarantined(node);
}

void tcp_transport::impl::set_fault(const endpoint& peer, direction dir,
                                    const link_fault& f) {
  std::lock_guard guard{mtx_};
  if (f.is_healthy())
    faults_.erase({peer, dir});
  else
    faults_[{peer, dir}] = f;
}

void tcp_transport::impl::record_drop(const unique_address& from, lane ln,
                                      drop_reason reason) {
  std::lock_guard guard{mtx_};
  auto p = peer_locked(endpoint_of(from));
  p->counters.drops[static_cast<size_t>(reason)] += 1;
  (void)ln;
}

void tcp_transport::impl::count_handshake_failure(
  const std::optional<endpoint>& peer) {
  std::lock_guard guard{mtx_};
  if (peer)
    ++peer_locked(*peer)->counters.handshake_failures;
  else
    ++unattributed_.handshake_failures;
}

transport_metrics tcp_transport::impl::metrics() const {
  std::lock_guard guard{mtx_};
  transport_metrics result;
  result.total = unattributed_;
  for (auto& [ep, p] : peers_) {
    result.peers.push_back(
      peer_metrics{ep, p->last_uid, p->counters, p->protocol});
    result.total.add(p->counters);
  }
  return result;
}

void tcp_transport::impl::shutdown() {
  {
    std::lock_guard guard{mtx_};
    if (stopped_)
      return;
    stopped_ = true;
    // In-flight frames belong to the io thread: counted in close_all.
    for (auto& [ep, p] : peers_)
      for (auto& q : p->pending)
        p->counters.drops[static_cast<size_t>(drop_reason::shutdown)]
          += q.clear();
  }
  asio::post(ioc, [self = shared_from_this()] { self->close_all(); });
  guard_.reset();
  if (!thread_.joinable())
    return;
  if (thread_.get_id() == std::this_thread::get_id())
    thread_.detach(); // the thread keeps `impl` alive until run() returns
  else
    thread_.join();
}

void tcp_transport::impl::close_all() {
  quiet_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  auto handshaking = std::move(handshaking_);
  for (auto& c : handshaking)
    c->close("shutting down");
  auto inbound = std::move(inbound_);
  for (auto& [ep, c] : inbound)
    c->close("shutting down");
  std::vector<std::shared_ptr<peer_state>> peers;
  {
    std::lock_guard guard{mtx_};
    for (auto& [ep, p] : peers_) {
      peers.push_back(p);
      for (auto& q : p->inflight)
        p->counters.drops[static_cast<size_t>(drop_reason::shutdown)]
          += q.size();
    }
  }
  for (auto& p : peers) {
    p->reconnect_timer.cancel();
    p->delay_timer.cancel();
    p->inbound_delay_timer.cancel();
    if (auto c = p->conn)
      c->close("shutting down");
  }
  log_.info("{} stopped", to_string(local));
}

// -- tcp_transport ------------------------------------------------------------

runtime::expected<std::unique_ptr<tcp_transport>>
tcp_transport::make(tcp_transport_settings settings,
                    std::shared_ptr<transport_listener> listener) {
  if (auto err = validate(settings))
    return err;
  auto ptr = std::make_shared<impl>(std::move(settings), std::move(listener));
  if (auto err = ptr->open())
    return err;
  ptr->launch();
  return std::unique_ptr<tcp_transport>{new tcp_transport(std::move(ptr))};
}

tcp_transport::tcp_transport(std::shared_ptr<impl> ptr)
  : impl_(std::move(ptr)) {}

tcp_transport::~tcp_transport() {
  shutdown();
}

const unique_address& tcp_transport::local_address() const noexcept {
  return impl_->local;
}

runtime::error tcp_transport::send(const unique_address& to, lane lane,
                                   std::span<const std::byte> payload) {
  return impl_->send(to, lane, payload);
}

void tcp_transport::remove_node(const unique_address& node) {
  impl_->remove_node(node);
}

bool tcp_transport::is_quarantined(const unique_address& node) const {
  return impl_->is_quarantined(node);
}

void tcp_transport::set_fault(const endpoint& peer, direction dir,
                              const link_fault& fault) {
  impl_->set_fault(peer, dir, fault);
}

void tcp_transport::record_drop(const unique_address& from, lane lane,
                                drop_reason reason) {
  impl_->record_drop(from, lane, reason);
}

transport_metrics tcp_transport::metrics() const {
  return impl_->metrics();
}

void tcp_transport::set_incarnation(const cluster_incarnation& x) {
  impl_->set_incarnation(x);
}

void tcp_transport::shutdown() {
  impl_->shutdown();
}

} // namespace troupe::cluster
