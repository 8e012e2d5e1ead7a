// Lease benchmarks. Each subject has a baseline measured in the same run:
// - check_alive() vs. "an atomic load plus a coarse clock read" (DESIGN.md
//   §10; target within 2x);
// - acquire+release through the lease actor (request/response from a
//   requester actor) vs. the same two backend calls made directly plus two
//   raw CAF round trips to a trivial actor (in-memory and file backends);
// - one renewal through the state machine vs. the bare backend renew call.

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <future>

#include <time.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "bench_main.hpp"
#include "troupe/lease/backend_sync.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/file_lease_backend.hpp"
#include "troupe/lease/in_memory_lease_backend.hpp"
#include "troupe/lease/lease_fsm.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/monotonic_clock.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;

namespace {

// CAF's work-stealing workers sleep 50us between polls by default, which
// dominates blocking round trips; `--tuned` sets it to 0us (caf-notes §9).
bool tuned = false;

struct bench_config : caf::actor_system_config {
  bench_config() {
    runtime::add_runtime_types(*this);
    add_lease_types(*this);
    set("scheduler.max-threads", size_t{2});
    if (tuned)
      set("work-stealing.moderate-sleep-duration", caf::timespan{0});
  }
};

std::unique_ptr<bench_config> the_cfg;
std::unique_ptr<caf::actor_system> the_sys;

caf::actor_system& sys() {
  return *the_sys;
}

// Stops a benchmark's lease actor when the benchmark ends.
struct stop_actor {
  lease_actor actor;
  ~stop_actor() {
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }
};

lease_settings bench_settings(const std::string& name) {
  lease_settings s;
  s.name = name;
  s.owner = "bench";
  s.ttl = 30s;
  return s;
}

std::string file_dir() {
  static std::string dir = [] {
    auto d = std::filesystem::temp_directory_path()
             / ("troupe-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d.string();
  }();
  return dir;
}

std::shared_ptr<file_lease_backend> file_backend() {
  static auto backend = [] {
    file_lease_backend_options opts;
    opts.directory = file_dir();
    auto b = file_lease_backend::make(opts);
    if (!b) {
      std::fprintf(stderr, "%s\n", b.error().message.c_str());
      std::exit(1);
    }
    return *b;
  }();
  return backend;
}

// -- check_alive --------------------------------------------------------------

void baseline_atomic_and_coarse_clock(benchmark::State& state) {
  std::atomic<int64_t> deadline{std::numeric_limits<int64_t>::max()};
  for (auto _ : state) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    auto now = ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
    benchmark::DoNotOptimize(now < deadline.load(std::memory_order_acquire));
  }
}
BENCHMARK(baseline_atomic_and_coarse_clock);

void check_alive(benchmark::State& state) {
  auto store
    = std::make_shared<in_memory_lease_store>(runtime::default_coarse_clock());
  auto h
    = lease_handle::spawn(sys(), bench_settings("check"),
                          std::make_shared<in_memory_lease_backend>(store));
  if (!h) {
    state.SkipWithError("spawn failed");
    return;
  }
  stop_actor stop{h->actor()};
  if (!*h->acquire()) {
    state.SkipWithError("acquire failed");
    return;
  }
  for (auto _ : state)
    benchmark::DoNotOptimize(h->check_alive());
  if (!h->check_alive())
    state.SkipWithError("lease not alive during the benchmark");
  h->release();
}
BENCHMARK(check_alive);

// -- acquire + release --------------------------------------------------------

// Calls a backend operation and waits for its callback.
backend_reply call_sync(lease_backend& b, backend_op op,
                        const backend_request& req) {
  return call_and_wait(b, op, req).value();
}

// The baseline of an acquire+release through the lease actor: the same two
// backend calls made directly, plus two raw CAF request/response round trips
// to a trivial actor from the same kind of requester.
void raw_backend_cycle(benchmark::State& state, lease_backend& b,
                       const std::string& name) {
  auto echo = sys().spawn(
    []() -> caf::behavior { return {[](int32_t x) { return x; }}; });
  caf::scoped_actor self{sys()};
  backend_request req{name, "bench", 30s, 1, 0};
  for (auto _ : state) {
    self->request(echo, caf::infinite, int32_t{1})
      .receive([](int32_t) {}, [](caf::error&) {});
    auto r = call_sync(b, backend_op::acquire, req);
    req.token = r.token;
    self->request(echo, caf::infinite, int32_t{2})
      .receive([](int32_t) {}, [](caf::error&) {});
    call_sync(b, backend_op::release, req);
  }
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
}

void actor_cycle(benchmark::State& state, std::shared_ptr<lease_backend> b,
                 const std::string& name) {
  auto h = lease_handle::spawn(sys(), bench_settings(name), std::move(b));
  if (!h) {
    state.SkipWithError("spawn failed");
    return;
  }
  stop_actor stop{h->actor()};
  caf::scoped_actor self{sys()};
  bool ok = true;
  for (auto _ : state) {
    self
      ->request(h->actor(), caf::infinite, acquire_atom::value,
                runtime::timespan{10s})
      .receive([&](const acquire_result& r) { ok = ok && r.acquired; },
               [&](caf::error&) { ok = false; });
    self->request(h->actor(), caf::infinite, release_atom::value)
      .receive([](bool) {}, [&](caf::error&) { ok = false; });
  }
  if (!ok)
    state.SkipWithError("acquire or release failed");
}

void baseline_in_memory_backend_calls(benchmark::State& state) {
  in_memory_lease_backend b{
    std::make_shared<in_memory_lease_store>(runtime::default_coarse_clock())};
  raw_backend_cycle(state, b, "raw-mem");
}
BENCHMARK(baseline_in_memory_backend_calls);

void acquire_release_in_memory(benchmark::State& state) {
  actor_cycle(
    state,
    std::make_shared<in_memory_lease_backend>(
      std::make_shared<in_memory_lease_store>(runtime::default_coarse_clock())),
    "actor-mem");
}
BENCHMARK(acquire_release_in_memory);

void baseline_file_backend_calls(benchmark::State& state) {
  raw_backend_cycle(state, *file_backend(), "raw-file");
}
BENCHMARK(baseline_file_backend_calls);

void acquire_release_file(benchmark::State& state) {
  actor_cycle(state, file_backend(), "actor-file");
}
BENCHMARK(acquire_release_file);

// -- renewal ------------------------------------------------------------------

// One renewal as the lease actor does it, minus the mailbox: the FSM's
// renew timer, the backend call, the FSM's handling of the reply.
void renewal_step(benchmark::State& state, lease_backend& b,
                  const std::string& name) {
  lease_fsm fsm{bench_settings(name), 7};
  runtime::timestamp now{std::chrono::hours{1}};
  std::optional<start_timer> renew_timer;
  auto run = [&](const lease_input& in) {
    std::optional<backend_replied> reply;
    for (auto& e : fsm.step(in, now)) {
      if (auto* c = std::get_if<call_backend>(&e))
        reply = backend_replied{c->attempt, call_sync(b, c->op, c->request)};
      else if (auto* t = std::get_if<start_timer>(&e);
               t && t->kind == timer_kind::renew)
        renew_timer = *t;
    }
    return reply;
  };
  run(*run(acquire_requested{1, now + 1h}));
  for (auto _ : state) {
    if (!renew_timer) {
      state.SkipWithError("no renewal scheduled");
      return;
    }
    now = renew_timer->at;
    auto reply = run(timer_fired{timer_kind::renew, renew_timer->timer_id});
    renew_timer.reset();
    run(*reply);
  }
  if (fsm.state() != lease_state::held)
    state.SkipWithError("lease not held after renewals");
}

void baseline_in_memory_renew_call(benchmark::State& state) {
  auto store
    = std::make_shared<in_memory_lease_store>(runtime::default_coarse_clock());
  in_memory_lease_backend b{store};
  backend_request req{"raw-renew", "bench", 30s, 1, 0};
  call_sync(b, backend_op::acquire, req);
  for (auto _ : state)
    benchmark::DoNotOptimize(call_sync(b, backend_op::renew, req));
}
BENCHMARK(baseline_in_memory_renew_call);

void renewal_in_memory(benchmark::State& state) {
  in_memory_lease_backend b{
    std::make_shared<in_memory_lease_store>(runtime::default_coarse_clock())};
  renewal_step(state, b, "fsm-renew");
}
BENCHMARK(renewal_in_memory);

void baseline_file_renew_call(benchmark::State& state) {
  backend_request req{"raw-file-renew", "bench", 30s, 1, 0};
  call_sync(*file_backend(), backend_op::acquire, req);
  for (auto _ : state)
    benchmark::DoNotOptimize(
      call_sync(*file_backend(), backend_op::renew, req));
}
BENCHMARK(baseline_file_renew_call);

void renewal_file(benchmark::State& state) {
  renewal_step(state, *file_backend(), "fsm-file-renew");
}
BENCHMARK(renewal_file);

} // namespace

int main(int argc, char** argv) {
  runtime::set_log_level(runtime::log_level::warning);
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::string_view{argv[i]} == "--tuned")
      tuned = true;
    else
      args.push_back(argv[i]);
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  the_cfg = std::make_unique<bench_config>();
  the_sys = std::make_unique<caf::actor_system>(*the_cfg);
  std::printf("scheduler: %s\n", tuned ? "tuned (moderate-sleep 0us)"
                                       : "CAF default (moderate-sleep 50us)");
  troupe::bench::ratio_reporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  bool complete = reporter.print_ratios({
    {"check_alive", "baseline_atomic_and_coarse_clock"},
    {"acquire_release_in_memory", "baseline_in_memory_backend_calls"},
    {"acquire_release_file", "baseline_file_backend_calls"},
    {"renewal_in_memory", "baseline_in_memory_renew_call"},
    {"renewal_file", "baseline_file_renew_call"},
  });
  the_sys.reset();
  std::filesystem::remove_all(file_dir());
  benchmark::Shutdown();
  // A benchmark that failed (skipped with an error) leaves a ratio out.
  return complete ? 0 : 1;
}
