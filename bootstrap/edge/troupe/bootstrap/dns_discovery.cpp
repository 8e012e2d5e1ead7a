#include "troupe/bootstrap/dns_discovery.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <ares.h>
#include <fmt/format.h>

#include "troupe/bootstrap/dns_lookup.hpp"
#include "troupe/bootstrap/errc.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::bootstrap {

namespace {

using steady = std::chrono::steady_clock;

// ares_library_init and ares_library_cleanup are reference-counted but not
// thread-safe (c-ares 1.18).
std::mutex ares_library_mtx;

bool is_label(std::string_view s) {
  return !s.empty() && s.find('.') == std::string_view::npos;
}

// Why `text` is not `ip:port`, if it is not.
std::optional<std::string> server_problem(std::string_view text) {
  auto quoted = fmt::format("{:?}", text);
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return fmt::format("{} has no \":port\" (expected ip:port, e.g. "
                       "10.96.0.10:53 or [fd00::a]:53)",
                       quoted);
  auto host = text.substr(0, colon);
  auto port_text = text.substr(colon + 1);
  bool bracketed
    = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (bracketed)
    host = host.substr(1, host.size() - 2);
  uint16_t port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(),
                                   port_text.data() + port_text.size(), port);
  if (ec != std::errc{} || ptr != port_text.data() + port_text.size()
      || port == 0)
    return fmt::format("{}: port {:?} is not a number in 1..65535", quoted,
                       port_text);
  std::string host_text{host};
  unsigned char buf[16];
  if (inet_pton(bracketed ? AF_INET6 : AF_INET, host_text.c_str(), buf) != 1)
    return fmt::format("{}: {:?} is not an IP address (the DNS server is "
                       "named by address; IPv6 in brackets: [fd00::a]:53)",
                       quoted, host_text);
  return std::nullopt;
}

} // namespace

const char* to_string(dns_record_type x) noexcept {
  return x == dns_record_type::a ? "a" : "srv";
}

std::optional<dns_record_type> parse_dns_record_type(std::string_view text) {
  if (text == "a")
    return dns_record_type::a;
  if (text == "srv")
    return dns_record_type::srv;
  return std::nullopt;
}

std::optional<dns_option_problem> check(const dns_discovery_options& opts) {
  std::string_view name = opts.service_name;
  if (name.empty())
    return dns_option_problem{"service_name",
                              "is empty: set the DNS name of the headless "
                              "service (e.g. "
                              "troupe.default.svc.cluster.local)"};
  if (name.size() > 253 + (name.back() == '.' ? 1 : 0))
    return dns_option_problem{
      "service_name", fmt::format("has {} characters, more than a DNS name "
                                  "may have (253)",
                                  name.size())};
  if (opts.record_type == dns_record_type::srv) {
    if (!is_label(opts.port_name))
      return dns_option_problem{"port_name",
                                fmt::format("{:?} is not one DNS label (the "
                                            "port's name, e.g. management)",
                                            opts.port_name)};
    if (!is_label(opts.protocol))
      return dns_option_problem{"protocol",
                                fmt::format("{:?} is not one DNS label (tcp "
                                            "or udp)",
                                            opts.protocol)};
  }
  if (!opts.server.empty())
    if (auto why = server_problem(opts.server))
      return dns_option_problem{"server", std::move(*why)};
  if (opts.record_type == dns_record_type::a && opts.contact_point_port == 0)
    return dns_option_problem{"contact_point_port",
                              "is 0: A/AAAA records carry no port, so the "
                              "management port of the contact points must "
                              "be given"};
  return std::nullopt;
}

std::string query_name(const dns_discovery_options& opts) {
  if (opts.record_type == dns_record_type::a)
    return opts.service_name;
  return fmt::format("_{}._{}.{}", opts.port_name, opts.protocol,
                     opts.service_name);
}

// -- impl ---------------------------------------------------------------------

class dns_discovery::impl : public std::enable_shared_from_this<impl> {
public:
  explicit impl(dns_discovery_options o) : opts(std::move(o)) {}

  ~impl() {
    if (wake_fd >= 0)
      ::close(wake_fd);
    std::lock_guard<std::mutex> guard{ares_library_mtx};
    ares_library_cleanup();
  }

  struct request {
    runtime::timespan timeout;
    runtime::timestamp deadline;
    callback done;
  };

  void submit(runtime::timespan timeout, callback done);
  void shutdown();
  void run();

  dns_discovery_options opts;
  int wake_fd = -1;
  std::thread thread;

private:
  void wake();
  bool take_requests();
  void complete_finished(runtime::timestamp now);
  void wait_and_process();

  std::mutex mtx_;
  bool stopped_ = false;                              // guarded by mtx_
  std::vector<request> queue_;                        // guarded by mtx_
  std::vector<std::unique_ptr<dns::lookup>> lookups_; // io thread only
};

void dns_discovery::impl::submit(runtime::timespan timeout, callback done) {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (!stopped_) {
      queue_.push_back(
        request{timeout, steady::now() + timeout, std::move(done)});
      wake();
      return;
    }
  }
  dns::lookup late{opts, timeout, steady::now(), std::move(done)};
  late.fail("discovery stopped (dns_discovery destroyed)");
  late.complete();
}

