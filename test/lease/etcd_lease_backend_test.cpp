// Integration tests of the etcd lease backend against a real etcd (Debian's
// etcd-server, started per test case on loopback by test/support
// etcd_fixture): acquire, contention, renewal, takeover, release, fencing
// tokens, auth, TLS, etcd killed / restarted / frozen / without quorum, and
// scenario L14 with the real lease actor and handle. Real time: ttl 2-3 s,
// generous bounds, polling with deadlines.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <caf/actor_system.hpp>
#include <fmt/format.h>

#include "troupe/lease/backend_sync.hpp"
#include "troupe/lease/caf_glue.hpp"
#include "troupe/lease/etcd_lease_backend.hpp"
#include "troupe/lease/etcd_protocol.hpp"
#include "troupe/lease/lease_handle.hpp"
#include "troupe/lease/outcome.hpp"
#include "troupe/runtime/log.hpp"
#include "troupe/runtime/node.hpp"
#include "troupe/test/etcd_fixture.hpp"
#include "troupe/test/eventually.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::lease;
using troupe::test::etcd_cluster;
using troupe::test::etcd_options;
using troupe::test::etcd_server;
using troupe::test::eventually;

namespace {

using steady = std::chrono::steady_clock;
using ms = std::chrono::milliseconds;

ms since(steady::time_point t) {
  return std::chrono::duration_cast<ms>(steady::now() - t);
}

std::shared_ptr<etcd_lease_backend>
make_backend(const etcd_cluster& etcd,
             std::function<void(etcd_lease_backend_options&)> tweak = {}) {
  etcd_lease_backend_options opts;
  opts.endpoints = etcd.endpoints();
  opts.tls = etcd.client_tls();
  opts.request_timeout = 500ms;
  if (tweak)
    tweak(opts);
  auto b = etcd_lease_backend::make(std::move(opts));
  if (!b)
    FAIL(b.error().message);
  return *b;
}

backend_request req(std::string owner, uint64_t acquisition,
                    std::string name = "jobs", timespan ttl = 2s) {
  return backend_request{std::move(name), std::move(owner), ttl, acquisition,
                         0};
}

std::string render(const backend_reply& r) {
  return std::string{to_string(r.status)} + " holder=" + r.holder
         + " token=" + std::to_string(r.token) + " acquisition="
         + std::to_string(r.acquisition) + " detail=" + r.detail;
}

backend_reply call(lease_backend& b, backend_op op, const backend_request& r) {
  auto reply = call_and_wait(b, op, r, 10s);
  if (!reply)
    FAIL("no reply within 10s to " << to_string(op));
  INFO(to_string(op) << " -> " << render(*reply));
  return *reply;
}

outcome_kind meaning(backend_op op, const backend_reply& r,
                     const backend_request& q) {
  return classify(op, r, q.owner, q.acquisition).kind;
}

// Acquires and requires success; returns the token.
uint64_t must_acquire(lease_backend& b, const backend_request& q) {
  auto r = call(b, backend_op::acquire, q);
  INFO(render(r));
  REQUIRE(meaning(backend_op::acquire, r, q) == outcome_kind::success);
  REQUIRE(r.token > 0);
  return r.token;
}

} // namespace

namespace {

struct capture_guard {
  std::shared_ptr<runtime::capture_sink> sink
    = std::make_shared<runtime::capture_sink>();
  capture_guard() {
    runtime::add_log_sink(sink);
  }
  ~capture_guard() {
    runtime::remove_log_sink(sink);
  }
};

} // namespace

// -- the basics ---------------------------------------------------------------

TEST_CASE("etcd backend: acquire creates the key (value = owner, on the "
          "granted lease), token = its create_revision") {
  etcd_server etcd;
  auto b = make_backend(etcd);
  auto q = req("node-a", 11);
  auto r = call(*b, backend_op::acquire, q);
  REQUIRE(r.status == backend_status::ok);
  CHECK(r.holder == "node-a");
  CHECK(r.acquisition == 11);
  auto key = etcd.get("/troupe/leases/jobs");
  REQUIRE(key);
  CHECK(key->value == "node-a");
  CHECK(key->lease != 0);
  CHECK(key->lease == b->lease_id_of("jobs", "node-a"));
  CHECK(r.token == static_cast<uint64_t>(key->create_revision));
  CHECK(b->stats().grants == 1);
  CHECK(b->describe()
        == "etcd " + etcd.endpoint() + " (key prefix /troupe/leases/)");
  // A TTL below etcd's minimum is raised by etcd: logged once per name.
  capture_guard logs;
  for (uint64_t acq : {21, 22}) {
    auto q = req("node-a", acq, "short", 1s);
    must_acquire(*b, q);
    REQUIRE(call(*b, backend_op::release, q).status == backend_status::ok);
  }
  CHECK(logs.sink->count("lease \"short\": etcd granted TTL 2s instead of "
                         "1s")
        == 1);
}

