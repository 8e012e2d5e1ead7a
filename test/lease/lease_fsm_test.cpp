#include <catch2/catch.hpp>

#include <map>
#include <optional>

#include "troupe/lease/errc.hpp"
#include "troupe/lease/lease_fsm.hpp"

using namespace std::chrono_literals;
using namespace troupe::lease;

namespace {

lease_settings test_settings() {
  lease_settings s;
  s.name = "jobs";
  s.owner = "me";
  s.ttl = 15s;
  s.renewal_interval = 5s;
  s.safety_margin = 1500ms;
  s.operation_timeout = 2s;
  s.acquire_retries = 3;
  s.acquire_retry_delay = 100ms;
  return s;
}

// Feeds inputs to one lease_fsm and records what came out.
struct driver {
  lease_fsm fsm;
  timestamp now{std::chrono::hours{1}};
  std::vector<call_backend> calls;
  std::map<timer_kind, start_timer> timers;
  std::optional<timestamp> deadline;
  std::vector<acquire_completed> acquires;
  std::vector<release_completed> releases;
  std::vector<ownership_lost> losses;
  std::vector<notice> notices;

  explicit driver(lease_settings s = test_settings()) : fsm(s, 42) {}

  void step(const lease_input& in) {
    for (auto& e : fsm.step(in, now)) {
      if (auto* c = std::get_if<call_backend>(&e))
        calls.push_back(*c);
      else if (auto* t = std::get_if<start_timer>(&e))
        timers[t->kind] = *t;
      else if (auto* d = std::get_if<deadline_changed>(&e))
        deadline = d->deadline;
      else if (auto* a = std::get_if<acquire_completed>(&e))
        acquires.push_back(*a);
      else if (auto* r = std::get_if<release_completed>(&e))
        releases.push_back(*r);
      else if (auto* l = std::get_if<ownership_lost>(&e))
        losses.push_back(*l);
      else if (auto* n = std::get_if<notice>(&e))
        notices.push_back(*n);
    }
  }

  void acquire(uint64_t id = 1, timespan wait = 60s) {
    step(acquire_requested{id, now + wait});
  }

  void release(uint64_t id = 100) {
    step(release_requested{id});
  }

  const call_backend& last_call() const {
    REQUIRE_FALSE(calls.empty());
    return calls.back();
  }

  // Answers the most recent backend call.
  void reply(backend_status status, uint64_t token = 0,
             std::string holder = {}) {
    auto& c = last_call();
    backend_reply r;
    r.status = status;
    r.token = token;
    r.holder = holder.empty() && status == backend_status::ok ? c.request.owner
                                                              : holder;
    r.acquisition = c.request.acquisition;
    step(backend_replied{c.attempt, r});
  }

  // Moves time to the pending timer of `kind` and fires it.
  void fire(timer_kind kind) {
    auto i = timers.find(kind);
    REQUIRE(i != timers.end());
    auto t = i->second;
    timers.erase(i);
    if (t.at > now)
      now = t.at;
    step(timer_fired{t.kind, t.timer_id});
  }

  bool has_timer(timer_kind kind) const {
    return timers.count(kind) > 0;
  }

  bool alive() const {
    return deadline && now < *deadline;
  }
};

} // namespace

TEST_CASE("lease_fsm: acquire success sets deadline and renewal timer") {
  driver d;
  auto start = d.now;
  d.acquire();
  CHECK(d.fsm.state() == lease_state::acquiring);
  REQUIRE(d.calls.size() == 1);
  CHECK(d.last_call().op == backend_op::acquire);
  CHECK(d.last_call().request.ttl == 15s);
  d.now += 300ms; // the reply takes time: the deadline counts from the start
  d.reply(backend_status::ok, 7);
  CHECK(d.fsm.state() == lease_state::held);
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].answer.acquired);
  CHECK(d.acquires[0].answer.token == 7);
  REQUIRE(d.deadline);
  CHECK(*d.deadline == start + 15s - 1500ms);
  CHECK(d.timers.at(timer_kind::renew).at == start + 5s);
  CHECK(d.alive());
}

