#include "client/demo_client.hpp"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "client/client_log.hpp"
#include "client/latency_histogram.hpp"
#include "troupe/runtime/errc.hpp"

namespace troupe::demo::client {

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

int64_t mono_ns(clock_type::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           t.time_since_epoch())
    .count();
}

// The `seq` of a node's JSON answer, 0 when it has none.
uint64_t seq_of(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject())
    return 0;
  auto i = doc.FindMember("seq");
  return i != doc.MemberEnd() && i->value.IsUint64() ? i->value.GetUint64() : 0;
}

// At most 200 bytes of an answer, on one line.
std::string excerpt(std::string_view body) {
  std::string out{body.substr(0, 200)};
  for (auto& c : out)
    if (c == '\n' || c == '\r')
      c = ' ';
  return out;
}

// Lines from every worker, written to the file in batches (by the flusher
// and at the end): the workers never wait on the disk.
class log_writer {
public:
  ~log_writer() {
    if (fd_ >= 0)
      ::close(fd_);
  }

  runtime::error open(const std::filesystem::path& path) {
    path_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0)
      return runtime::make_error(
        runtime::errc::bad_config_value,
        fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
    return {};
  }

  void add(const std::string& line) {
    std::lock_guard<std::mutex> guard{mtx_};
    buf_ += line;
  }

  // Writes what was added so far; a write error is reported once on
  // stderr (the verdict then finds lines missing).
  void flush() {
    std::lock_guard<std::mutex> writing{write_mtx_};
    std::string out;
    {
      std::lock_guard<std::mutex> guard{mtx_};
      out.swap(buf_);
    }
    size_t done = 0;
    while (done < out.size() && fd_ >= 0) {
      auto n = ::write(fd_, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        if (!failed_)
          fmt::print(stderr, "demo client: cannot write {}: {}\n",
                     path_.string(), std::strerror(errno));
        failed_ = true;
        return;
      }
      done += static_cast<size_t>(n);
    }
  }

private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::mutex mtx_;
  std::string buf_;
  std::mutex write_mtx_;
  bool failed_ = false;
};

} // namespace

std::string deposit_target(const std::string& account,
                           const std::string& deposit, int64_t amount) {
  return fmt::format("/deposit?account={}&deposit={}&amount={}", account,
                     deposit, amount);
}

int64_t deposit_amount(uint64_t n) noexcept {
  return 1 + static_cast<int64_t>(n % 10);
}

struct load_driver::impl {
  load_settings s;
  log_writer log;
  clock_type::time_point start;
  std::atomic<bool> stopping = false;
  std::atomic<uint64_t> next = 0;
  std::atomic<uint64_t> sent = 0;
  std::atomic<uint64_t> acked = 0;
  std::atomic<uint64_t> failed = 0;
  std::atomic<uint64_t> attempts = 0;
  // Latencies and the acks per second.
  mutable std::mutex stats_mtx;
  latency_histogram latencies;
  int64_t second = -1;
  uint64_t this_second = 0;
  uint64_t last_second = 0;
  // Wakes sleeping workers and the flusher on stop.
  std::mutex stop_mtx;
  std::condition_variable stop_cv;
  std::vector<std::thread> workers;
  std::thread flusher;
  std::once_flag stopped;

  // Sleeps until `t`; false when stopping.
  bool sleep_until(clock_type::time_point t) {
    std::unique_lock<std::mutex> guard{stop_mtx};
    return !stop_cv.wait_until(guard, t, [this] { return stopping.load(); });
  }

  // The second of `t` since the start, rolling the per-second counts.
  void count_ack(clock_type::time_point t, std::chrono::microseconds latency) {
    auto sec
      = std::chrono::duration_cast<std::chrono::seconds>(t - start).count();
    std::lock_guard<std::mutex> guard{stats_mtx};
    latencies.add(latency);
    if (sec != second) {
      last_second = sec == second + 1 ? this_second : 0;
      this_second = 0;
      second = sec;
    }
    ++this_second;
  }

  void work() {
    std::vector<std::unique_ptr<http_connection>> conns;
    for (auto& ep : s.nodes)
      conns.push_back(std::make_unique<http_connection>(ep, s.request_timeout));
    while (!stopping) {
      auto n = next.fetch_add(1);
      if (s.max_deposits > 0 && n >= s.max_deposits)
        return;
      if (s.rate > 0) {
        auto due
          = start
            + std::chrono::duration_cast<clock_type::duration>(
              std::chrono::duration<double>(static_cast<double>(n) / s.rate));
        if (!sleep_until(due))
          return;
      }
      run_deposit(n, conns);
    }
  }