TEST_CASE("etcd backend: contention: a second owner gets held with the "
          "holder's name and token, its fresh lease is revoked") {
  etcd_server etcd;
  auto a = make_backend(etcd);
  auto b = make_backend(etcd);
  auto token = must_acquire(*a, req("node-a", 11));
  auto qb = req("node-b", 22);
  auto r = call(*b, backend_op::acquire, qb);
  CHECK(r.status == backend_status::held);
  CHECK(r.holder == "node-a");
  CHECK(r.token == token);
  CHECK(meaning(backend_op::acquire, r, qb) == outcome_kind::held_by_other);
  CHECK(b->lease_id_of("jobs", "node-b") == 0);
  CHECK(eventually([&] { return b->stats().revokes == 1; }, 2s));
  // The same backend object serving two owners keeps them apart.
  auto qc = req("node-c", 33);
  auto rc = call(*a, backend_op::acquire, qc);
  CHECK(meaning(backend_op::acquire, rc, qc) == outcome_kind::held_by_other);
  CHECK(rc.holder == "node-a");
}

TEST_CASE("etcd backend: renewals (keepalives) keep the lease past 2 x ttl") {
  etcd_server etcd;
  auto a = make_backend(etcd);
  auto b = make_backend(etcd);
  auto q = req("node-a", 11);
  auto token = must_acquire(*a, q);
  auto start = steady::now();
  int renewals = 0;
  while (since(start) < 5s) { // ttl 2s
    std::this_thread::sleep_for(600ms);
    auto r = call(*a, backend_op::renew, q);
    REQUIRE(r.status == backend_status::ok);
    CHECK(r.token == token);
    ++renewals;
  }
  CHECK(renewals >= 7);
  auto key = etcd.get("/troupe/leases/jobs");
  REQUIRE(key);
  CHECK(key->value == "node-a");
  CHECK(static_cast<uint64_t>(key->create_revision) == token);
  auto qb = req("node-b", 22);
  CHECK(meaning(backend_op::acquire, call(*b, backend_op::acquire, qb), qb)
        == outcome_kind::held_by_other);
}

TEST_CASE("etcd backend: takeover after the holder stops renewing: not "
          "before its local deadline, within ttl + 1.5 s, the old holder's "
          "renewal then reports the lease gone") {
  etcd_server etcd;
  auto a = make_backend(etcd);
  auto b = make_backend(etcd);
  auto qa = req("node-a", 11);
  auto qb = req("node-b", 22);
  auto start = steady::now();
  auto token_a = must_acquire(*a, qa);
  backend_reply won;
  auto taken = eventually(
    [&] {
      won = call(*b, backend_op::acquire, qb);
      return won.status == backend_status::ok;
    },
    5s);
  auto elapsed = since(start);
  REQUIRE(taken);
  INFO("takeover after " << elapsed.count() << " ms");
  // ttl 2s, safety margin 200ms: A's local deadline ended first.
  CHECK(elapsed >= 1800ms);
  CHECK(elapsed <= 3500ms);
  CHECK(won.token > token_a);
  auto lost = call(*a, backend_op::renew, qa);
  CHECK(lost.status == backend_status::not_found);
  CHECK_THAT(lost.detail, Catch::Contains("keepalive answered without TTL"));
  CHECK(meaning(backend_op::renew, lost, qa) == outcome_kind::lost);
}

TEST_CASE("etcd backend: release deletes the key and revokes the lease, "
          "another owner acquires at once") {
  etcd_server etcd;
  auto a = make_backend(etcd);
  auto b = make_backend(etcd);
  auto qa = req("node-a", 11);
  auto token_a = must_acquire(*a, qa);
  auto lease_a = a->lease_id_of("jobs", "node-a");
  auto r = call(*a, backend_op::release, qa);
  CHECK(r.status == backend_status::ok);
  CHECK_THAT(r.detail, Catch::Contains("deleted"));
  CHECK_FALSE(etcd.get("/troupe/leases/jobs"));
  CHECK(a->lease_id_of("jobs", "node-a") == 0);
  // The lease is revoked too: revoking again is 404.
  CHECK_FALSE(etcd.revoke(lease_a));
  auto start = steady::now();
  auto token_b = must_acquire(*b, req("node-b", 22));
  CHECK(since(start) < 1s);
  CHECK(token_b > token_a);
  // Releasing again, or what another owner holds: counts as released.
  auto again = call(*a, backend_op::release, qa);
  CHECK(meaning(backend_op::release, again, qa) == outcome_kind::success);
  CHECK(etcd.get("/troupe/leases/jobs")->value == "node-b");
  CHECK(meaning(backend_op::renew, call(*a, backend_op::renew, qa), qa)
        == outcome_kind::lost);
}