void dns_discovery::impl::wake() {
  uint64_t one = 1;
  // A full counter (never, in practice) still wakes the loop.
  [[maybe_unused]] auto n = ::write(wake_fd, &one, sizeof(one));
}

void dns_discovery::impl::shutdown() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    if (stopped_)
      return;
    stopped_ = true;
    wake();
  }
  if (!thread.joinable())
    return;
  if (thread.get_id() == std::this_thread::get_id())
    thread.detach(); // the thread holds `impl` alive until run() returns
  else
    thread.join();
}

// Starts the lookups of new requests; false once the discovery stopped
// (every lookup then failed and completed).
bool dns_discovery::impl::take_requests() {
  std::vector<request> fresh;
  bool stopping = false;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    fresh.swap(queue_);
    stopping = stopped_;
  }
  for (auto& r : fresh) {
    auto l = std::make_unique<dns::lookup>(opts, r.timeout, r.deadline,
                                           std::move(r.done));
    if (!stopping)
      l->start();
    lookups_.push_back(std::move(l));
  }
  if (!stopping)
    return true;
  for (auto& l : lookups_) {
    l->fail("discovery stopped before an answer (dns_discovery destroyed)");
    l->complete();
  }
  lookups_.clear();
  return false;
}

void dns_discovery::impl::complete_finished(runtime::timestamp now) {
  for (auto& l : lookups_) {
    if (!l->finished() && now >= l->deadline())
      l->expire();
    if (l->finished())
      l->complete();
  }
  std::erase_if(lookups_, [](const auto& l) { return l->finished(); });
}

void dns_discovery::impl::wait_and_process() {
  std::vector<pollfd> fds{pollfd{wake_fd, POLLIN, 0}};
  std::vector<size_t> first; // lookup i's sockets start at fds[first[i]]
  auto now = steady::now();
  auto wakeup = runtime::timestamp::max();
  for (auto& l : lookups_) {
    first.push_back(fds.size());
    l->add_poll_fds(fds);
    wakeup = std::min(wakeup, l->next_wakeup(now));
  }
  first.push_back(fds.size());
  int ms = -1;
  if (wakeup != runtime::timestamp::max()) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(wakeup - now);
    ms = static_cast<int>(std::clamp<int64_t>(left.count(), 0, 60'000));
  }
  if (::poll(fds.data(), fds.size(), ms) < 0 && errno != EINTR) {
    runtime::logger{"bootstrap"}.error("dns discovery: poll failed: {}",
                                       std::strerror(errno));
    return;
  }
  if (fds[0].revents != 0) {
    uint64_t count = 0;
    [[maybe_unused]] auto n = ::read(wake_fd, &count, sizeof(count));
  }
  for (size_t i = 0; i < lookups_.size(); ++i)
    lookups_[i]->process(
      std::span<const pollfd>{fds}.subspan(first[i], first[i + 1] - first[i]));
}

void dns_discovery::impl::run() {
  while (take_requests()) {
    complete_finished(steady::now());
    wait_and_process();
    complete_finished(steady::now());
  }
}

// -- dns_discovery ------------------------------------------------------------

runtime::expected<std::unique_ptr<dns_discovery>>
dns_discovery::make(dns_discovery_options opts) {
  if (auto problem = check(opts))
    return runtime::make_error(
      errc::invalid_settings,
      fmt::format("dns discovery: {} {}", problem->option, problem->reason));
  {
    std::lock_guard<std::mutex> guard{ares_library_mtx};
    if (auto rc = ares_library_init(ARES_LIB_INIT_ALL); rc != ARES_SUCCESS)
      return runtime::make_error(errc::discovery_unavailable,
                                 fmt::format("dns discovery: c-ares could not "
                                             "start: {}",
                                             ares_strerror(rc)));
  }
  auto ptr = std::make_shared<impl>(std::move(opts));
  auto fail = [&](std::string what) {
    return runtime::make_error(errc::discovery_unavailable,
                               fmt::format("dns discovery: {}", what));
  };
  ptr->wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (ptr->wake_fd < 0)
    return fail(fmt::format("eventfd: {}", std::strerror(errno)));
  try {
    ptr->thread = std::thread{[self = ptr] { self->run(); }};
  } catch (const std::system_error& e) {
    return fail(fmt::format("cannot start the io thread: {}", e.what()));
  }
  return std::unique_ptr<dns_discovery>{new dns_discovery{std::move(ptr)}};
}

dns_discovery::dns_discovery(std::shared_ptr<impl> ptr)
  : impl_(std::move(ptr)) {}

dns_discovery::~dns_discovery() {
  impl_->shutdown();
}

void dns_discovery::discover(runtime::timespan timeout, callback done) {
  impl_->submit(timeout, std::move(done));
}

std::string dns_discovery::describe() const {
  return fmt::format("{} at {}", dns::describe_question(impl_->opts),
                     impl_->opts.server.empty() ? "the system resolver"
                                                : impl_->opts.server);
}

} // namespace troupe::bootstrap
