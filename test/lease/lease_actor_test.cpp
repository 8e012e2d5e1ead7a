// Wiring tests of the lease actor and handle on CAF's deterministic test
// coordinator: simulated time, no sleeps.

#include <catch2/catch.hpp>

#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/errc.hpp"
#include "troupe/lease/faulty_lease_backend.hpp"
#include "troupe/lease/in_memory_lease_backend.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/runtime/caf_glue.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/test/deterministic.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;
using troupe::test::deterministic_system;
using troupe::test::probe;

namespace {

lease_settings settings_for(std::string owner) {
  lease_settings s;
  s.name = "jobs";
  s.owner = std::move(owner);
  s.ttl = 15s;
  s.renewal_interval = 5s;
  s.safety_margin = 1500ms;
  s.operation_timeout = 2s;
  s.acquire_retries = 3;
  s.acquire_retry_delay = 100ms;
  return s;
}

struct fixture {
  deterministic_system ds{{add_lease_types}};
  std::shared_ptr<in_memory_lease_store> store
    = std::make_shared<in_memory_lease_store>(ds.clock());
  std::shared_ptr<faulty_lease_backend> backend
    = std::make_shared<faulty_lease_backend>(
      std::make_shared<in_memory_lease_backend>(store), ds.scheduler());
  probe p{ds.sys()};
  std::shared_ptr<runtime::capture_sink> logs
    = std::make_shared<runtime::capture_sink>();

  fixture() {
    runtime::add_log_sink(logs);
  }

  ~fixture() {
    runtime::remove_log_sink(logs);
  }

  lease_handle make(std::string owner,
                    std::shared_ptr<lease_backend> b = nullptr) {
    auto h = lease_handle::spawn(ds.sys(), settings_for(std::move(owner)),
                                 b ? b : backend);
    REQUIRE(h);
    ds.track(h->actor());
    ds.run();
    return *h;
  }

  // Sends acquire and runs simulated time until the answer arrives (at
  // most `limit` of simulated time).
  caf::expected<acquire_result> acquire(lease_handle& h, timespan wait = 20s,
                                        timespan limit = 60s) {
    p.send(h.actor(), acquire_atom::value, wait);
    return await<acquire_result>(limit);
  }

  caf::expected<bool> release(lease_handle& h, timespan limit = 60s) {
    p.send(h.actor(), release_atom::value);
    return await<bool>(limit);
  }

  template <class T>
  caf::expected<T> await(timespan limit) {
    auto end = ds.now() + limit;
    for (;;) {
      ds.run();
      if (auto r = p.poll<T>())
        return std::move(*r);
      auto next = ds.next_timer();
      REQUIRE(next);
      REQUIRE(*next <= end);
      ds.run_until(*next);
    }
  }
};

uint8_t code(const caf::error& err) {
  return err.code();
}

} // namespace

TEST_CASE_METHOD(fixture, "lease actor: acquire success") {
  auto h = make("a");
  CHECK_FALSE(h.check_alive());
  auto r = acquire(h);
  REQUIRE(r);
  CHECK(r->acquired);
  CHECK(r->token == 1);
  CHECK(r->holder == "a");
  CHECK(h.check_alive());
  CHECK(h.token() == 1);
  CHECK(store->record("jobs")->holder == "a");
}

TEST_CASE_METHOD(fixture, "lease actor: contention answers false") {
  auto a = make("a");
  auto b = make("b");
  REQUIRE(acquire(a)->acquired);
  auto r = acquire(b);
  REQUIRE(r);
  CHECK_FALSE(r->acquired);
  CHECK(r->holder == "a");
  CHECK_FALSE(b.check_alive());
  CHECK(a.check_alive());
}

TEST_CASE_METHOD(fixture, "lease actor: retries exhausted is an error") {
  auto h = make("a");
  backend->script(backend_op::acquire,
                  fault::answer(backend_status::unavailable, "HTTP 503"), 3);
  auto r = acquire(h);
  REQUIRE_FALSE(r);
  CHECK(r.error().category() == caf::atom("lease"));
  CHECK(code(r.error()) == static_cast<uint8_t>(errc::backend_unavailable));
  CHECK_THAT(runtime::error_message(r.error()), Catch::Contains("HTTP 503"));
  CHECK(backend->calls(backend_op::acquire) == 3);
  CHECK_FALSE(h.check_alive());
}