TEST_CASE("scenario L12 (etcd): a release after the key changed hands is "
          "guarded: the new holder's key stays, the old holder counts as "
          "released") {
  etcd_server etcd;
  auto a = make_backend(etcd);
  auto b = make_backend(etcd);
  auto qa = req("node-a", 11);
  auto token_a = must_acquire(*a, qa);
  // A's lease ends behind its back (as if it expired) and B takes over.
  REQUIRE(etcd.revoke(a->lease_id_of("jobs", "node-a")));
  auto token_b = must_acquire(*b, req("node-b", 22));
  CHECK(token_b > token_a);
  auto r = call(*a, backend_op::release, qa);
  CHECK(meaning(backend_op::release, r, qa) == outcome_kind::success);
  CHECK_THAT(r.detail, Catch::Contains("no longer names \"node-a\""));
  auto key = etcd.get("/troupe/leases/jobs");
  REQUIRE(key);
  CHECK(key->value == "node-b");
  CHECK(key->lease == b->lease_id_of("jobs", "node-b"));
}

TEST_CASE("etcd backend: fencing tokens strictly increase across owners and "
          "re-acquisitions by the same owner") {
  etcd_server etcd;
  auto a = make_backend(etcd);
  auto b = make_backend(etcd);
  uint64_t last = 0;
  uint64_t acquisition = 100;
  for (int round = 0; round < 3; ++round) {
    for (auto* pair : {&a, &b}) {
      auto& backend = **pair;
      std::string owner = pair == &a ? "node-a" : "node-b";
      auto q = req(owner, ++acquisition);
      // Unrelated writes between acquisitions move the revision too.
      must_acquire(backend,
                   req(owner, 1, fmt::format("other-{}-{}", owner, round)));
      auto token = must_acquire(backend, q);
      CHECK(token > last);
      last = token;
      REQUIRE(call(backend, backend_op::release, q).status
              == backend_status::ok);
    }
  }
}

TEST_CASE("scenario L3 (etcd): a retried acquire whose first txn applied is "
          "a self-conflict: the retry adopts the key with the same token") {
  etcd_server etcd;
  auto a = make_backend(etcd);
  auto q = req("node-a", 11);
  auto token = must_acquire(*a, q);
  auto lease = a->lease_id_of("jobs", "node-a");
  // The lease actor retries (same acquisition) as if the reply was lost.
  auto retry = call(*a, backend_op::acquire, q);
  CHECK(retry.status == backend_status::held);
  CHECK(retry.holder == "node-a");
  CHECK(retry.acquisition == 11);
  CHECK(retry.token == token);
  CHECK(meaning(backend_op::acquire, retry, q) == outcome_kind::success);
  CHECK(a->lease_id_of("jobs", "node-a") == lease);
  CHECK(call(*a, backend_op::renew, q).status == backend_status::ok);
  // A new acquisition of the same owner while the old key lives: not ours.
  auto q2 = req("node-a", 12);
  auto other = call(*a, backend_op::acquire, q2);
  CHECK(other.acquisition == 11);
  CHECK(meaning(backend_op::acquire, other, q2) == outcome_kind::held_by_other);
  // Another process using the same identity (its own backend object).
  auto twin = make_backend(etcd);
  auto t = call(*twin, backend_op::acquire, q);
  CHECK(t.holder == "node-a");
  CHECK(t.acquisition != 0);
  CHECK(t.acquisition != 11);
  CHECK(meaning(backend_op::acquire, t, q) == outcome_kind::held_by_other);
  CHECK(meaning(backend_op::renew, call(*twin, backend_op::renew, q), q)
        == outcome_kind::lost);
}

TEST_CASE("etcd backend: an acquire retry that adopts its own earlier key "
          "refreshes the lease: no takeover before the retry's deadline") {
  // The first acquire applied at t0 but its reply was lost; the lease actor
  // retries at t1 and, on success, counts its deadline from t1. The etcd
  // lease was granted at t0: unless the retry keeps it alive, it expires at
  // t0 + ttl and another owner takes the key while A believes it holds it.
  etcd_server etcd;
  auto a = make_backend(etcd);
  auto b = make_backend(etcd);
  auto qa = req("node-a", 11);
  auto qb = req("node-b", 22);
  auto token = must_acquire(*a, qa);   // t0: pretend this reply was lost
  std::this_thread::sleep_for(1200ms); // request_timeout + retry delay
  auto retry_start = steady::now();
  auto retry = call(*a, backend_op::acquire, qa);
  REQUIRE(meaning(backend_op::acquire, retry, qa) == outcome_kind::success);
  CHECK(retry.token == token);
  // A's local deadline: retry_start + ttl 2 s - safety margin 200 ms.
  auto deadline = retry_start + 1800ms;
  bool stolen = false;
  while (!stolen && steady::now() < deadline) {
    auto r = call(*b, backend_op::acquire, qb);
    stolen = r.status == backend_status::ok && steady::now() < deadline;
    if (!stolen)
      std::this_thread::sleep_for(50ms);
  }
  INFO("retry started " << since(retry_start).count() << " ms ago");
  CHECK_FALSE(stolen);
}

