#include "troupe/runtime/coordinated_shutdown.hpp"

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"
#include "troupe/runtime/log.hpp"

namespace troupe::runtime {

namespace {

using steady = std::chrono::steady_clock;

std::string join_names(const std::vector<std::string>& xs) {
  std::string out;
  for (auto& x : xs) {
    if (!out.empty())
      out += ", ";
    out += x;
  }
  return out;
}

// A measured duration, e.g. "1.234s".
std::string took(timestamp from, timestamp to) {
  return fmt::format("{:.3f}s",
                     std::chrono::duration<double>(to - from).count());
}

} // namespace

timespan shutdown_context::remaining() const noexcept {
  auto now = steady::now();
  return now >= deadline ? timespan{0} : timespan{deadline - now};
}

struct coordinated_shutdown::impl {
  explicit impl(shutdown_timeouts t) : seq(t) {}

  mutable std::mutex mtx;
  std::condition_variable cv;
  shutdown_sequence seq;
  std::vector<shutdown_task> fns;
  std::thread runner;
  // Task threads; joined when they finished in time, detached at the end
  // when they overran (logged).
  std::vector<std::pair<size_t, std::thread>> workers;
  std::vector<bool> worker_done;
  logger log{"shutdown"};

  // Applies a step of the core (called with the lock held): starts its
  // tasks, logs the phases that ended.
  void apply(shutdown_sequence::step& s, const std::shared_ptr<impl>& self) {
    for (auto& r : s.ended)
      log_phase(r);
    if (s.wake_at)
      wake_at = *s.wake_at;
    if (s.start.empty())
      return;
    shutdown_context ctx{*seq.reason(), s.phase, s.deadline};
    log.info("phase {}: {} task(s), timeout {}", to_string(s.phase),
             s.start.size(), render_duration(seq.timeouts().of(s.phase)));
    for (auto id : s.start) {
      if (worker_done.size() <= id)
        worker_done.resize(id + 1, false);
      workers.emplace_back(
        id, std::thread{[self, id, ctx] { self->run_task(id, ctx); }});
    }
  }

  void run_task(size_t id, shutdown_context ctx) {
    shutdown_task fn;
    std::string name;
    {
      std::lock_guard guard{mtx};
      if (id < fns.size())
        fn = fns[id];
      name = seq.task_name(id);
    }
    std::optional<std::string> failure;
    try {
      if (fn)
        fn(ctx);
    } catch (const std::exception& e) {
      failure = e.what();
    } catch (...) {
      failure = "an unknown exception";
    }
    std::lock_guard guard{mtx};
    worker_done[id] = true;
    auto now = steady::now();
    auto step
      = failure ? seq.task_failed(id, *failure, now) : seq.task_done(id, now);
    if (!step.ended.empty() || step.complete || !step.start.empty())
      pending_steps.push_back(std::move(step));
    cv.notify_all();
  }

  void log_phase(const phase_result& r) {
    if (r.outcome == phase_outcome::empty)
      return;
    auto spent = took(r.started, r.ended);
    for (auto& f : r.failed)
      log.warning("phase {}: task {} failed", to_string(r.phase), f);
    if (r.outcome == phase_outcome::timed_out)
      log.warning("phase {} timed out after {}: still running: {}; going on",
                  to_string(r.phase), spent, join_names(r.unfinished));
    else
      log.info("phase {} done in {}", to_string(r.phase), spent);
  }