TEST_CASE("lease_fsm: deadline arithmetic") {
  using row = std::tuple<timespan, timespan, timespan>;
  // reply latency of the acquire, latency of the first renewal,
  // expected deadline after the renewal (relative to the acquire start)
  auto [acq_latency, renew_latency, expected]
    = GENERATE(table<timespan, timespan, timespan>({
      row{0ms, 0ms, 5s + 15s - 1500ms},
      row{500ms, 1s, 5s + 15s - 1500ms}, // renewal starts at +5s
      row{1900ms, 1900ms, 5s + 15s - 1500ms},
    }));
  driver d;
  auto start = d.now;
  d.acquire();
  d.now += acq_latency;
  d.reply(backend_status::ok, 1);
  d.fire(timer_kind::renew);
  CHECK(d.last_call().op == backend_op::renew);
  d.now += renew_latency;
  d.reply(backend_status::ok, 1);
  REQUIRE(d.deadline);
  CHECK(*d.deadline == start + expected);
}

TEST_CASE("lease_fsm: contention answers false with the holder") {
  driver d;
  d.acquire();
  d.reply(backend_status::held, 3, "other");
  REQUIRE(d.acquires.size() == 1);
  CHECK_FALSE(d.acquires[0].answer.acquired);
  CHECK(d.acquires[0].answer.holder == "other");
  CHECK_FALSE(d.acquires[0].answer.err);
  CHECK(d.fsm.state() == lease_state::idle);
  CHECK(d.calls.size() == 1); // contention is not retried
  CHECK_FALSE(d.alive());
}

TEST_CASE("lease_fsm: retries exhausted is an error, not false") {
  driver d;
  d.acquire();
  for (int i = 0; i < 2; ++i) {
    d.reply(backend_status::unavailable);
    CHECK(d.acquires.empty());
    d.fire(timer_kind::retry);
  }
  d.reply(backend_status::unavailable);
  CHECK(d.calls.size() == 3);
  REQUIRE(d.acquires.size() == 1);
  auto& err = d.acquires[0].answer.err;
  REQUIRE(err);
  CHECK(err.code == static_cast<uint8_t>(errc::backend_unavailable));
  CHECK_THAT(err.message, Catch::Contains("after 3 attempts"));
  CHECK(d.fsm.state() == lease_state::idle);
}

TEST_CASE("lease_fsm: retry delays back off with jitter") {
  driver d;
  d.acquire();
  d.reply(backend_status::unavailable);
  auto first = d.timers.at(timer_kind::retry).at - d.now;
  CHECK(first >= 80ms);
  CHECK(first <= 120ms);
  d.fire(timer_kind::retry);
  d.reply(backend_status::conflict);
  auto second = d.timers.at(timer_kind::retry).at - d.now;
  CHECK(second >= 160ms);
  CHECK(second <= 240ms);
}

TEST_CASE("lease_fsm: persistent conflicts end in conflict_unresolved") {
  driver d;
  d.acquire();
  for (int i = 0; i < 3; ++i) {
    d.reply(backend_status::conflict);
    if (i < 2)
      d.fire(timer_kind::retry);
  }
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].answer.err.code
        == static_cast<uint8_t>(errc::conflict_unresolved));
}

TEST_CASE("lease_fsm: a refused acquire is backend_rejected at once") {
  driver d;
  d.acquire();
  d.reply(backend_status::rejected);
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].answer.err.code
        == static_cast<uint8_t>(errc::backend_rejected));
  CHECK(d.calls.size() == 1);
}

TEST_CASE("lease_fsm: renewal keeps the lease past many ttls") {
  driver d;
  auto start = d.now;
  d.acquire();
  d.reply(backend_status::ok, 1);
  for (int i = 0; i < 12; ++i) {
    d.fire(timer_kind::renew);
    CHECK(d.fsm.state() == lease_state::renewing);
    d.now += 50ms;
    d.reply(backend_status::ok, 1);
    CHECK(d.fsm.state() == lease_state::held);
  }
  CHECK(d.now - start >= 60s); // four ttls
  CHECK(d.alive());
  CHECK(d.losses.empty());
}