TEST_CASE_METHOD(fixture, "lease actor: renewal keeps the lease past the ttl") {
  auto h = make("a");
  REQUIRE(acquire(h)->acquired);
  ds.advance(60s); // four ttls
  CHECK(h.check_alive());
  CHECK(backend->calls(backend_op::renew) >= 11);
  CHECK(store->record("jobs")->holder == "a");
  CHECK(store->record("jobs")->is_held(ds.now()));
}

TEST_CASE_METHOD(fixture,
                 "lease actor: scenario L2: one failed renewal does not lose") {
  auto h = make("a");
  int lost = 0;
  auto sub = h.on_lost([&](const lease_lost&) { ++lost; });
  REQUIRE(acquire(h)->acquired);
  backend->script(backend_op::renew,
                  fault::answer(backend_status::unavailable, "HTTP 503"));
  ds.advance(30s);
  CHECK(lost == 0);
  CHECK(h.check_alive());
  CHECK(backend->calls(backend_op::renew) >= 6);
  sub.unsubscribe();
}

TEST_CASE_METHOD(fixture, "lease actor: failures until the deadline fire "
                          "on_lost exactly once") {
  auto h = make("a");
  std::vector<lease_lost> lost;
  auto sub = h.on_lost([&](const lease_lost& x) { lost.push_back(x); });
  auto start = ds.now();
  REQUIRE(acquire(h)->acquired);
  backend->set_policy([](backend_op op, const backend_request&) {
    return op == backend_op::renew
             ? fault::answer(backend_status::unavailable, "HTTP 503")
             : fault::pass();
  });
  ds.advance(13s);
  CHECK(lost.empty());
  CHECK(h.check_alive());
  ds.run_until(start + 15s - 1500ms);
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].name == "jobs");
  CHECK(lost[0].owner == "a");
  CHECK(lost[0].token == 1);
  CHECK_THAT(lost[0].reason, Catch::Contains("local deadline passed"));
  CHECK_THAT(lost[0].reason, Catch::Contains("HTTP 503"));
  CHECK_FALSE(h.check_alive());
  ds.advance(60s);
  CHECK(lost.size() == 1);
  CHECK(logs->count("lost \"jobs\"") == 1);
  sub.unsubscribe();
}

TEST_CASE_METHOD(fixture, "lease actor: check_alive turns false at the "
                          "deadline with no message processed") {
  auto h = make("a");
  auto start = ds.now();
  REQUIRE(acquire(h)->acquired);
  // Freeze the actor: move the clock without running any job.
  ds.set_clock_only(start + 15s - 1500ms - 1ns);
  CHECK(h.check_alive());
  ds.set_clock_only(start + 15s - 1500ms);
  CHECK_FALSE(h.check_alive());
}

TEST_CASE_METHOD(fixture, "lease actor: scenario L3: renewal applied, reply "
                          "lost, conflict names self => still held") {
  auto h = make("a");
  int lost = 0;
  auto sub = h.on_lost([&](const lease_lost&) { ++lost; });
  REQUIRE(acquire(h)->acquired);
  // The first renewal is applied but its reply is lost; the retry finds the
  // record naming us (a self-conflict).
  backend->script(backend_op::renew, fault::lose_reply());
  backend->script(backend_op::renew,
                  fault::answer(backend_status::held, "409 Conflict", "a"));
  ds.advance(40s);
  CHECK(lost == 0);
  CHECK(h.check_alive());
  CHECK(h.token() == 1);
  sub.unsubscribe();
}

TEST_CASE_METHOD(fixture, "lease actor: scenario L3: conflict naming another "
                          "owner => lost at once") {
  auto h = make("a");
  std::vector<lease_lost> lost;
  auto sub = h.on_lost([&](const lease_lost& x) { lost.push_back(x); });
  REQUIRE(acquire(h)->acquired);
  backend->script(backend_op::renew,
                  fault::answer(backend_status::held, "409 Conflict", "b"));
  ds.advance(5s);
  REQUIRE(lost.size() == 1);
  CHECK_THAT(lost[0].reason, Catch::Contains("taken over by \"b\""));
  CHECK_FALSE(h.check_alive());
  sub.unsubscribe();
}

TEST_CASE_METHOD(fixture, "lease actor: release when not held is a no-op") {
  auto h = make("a");
  auto r = release(h);
  REQUIRE(r);
  CHECK(*r);
  CHECK(backend->calls(backend_op::release) == 0);
}

