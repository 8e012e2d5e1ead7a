// Safety property of the lease (issue: "Foundation and the lease core"):
// two or three contenders on one in-memory store under 1,000 seeded random
// schedules of delays, failures, hangs and lost replies. Checked at every
// simulated instant: never two handles with check_alive() true; tokens of
// successive holders strictly increase. A failure prints the seed; set
// LEASE_SIM_SEED=<n> to replay one schedule.
//
// The checker is shown to catch planted bugs (a store that double-grants, a
// store that reuses tokens) within the same seed budget.

#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>

#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/faulty_lease_backend.hpp"
#include "troupe/lease/in_memory_lease_backend.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/test/deterministic.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;
using troupe::test::deterministic_system;
using troupe::test::probe;

namespace {

constexpr int seed_budget = 1000;

lease_settings sim_settings(std::string owner) {
  lease_settings s;
  s.name = "jobs";
  s.owner = std::move(owner);
  s.ttl = 3s;
  s.renewal_interval = 1s;
  s.safety_margin = 300ms;
  s.operation_timeout = 500ms;
  s.acquire_retries = 3;
  s.acquire_retry_delay = 50ms;
  return s;
}

// A random fault per backend call.
fault random_fault(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pct{0, 99};
  std::uniform_int_distribution<int64_t> ms{0, 1500};
  auto p = pct(rng);
  if (p < 60)
    return fault::pass();
  if (p < 70)
    return fault::answer(backend_status::unavailable, "injected 503");
  if (p < 78)
    return fault::delayed(std::chrono::milliseconds{ms(rng)});
  if (p < 86)
    return fault::delayed_reply(std::chrono::milliseconds{ms(rng)});
  if (p < 93)
    return fault::lose_reply();
  if (p < 96)
    return fault::answer(backend_status::conflict, "injected 409");
  return fault::hang();
}

// Planted bugs for the checker's own test.
enum class planted { none, double_grant, reused_tokens };

// Wraps the store and breaks it on purpose.
class buggy_backend final : public lease_backend {
public:
  buggy_backend(std::shared_ptr<in_memory_lease_store> store, planted bug)
    : store_(std::move(store)), bug_(bug) {}

  void acquire(const backend_request& req, callback done) override {
    auto reply = store_->apply(backend_op::acquire, req);
    if (bug_ == planted::double_grant && reply.status == backend_status::held
        && reply.holder != req.owner) {
      // Grants a second holder while the first one's record is live.
      reply.status = backend_status::ok;
      reply.holder = req.owner;
      reply.acquisition = req.acquisition;
      reply.token = ++stolen_tokens_ + 1'000'000;
    }
    if (bug_ == planted::reused_tokens && reply.status == backend_status::ok)
      reply.token = 1'000'000 - reply.token; // decreasing across holders
    done(std::move(reply));
  }

  void renew(const backend_request& req, callback done) override {
    auto reply = store_->apply(backend_op::renew, req);
    if (bug_ == planted::double_grant && reply.status == backend_status::held)
      reply.status = backend_status::ok; // the thief keeps renewing
    done(std::move(reply));
  }

  void release(const backend_request& req, callback done) override {
    done(store_->apply(backend_op::release, req));
  }

