#include "troupe/runtime/shutdown_sequence.hpp"

#include <fmt/format.h>

#include "troupe/runtime/config.hpp"
#include "troupe/runtime/errc.hpp"

namespace troupe::runtime {

namespace {

using namespace std::chrono_literals;

constexpr std::array<shutdown_phase, shutdown_phase_count> phases{
  shutdown_phase::before_service_unbind,
  shutdown_phase::service_unbind,
  shutdown_phase::service_requests_done,
  shutdown_phase::service_stop,
  shutdown_phase::before_cluster_shutdown,
  shutdown_phase::cluster_sharding_shutdown_region,
  shutdown_phase::cluster_leave,
  shutdown_phase::cluster_exiting,
  shutdown_phase::cluster_exiting_done,
  shutdown_phase::cluster_shutdown,
  shutdown_phase::release_leases,
  shutdown_phase::before_actor_system_terminate,
  shutdown_phase::actor_system_terminate,
};

constexpr std::array<std::string_view, shutdown_phase_count> phase_names{
  "before_service_unbind",   "service_unbind",
  "service_requests_done",   "service_stop",
  "before_cluster_shutdown", "cluster_sharding_shutdown_region",
  "cluster_leave",           "cluster_exiting",
  "cluster_exiting_done",    "cluster_shutdown",
  "release_leases",          "before_actor_system_terminate",
  "actor_system_terminate",
};

} // namespace

const std::array<shutdown_phase, shutdown_phase_count>&
all_shutdown_phases() noexcept {
  return phases;
}

std::string_view to_string(shutdown_phase phase) noexcept {
  auto i = static_cast<size_t>(phase);
  return i < phase_names.size() ? phase_names[i] : "unknown";
}

std::optional<shutdown_phase> parse_shutdown_phase(std::string_view name) {
  for (size_t i = 0; i < phase_names.size(); ++i)
    if (phase_names[i] == name)
      return phases[i];
  return std::nullopt;
}

timespan default_phase_timeout(shutdown_phase phase) noexcept {
  switch (phase) {
    case shutdown_phase::cluster_sharding_shutdown_region:
    case shutdown_phase::cluster_exiting:
    case shutdown_phase::actor_system_terminate:
      return 10s;
    default:
      return 5s;
  }
}

std::string_view to_string(shutdown_reason reason) noexcept {
  switch (reason) {
    case shutdown_reason::signal:
      return "signal";
    case shutdown_reason::application:
      return "application";
    case shutdown_reason::cluster_leaving:
      return "cluster_leaving";
    case shutdown_reason::cluster_downing:
      return "cluster_downing";
    case shutdown_reason::cluster_removed:
      return "cluster_removed";
    case shutdown_reason::cluster_join_unsuccessful:
      return "cluster_join_unsuccessful";
    case shutdown_reason::cluster_merge:
      return "cluster_merge";
  }
  return "unknown";
}

bool stopped_by_cluster(shutdown_reason reason) noexcept {
  return reason == shutdown_reason::cluster_downing
         || reason == shutdown_reason::cluster_removed
         || reason == shutdown_reason::cluster_join_unsuccessful
         || reason == shutdown_reason::cluster_merge;
}

int exit_code(shutdown_reason reason) noexcept {
  if (reason == shutdown_reason::cluster_merge)
    return merge_exit_code;
  return stopped_by_cluster(reason) ? 1 : 0;
}

shutdown_timeouts shutdown_timeouts::defaults() noexcept {
  shutdown_timeouts result;
  for (auto p : phases)
    result.set(p, default_phase_timeout(p));
  return result;
}

timespan shutdown_timeouts::total() const noexcept {
  timespan sum{0};
  for (auto t : per_phase)
    sum += t;
  return sum;
}

std::string shutdown_timeout_key(shutdown_phase phase) {
  return fmt::format("coordinated_shutdown.{}.timeout", to_string(phase));
}

void declare_shutdown_config(config_schema& schema) {
  for (auto phase : phases)
    add_duration_key(
      schema, shutdown_timeout_key(phase),
      render_duration(default_phase_timeout(phase)),
      fmt::format("Coordinated shutdown: the longest the phase {} may take "
                  "before the shutdown goes on without its unfinished "
                  "tasks (docs/design/coordinated-shutdown.md).",
                  to_string(phase)),
      std::chrono::milliseconds{1});
}

shutdown_timeouts shutdown_timeouts_from_config(const config& cfg) {
  shutdown_timeouts result;
  for (auto phase : phases)
    result.set(phase, cfg.get<timespan>(shutdown_timeout_key(phase)));
  return result;
}

std::string_view to_string(phase_outcome outcome) noexcept {
  switch (outcome) {
    case phase_outcome::empty:
      return "empty";
    case phase_outcome::completed:
      return "completed";
    case phase_outcome::timed_out:
      return "timed_out";
  }
  return "unknown";
}

bool shutdown_report::clean() const noexcept {
  for (auto& p : phases)
    if (p.outcome == phase_outcome::timed_out || !p.failed.empty())
      return false;
  return true;
}

shutdown_sequence::shutdown_sequence(shutdown_timeouts timeouts)
  : timeouts_(timeouts) {}

expected<size_t> shutdown_sequence::add_task(shutdown_phase phase,
                                             std::string name) {
  if (complete_ || (started_ && phase <= phases[current_]))
    return make_error(
      errc::shutdown_phase_passed,
      fmt::format("the shutdown task \"{}\" was added to phase "
                  "{}, which already {}: it will not run",
                  name, to_string(phase),
                  complete_ || phase < phases[current_] ? "ran" : "started"));
  tasks_.push_back(task{phase, std::move(name)});
  return tasks_.size() - 1;
}

std::optional<shutdown_phase>
shutdown_sequence::current_phase() const noexcept {
  if (!started_ || complete_)
    return std::nullopt;
  return phases[current_];
}

std::optional<shutdown_reason> shutdown_sequence::reason() const noexcept {
  if (!started_)
    return std::nullopt;
  return report_.reason;
}

const std::string& shutdown_sequence::task_name(size_t id) const noexcept {
  static const std::string none;
  return id < tasks_.size() ? tasks_[id].name : none;
}

shutdown_sequence::step shutdown_sequence::start(shutdown_reason reason,
                                                 timestamp now) {
  step out;
  if (started_)
    return out;
  started_ = true;
  report_.reason = reason;
  report_.started = now;
  current_ = 0;
  begin_phase(now, out);
  return out;
}

void shutdown_sequence::begin_phase(timestamp now, step& out) {
  // Phases without tasks end at once; the first one with tasks runs.
  while (current_ < phases.size()) {
    auto phase = phases[current_];
    phase_started_ = now;
    deadline_ = now + timeouts_.of(phase);
    for (size_t id = 0; id < tasks_.size(); ++id) {
      auto& t = tasks_[id];
      if (t.phase == phase && !t.running && !t.finished) {
        t.running = true;
        out.start.push_back(id);
      }
    }
    if (!out.start.empty()) {
      out.phase = phase;
      out.deadline = deadline_;
      out.wake_at = deadline_;
      return;
    }
    phase_result r;
    r.phase = phase;
    r.outcome = phase_outcome::empty;
    r.started = now;
    r.ended = now;
    report_.phases.push_back(r);
    out.ended.push_back(std::move(r));
    ++current_;
  }
  complete_ = true;
  report_.ended = now;
  out.complete = true;
  out.wake_at.reset();
}

void shutdown_sequence::advance(timestamp now, bool timed_out, step& out) {
  auto phase = phases[current_];
  phase_result r;
  r.phase = phase;
  r.outcome = timed_out ? phase_outcome::timed_out : phase_outcome::completed;
  r.started = phase_started_;
  r.ended = now;
  for (auto& t : tasks_) {
    if (t.phase != phase)
      continue;
    if (!t.finished) {
      r.unfinished.push_back(t.name);
      // A late report of it changes nothing.
      t.finished = true;
    } else if (t.error) {
      r.failed.push_back(t.name + ": " + *t.error);
    }
  }
  report_.phases.push_back(r);
  out.ended.push_back(std::move(r));
  ++current_;
  begin_phase(now, out);
}

void shutdown_sequence::finish_task(size_t id, std::optional<std::string> error,
                                    timestamp now, step& out) {
  if (!started_ || complete_ || id >= tasks_.size())
    return;
  auto& t = tasks_[id];
  if (t.finished || !t.running)
    return;
  t.finished = true;
  t.running = false;
  t.error = std::move(error);
  auto phase = phases[current_];
  for (auto& other : tasks_)
    if (other.phase == phase && !other.finished) {
      out.wake_at = deadline_;
      return;
    }
  advance(now, false, out);
}

shutdown_sequence::step shutdown_sequence::task_done(size_t id, timestamp now) {
  step out;
  finish_task(id, std::nullopt, now, out);
  if (!complete_ && !out.wake_at)
    out.wake_at = deadline_;
  return out;
}

shutdown_sequence::step
shutdown_sequence::task_failed(size_t id, std::string what, timestamp now) {
  step out;
  finish_task(id, std::move(what), now, out);
  if (!complete_ && !out.wake_at)
    out.wake_at = deadline_;
  return out;
}

shutdown_sequence::step shutdown_sequence::tick(timestamp now) {
  step out;
  if (!started_ || complete_)
    return out;
  if (now >= deadline_)
    advance(now, true, out);
  else
    out.wake_at = deadline_;
  return out;
}

} // namespace troupe::runtime