TEST_CASE("etcd backend: \"requested lease not found\" on the acquire txn "
          "grants anew and succeeds") {
  etcd_server etcd;
  std::atomic<int> revoked{0};
  auto b = make_backend(etcd, [&](etcd_lease_backend_options& o) {
    // Revoke the first fresh lease behind the backend's back.
    o.after_grant = [&](const std::string&, int64_t id) {
      if (revoked == 0 && etcd.revoke(id))
        ++revoked;
    };
  });
  auto q = req("node-a", 11);
  must_acquire(*b, q);
  CHECK(revoked == 1);
  CHECK(b->stats().grants == 2);
  auto key = etcd.get("/troupe/leases/jobs");
  REQUIRE(key);
  CHECK(key->lease == b->lease_id_of("jobs", "node-a"));
  CHECK(call(*b, backend_op::renew, q).status == backend_status::ok);
}

TEST_CASE("etcd backend: a lease revoked behind the holder's back: the "
          "keepalive answers without TTL => not_found (lost)") {
  etcd_server etcd;
  auto b = make_backend(etcd);
  auto q = req("node-a", 11);
  must_acquire(*b, q);
  REQUIRE(etcd.revoke(b->lease_id_of("jobs", "node-a")));
  auto r = call(*b, backend_op::renew, q);
  CHECK(r.status == backend_status::not_found);
  CHECK(meaning(backend_op::renew, r, q) == outcome_kind::lost);
  CHECK_FALSE(etcd.get("/troupe/leases/jobs"));
}

// -- auth ---------------------------------------------------------------------

TEST_CASE("etcd backend: auth on: acquire, renew and release as the "
          "configured user, the token goes raw in Authorization") {
  capture_guard logs;
  etcd_server etcd;
  etcd.enable_auth("rootpw-1", "app", "app-pw-secret", "/troupe/leases/");
  auto b = make_backend(etcd, [](etcd_lease_backend_options& o) {
    o.user = "app";
    o.password = runtime::secret{"app-pw-secret"};
  });
  auto q = req("node-a", 11);
  auto token = must_acquire(*b, q);
  CHECK(call(*b, backend_op::renew, q).token == token);
  CHECK(call(*b, backend_op::release, q).status == backend_status::ok);
  CHECK_FALSE(etcd.get("/troupe/leases/jobs"));
  CHECK(b->stats().authentications == 1);
  CHECK_FALSE(logs.sink->contains("app-pw-secret"));
}

TEST_CASE("etcd backend: auth on, no or wrong credentials => rejected with "
          "a detail naming the problem, never the password") {
  capture_guard logs;
  etcd_server etcd;
  etcd.enable_auth("rootpw-1", "app", "app-pw-secret", "/troupe/leases/");
  auto q = req("node-a", 11);
  SECTION("no user configured") {
    auto b = make_backend(etcd);
    auto r = call(*b, backend_op::acquire, q);
    CHECK(r.status == backend_status::rejected);
    CHECK_THAT(r.detail, Catch::Contains("user name is empty"));
    CHECK_THAT(r.detail, Catch::Contains("set lease.etcd.user"));
    CHECK(meaning(backend_op::acquire, r, q) == outcome_kind::refused);
  }
  SECTION("wrong password") {
    auto b = make_backend(etcd, [](etcd_lease_backend_options& o) {
      o.user = "app";
      o.password = runtime::secret{"wrong-pw-secret"};
    });
    auto r = call(*b, backend_op::acquire, q);
    CHECK(r.status == backend_status::rejected);
    CHECK_THAT(r.detail, Catch::Contains("authentication as user \"app\" "
                                         "failed: HTTP 400"));
    CHECK_THAT(r.detail, Catch::Contains("invalid user ID or password"));
    CHECK_THAT(r.detail, !Catch::Contains("wrong-pw-secret"));
    CHECK_FALSE(etcd.get("/troupe/leases/jobs"));
  }
  SECTION("password file: re-read at the next authentication") {
    auto file = etcd.dir() + "/app.password";
    std::ofstream{file} << "wrong-pw-secret\n";
    auto b = make_backend(etcd, [&](etcd_lease_backend_options& o) {
      o.user = "app";
      o.password_file = file;
    });
    CHECK(call(*b, backend_op::acquire, q).status == backend_status::rejected);
    std::ofstream{file, std::ios::trunc} << "app-pw-secret\n";
    must_acquire(*b, q);
  }
  SECTION("a key outside the user's permissions: 403 names the key") {
    auto b = make_backend(etcd, [](etcd_lease_backend_options& o) {
      o.user = "app";
      o.password = runtime::secret{"app-pw-secret"};
      o.key_prefix = "/elsewhere/";
    });
    auto r = call(*b, backend_op::acquire, q);
    CHECK(r.status == backend_status::rejected);
    CHECK_THAT(r.detail, Catch::Contains("permission denied for key "
                                         "\"/elsewhere/jobs\" as user "
                                         "\"app\""));
  }
  CHECK_FALSE(logs.sink->contains("pw-secret"));
}

