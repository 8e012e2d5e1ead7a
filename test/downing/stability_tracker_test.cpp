#include <catch2/catch.hpp>

#include "partition_notation.hpp"
#include "troupe/downing/stability_tracker.hpp"

using namespace troupe::downing;
using namespace std::chrono_literals;
using v = stability_verdict;

namespace {

const timestamp t0{std::chrono::hours{1}};

stability_tracker tracker(timespan stable_after = 20s,
                          timespan down_all_when_unstable = 15s) {
  return stability_tracker{{stable_after, down_all_when_unstable}, t0};
}

} // namespace

TEST_CASE("stability: no unreachable member => idle") {
  auto st = tracker();
  st.observe(test::view_of("{a,b,c}", "a"), t0);
  CHECK(st.evaluate(t0 + 1h) == v::idle);
  CHECK(st.next_deadline() == std::nullopt);
}

TEST_CASE("stability: decide only after stable_after without change") {
  auto st = tracker();
  CHECK(st.observe(test::view_of("{a,b,c} | {d}", "a"), t0 + 1s));
  CHECK(st.stable_deadline() == t0 + 21s);
  CHECK(st.evaluate(t0 + 20s) == v::unstable);
  CHECK(st.next_deadline() == t0 + 21s);
  CHECK(st.evaluate(t0 + 21s) == v::decide);
}

TEST_CASE("stability: a change of the unreachable set resets the timer") {
  auto st = tracker();
  st.observe(test::view_of("{a,b,c} | {d}", "a"), t0);
  CHECK(st.observe(test::view_of("{a,b} | {c,d}", "a"), t0 + 10s));
  CHECK(st.evaluate(t0 + 20s) == v::unstable);
  CHECK(st.evaluate(t0 + 30s) == v::decide);
  // the same view again is no change
  CHECK_FALSE(st.observe(test::view_of("{a,b} | {c,d}", "a"), t0 + 31s));
  CHECK(st.evaluate(t0 + 31s) == v::decide);
}

TEST_CASE("stability: a member moving up resets the timer, joining and "
          "leaving members do not") {
  auto st = tracker(20s, 0s);
  st.observe(test::view_of("{a,b,c} | {d}", "a"), t0);
  CHECK_FALSE(
    st.observe(test::view_of("{a,b,c,x/joining} | {d}", "a"), t0 + 5s));
  CHECK_FALSE(st.observe(
    test::view_of("{a,b/leaving,c,x/weakly_up} | {d}", "a"), t0 + 6s));
  CHECK(st.evaluate(t0 + 20s) == v::decide);
  CHECK(st.observe(test::view_of("{a,b/leaving,c,x} | {d}", "a"), t0 + 21s));
  CHECK(st.evaluate(t0 + 40s) == v::unstable);
  CHECK(st.evaluate(t0 + 41s) == v::decide);
}

TEST_CASE("stability: healed before stable_after => idle, no decision") {
  auto st = tracker();
  st.observe(test::view_of("{a,b,c} | {d}", "a"), t0);
  st.observe(test::view_of("{a,b,c,d}", "a"), t0 + 5s);
  CHECK(st.evaluate(t0 + 30s) == v::idle);
  CHECK(st.change_count() == 0);
}

TEST_CASE("stability: only the responsible node decides") {
  auto st = tracker();
  st.observe(test::view_of("{a,b,c} | {d}", "b"), t0);
  CHECK(st.evaluate(t0 + 20s) == v::not_responsible);
}

TEST_CASE("stability: after acting, wait until the downs are visible and for "
          "a new stable_after") {
  auto st = tracker();
  st.observe(test::view_of("{a,b,c} | {d,e}", "a"), t0);
  REQUIRE(st.evaluate(t0 + 20s) == v::decide);
  st.acted(test::nodes("{d,e}"), t0 + 20s);
  CHECK(st.evaluate(t0 + 21s) == v::downing_in_progress);
  // the down of d is visible, e's not yet
  st.observe(test::view_of("{a,b,c} | {d/down,e}", "a"), t0 + 21s);
  CHECK(st.evaluate(t0 + 50s) == v::downing_in_progress);
  // both down: nothing unreachable counts any more
  st.observe(test::view_of("{a,b,c} | {d/down,e/down}", "a"), t0 + 22s);
  CHECK(st.evaluate(t0 + 50s) == v::idle);
  CHECK(st.change_count() == 0);
}