TEST_CASE("lease_fsm: scenario L2: one failed renewal does not lose") {
  driver d;
  d.acquire();
  d.reply(backend_status::ok, 1);
  d.fire(timer_kind::renew);
  d.reply(backend_status::unavailable); // a 503 or a timeout
  CHECK(d.losses.empty());
  CHECK(d.alive());
  CHECK(d.fsm.state() == lease_state::renewing);
  d.fire(timer_kind::retry);
  d.reply(backend_status::ok, 1);
  CHECK(d.fsm.state() == lease_state::held);
  CHECK(d.losses.empty());
}

TEST_CASE("lease_fsm: failures until the deadline lose exactly once") {
  driver d;
  auto start = d.now;
  d.acquire();
  d.reply(backend_status::ok, 4);
  d.fire(timer_kind::renew);
  // Keep failing; retries continue until the deadline timer fires.
  while (d.losses.empty()) {
    auto retry = d.timers.find(timer_kind::retry);
    auto dl = d.timers.at(timer_kind::deadline);
    if (retry != d.timers.end() && retry->second.at < dl.at) {
      d.fire(timer_kind::retry);
      d.reply(backend_status::unavailable);
    } else {
      d.fire(timer_kind::deadline);
    }
  }
  REQUIRE(d.losses.size() == 1);
  CHECK(d.losses[0].token == 4);
  CHECK_THAT(d.losses[0].reason, Catch::Contains("local deadline passed"));
  CHECK(d.now == start + 15s - 1500ms);
  CHECK_FALSE(d.deadline);
  CHECK(d.fsm.state() == lease_state::lost);
  // Nothing more fires: no second loss, no renewals.
  d.now += 60s;
  for (auto kind : {timer_kind::retry, timer_kind::renew, timer_kind::deadline})
    if (d.has_timer(kind))
      d.fire(kind);
  CHECK(d.losses.size() == 1);
}

TEST_CASE("lease_fsm: scenario L3: renewal conflict naming self stays held") {
  driver d;
  d.acquire();
  d.reply(backend_status::ok, 2);
  d.fire(timer_kind::renew);
  d.reply(backend_status::held, 2, "me");
  CHECK(d.fsm.state() == lease_state::held);
  CHECK(d.losses.empty());
}

TEST_CASE("lease_fsm: renewal conflict naming another owner loses at once") {
  driver d;
  d.acquire();
  d.reply(backend_status::ok, 2);
  d.fire(timer_kind::renew);
  d.reply(backend_status::held, 3, "thief");
  REQUIRE(d.losses.size() == 1);
  CHECK_THAT(d.losses[0].reason, Catch::Contains("\"thief\""));
  CHECK_FALSE(d.alive());
}

TEST_CASE("lease_fsm: a deleted record is lost on the next renewal") {
  driver d;
  d.acquire();
  d.reply(backend_status::ok, 2);
  d.fire(timer_kind::renew);
  d.reply(backend_status::not_found);
  REQUIRE(d.losses.size() == 1);
  CHECK_THAT(d.losses[0].reason, Catch::Contains("record is gone"));
}

TEST_CASE("lease_fsm: scenario L10: a hung call is bounded by the timeout") {
  driver d;
  d.acquire();
  d.reply(backend_status::ok, 1);
  d.fire(timer_kind::renew);
  auto sent = d.now;
  // No reply: the attempt timer turns it into "unavailable".
  d.fire(timer_kind::attempt_timeout);
  CHECK(d.now == sent + 2s);
  CHECK(d.fsm.state() == lease_state::renewing);
  CHECK(d.has_timer(timer_kind::retry));
  CHECK(d.losses.empty());
}

TEST_CASE("lease_fsm: release when not held completes without a call") {
  driver d;
  d.release(5);
  REQUIRE(d.releases.size() == 1);
  CHECK(d.releases[0].request_ids == std::vector<uint64_t>{5});
  CHECK_FALSE(d.releases[0].err);
  CHECK(d.calls.empty());
}