  std::string describe() const override {
    return "buggy in-memory store";
  }

private:
  std::shared_ptr<in_memory_lease_store> store_;
  planted bug_;
  uint64_t stolen_tokens_ = 0;
};

struct contender {
  lease_handle handle;
  std::unique_ptr<probe> prb;
  bool request_pending = false;
  bool was_alive = false;
  runtime::timestamp next_action{};
};

// Runs one seeded schedule; returns a description of the first violation.
std::optional<std::string> run_schedule(uint64_t seed, planted bug) {
  std::mt19937_64 rng{seed};
  deterministic_system ds{{add_lease_types}};
  auto store = std::make_shared<in_memory_lease_store>(ds.clock());
  std::uniform_int_distribution<int> count{2, 3};
  std::vector<contender> cs;
  auto n = count(rng);
  for (int i = 0; i < n; ++i) {
    std::shared_ptr<lease_backend> inner;
    if (bug == planted::none)
      inner = std::make_shared<in_memory_lease_backend>(store);
    else
      inner = std::make_shared<buggy_backend>(store, bug);
    auto faulty = std::make_shared<faulty_lease_backend>(inner, ds.scheduler());
    auto fault_rng = std::make_shared<std::mt19937_64>(rng());
    faulty->set_policy([fault_rng](backend_op, const backend_request&) {
      return random_fault(*fault_rng);
    });
    auto h = lease_handle::spawn(
      ds.sys(), sim_settings(std::string(1, char('a' + i))), faulty);
    REQUIRE(h);
    ds.track(h->actor());
    cs.push_back(contender{*h, std::make_unique<probe>(ds.sys())});
  }
  std::optional<std::string> violation;
  uint64_t highest_token = 0;
  auto check = [&] {
    if (violation)
      return;
    int alive = 0;
    for (auto& c : cs) {
      bool now_alive = c.handle.check_alive();
      alive += now_alive ? 1 : 0;
      if (now_alive && !c.was_alive) {
        auto token = c.handle.token();
        if (token <= highest_token)
          violation = "holder " + c.handle.settings().owner + " got token "
                      + std::to_string(token) + " after token "
                      + std::to_string(highest_token);
        highest_token = std::max(highest_token, token);
      }
      c.was_alive = now_alive;
    }
    if (alive > 1 && !violation)
      violation = std::to_string(alive) + " handles alive at once";
  };
  std::uniform_int_distribution<int64_t> pause_ms{100, 1500};
  std::uniform_int_distribution<int> pct{0, 99};
  auto end = ds.now() + 40s;
  while (ds.now() < end && !violation) {
    ds.advance(100ms, check);
    for (auto& c : cs) {
      if (c.request_pending) {
        if (c.prb->poll<acquire_result>() || c.prb->poll<bool>())
          c.request_pending = false;
        continue;
      }
      if (ds.now() < c.next_action)
        continue;
      c.next_action = ds.now() + std::chrono::milliseconds{pause_ms(rng)};
      if (!c.handle.check_alive()) {
        c.prb->send(c.handle.actor(), acquire_atom::value,
                    runtime::timespan{2s});
        c.request_pending = true;
      } else if (pct(rng) < 15) {
        c.prb->send(c.handle.actor(), release_atom::value);
        c.request_pending = true;
      }
    }
  }
  return violation;
}

struct quiet_logs {
  runtime::log_level old = runtime::current_log_level();
  quiet_logs() {
    // LEASE_SIM_LOG=1 keeps the lease actors' log lines (for replays).
    if (!std::getenv("LEASE_SIM_LOG"))
      runtime::set_log_level(runtime::log_level::off);
  }
  ~quiet_logs() {
    runtime::set_log_level(old);
  }
};

std::vector<uint64_t> seeds() {
  if (auto env = std::getenv("LEASE_SIM_SEED"))
    return {std::strtoull(env, nullptr, 10)};
  std::vector<uint64_t> result;
  for (uint64_t i = 1; i <= seed_budget; ++i)
    result.push_back(i);
  return result;
}

} // namespace

TEST_CASE("lease safety: never two holders alive, tokens increase, under "
          "1000 seeded fault schedules") {
  quiet_logs quiet;
  size_t ran = 0;
  for (auto seed : seeds()) {
    auto violation = run_schedule(seed, planted::none);
    if (violation)
      FAIL("seed " << seed << ": " << *violation
                   << " (replay with LEASE_SIM_SEED=" << seed << ")");
    ++ran;
  }
  CHECK(ran == seeds().size());
}

TEST_CASE("lease safety checker: catches a store that double-grants") {
  quiet_logs quiet;
  std::optional<uint64_t> caught;
  for (auto seed : seeds()) {
    if (run_schedule(seed, planted::double_grant)) {
      caught = seed;
      break;
    }
  }
  REQUIRE(caught);
  INFO("caught at seed " << *caught);
  CHECK(*caught <= seed_budget);
}

TEST_CASE("lease safety checker: catches tokens that do not increase") {
  quiet_logs quiet;
  std::optional<uint64_t> caught;
  for (auto seed : seeds()) {
    if (auto v = run_schedule(seed, planted::reused_tokens)) {
      CHECK_THAT(*v, Catch::Contains("got token"));
      caught = seed;
      break;
    }
  }
  REQUIRE(caught);
}