TEST_CASE_METHOD(fixture, "lease actor: release frees the lease for others") {
  auto a = make("a");
  auto b = make("b");
  REQUIRE(acquire(a)->acquired);
  REQUIRE(release(a));
  CHECK_FALSE(a.check_alive());
  auto r = acquire(b);
  REQUIRE(r);
  CHECK(r->acquired);
  CHECK(r->token == 2);
}

TEST_CASE_METHOD(fixture, "lease actor: release after loss is a no-op") {
  auto h = make("a");
  REQUIRE(acquire(h)->acquired);
  store->clear_holder("jobs"); // deleted behind the holder's back
  ds.advance(6s);
  CHECK_FALSE(h.check_alive());
  auto calls = backend->calls(backend_op::release);
  auto r = release(h);
  REQUIRE(r);
  CHECK(backend->calls(backend_op::release) == calls);
}

TEST_CASE_METHOD(fixture, "lease actor: on_lost unsubscribe stops the "
                          "handler") {
  auto h = make("a");
  int first = 0;
  int second = 0;
  auto s1 = h.on_lost([&](const lease_lost&) { ++first; });
  auto s2 = h.on_lost([&](const lease_lost&) { ++second; });
  s1.unsubscribe();
  s1.unsubscribe(); // idempotent
  REQUIRE(acquire(h)->acquired);
  store->clear_holder("jobs");
  ds.advance(6s);
  CHECK(first == 0);
  CHECK(second == 1);
  s2.unsubscribe();
}

TEST_CASE_METHOD(fixture, "lease actor: subscribers receive lease_lost "
                          "messages") {
  auto h = make("a");
  probe watcher{ds.sys()};
  h.subscribe(watcher.handle());
  REQUIRE(acquire(h)->acquired);
  store->clear_holder("jobs");
  ds.advance(6s);
  auto msg = watcher.poll<lease_lost>();
  REQUIRE(msg);
  REQUIRE(*msg);
  CHECK((*msg)->name == "jobs");
  CHECK((*msg)->token == 1);
  CHECK_THAT((*msg)->reason, Catch::Contains("record is gone"));
  // After unsubscribing, a second loss sends nothing.
  h.unsubscribe(watcher.handle());
  REQUIRE(acquire(h)->acquired);
  store->clear_holder("jobs");
  ds.advance(6s);
  CHECK_FALSE(watcher.poll<lease_lost>());
}

TEST_CASE_METHOD(fixture, "lease actor: tokens increase across holders and "
                          "re-acquisitions") {
  auto a = make("a");
  auto b = make("b");
  std::vector<uint64_t> tokens;
  tokens.push_back(acquire(a)->token);
  store->clear_holder("jobs");
  ds.advance(6s); // a notices the loss
  tokens.push_back(acquire(b)->token);
  REQUIRE(release(b));
  tokens.push_back(acquire(a)->token); // same owner after a loss
  CHECK(tokens == std::vector<uint64_t>{1, 2, 3});
}

TEST_CASE_METHOD(fixture, "in-memory lease: record deleted by hand while "
                          "held -> lost at the next renewal, re-acquire gets "
                          "a greater token") {
  auto h = make("a");
  std::vector<lease_lost> losses;
  std::vector<bool> alive_in_handler;
  auto sub = h.on_lost([&](const lease_lost& x) {
    alive_in_handler.push_back(h.check_alive());
    losses.push_back(x);
  });
  auto first = acquire(h);
  REQUIRE(first);
  REQUIRE(first->acquired);
  auto deleted_at = ds.now();
  store->clear_holder("jobs"); // the operator deletes the record
  // Renewals run every 5s; the local deadline is 13.5s after the grant.
  ds.advance(4900ms);
  CHECK(h.check_alive());
  CHECK(losses.empty());
  ds.advance(200ms); // the first renewal after the deletion
  REQUIRE(losses.size() == 1);
  CHECK(ds.now() - deleted_at < 5200ms);
  CHECK(losses[0].token == first->token);
  CHECK_THAT(losses[0].reason,
             Catch::Contains("record is gone")
               && Catch::Contains("in-memory store: the record has no "
                                  "holder (released, or cleared by hand)"));
  CHECK(alive_in_handler == std::vector<bool>{false});
  CHECK_FALSE(h.check_alive());
  auto again = acquire(h);
  REQUIRE(again);
  CHECK(again->acquired);
  CHECK(again->token > first->token);
  CHECK(h.check_alive());
  CHECK(h.token() == again->token);
  sub.unsubscribe();
}

