// One connection of the TCP transport: connect or accept, TLS, the
// handshake (handshake.hpp), then reading frames (inbound) or writing the
// peer's batches (outbound). Runs on the io thread only.

#include <chrono>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "troupe/cluster/tcp_transport_impl.hpp"

namespace troupe::cluster {

namespace {

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

long long to_ms(runtime::timespan d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

} // namespace

tcp_connection::tcp_connection(tcp_transport::impl& owner, direction dir,
                               tcp::socket socket,
                               std::optional<endpoint> dialed)
  : owner_(owner), dir_(dir), dialed_(std::move(dialed)), resolver_(owner.ioc),
    handshake_timer_(owner.ioc) {
  if (auto* ctx = owner.tls_context())
    tls_.emplace(std::move(socket), *ctx);
  else
    plain_.emplace(std::move(socket));
  // Small until the peer is authenticated: an unauthenticated peer gets
  // no large buffer.
  read_buf_.resize(handshake_max_frame_size + frame_header_size);
}

tcp::socket& tcp_connection::socket() {
  return tls_ ? tls_->next_layer() : *plain_;
}

template <class F>
void tcp_connection::with_stream(F&& f) {
  if (tls_)
    f(*tls_);
  else
    f(*plain_);
}

std::string tcp_connection::describe() const {
  if (dir_ == direction::outbound)
    return fmt::format("outbound connection to {}", to_string(*dialed_));
  if (established_)
    return fmt::format("inbound connection from {}", to_string(peer_));
  if (remote_.empty())
    return "inbound connection";
  return fmt::format("inbound connection from {}", remote_);
}

void tcp_connection::arm_handshake_timer() {
  handshake_timer_.expires_after(owner_.settings().handshake_timeout);
  handshake_timer_.async_wait([self = shared_from_this()](auto ec) {
    if (!ec && !self->established_)
      self->fail_handshake(
        fmt::format("timed out after {} ms",
                    to_ms(self->owner_.settings().handshake_timeout)));
  });
}

void tcp_connection::start_outbound() {
  stage_ = "resolve";
  arm_handshake_timer();
  resolver_.async_resolve(
    dialed_->host, std::to_string(dialed_->port),
    [self = shared_from_this()](auto ec, auto results) {
      if (self->closed_)
        return;
      if (ec)
        return self->close(fmt::format("cannot resolve: {}", ec.message()),
                           close_kind::unreachable);
      self->stage_ = "connect";
      asio::async_connect(
        self->socket(), results, [self](auto ec, const auto&) {
          if (self->closed_)
            return;
          if (ec)
            return self->close(fmt::format("connect failed: {}", ec.message()),
                               close_kind::unreachable);
          self->on_connected();
        });
    });
}

void tcp_connection::on_connected() {
  boost::system::error_code ignored;
  socket().set_option(tcp::no_delay{true}, ignored);
  if (!tls_)
    return begin_handshake();
  stage_ = "TLS handshake";
  auto* native = tls_->native_handle();
  auto& host = dialed_->host;
  bool ok
    = is_ip_literal(host)
        ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(native), host.c_str())
            == 1
        : SSL_set_tlsext_host_name(native, host.c_str()) == 1
            && SSL_set1_host(native, host.c_str()) == 1;
  if (!ok)
    return fail_handshake("cannot set the expected host name for "
                          "certificate verification");
  tls_handshake(ssl::stream_base::client);
}

void tcp_connection::start_inbound() {
  stage_ = tls_ ? "TLS handshake" : "handshake";
  arm_handshake_timer();
  boost::system::error_code ignored;
  socket().set_option(tcp::no_delay{true}, ignored);
  // Kept for the log: the socket no longer knows it once closed.
  auto remote = socket().remote_endpoint(ignored);
  if (!ignored)
    remote_ = fmt::format("{}:{}", remote.address().to_string(), remote.port());
  if (!tls_)
    return begin_handshake();
  tls_handshake(ssl::stream_base::server);
}

void tcp_connection::tls_handshake(ssl::stream_base::handshake_type role) {
  tls_->async_handshake(role, [self = shared_from_this()](auto ec) {
    if (self->closed_)
      return;
    if (ec)
      return self->fail_handshake(ec.message());
    self->begin_handshake();
  });
}

void tcp_connection::begin_handshake() {
  stage_ = "handshake";
  if (dir_ == direction::outbound) {
    handshake_.emplace(handshake::client(owner_.handshake_params(), *dialed_,
                                         owner_.make_nonce()));
    send_handshake(handshake_->start().send);
  } else {
    handshake_.emplace(
      handshake::server(owner_.handshake_params(), owner_.make_nonce()));
  }
  read();
}

void tcp_connection::read() {
  with_stream([this](auto& stream) {
    stream.async_read_some(
      asio::buffer(read_buf_),
      [self = shared_from_this()](auto ec, size_t n) { self->on_read(ec, n); });
  });
}

void tcp_connection::on_read(const boost::system::error_code& ec, size_t n) {
  if (closed_)
    return;
  if (ec) {
    auto what = ec == asio::error::eof ? std::string{"closed by the peer"}
                                       : ec.message();
    if (!established_)
      return fail_handshake(fmt::format("connection lost: {}", what));
    return close(fmt::format("connection lost: {}", what));
  }
  decoder_.feed(std::span<const std::byte>{read_buf_}.first(n));
  batch_.clear();
  size_t bytes = 0;
  for (;;) {
    auto r = decoder_.next();
    if (r.status == decode_status::need_more)
      break;
    if (r.status == decode_status::failed)
      return close(fmt::format("protocol violation: {}", r.violation->message),
                   close_kind::violation);
    auto& f = r.frame;
    if (!established_) {
      if (f.kind != frame_kind::handshake)
        return close("protocol violation: a message frame before the "
                     "handshake completed",
                     close_kind::violation);
      if (!on_handshake_frame(f))
        return;
      continue;
    }
    if (dir_ == direction::outbound)
      return close(fmt::format("protocol violation: a {} frame on this "
                               "node's outbound connection (the peer must "
                               "send on its own)",
                               to_string(f.kind)),
                   close_kind::violation);
    if (f.kind != frame_kind::message)
      return close("protocol violation: a handshake frame after the "
                   "handshake",
                   close_kind::violation);
    batch_.push_back(received_frame{f.lane, f.payload});
    bytes += frame_header_size + f.payload.size();
  }
  if (!batch_.empty())
    owner_.on_frames(*this, batch_, bytes);
  if (closed_)
    return;
  if (established_ && dir_ == direction::inbound)
    resize_read_buffer(n);
  read();
}

void tcp_connection::resize_read_buffer(size_t last_read) {
  auto size = read_buf_.size();
  if (size < min_read_buffer_size) {
    size = min_read_buffer_size; // first read after the handshake
  } else if (last_read == size) {
    size = std::min(size * 2, max_read_buffer_size);
    small_reads_ = 0;
  } else if (last_read < size / 4 && size > min_read_buffer_size) {
    if (++small_reads_ >= read_buffer_shrink_after) {
      size /= 2;
      small_reads_ = 0;
    }
  } else {
    small_reads_ = 0;
  }
  if (size == read_buf_.size())
    return;
  read_buf_.resize(size);
  read_buf_.shrink_to_fit();
}

bool tcp_connection::on_handshake_frame(const frame_view& f) {
  auto step = handshake_->on_message(f.payload);
  if (step.status == handshake_status::failed) {
    if (!step.send.empty()) {
      // A refusal of another protocol major: the peer proved the secret
      // and learns why; the connection closes once it is written.
      refusal_ = step.reason;
      send_handshake(step.send);
    } else {
      fail_handshake(step.reason);
    }
    return false;
  }
  if (step.status == handshake_status::in_progress) {
    send_handshake(step.send);
    return true;
  }
  // Authenticated: failures from here on are this peer's.
  authenticated_ = endpoint_of(step.peer);
  if (tls_ && dir_ == direction::inbound
      && !verify_peer_certificate(step.peer)) {
    fail_handshake(fmt::format("the certificate of {} does not match its "
                               "host {}",
                               to_string(step.peer), step.peer.host));
    return false;
  }
  peer_protocol_ = step.peer_protocol;
  peer_incarnation_ = step.peer_incarnation;
  if (!owner_.admit(*this, step.peer)) {
    fail_handshake(
      fmt::format("{} is quarantined (an old incarnation or removed)",
                  to_string(step.peer)));
    return false;
  }
  peer_ = step.peer;
  if (!step.send.empty())
    send_handshake(step.send); // the server's welcome
  established_ = true;
  handshake_timer_.cancel();
  decoder_.set_max_frame_size(owner_.settings().max_frame_size);
  owner_.on_established(shared_from_this());
  return !closed_;
}

bool tcp_connection::verify_peer_certificate(const unique_address& peer) {
  auto* cert = SSL_get0_peer_certificate(tls_->native_handle());
  if (cert == nullptr)
    return false;
  if (is_ip_literal(peer.host))
    return X509_check_ip_asc(cert, peer.host.c_str(), 0) == 1;
  return X509_check_host(cert, peer.host.data(), peer.host.size(), 0, nullptr)
         == 1;
}

void tcp_connection::send_handshake(const std::vector<std::byte>& payload) {
  if (payload.empty())
    return;
  append_frame(hs_pending_, frame_kind::handshake, lane::control, payload,
               owner_.settings().protocol.major);
  flush_handshake();
}

void tcp_connection::flush_handshake() {
  if (hs_writing_ || hs_pending_.empty() || closed_)
    return;
  hs_out_.swap(hs_pending_);
  hs_pending_.clear();
  hs_writing_ = true;
  with_stream([this](auto& stream) {
    asio::async_write(stream, asio::buffer(hs_out_),
                      [self = shared_from_this()](auto ec, size_t) {
                        self->hs_writing_ = false;
                        self->hs_out_.clear();
                        if (self->closed_)
                          return;
                        if (ec)
                          return self->fail_handshake(
                            fmt::format("write failed: {}", ec.message()));
                        if (self->refusal_ && self->hs_pending_.empty())
                          return self->fail_handshake(*self->refusal_);
                        self->flush_handshake();
                        if (self->can_write())
                          self->owner_.on_writable(*self);
                      });
  });
}

void tcp_connection::write(
  std::array<asio::const_buffer, 2> bufs,
  std::function<void(const boost::system::error_code&)> done) {
  with_stream([&](auto& stream) {
    asio::async_write(
      stream, bufs,
      [self = shared_from_this(), done = std::move(done)](auto ec, size_t) {
        // Closed first: `done` then finds the connection gone and never
        // writes to it again.
        if (ec && !self->closed_)
          self->close(fmt::format("write failed: {}", ec.message()));
        done(ec);
      });
  });
}

void tcp_connection::fail_handshake(const std::string& reason) {
  if (closed_)
    return;
  std::string detail = reason;
  if (tls_ && stage_ == std::string_view{"TLS handshake"}) {
    auto verify = SSL_get_verify_result(tls_->native_handle());
    if (verify != X509_V_OK)
      detail += fmt::format(" ({})", X509_verify_cert_error_string(verify));
  }
  // Resolve and connect failures are not handshakes: no peer answered.
  bool reached = stage_ != std::string_view{"resolve"}
                 && stage_ != std::string_view{"connect"};
  if (reached)
    owner_.count_handshake_failure(dialed_ ? dialed_ : authenticated_);
  close(fmt::format("{} failed: {}", stage_, detail),
        reached ? close_kind::handshake_failed : close_kind::unreachable);
}

void tcp_connection::close(const std::string& reason, close_kind kind) {
  if (closed_)
    return;
  closed_ = true;
  handshake_timer_.cancel();
  resolver_.cancel();
  owner_.on_closing(*this);
  boost::system::error_code ignored;
  socket().shutdown(tcp::socket::shutdown_both, ignored);
  socket().close(ignored);
  owner_.on_closed(shared_from_this(), reason, kind);
}

} // namespace troupe::cluster