TEST_CASE("lease_fsm: release ends check_alive before the backend answers") {
  driver d;
  d.acquire();
  d.reply(backend_status::ok, 1);
  d.release(5);
  CHECK_FALSE(d.alive());
  CHECK(d.fsm.state() == lease_state::releasing);
  CHECK(d.last_call().op == backend_op::release);
  CHECK(d.last_call().request.token == 1);
  CHECK(d.releases.empty());
  d.reply(backend_status::ok);
  REQUIRE(d.releases.size() == 1);
  CHECK_FALSE(d.releases[0].err);
  CHECK(d.fsm.state() == lease_state::idle);
  CHECK(d.losses.empty());
}

TEST_CASE("lease_fsm: release after loss is a no-op") {
  driver d;
  d.acquire();
  d.reply(backend_status::ok, 1);
  d.fire(timer_kind::renew);
  d.reply(backend_status::not_found);
  auto calls = d.calls.size();
  d.release(9);
  REQUIRE(d.releases.size() == 1);
  CHECK_FALSE(d.releases[0].err);
  CHECK(d.calls.size() == calls);
}

TEST_CASE("lease_fsm: release failing on every attempt reports an error") {
  driver d;
  d.acquire();
  d.reply(backend_status::ok, 1);
  d.release(5);
  for (int i = 0; i < 3; ++i) {
    d.reply(backend_status::unavailable);
    if (i < 2)
      d.fire(timer_kind::retry);
  }
  REQUIRE(d.releases.size() == 1);
  CHECK(d.releases[0].err.code
        == static_cast<uint8_t>(errc::backend_unavailable));
  CHECK(d.fsm.state() == lease_state::idle);
}

TEST_CASE("lease_fsm: scenario L4: a grant after the caller gave up is "
          "released") {
  driver d;
  d.acquire(1, 1s);
  d.now += 1500ms; // the caller's wait ended; its timer has not run yet
  d.reply(backend_status::ok, 6);
  // The caller is answered (acquire_timeout), exactly once, and the grant
  // is released rather than kept.
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].answer.err.code
        == static_cast<uint8_t>(errc::acquire_timeout));
  d.fire(timer_kind::caller_deadline); // the late timer answers nobody again
  CHECK(d.acquires.size() == 1);
  CHECK_FALSE(d.alive());
  CHECK(d.fsm.state() == lease_state::releasing);
  CHECK(d.last_call().op == backend_op::release);
  CHECK(d.last_call().request.token == 6);
  REQUIRE(d.notices.size() == 1);
  CHECK_THAT(d.notices[0].text, Catch::Contains("after every caller"));
}

TEST_CASE("lease_fsm: a timed-out acquire that took effect later is "
          "released") {
  driver d;
  d.acquire();
  for (int i = 0; i < 3; ++i) {
    d.fire(timer_kind::attempt_timeout);
    if (i < 2)
      d.fire(timer_kind::retry);
  }
  REQUIRE(d.acquires.size() == 1);
  REQUIRE(d.acquires[0].answer.err);
  // The first attempt's write arrives late and names us.
  auto first = d.calls[0];
  backend_reply r{backend_status::ok, "me", 8, first.request.acquisition, {}};
  d.step(backend_replied{first.attempt, r});
  CHECK(d.last_call().op == backend_op::release);
  CHECK(d.last_call().request.token == 8);
  CHECK_FALSE(d.alive());
}

TEST_CASE("lease_fsm: a late reply of the current acquisition is adopted") {
  driver d;
  auto start = d.now;
  d.acquire();
  d.fire(timer_kind::attempt_timeout);
  d.fire(timer_kind::retry); // attempt 2 in flight
  auto first = d.calls[0];
  backend_reply r{backend_status::ok, "me", 3, first.request.acquisition, {}};
  d.step(backend_replied{first.attempt, r});
  CHECK(d.fsm.state() == lease_state::held);
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].answer.acquired);
  // Conservative: the deadline counts from the first attempt's start.
  CHECK(*d.deadline == start + 15s - 1500ms);
}

