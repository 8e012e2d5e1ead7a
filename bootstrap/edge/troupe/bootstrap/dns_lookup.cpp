#include "troupe/bootstrap/dns_lookup.hpp"

#include <algorithm>
#include <array>
#include <memory>

#include <arpa/inet.h>
#include <sys/socket.h>

#include <ares.h>
#include <fmt/format.h>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/runtime/config.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::bootstrap::dns {

struct lookup::query {
  lookup* owner;
  query_type type;
  std::string name;
  // The SRV target this A/AAAA query resolves; empty for the first queries.
  std::string target;
};

namespace {

constexpr int class_in = 1;

// c-ares tries each query twice: a retry after half the call's timeout
// (one lost UDP datagram is survived), and c-ares doubles the wait for the
// retry, so it never gives up before the call's deadline, which therefore
// ends every unanswered call with one message ("no answer within 3s").
constexpr int tries = 2;

int try_timeout_ms(runtime::timespan timeout) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(timeout / 2);
  return static_cast<int>(std::clamp<int64_t>(ms.count(), 1, 60'000));
}

std::string endpoint_text(const ares_addr_port_node& n) {
  std::array<char, INET6_ADDRSTRLEN> ip{};
  ares_inet_ntop(n.family, &n.addr, ip.data(),
                 static_cast<ares_socklen_t>(ip.size()));
  auto port = n.udp_port != 0 ? n.udp_port : 53;
  return n.family == AF_INET6 ? fmt::format("[{}]:{}", ip.data(), port)
                              : fmt::format("{}:{}", ip.data(), port);
}

// "the system resolver (10.96.0.10:53)": the servers c-ares read from
// /etc/resolv.conf, for error messages.
std::string system_servers(ares_channel channel) {
  ares_addr_port_node* head = nullptr;
  std::string list;
  if (ares_get_servers_ports(channel, &head) == ARES_SUCCESS)
    for (auto* n = head; n != nullptr; n = n->next)
      list += (list.empty() ? "" : ", ") + endpoint_text(*n);
  ares_free_data(head);
  return fmt::format("the system resolver ({})",
                     list.empty() ? "no servers" : list);
}

void on_query_done(void* arg, int status, int, unsigned char* abuf, int alen) {
  std::unique_ptr<lookup::query> q{static_cast<lookup::query*>(arg)};
  std::span<const unsigned char> answer;
  if (abuf != nullptr && alen > 0)
    answer = {abuf, static_cast<size_t>(alen)};
  q->owner->on_answer(*q, status, answer);
}

} // namespace

lookup::lookup(const dns_discovery_options& opts, runtime::timespan timeout,
               runtime::timestamp deadline, callback done)
  : opts_(opts), name_(query_name(opts)), timeout_(timeout),
    deadline_(deadline), done_(std::move(done)),
    server_(opts.server.empty() ? "the system resolver" : opts.server) {}

lookup::~lookup() {
  if (channel_ != nullptr)
    ares_destroy(std::exchange(channel_, nullptr));
}

void lookup::start() {
  ares_options o{};
  int mask = ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
  // See REFUSED and SERVFAIL as such: without it c-ares retries them and
  // then reports "could not contact DNS servers".
  o.flags = ARES_FLAG_NOCHECKRESP;
  o.timeout = try_timeout_ms(timeout_);
  o.tries = tries;
  if (!opts_.server.empty()) {
    mask |= ARES_OPT_DOMAINS; // no search domains for an explicit server
    o.domains = nullptr;
    o.ndomains = 0;
  }
  ares_channel ch = nullptr;
  if (auto rc = ares_init_options(&ch, &o, mask); rc != ARES_SUCCESS)
    return fail(fmt::format("c-ares could not start: {}", ares_strerror(rc)));
  channel_ = ch;
  if (opts_.server.empty()) {
    server_ = system_servers(ch);
  } else if (auto rc = ares_set_servers_ports_csv(ch, opts_.server.c_str());
             rc != ARES_SUCCESS) {
    return fail(
      fmt::format("c-ares does not take the server: {}", ares_strerror(rc)));
  }
  if (opts_.record_type == dns_record_type::a) {
    send(query_type::a, name_, true);
    if (!finished())
      send(query_type::aaaa, name_, true);
  } else {
    send(query_type::srv, name_, true);
  }
}

void lookup::send(query_type type, const std::string& name, bool search,
                  std::string target) {
  ++pending_;
  // Owned by c-ares until on_query_done, which c-ares calls exactly once
  // (also when the channel is destroyed), possibly before this returns.
  auto* q = new query{this, type, name, std::move(target)};
  if (search)
    ares_search(channel_, name.c_str(), class_in, static_cast<int>(type),
                on_query_done, q);
  else
    ares_query(channel_, name.c_str(), class_in, static_cast<int>(type),
               on_query_done, q);
}

void lookup::on_answer(const query& q, int status,
                       std::span<const unsigned char> answer) {
  if (finished())
    return; // the deadline passed, or the channel is being destroyed
  --pending_;
  if (!q.target.empty())
    --targets_[q.target].pending;
  auto failed = [&](errc code, const std::string& cause) {
    finish(
      runtime::make_error(code, fmt::format("{}: {} {}: {}", where(),
                                            to_string(q.type), q.name, cause)));
  };
  switch (classify(status)) {
    case query_outcome::answered:
      if (q.type == query_type::srv) {
        auto srv = parse_srv(answer);
        if (!srv)
          return failed(errc::bad_discovery_answer, srv.error().message);
        on_srv(*srv);
      } else {
        auto addresses = parse_addresses(answer, q.type);
        if (!addresses)
          return failed(errc::bad_discovery_answer, addresses.error().message);
        on_addresses(q, std::move(*addresses));
      }
      break;
    case query_outcome::nothing_found:
      break;
    case query_outcome::unavailable:
      return failed(errc::discovery_unavailable, describe_status(status));
    case query_outcome::refused:
      return failed(errc::discovery_refused, describe_status(status));
    case query_outcome::bad_answer:
      return failed(errc::bad_discovery_answer, describe_status(status));
  }
  if (!q.target.empty() && !finished() && targets_[q.target].pending == 0)
    resolve_target(q.target);
  finish_if_done();
}

void lookup::on_addresses(const query& q, std::vector<std::string> addresses) {
  if (q.target.empty()) {
    for (auto& a : addresses)
      points_.push_back(contact_point{std::move(a), opts_.contact_point_port});
    return;
  }
  auto& into = targets_[q.target].addresses;
  auto& family = q.type == query_type::a ? into.ipv4 : into.ipv6;
  family.insert(family.end(), addresses.begin(), addresses.end());
}

void lookup::on_srv(const srv_answer& answer) {
  for (const auto& r : answer.records) {
    if (r.target.empty())
      continue; // "." : no such service at this name (RFC 2782)
    if (r.port == 0)
      return finish(runtime::make_error(
        errc::bad_discovery_answer,
        fmt::format("{}: SRV {}: the record of target {} has port 0", where(),
                    name_, r.target)));
    targets_[r.target].ports.push_back(r.port);
  }
  for (auto& [target, state] : targets_) {
    auto known = answer.additional.find(target);
    if (known != answer.additional.end() && !known->second.empty()) {
      state.addresses = known->second;
      resolve_target(target);
      continue;
    }
    // Absolute names: ares_query, no search domains.
    state.pending = 2;
    send(query_type::a, target, false, target);
    if (finished())
      return;
    send(query_type::aaaa, target, false, target);
    if (finished())
      return;
  }
}

void lookup::resolve_target(const std::string& target) {
  const auto& t = targets_[target];
  const auto& family
    = t.addresses.ipv4.empty() ? t.addresses.ipv6 : t.addresses.ipv4;
  if (family.empty())
    return; // no address yet: not discoverable yet
  const auto& address = *std::min_element(family.begin(), family.end());
  for (auto port : t.ports)
    points_.push_back(contact_point{address, port});
}

void lookup::finish_if_done() {
  if (finished() || pending_ > 0)
    return;
  std::sort(points_.begin(), points_.end());
  points_.erase(std::unique(points_.begin(), points_.end()), points_.end());
  result_.emplace(std::move(points_));
}

void lookup::finish(runtime::error err) {
  if (!finished())
    result_.emplace(std::move(err));
}

void lookup::fail(const std::string& why) {
  finish(runtime::make_error(errc::discovery_unavailable,
                             fmt::format("{}: {}", where(), why)));
}

void lookup::expire() {
  fail(fmt::format("no answer within {} (timeout; {} of the queries "
                   "unanswered)",
                   runtime::render_duration(timeout_), pending_));
}

void lookup::add_poll_fds(std::vector<pollfd>& fds) const {
  if (channel_ == nullptr || finished())
    return;
  std::array<ares_socket_t, ARES_GETSOCK_MAXNUM> socks{};
  auto bits = ares_getsock(channel_, socks.data(), ARES_GETSOCK_MAXNUM);
  for (int i = 0; i < ARES_GETSOCK_MAXNUM; ++i) {
    short events = 0;
    if (ARES_GETSOCK_READABLE(bits, i))
      events |= POLLIN;
    if (ARES_GETSOCK_WRITABLE(bits, i))
      events |= POLLOUT;
    if (events == 0)
      break; // the sockets come first, without gaps
    fds.push_back(pollfd{socks[static_cast<size_t>(i)], events, 0});
  }
}

void lookup::process(std::span<const pollfd> fds) {
  if (channel_ == nullptr || finished())
    return;
  for (const auto& p : fds) {
    if (p.revents == 0)
      continue;
    // An error (ICMP port unreachable) is read to learn it.
    bool readable = (p.revents & (POLLIN | POLLERR | POLLHUP)) != 0;
    bool writable = (p.revents & POLLOUT) != 0;
    ares_process_fd(channel_, readable ? p.fd : ARES_SOCKET_BAD,
                    writable ? p.fd : ARES_SOCKET_BAD);
  }
  ares_process_fd(channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD); // timeouts
}

runtime::timestamp lookup::next_wakeup(runtime::timestamp now) const {
  auto at = deadline_;
  if (channel_ == nullptr || finished())
    return at;
  timeval tv{};
  if (ares_timeout(channel_, nullptr, &tv) != nullptr) {
    auto next = now + std::chrono::seconds{tv.tv_sec}
                + std::chrono::microseconds{tv.tv_usec};
    at = std::min(at, std::chrono::time_point_cast<runtime::timespan>(next));
  }
  return at;
}

void lookup::complete() {
  TROUPE_ASSERT(finished() && done_);
  if (channel_ != nullptr)
    ares_destroy(std::exchange(channel_, nullptr)); // callbacks see finished
  auto done = std::move(done_);
  done_ = nullptr;
  try {
    done(std::move(*result_));
  } catch (const std::exception& e) {
    runtime::logger{"bootstrap"}.error("{}: the discovery callback threw: {}",
                                       where(), e.what());
  }
}

std::string lookup::where() const {
  return fmt::format("{} at {}", describe_question(opts_), server_);
}

std::string describe_question(const dns_discovery_options& opts) {
  return fmt::format("DNS {} {}",
                     opts.record_type == dns_record_type::a ? "A/AAAA" : "SRV",
                     query_name(opts));
}

} // namespace troupe::bootstrap::dns