TEST_CASE("etcd backend: an expired auth token (short --auth-token-ttl, "
          "idle past it) is renewed once and the call succeeds") {
  etcd_options opts;
  opts.auth_token_ttl = 1;
  etcd_server etcd{opts};
  etcd.enable_auth("rootpw-1", "app", "app-pw-secret", "/troupe/leases/");
  auto b = make_backend(etcd, [](etcd_lease_backend_options& o) {
    o.user = "app";
    o.password = runtime::secret{"app-pw-secret"};
  });
  auto q = req("node-a", 11);
  must_acquire(*b, q);
  REQUIRE(b->stats().authentications == 1);
  std::this_thread::sleep_for(3s); // idle: the simple token expires
  must_acquire(*b, req("node-a", 12, "second"));
  CHECK(b->stats().authentications == 2);
  CHECK(call(*b, backend_op::release, q).status == backend_status::ok);
}

TEST_CASE("etcd backend: auth switched on and off while running: \"user "
          "name is empty\" => authenticate, a token etcd no longer wants "
          "(401, then 412 \"not enabled\") => dropped") {
  etcd_server etcd;
  auto b = make_backend(etcd, [](etcd_lease_backend_options& o) {
    o.user = "app";
    o.password = runtime::secret{"app-pw-secret"};
  });
  // Auth is off: authenticate answers 412 and the backend goes on without.
  must_acquire(*b, req("node-a", 11, "first"));
  CHECK(b->stats().authentications == 1);
  etcd.enable_auth("rootpw-1", "app", "app-pw-secret", "/troupe/leases/");
  must_acquire(*b, req("node-a", 12, "second"));
  CHECK(b->stats().authentications == 2);
  etcd.disable_auth();
  must_acquire(*b, req("node-a", 13, "third"));
  CHECK(b->stats().authentications == 3);
  must_acquire(*b, req("node-a", 14, "fourth"));
  CHECK(b->stats().authentications == 3);
}

// -- TLS ----------------------------------------------------------------------

TEST_CASE("etcd backend: TLS with CA verification and a client certificate, "
          "an untrusted CA or a missing client certificate is refused") {
  etcd_options opts;
  opts.tls = true;
  opts.client_cert_auth = true;
  etcd_server etcd{opts};
  auto q = req("node-a", 11);
  SECTION("trusted CA and client certificate") {
    auto b = make_backend(etcd);
    CHECK_THAT(etcd.endpoint(), Catch::StartsWith("https://"));
    must_acquire(*b, q);
    CHECK(call(*b, backend_op::renew, q).status == backend_status::ok);
  }
  SECTION("untrusted CA") {
    auto b = make_backend(etcd, [&](etcd_lease_backend_options& o) {
      o.tls.ca_file = etcd.pki()->other_ca_file;
    });
    auto r = call(*b, backend_op::acquire, q);
    CHECK(r.status == backend_status::rejected);
    CHECK_THAT(r.detail, Catch::Contains("certificate verify failed"));
  }
  SECTION("no client certificate") {
    auto b = make_backend(etcd, [&](etcd_lease_backend_options& o) {
      o.tls.client_cert_file.clear();
      o.tls.client_key_file.clear();
    });
    auto r = call(*b, backend_op::acquire, q);
    CHECK(r.status != backend_status::ok);
    CHECK(r.status != backend_status::held);
  }
}

// -- etcd down ----------------------------------------------------------------