TEST_CASE("lease_fsm: concurrent acquires share one attempt and one answer") {
  driver d;
  d.acquire(1);
  d.acquire(2);
  CHECK(d.calls.size() == 1);
  d.reply(backend_status::ok, 1);
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].request_ids == std::vector<uint64_t>{1, 2});
  d.acquire(3); // already held: answered at once
  REQUIRE(d.acquires.size() == 2);
  CHECK(d.acquires[1].answer.token == 1);
}

TEST_CASE("lease_fsm: release during acquire releases after the grant") {
  driver d;
  d.acquire(1);
  d.release(2);
  d.reply(backend_status::ok, 1);
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].answer.acquired);
  CHECK(d.fsm.state() == lease_state::releasing);
  d.reply(backend_status::ok);
  REQUIRE(d.releases.size() == 1);
  CHECK(d.fsm.state() == lease_state::idle);
}

TEST_CASE("lease_fsm: acquire during release re-acquires afterwards") {
  driver d;
  d.acquire(1);
  d.reply(backend_status::ok, 1);
  auto first_acquisition = d.last_call().request.acquisition;
  d.release(2);
  d.acquire(3);
  d.reply(backend_status::ok); // release done
  CHECK(d.fsm.state() == lease_state::acquiring);
  CHECK(d.last_call().op == backend_op::acquire);
  CHECK(d.last_call().request.acquisition != first_acquisition);
  d.reply(backend_status::ok, 2);
  REQUIRE(d.acquires.size() == 2);
  CHECK(d.acquires[1].answer.token == 2);
}

TEST_CASE("lease_fsm: a token that does not increase is refused") {
  driver d;
  d.acquire(1);
  d.reply(backend_status::ok, 5);
  d.release(2);
  d.reply(backend_status::ok);
  d.acquire(3);
  d.reply(backend_status::ok, 5); // a broken backend repeats the token
  REQUIRE(d.acquires.size() == 2);
  CHECK(d.acquires[1].answer.err.code
        == static_cast<uint8_t>(errc::backend_protocol_violation));
  CHECK_FALSE(d.alive());
  CHECK(d.last_call().op == backend_op::release);
}

TEST_CASE("lease_fsm: shutdown answers waiters and sends a release") {
  driver d;
  d.acquire(1);
  d.reply(backend_status::ok, 1);
  d.step(shutdown_requested{});
  CHECK_FALSE(d.alive());
  CHECK(d.last_call().op == backend_op::release);
  CHECK(d.fsm.state() == lease_state::idle);
}

TEST_CASE("lease_fsm: a caller's wait ends with acquire_timeout") {
  driver d;
  d.acquire(1, 1s);
  d.acquire(2, 3s);
  CHECK(d.timers.at(timer_kind::caller_deadline).at == d.now + 1s);
  d.fire(timer_kind::caller_deadline);
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].request_ids == std::vector<uint64_t>{1});
  CHECK(d.acquires[0].answer.err.code
        == static_cast<uint8_t>(errc::acquire_timeout));
  // The second waiter still waits; its own timer is next.
  CHECK(d.timers.at(timer_kind::caller_deadline).at == d.now + 2s);
  d.reply(backend_status::ok, 1);
  REQUIRE(d.acquires.size() == 2);
  CHECK(d.acquires[1].request_ids == std::vector<uint64_t>{2});
  CHECK(d.acquires[1].answer.acquired);
}

TEST_CASE("lease_fsm: a refused token still answers a pending release") {
  driver d;
  d.acquire(1);
  d.reply(backend_status::ok, 5);
  d.release(2);
  d.reply(backend_status::ok);
  d.acquire(3);
  d.release(4);                   // release requested while acquiring
  d.reply(backend_status::ok, 5); // non-increasing token: refused
  REQUIRE(d.acquires.size() == 2);
  CHECK(d.acquires[1].answer.err);
  REQUIRE(d.releases.size() == 2);
  CHECK(d.releases[1].request_ids == std::vector<uint64_t>{4});
  // The flag is cleared: the next grant is kept, not released at once.
  d.acquire(5);
  d.reply(backend_status::ok, 6);
  CHECK(d.fsm.state() == lease_state::held);
}