  void run_deposit(uint64_t n,
                   std::vector<std::unique_ptr<http_connection>>& conns) {
    client_event ev;
    ev.deposit = fmt::format("{}{}", s.deposit_prefix, n);
    ev.account = fmt::format("acct-{}", n % s.accounts);
    ev.amount = deposit_amount(n);
    auto target = deposit_target(ev.account, ev.deposit, ev.amount);
    auto t0 = clock_type::now();
    ev.mono_ns = mono_ns(t0);
    log.add(format_client_event(ev));
    ++sent;
    std::string last;
    for (uint32_t attempt = 0; attempt < s.max_attempts; ++attempt) {
      if (attempt > 0 && !sleep_until(clock_type::now() + s.retry_delay)) {
        last = "the client stopped; last attempt: " + last;
        break;
      }
      auto& conn = *conns[(n + attempt) % conns.size()];
      ++attempts;
      auto r = conn.request("POST", target);
      if (r && r->status == 200) {
        auto t1 = clock_type::now();
        ev.kind = client_event_kind::acked;
        ev.mono_ns = mono_ns(t1);
        ev.seq = seq_of(r->body);
        ev.node = to_string(conn.peer());
        log.add(format_client_event(ev));
        count_ack(
          t1, std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0));
        ++acked;
        return;
      }
      last = r ? fmt::format("{} answered {}: {}", to_string(conn.peer()),
                             r->status, excerpt(r->body))
               : r.error().message;
    }
    client_event f;
    f.kind = client_event_kind::failed;
    f.mono_ns = mono_ns(clock_type::now());
    f.deposit = ev.deposit;
    f.reason = last;
    log.add(format_client_event(f));
    ++failed;
  }

  void flush_loop() {
    std::unique_lock<std::mutex> guard{stop_mtx};
    while (
      !stop_cv.wait_for(guard, 200ms, [this] { return stopping.load(); })) {
      guard.unlock();
      log.flush();
      guard.lock();
    }
  }

  void stop() {
    std::call_once(stopped, [this] {
      {
        std::lock_guard<std::mutex> guard{stop_mtx};
        stopping = true;
      }
      stop_cv.notify_all();
      for (auto& w : workers)
        w.join();
      if (flusher.joinable())
        flusher.join();
      log.flush();
    });
  }
};

runtime::expected<std::unique_ptr<load_driver>>
load_driver::start(load_settings settings, const std::filesystem::path& log) {
  auto bad = [](std::string what) {
    return runtime::make_error(runtime::errc::bad_config_value,
                               "demo client: " + std::move(what));
  };
  if (settings.nodes.empty())
    return bad("no node endpoints");
  if (settings.accounts == 0)
    return bad("accounts must be at least 1");
  if (settings.workers == 0)
    return bad("workers must be at least 1");
  if (settings.max_attempts == 0)
    return bad("max_attempts must be at least 1");
  if (settings.rate < 0)
    return bad("rate must not be negative");
  auto x = std::make_unique<impl>();
  x->s = std::move(settings);
  if (auto err = x->log.open(log))
    return err;
  x->start = clock_type::now();
  auto* self = x.get();
  for (uint32_t i = 0; i < self->s.workers; ++i)
    self->workers.emplace_back([self] { self->work(); });
  self->flusher = std::thread{[self] { self->flush_loop(); }};
  return std::unique_ptr<load_driver>{new load_driver(std::move(x))};
}

load_driver::load_driver(std::unique_ptr<impl> x) : impl_(std::move(x)) {}

load_driver::~load_driver() {
  impl_->stop();
}

load_counters load_driver::counters() const {
  load_counters c;
  // Acks and failures before sends: in_flight never underflows.
  c.failed = impl_->failed.load();
  c.acked = impl_->acked.load();
  c.sent = impl_->sent.load();
  c.attempts = impl_->attempts.load();
  c.in_flight = c.sent - c.acked - c.failed;
  auto now_sec = std::chrono::duration_cast<std::chrono::seconds>(
                   clock_type::now() - impl_->start)
                   .count();
  std::lock_guard<std::mutex> guard{impl_->stats_mtx};
  auto& h = impl_->latencies;
  c.p50 = h.quantile(0.5);
  c.p90 = h.quantile(0.9);
  c.p99 = h.quantile(0.99);
  c.max = h.max();
  if (now_sec == impl_->second)
    c.acks_last_second = impl_->last_second;
  else if (now_sec == impl_->second + 1)
    c.acks_last_second = impl_->this_second;
  return c;
}

bool load_driver::finished() const {
  auto n = impl_->s.max_deposits;
  return n > 0 && impl_->acked.load() + impl_->failed.load() >= n;
}

void load_driver::stop() {
  impl_->stop();
}

} // namespace troupe::demo::client