TEST_CASE("etcd backend: etcd stopped while held => unavailable (never "
          "lost), restarted => the lease survived, renew and re-acquire "
          "work") {
  etcd_server etcd;
  auto b = make_backend(etcd);
  auto q = req("node-a", 11, "jobs", 3s);
  auto token = must_acquire(*b, q);
  etcd.stop();
  auto start = steady::now();
  auto r = call(*b, backend_op::renew, q);
  CHECK(r.status == backend_status::unavailable);
  CHECK(meaning(backend_op::renew, r, q) == outcome_kind::retry);
  CHECK(since(start) < 1s);
  etcd.start();
  // etcd's lessor restarts every lease's TTL on recovery.
  CHECK(call(*b, backend_op::renew, q).status == backend_status::ok);
  REQUIRE(call(*b, backend_op::release, q).status == backend_status::ok);
  CHECK(must_acquire(*b, req("node-a", 12, "jobs", 3s)) > token);
}

TEST_CASE("scenario L10 (etcd): etcd accepts connections but never answers "
          "(SIGSTOP) => each call unavailable within request_timeout") {
  etcd_server etcd;
  auto b = make_backend(etcd); // request_timeout 500ms
  auto q = req("node-a", 11);
  must_acquire(*b, q);
  etcd.freeze();
  for (auto op :
       {backend_op::renew, backend_op::acquire, backend_op::release}) {
    auto start = steady::now();
    auto r = call(*b, op, q);
    auto took = since(start);
    INFO(to_string(op) << " took " << took.count() << " ms");
    CHECK(r.status == backend_status::unavailable);
    CHECK(took >= 450ms);
    CHECK(took <= 1200ms);
  }
  etcd.thaw();
  // The release sent during the freeze may apply once etcd resumes (it
  // runs the requests it had accepted): then the key is gone and the
  // renewal's range says so; otherwise the renewal succeeds.
  auto r = call(*b, backend_op::renew, q);
  auto key = etcd.get("/troupe/leases/jobs");
  INFO("key " << (key ? "exists" : "is gone") << ": " << render(r));
  CHECK(r.status == (key ? backend_status::ok : backend_status::not_found));
}

TEST_CASE("etcd backend: a 3-member cluster with two members stopped (no "
          "quorum) => unavailable within request_timeout, never ok") {
  etcd_cluster etcd{3};
  auto b = make_backend(etcd, [&](etcd_lease_backend_options& o) {
    o.endpoints = {etcd.endpoint(0)}; // the survivor
  });
  auto q = req("node-a", 11);
  auto token = must_acquire(*b, q);
  CHECK(token > 0);
  etcd.kill(1);
  etcd.kill(2);
  // An isolated leader still renews leases locally (etcd 3.4 lessor) until
  // it notices the lost quorum and steps down (CheckQuorum: one to two
  // election timeouts); from then on nothing may succeed.
  auto killed = steady::now();
  REQUIRE(eventually(
    [&] {
      return call(*b, backend_op::renew, q).status
             == backend_status::unavailable;
    },
    5s));
  INFO("first unavailable renewal " << since(killed).count()
                                    << " ms after the kill");
  CHECK(since(killed) <= 3s);
  for (auto op : {backend_op::renew, backend_op::acquire, backend_op::renew,
                  backend_op::release}) {
    auto start = steady::now();
    auto r = call(*b, op, req("node-a", op == backend_op::acquire ? 12 : 11));
    auto took = since(start);
    INFO(to_string(op) << " took " << took.count() << " ms");
    CHECK(r.status == backend_status::unavailable);
    CHECK(took <= 1200ms);
  }
  // With every endpoint listed, the dead ones fail fast and rotate.
  auto all = make_backend(etcd);
  for (int i = 0; i < 4; ++i)
    CHECK(call(*all, backend_op::acquire, req("node-b", 21)).status
          == backend_status::unavailable);
}

// -- scenario L14 with the real lease actor -----------------------------------

namespace {

// Records the start and outcome of every renewal the lease actor makes.
class recording_backend final : public lease_backend {
public:
  explicit recording_backend(std::shared_ptr<lease_backend> inner)
    : inner_(std::move(inner)) {}

  void acquire(const backend_request& r, callback done) override {
    inner_->acquire(r, std::move(done));
  }

  void renew(const backend_request& r, callback done) override {
    auto start = steady::now();
    inner_->renew(r, [this, start, done = std::move(done)](backend_reply x) {
      if (x.status == backend_status::ok) {
        std::lock_guard guard{mtx_};
        last_ok_start_ = std::max(last_ok_start_, start);
      }
      done(std::move(x));
    });
  }

  void release(const backend_request& r, callback done) override {
    inner_->release(r, std::move(done));
  }

  std::string describe() const override {
    return inner_->describe();
  }

  runtime::error validate(const lease_settings& s) const override {
    return inner_->validate(s);
  }