TEST_CASE("lease_fsm: shutdown while acquiring releases that acquisition") {
  driver d;
  d.acquire(1);
  auto acquisition = d.last_call().request.acquisition;
  d.step(shutdown_requested{});
  CHECK(d.last_call().op == backend_op::release);
  CHECK(d.last_call().request.acquisition == acquisition);
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].answer.err.code
        == static_cast<uint8_t>(errc::shutting_down));
}

TEST_CASE("lease_fsm: acquire after an unprocessed deadline is not 'held'") {
  driver d;
  d.acquire(1);
  d.reply(backend_status::ok, 1);
  d.now = *d.deadline; // the deadline timer has not fired yet
  d.acquire(2);
  REQUIRE(d.losses.size() == 1);
  CHECK(d.acquires.size() == 1); // the second request waits for an attempt
  CHECK(d.fsm.state() == lease_state::acquiring);
  CHECK(d.last_call().op == backend_op::acquire);
}

TEST_CASE("lease_fsm: a late renewal reply during release is not an orphan") {
  driver d;
  d.acquire(1);
  d.reply(backend_status::ok, 1);
  d.fire(timer_kind::renew);
  auto renew = d.last_call();
  d.release(2);
  backend_reply r{backend_status::ok, "me", 1, renew.request.acquisition, {}};
  d.step(backend_replied{renew.attempt, r});
  CHECK(d.notices.empty());
  CHECK(d.last_call().op == backend_op::release);
}

TEST_CASE("lease_fsm: a grant answers live waiters and times out expired "
          "ones, each exactly once") {
  driver d;
  d.acquire(1, 1s);
  d.acquire(2, 10s);
  d.now += 2s; // waiter 1's wait ended, its timer not yet processed
  d.reply(backend_status::ok, 3);
  REQUIRE(d.acquires.size() == 2);
  CHECK(d.acquires[0].request_ids == std::vector<uint64_t>{1});
  CHECK(d.acquires[0].answer.err.code
        == static_cast<uint8_t>(errc::acquire_timeout));
  CHECK(d.acquires[1].request_ids == std::vector<uint64_t>{2});
  CHECK(d.acquires[1].answer.acquired);
  CHECK(d.fsm.state() == lease_state::held);
}

TEST_CASE("lease_fsm: a store's retry_after stretches the next retry") {
  // Kubernetes 429/503 with Retry-After (scenario L9's throttled renewals):
  // the next attempt waits at least as long as the store asked, and never
  // past the local deadline.
  driver d;
  d.acquire();
  auto& c = d.last_call();
  backend_reply busy;
  busy.status = backend_status::unavailable;
  busy.retry_after = 3s;
  auto before = d.now;
  d.step(backend_replied{c.attempt, busy});
  REQUIRE(d.has_timer(timer_kind::retry));
  CHECK(d.timers.at(timer_kind::retry).at >= before + 3s);
  d.fire(timer_kind::retry);
  d.reply(backend_status::ok, 4);
  REQUIRE(d.fsm.state() == lease_state::held);
  d.fire(timer_kind::renew);
  auto& r = d.last_call();
  backend_reply slow;
  slow.status = backend_status::unavailable;
  slow.retry_after = 1h;
  d.step(backend_replied{r.attempt, slow});
  REQUIRE(d.has_timer(timer_kind::retry));
  REQUIRE(d.deadline);
  CHECK(d.timers.at(timer_kind::retry).at == *d.deadline);
}

TEST_CASE("lease_fsm: the token scope of a grant reaches the answer") {
  driver d;
  d.acquire();
  auto& c = d.last_call();
  backend_reply r;
  r.status = backend_status::ok;
  r.holder = c.request.owner;
  r.acquisition = c.request.acquisition;
  r.token = 9;
  r.token_scope = "uid-1";
  d.step(backend_replied{c.attempt, r});
  REQUIRE(d.acquires.size() == 1);
  CHECK(d.acquires[0].answer.token == 9);
  CHECK(d.acquires[0].answer.token_scope == "uid-1");
  CHECK(d.fsm.token_scope() == "uid-1");
}