TEST_CASE_METHOD(fixture, "lease actor: scenario L4: a grant after the "
                          "caller's timeout is released, not kept") {
  auto a = make("a");
  auto b = make("b");
  backend->script(backend_op::acquire, fault::delayed_reply(3s));
  auto start = ds.now();
  auto r = acquire(a, 1s);
  // The caller's wait ends after 1s with an error, not with silence...
  REQUIRE_FALSE(r);
  CHECK(code(r.error()) == static_cast<uint8_t>(errc::acquire_timeout));
  CHECK(ds.now() == start + 1s);
  // ...and the grant that lands at 3s is released, so b can acquire at once.
  ds.advance(5s);
  CHECK_FALSE(a.check_alive());
  CHECK(logs->contains("arrived after every caller's acquire timed out"));
  auto rb = acquire(b);
  REQUIRE(rb);
  CHECK(rb->acquired);
}

TEST_CASE_METHOD(fixture, "lease actor: scenario L9: renewals refused past "
                          "the deadline lose before a rival can acquire") {
  auto a = make("a");
  auto b = make("b");
  std::optional<runtime::timestamp> lost_at;
  auto sub = a.on_lost([&](const lease_lost&) { lost_at = ds.now(); });
  REQUIRE(acquire(a)->acquired);
  // Every renewal answers 429/409-like refusals: the write never applies.
  backend->set_policy([](backend_op op, const backend_request&) {
    return op == backend_op::renew
             ? fault::answer(backend_status::conflict, "HTTP 429")
             : fault::pass();
  });
  // b polls for the lease while a's renewals fail.
  std::optional<runtime::timestamp> b_acquired_at;
  for (int i = 0; i < 40 && !b_acquired_at; ++i) {
    auto r = acquire(b);
    REQUIRE(r);
    if (r->acquired)
      b_acquired_at = ds.now();
    else
      ds.advance(1s);
  }
  REQUIRE(lost_at);
  REQUIRE(b_acquired_at);
  CHECK(*lost_at < *b_acquired_at);
  sub.unsubscribe();
}

TEST_CASE_METHOD(fixture, "lease actor: scenario L10: a hung backend is "
                          "bounded per attempt and loses by the deadline") {
  auto h = make("a");
  std::optional<runtime::timestamp> lost_at;
  auto sub = h.on_lost([&](const lease_lost&) { lost_at = ds.now(); });
  auto start = ds.now();
  REQUIRE(acquire(h)->acquired);
  backend->set_policy([](backend_op op, const backend_request&) {
    return op == backend_op::renew ? fault::hang() : fault::pass();
  });
  ds.advance(30s);
  REQUIRE(lost_at);
  CHECK(*lost_at == start + 15s - 1500ms);
  // Several attempts were made, each bounded by operation_timeout.
  CHECK(backend->calls(backend_op::renew) >= 3);
  sub.unsubscribe();
}

TEST_CASE_METHOD(fixture, "lease actor: status reports state and token") {
  auto h = make("a");
  REQUIRE(acquire(h)->acquired);
  p.send(h.actor(), status_atom::value);
  ds.run();
  auto st = p.poll<lease_status>();
  REQUIRE(st);
  REQUIRE(*st);
  CHECK((*st)->state == "held");
  CHECK((*st)->token == 1);
  CHECK((*st)->alive);
  CHECK((*st)->backend == "faulty(in-memory store)");
}

TEST_CASE_METHOD(fixture, "lease actor: invalid settings are refused at "
                          "spawn, naming the field") {
  auto s = settings_for("a");
  s.renewal_interval = 20s;
  auto h = lease_handle::spawn(ds.sys(), s, backend);
  REQUIRE_FALSE(h);
  CHECK(code(h.error()) == static_cast<uint8_t>(errc::invalid_settings));
  CHECK_THAT(runtime::error_message(h.error()),
             Catch::Contains("renewal_interval 20s"));
}

TEST_CASE_METHOD(fixture, "lease actor: exit releases the lease without "
                          "waiting for the ttl") {
  auto a = make("a");
  auto b = make("b");
  REQUIRE(acquire(a)->acquired);
  caf::anon_send_exit(a.actor(), caf::exit_reason::user_shutdown);
  ds.run();
  CHECK_FALSE(a.check_alive());
  auto r = acquire(b);
  REQUIRE(r);
  CHECK(r->acquired);
}