  steady::time_point last_ok_start() const {
    std::lock_guard guard{mtx_};
    return last_ok_start_;
  }

private:
  std::shared_ptr<lease_backend> inner_;
  mutable std::mutex mtx_;
  steady::time_point last_ok_start_{};
};

lease_settings l14_settings(std::string owner) {
  lease_settings s;
  s.name = "singleton";
  s.owner = std::move(owner);
  s.ttl = 3s;
  s.renewal_interval = 1s;
  s.operation_timeout = 700ms;
  s.acquire_retries = 3;
  s.acquire_retry_delay = 100ms;
  return s.with_defaults(); // safety margin 300ms
}

// A downstream store that accepts a write only with the highest token seen
// (the guide's fenced ledger).
struct fenced_store {
  std::mutex mtx;
  uint64_t highest = 0;
  bool write(uint64_t token) {
    std::lock_guard guard{mtx};
    if (token < highest)
      return false;
    highest = token;
    return true;
  }
};

} // namespace

TEST_CASE("scenario L14: etcd unreachable while held => on_lost by the "
          "local deadline, the next holder's token is greater") {
  etcd_server etcd;
  runtime::node_options nopts;
  nopts.modules = {lease::lease_module()};
  auto node = runtime::node::start(std::move(nopts));
  REQUIRE(node);
  auto rec = std::make_shared<recording_backend>(
    make_backend(etcd, [](auto& o) { o.request_timeout = 400ms; }));
  auto settings = l14_settings("node-a");
  auto a = lease_handle::spawn((*node)->system(), settings, rec);
  REQUIRE(a);
  std::promise<steady::time_point> lost_at;
  std::atomic<bool> alive_in_handler{true};
  auto sub = a->on_lost([&](const lease_lost&) {
    alive_in_handler = a->check_alive();
    lost_at.set_value(steady::now());
  });
  auto granted = a->acquire(10s);
  REQUIRE(granted);
  REQUIRE(*granted);
  auto token_a = a->token();
  fenced_store store;
  CHECK(store.write(token_a));
  // Hold through a few renewals, then take etcd away (SIGKILL: a crash or
  // a partition look the same to the holder).
  std::this_thread::sleep_for(2500ms);
  REQUIRE(a->check_alive());
  etcd.kill();
  auto lost_future = lost_at.get_future();
  REQUIRE(lost_future.wait_for(10s) == std::future_status::ready);
  auto lost = lost_future.get();
  auto last_ok = rec->last_ok_start();
  auto held_for = std::chrono::duration_cast<ms>(lost - last_ok);
  auto deadline = settings.ttl - settings.safety_margin; // 2700ms
  INFO("on_lost " << held_for.count()
                  << " ms after the start of the last "
                     "successful renewal");
  CHECK(held_for >= std::chrono::duration_cast<ms>(deadline) - 50ms);
  CHECK(held_for <= std::chrono::duration_cast<ms>(deadline) + 400ms);
  CHECK_FALSE(alive_in_handler);
  for (int i = 0; i < 5; ++i) {
    CHECK_FALSE(a->check_alive());
    std::this_thread::sleep_for(20ms);
  }
  // etcd comes back; A's key expires one TTL later (etcd restarts lease
  // expiry on recovery) and B takes over with a greater token.
  etcd.start();
  auto b = make_backend(etcd);
  auto qb = req("node-b", 22, "singleton", 3s);
  backend_reply won;
  REQUIRE(eventually(
    [&] {
      won = call(*b, backend_op::acquire, qb);
      return won.status == backend_status::ok;
    },
    8s));
  CHECK(won.token > token_a);
  CHECK(store.write(won.token));
  CHECK_FALSE(store.write(token_a)); // A's late write is fenced off
  CHECK_FALSE(a->check_alive());
  sub.unsubscribe();
  // The handle goes before the node (declared later): a handle outliving
  // node::shutdown() would release its actor into a dead system.
}

// -- a key deleted by hand ----------------------------------------------------

namespace {

// `etcdctl del <key>`: deletes the key and leaves its etcd lease alive.
void delete_key(etcd_cluster& etcd, const std::string& key) {
  auto body
    = etcd.post_ok("/v3/kv/deleterange",
                   fmt::format(R"({{"key":"{}"}})", etcd::base64_encode(key)));
  REQUIRE(body.find(R"("deleted":"1")") != std::string::npos);
}

} // namespace

