#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "membership_fixtures.hpp"
#include "troupe/cluster/vector_clock.hpp"

using namespace troupe::cluster;
using membership_test::node;

namespace {

/// A clock from "a2 b1": letter and counter per entry.
vector_clock clock_of(std::string_view spec) {
  vector_clock result;
  for (const auto& entry : membership_test::split(spec, ' '))
    for (int i = 0; i < std::stoi(entry.substr(1)); ++i)
      result.increment(node(entry[0]));
  return result;
}

} // namespace

TEST_CASE("vector_clock: compare, a table of clock pairs") {
  auto [x, y, order] = GENERATE(table<std::string, std::string, clock_order>({
    {"", "", clock_order::same},
    {"a1", "a1", clock_order::same},
    {"a1 b2", "a1 b2", clock_order::same},
    {"", "a1", clock_order::before},
    {"a1", "a2", clock_order::before},
    {"a1", "a1 b1", clock_order::before},
    {"a2", "a1", clock_order::after},
    {"a1 b1", "b1", clock_order::after},
    {"a1", "b1", clock_order::concurrent},
    {"a2 b1", "a1 b2", clock_order::concurrent},
    {"a1 c1", "a1 b1", clock_order::concurrent},
  }));
  INFO(x << " vs " << y);
  CHECK(compare(clock_of(x), clock_of(y)) == order);
}

TEST_CASE("vector_clock: increment, counter, prune and merge") {
  vector_clock v;
  CHECK(v.empty());
  v.increment(node('a'));
  v.increment(node('a'));
  v.increment(node('b'));
  CHECK(v.counter(node('a')) == 2);
  CHECK(v.counter(node('c')) == 0);
  CHECK(to_string(v) == "{a:2552#1: 2, b:2552#1: 1}");
  auto w = clock_of("a1 b3 c1");
  auto m = merge(v, w);
  CHECK(m == clock_of("a2 b3 c1"));
  CHECK(compare(m, v) == clock_order::after);
  CHECK(compare(m, w) == clock_order::after);
  m.prune(node('b'));
  CHECK(m == clock_of("a2 c1"));
  CHECK(compare(m, v) == clock_order::concurrent);
}

TEST_CASE("vector_clock: merge is commutative, associative and idempotent "
          "and an upper bound (1000 seeded cases)") {
  std::mt19937_64 rng{20240501};
  auto random_clock = [&] {
    vector_clock v;
    for (char n : std::string{"abcd"})
      for (auto i = rng() % 4; i > 0; --i)
        v.increment(node(n));
    return v;
  };
  for (int i = 0; i < 1000; ++i) {
    auto x = random_clock();
    auto y = random_clock();
    auto z = random_clock();
    INFO("case " << i << ": " << to_string(x) << " " << to_string(y) << " "
                 << to_string(z));
    CHECK(merge(x, y) == merge(y, x));
    CHECK(merge(merge(x, y), z) == merge(x, merge(y, z)));
    CHECK(merge(x, x) == x);
    auto up = compare(x, merge(x, y));
    CHECK((up == clock_order::before || up == clock_order::same));
  }
}