TEST_CASE("stability: down_all_when_unstable fires stable_after + "
          "down_all_when_unstable after the first change while flapping") {
  auto st = tracker(20s, 15s);
  const char* views[] = {"{a,b,c,d} | {e}", "{a,b,c} | {d,e}",
                         "{a,b,c,e} | {d}", "{a,b,d,e} | {c}"};
  auto t = t0;
  for (int i = 0; t < t0 + 35s; ++i, t += 2s) {
    st.observe(test::view_of(views[i % 4], "a"), t);
    CHECK(st.evaluate(t) == v::unstable);
    if (t + 1s < t0 + 35s)
      CHECK(st.evaluate(t + 1s) == v::unstable);
  }
  CHECK(st.unstable_deadline() == t0 + 35s);
  CHECK(st.evaluate(t0 + 35s) == v::down_all_when_unstable);
}

TEST_CASE("stability: down_all_when_unstable off never downs all") {
  auto st = tracker(20s, 0s);
  st.observe(test::view_of("{a,b,c} | {d}", "a"), t0);
  for (int i = 1; i < 60; ++i)
    st.observe(test::view_of(i % 2 ? "{a,b} | {c,d}" : "{a,b,c} | {d}", "a"),
               t0 + i * 2s);
  CHECK(st.unstable_deadline() == std::nullopt);
  CHECK(st.evaluate(t0 + 120s) == v::unstable);
}

TEST_CASE("stability: the instability measurement resets after 2 * "
          "stable_after without change") {
  // down_all_when_unstable longer than stable_after (not recommended)
  auto st = tracker(20s, 30s);
  st.observe(test::view_of("{a,b,c} | {d}", "b"), t0); // b is not responsible
  CHECK(st.evaluate(t0 + 39s) == v::not_responsible);
  CHECK(st.evaluate(t0 + 40s) == v::not_responsible);
  CHECK(st.change_count() == 0);
  CHECK(st.evaluate(t0 + 50s) == v::not_responsible);
}

TEST_CASE("stability: every node downs all when unstable, responsible or "
          "not") {
  auto st = tracker(20s, 15s);
  st.observe(test::view_of("{a,b,c} | {d}", "b"), t0);
  CHECK(st.evaluate(t0 + 34s) == v::not_responsible);
  CHECK(st.evaluate(t0 + 35s) == v::down_all_when_unstable);
}

TEST_CASE("stability: a change of the indirectly connected nodes resets the "
          "timer (a heal's transient, downing simulator seed 44)") {
  auto st = tracker(3s, 0s);
  // g is cut off; everyone records it
  CHECK(st.observe(test::view_of("{a,b,c,d} | {g}", "a"), t0));
  CHECK(st.evaluate(t0 + 2s) == v::unstable);
  // the partition heals: g has seen the gossip, b, c and d have not yet
  // marked it reachable again (a already has): b, c, d, g look
  // indirectly connected
  auto healing
    = test::view_of("{a,b,c,d,g}", "a", "b->g, c->g, d->g", "a, b, c, d, g");
  REQUIRE_FALSE(healing.indirectly_connected().empty());
  CHECK(test::names(healing.unreachable()) == "{g}");
  CHECK(st.observe(healing, t0 + 2900ms));
  CHECK(st.evaluate(t0 + 3s) == v::unstable);
  // and moments later all is reachable
  st.observe(test::view_of("{a,b,c,d,g}", "a"), t0 + 3100ms);
  CHECK(st.evaluate(t0 + 6s) == v::idle);
}