TEST_CASE("etcd backend: key deleted by hand while held -> the next renewal "
          "answers not_found (lost), the lease is revoked, re-acquire gets a "
          "greater token") {
  etcd_server etcd;
  auto b = make_backend(etcd);
  auto q = req("node-a", 11);
  auto first = must_acquire(*b, q);
  auto id = b->lease_id_of("jobs", "node-a");
  REQUIRE(id != 0);
  auto renewed = call(*b, backend_op::renew, q);
  INFO(render(renewed));
  REQUIRE(renewed.status == backend_status::ok);
  delete_key(etcd, "/troupe/leases/jobs");
  auto r = call(*b, backend_op::renew, q);
  CHECK(r.status == backend_status::not_found);
  CHECK(meaning(backend_op::renew, r, q) == outcome_kind::lost);
  CHECK(r.detail.find("was deleted while its lease") != std::string::npos);
  CHECK(b->lease_id_of("jobs", "node-a") == 0);
  // The orphaned etcd lease was revoked: its keepalive answers without TTL.
  CHECK(eventually(
    [&] {
      auto ka = etcd.post_ok("/v3/lease/keepalive",
                             fmt::format(R"({{"ID":"{}"}})", id));
      return ka.find(R"("TTL")") == std::string::npos;
    },
    2s));
  // A second renewal of the lost acquisition stays lost.
  CHECK(call(*b, backend_op::renew, q).status == backend_status::not_found);
  auto again = must_acquire(*b, req("node-a", 12));
  CHECK(again > first);
  auto key = etcd.get("/troupe/leases/jobs");
  REQUIRE(key);
  CHECK(key->value == "node-a");
  CHECK(static_cast<uint64_t>(key->create_revision) == again);
}

TEST_CASE("etcd backend: key deleted by hand and re-created by another "
          "writer while held -> the next renewal answers held (lost), also "
          "under the holder's own name") {
  etcd_server etcd;
  auto b = make_backend(etcd);
  auto q = req("node-a", 11);
  auto first = must_acquire(*b, q);
  delete_key(etcd, "/troupe/leases/jobs");
  etcd.post_ok("/v3/kv/put",
               fmt::format(R"({{"key":"{}","value":"{}"}})",
                           etcd::base64_encode("/troupe/leases/jobs"),
                           etcd::base64_encode("node-a")));
  auto r = call(*b, backend_op::renew, q);
  CHECK(r.status == backend_status::held);
  CHECK(r.holder == "node-a");
  CHECK(r.token > first);
  CHECK(r.acquisition != q.acquisition);
  CHECK(meaning(backend_op::renew, r, q) == outcome_kind::lost);
  CHECK(r.detail.find("was replaced") != std::string::npos);
}

TEST_CASE("etcd lease: key deleted by hand while held -> lost at the next "
          "renewal, re-acquire gets a greater token") {
  etcd_server etcd;
  runtime::node_options nopts;
  nopts.modules = {lease::lease_module()};
  auto node = runtime::node::start(std::move(nopts));
  REQUIRE(node);
  auto settings = l14_settings("node-a");
  auto a = lease_handle::spawn((*node)->system(), settings, make_backend(etcd));
  REQUIRE(a);
  std::mutex mtx;
  std::vector<std::pair<steady::time_point, lease_lost>> losses;
  std::atomic<bool> alive_in_handler{true};
  auto sub = a->on_lost([&](const lease_lost& x) {
    alive_in_handler = a->check_alive();
    std::lock_guard guard{mtx};
    losses.emplace_back(steady::now(), x);
  });
  auto granted = a->acquire(10s);
  REQUIRE(granted);
  REQUIRE(*granted);
  auto first = a->token();
  REQUIRE(a->check_alive());
  auto deleted_at = steady::now();
  delete_key(etcd, "/troupe/leases/" + settings.name);
  // The next renewal (every renewal_interval = 1 s) notices; the local
  // deadline (ttl - margin = 2.7 s) is the latest bound.
  REQUIRE(eventually(
    [&] {
      std::lock_guard guard{mtx};
      return !losses.empty();
    },
    5s));
  {
    std::lock_guard guard{mtx};
    REQUIRE(losses.size() == 1);
    auto after = std::chrono::duration_cast<ms>(losses[0].first - deleted_at);
    INFO("on_lost " << after.count()
                    << " ms after the delete: " << losses[0].second.reason);
    CHECK(after <= 1500ms);
    CHECK(losses[0].second.reason.find("was deleted while its lease")
          != std::string::npos);
    CHECK(losses[0].second.token == first);
  }
  CHECK_FALSE(alive_in_handler);
  CHECK_FALSE(a->check_alive());
  auto regained = a->acquire(10s);
  REQUIRE(regained);
  CHECK(*regained);
  CHECK(a->check_alive());
  CHECK(a->token() > first);
  auto key = etcd.get("/troupe/leases/" + settings.name);
  REQUIRE(key);
  CHECK(static_cast<uint64_t>(key->create_revision) == a->token());
  sub.unsubscribe();
  CHECK_FALSE(a->release(10s));
}
