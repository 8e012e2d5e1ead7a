#include <catch2/catch.hpp>

#include "troupe/cluster/peer_backoff.hpp"

using namespace std::chrono_literals;
using namespace troupe::cluster;
using troupe::runtime::timespan;

TEST_CASE("peer_backoff: first attempt at once, then doubling up to max") {
  peer_backoff b{100ms, 1s};
  std::mt19937_64 rng{1};
  CHECK(b.current(rng) == 0s);
  // Bases: 100, 200, 400, 800, 1000, 1000 ms; jitter takes up to 20% away.
  for (auto base : {100ms, 200ms, 400ms, 800ms, 1000ms, 1000ms}) {
    auto d = b.on_failure(rng);
    INFO("base " << base.count() << "ms, got " << d.count() << "ns");
    CHECK(d <= timespan{base});
    CHECK(d > timespan{base} * 0.8 - 1ns);
  }
  CHECK(b.failures() == 6);
  b.reset();
  CHECK(b.current(rng) == 0s);
  auto d = b.on_failure(rng);
  CHECK(d <= 100ms);
  CHECK(d >= 80ms);
}

TEST_CASE("peer_backoff: jitter spreads peers and is reproducible") {
  std::mt19937_64 r1{7};
  std::mt19937_64 r2{7};
  std::mt19937_64 r3{8};
  peer_backoff x{100ms, 10s};
  peer_backoff y{100ms, 10s};
  peer_backoff z{100ms, 10s};
  bool differs = false;
  for (int i = 0; i < 10; ++i) {
    auto dx = x.on_failure(r1);
    CHECK(dx == y.on_failure(r2)); // same seed, same delays
    differs = differs || dx != z.on_failure(r3);
  }
  CHECK(differs);
}

TEST_CASE("peer_backoff: many failures never overflow past max") {
  peer_backoff b{1ns, 5s};
  std::mt19937_64 rng{3};
  timespan d{};
  for (int i = 0; i < 1000; ++i)
    d = b.on_failure(rng);
  CHECK(d <= 5s);
  CHECK(d >= 4s);
}
