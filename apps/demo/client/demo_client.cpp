#include "client/demo_client.hpp"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "client/client_log.hpp"
#include "client/latency_histogram.hpp"
#include "client/node_choice.hpp"
#include "client/recent_latency.hpp"
#include "troupe/runtime/errc.hpp"

namespace troupe::demo::client {

namespace {

using clock_type = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A deposit due longer ago than this and not sent is behind schedule.
constexpr std::chrono::milliseconds behind_after{100};

int64_t mono_ns(clock_type::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           t.time_since_epoch())
    .count();
}

// The `seq` of a node's JSON answer, 0 when it has none.
uint64_t seq_of(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
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
  std::atomic<uint64_t> unfinished = 0;
  std::atomic<uint64_t> attempts = 0;
  // Latencies over the whole run and over the last seconds.
  mutable std::mutex stats_mtx;
  latency_histogram latencies;
  recent_latency recent;
  // Which node each attempt goes to; shared, so that one refusal spares
  // every worker the dead node.
  std::mutex choice_mtx;
  std::optional<node_choice> choice;
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

  std::chrono::nanoseconds since_start(clock_type::time_point t) const {
    return t - start;
  }

  void count_ack(clock_type::time_point t, std::chrono::microseconds latency) {
    auto sec
      = std::chrono::duration_cast<std::chrono::seconds>(t - start).count();
    std::lock_guard<std::mutex> guard{stats_mtx};
    latencies.add(latency);
    recent.add(sec, latency);
  }

  void work() {
    std::vector<std::unique_ptr<http_connection>> conns;
    for (auto& ep : s.nodes)
      conns.push_back(std::make_unique<http_connection>(ep, s.request_timeout));
    while (!stopping) {
      auto n = next.fetch_add(1);
      if (s.max_deposits > 0 && n >= s.max_deposits)
        return;
      if (s.rate > 0 && !sleep_until(due(n)))
        return;
      run_deposit(n, conns);
    }
  }

  // When deposit n is due under the rate.
  clock_type::time_point due(uint64_t n) const {
    return start
           + std::chrono::duration_cast<clock_type::duration>(
             std::chrono::duration<double>(static_cast<double>(n) / s.rate));
  }

  // The node for this attempt, and whether to wait the retry delay first.
  std::pair<size_t, bool> choose(uint64_t n, uint32_t attempt, size_t previous,
                                 bool refused) {
    auto now = since_start(clock_type::now());
    std::lock_guard<std::mutex> guard{choice_mtx};
    if (attempt == 0)
      return {choice->first(n, now), false};
    auto node = choice->next(previous, now);
    return {node, choice->waits_before(node, refused, now)};
  }

  void learn(size_t node, bool refused) {
    std::lock_guard<std::mutex> guard{choice_mtx};
    if (refused)
      choice->on_refused(node, since_start(clock_type::now()));
    else
      choice->on_answered(node);
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
    size_t node = 0;
    bool refused = false;
    auto outcome = client_event_kind::failed;
    for (uint32_t attempt = 0; attempt < s.max_attempts; ++attempt) {
      auto [to, wait] = choose(n, attempt, node, refused);
      node = to;
      // Stopping ends a deposit between attempts, never in one.
      if (attempt > 0
          && (stopping
              || (wait && !sleep_until(clock_type::now() + s.retry_delay)))) {
        outcome = client_event_kind::unfinished;
        last = fmt::format("the client stopped before attempt {}; attempt {}: "
                           "{}",
                           attempt + 1, attempt, last);
        break;
      }
      auto& conn = *conns[node];
      ++attempts;
      auto r = conn.request("POST", target);
      refused
        = !r
          && r.error().code
               == static_cast<uint8_t>(runtime::errc::http_connect_failed);
      learn(node, refused);
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
    f.kind = outcome;
    f.mono_ns = mono_ns(clock_type::now());
    f.deposit = ev.deposit;
    f.reason = last;
    log.add(format_client_event(f));
    ++(outcome == client_event_kind::failed ? failed : unfinished);
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
  x->choice.emplace(settings.nodes.size(), settings.refusing_pause);
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
  auto now = clock_type::now();
  c.at = impl_->since_start(now);
  // Outcomes before sends: in_flight never underflows.
  c.failed = impl_->failed.load();
  c.unfinished = impl_->unfinished.load();
  c.acked = impl_->acked.load();
  c.sent = impl_->sent.load();
  c.attempts = impl_->attempts.load();
  c.in_flight = c.sent - c.acked - c.failed - c.unfinished;
  if (impl_->s.rate > 0 && c.at >= behind_after) {
    // Deposits 0..due-1 were due behind_after ago (a worker that wakes a
    // little late for its deposit is not behind).
    auto due = static_cast<uint64_t>(
                 std::chrono::duration<double>(c.at - behind_after).count()
                 * impl_->s.rate)
               + 1;
    if (impl_->s.max_deposits > 0)
      due = std::min(due, impl_->s.max_deposits);
    c.behind = due > c.sent ? due - c.sent : 0;
  }
  auto sec = std::chrono::duration_cast<std::chrono::seconds>(c.at).count();
  std::lock_guard<std::mutex> guard{impl_->stats_mtx};
  auto& h = impl_->latencies;
  c.p50 = h.quantile(0.5);
  c.p90 = h.quantile(0.9);
  c.p99 = h.quantile(0.99);
  c.max = h.max();
  c.recent_p99 = impl_->recent.window(sec).quantile(0.99);
  c.recent_seconds = recent_latency::window_seconds;
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
