#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "troupe/sim/kernel.hpp"
#include "troupe/sim/network.hpp"

using namespace std::chrono_literals;
using namespace troupe::sim;

namespace {

struct delivery {
  std::string from;
  std::string to;
  int value;
  timespan at;
};

struct fixture {
  scheduler sched;
  rng random;
  std::vector<delivery> got;
  network<int> net;
  unique_address a{"10.0.0.1", 2552, 1};
  unique_address b{"10.0.0.2", 2552, 2};
  unique_address c{"10.0.0.3", 2552, 3};

  explicit fixture(uint64_t seed)
    : random(seed), net(sched, random, [this](auto& from, auto& to, int&& v) {
        got.push_back({from.host, to.host, v, sched.now()});
      }) {}

  std::vector<int> values(const std::string& from, const std::string& to) {
    std::vector<int> out;
    for (auto& d : got)
      if (d.from == from && d.to == to)
        out.push_back(d.value);
    return out;
  }
};

} // namespace

TEST_CASE("sim kernel: actions at equal times run in scheduling order") {
  scheduler s;
  std::vector<int> order;
  s.at(5ms, [&] { order.push_back(2); });
  s.at(1ms, [&] { order.push_back(1); });
  s.at(5ms, [&] { order.push_back(3); });
  s.at(5ms, [&] { s.after(0ms, [&] { order.push_back(4); }); });
  s.run_until(10ms);
  CHECK(order == std::vector<int>{1, 2, 3, 4});
  CHECK(s.now() == 10ms);
  CHECK(s.empty());
}

TEST_CASE("sim kernel: links are FIFO under random delays") {
  fixture f{42};
  f.net.set_delay(1ms, 50ms);
  for (int i = 0; i < 200; ++i)
    f.net.send(f.a, f.b, i);
  f.sched.run_until(1s);
  std::vector<int> want;
  for (int i = 0; i < 200; ++i)
    want.push_back(i);
  CHECK(f.values("10.0.0.1", "10.0.0.2") == want);
  CHECK(f.net.delivered() == 200);
}

TEST_CASE("sim kernel: a partition blocks both ways, an asymmetric one a "
          "single direction") {
  fixture f{7};
  f.net.partition({f.a}, {f.b});
  f.net.link(f.c, f.a).blocked = true; // c cannot reach a, a reaches c
  f.net.send(f.a, f.b, 1);
  f.net.send(f.b, f.a, 2);
  f.net.send(f.c, f.a, 3);
  f.net.send(f.a, f.c, 4);
  f.net.send(f.b, f.c, 5);
  f.sched.run_until(1s);
  CHECK(f.values("10.0.0.1", "10.0.0.2").empty());
  CHECK(f.values("10.0.0.2", "10.0.0.1").empty());
  CHECK(f.values("10.0.0.3", "10.0.0.1").empty());
  CHECK(f.values("10.0.0.1", "10.0.0.3") == std::vector<int>{4});
  CHECK(f.values("10.0.0.2", "10.0.0.3") == std::vector<int>{5});
  CHECK(f.net.lost() == 3);
  f.net.heal_all();
  f.net.send(f.a, f.b, 6);
  f.sched.run_until(2s);
  CHECK(f.values("10.0.0.1", "10.0.0.2") == std::vector<int>{6});
}

TEST_CASE("sim kernel: a restarted incarnation inherits its address's "
          "links") {
  fixture f{1};
  f.net.partition({f.a}, {f.b});
  unique_address b2{"10.0.0.2", 2552, 99};
  f.net.send(f.a, b2, 1);
  f.sched.run_until(1s);
  CHECK(f.got.empty());
}

TEST_CASE("sim kernel: a clogged link adds its delay") {
  fixture f{3};
  f.net.set_delay(1ms, 1ms);
  f.net.link(f.a, f.b).extra_delay = 2s;
  f.net.send(f.a, f.b, 1);
  f.net.send(f.b, f.a, 2);
  f.sched.run_until(10s);
  REQUIRE(f.got.size() == 2);
  CHECK(f.got[0].value == 2);
  CHECK(f.got[0].at == 1ms);
  CHECK(f.got[1].at == 2001ms);
}

TEST_CASE("sim kernel: the same seed replays the same losses") {
  auto run = [](uint64_t seed) {
    fixture f{seed};
    f.net.set_loss(0.3);
    for (int i = 0; i < 100; ++i)
      f.net.send(f.a, f.b, i);
    f.sched.run_until(1s);
    return f.values("10.0.0.1", "10.0.0.2");
  };
  auto x = run(11);
  CHECK(x == run(11));
  CHECK(x != run(12));
  CHECK(x.size() > 50);
  CHECK(x.size() < 90);
}

TEST_CASE("sim kernel: drifting clocks run at their rate from their "
          "origin") {
  drifting_clock fast{timestamp{1h}, 1.01, 10s};
  CHECK(fast.local(10s) == timestamp{1h});
  CHECK(fast.local(110s) == timestamp{1h} + 101s);
}