  // The runner thread: waits for the tasks of the running phase or its
  // deadline, feeds the core, until the sequence is complete.
  void run(const std::shared_ptr<impl>& self) {
    std::unique_lock lock{mtx};
    for (;;) {
      while (!pending_steps.empty()) {
        auto s = std::move(pending_steps.front());
        pending_steps.erase(pending_steps.begin());
        apply(s, self);
      }
      if (seq.complete())
        break;
      cv.wait_until(lock, wake_at, [&] { return !pending_steps.empty(); });
      if (pending_steps.empty()) {
        auto s = seq.tick(steady::now());
        pending_steps.push_back(std::move(s));
      }
    }
    auto& rep = seq.report();
    log.info("coordinated shutdown done in {} (reason {}){}",
             took(rep.started, rep.ended), to_string(rep.reason),
             rep.clean() ? "" : "; some phases timed out or failed");
    // Threads of tasks that finished are joined; overrunning ones are let
    // go (they were logged with their phase).
    std::vector<std::thread> finished;
    for (auto& [id, t] : workers) {
      if (worker_done[id])
        finished.push_back(std::move(t));
      else
        t.detach();
    }
    workers.clear();
    lock.unlock();
    for (auto& t : finished)
      t.join();
    lock.lock();
    done = true;
    cv.notify_all();
  }

  // Steps of the core not yet applied (from task threads and ticks).
  std::vector<shutdown_sequence::step> pending_steps;
  // The running phase's deadline (the core's last wake_at).
  timestamp wake_at{};
  bool done = false;
};

coordinated_shutdown::coordinated_shutdown(shutdown_timeouts timeouts)
  : impl_(std::make_shared<impl>(timeouts)) {}

coordinated_shutdown::~coordinated_shutdown() {
  run(shutdown_reason::application);
  wait();
  if (impl_->runner.joinable())
    impl_->runner.join();
}

error coordinated_shutdown::add_task(shutdown_phase phase, std::string name,
                                     shutdown_task task) {
  std::lock_guard guard{impl_->mtx};
  auto id = impl_->seq.add_task(phase, std::move(name));
  if (!id) {
    impl_->log.warning("{}", id.error().message);
    return id.error();
  }
  if (impl_->fns.size() <= *id)
    impl_->fns.resize(*id + 1);
  impl_->fns[*id] = std::move(task);
  return {};
}

bool coordinated_shutdown::run(shutdown_reason reason) {
  std::lock_guard guard{impl_->mtx};
  if (impl_->seq.started()) {
    if (impl_->seq.reason() != reason)
      impl_->log.debug("shutdown asked again (reason {}); it runs already "
                       "(reason {})",
                       to_string(reason), to_string(*impl_->seq.reason()));
    return false;
  }
  impl_->log.info("coordinated shutdown started (reason {}); longest it "
                  "can take: {}",
                  to_string(reason),
                  render_duration(impl_->seq.timeouts().total()));
  auto step = impl_->seq.start(reason, std::chrono::steady_clock::now());
  impl_->pending_steps.push_back(std::move(step));
  impl_->runner = std::thread{[self = impl_] { self->run(self); }};
  return true;
}

shutdown_report coordinated_shutdown::wait() {
  std::unique_lock lock{impl_->mtx};
  if (!impl_->seq.started())
    return {};
  impl_->cv.wait(lock, [&] { return impl_->done; });
  return impl_->seq.report();
}

shutdown_report coordinated_shutdown::run_and_wait(shutdown_reason reason) {
  run(reason);
  return wait();
}

void coordinated_shutdown::release_tasks() {
  std::vector<shutdown_task> fns;
  {
    std::lock_guard guard{impl_->mtx};
    if (!impl_->done)
      return;
    fns.swap(impl_->fns);
  }
}

bool coordinated_shutdown::started() const {
  std::lock_guard guard{impl_->mtx};
  return impl_->seq.started();
}

bool coordinated_shutdown::complete() const {
  std::lock_guard guard{impl_->mtx};
  return impl_->done;
}

std::optional<shutdown_reason> coordinated_shutdown::reason() const {
  std::lock_guard guard{impl_->mtx};
  return impl_->seq.reason();
}

std::optional<shutdown_phase> coordinated_shutdown::current_phase() const {
  std::lock_guard guard{impl_->mtx};
  return impl_->seq.current_phase();
}

const shutdown_timeouts& coordinated_shutdown::timeouts() const noexcept {
  return impl_->seq.timeouts();
}

} // namespace troupe::runtime
