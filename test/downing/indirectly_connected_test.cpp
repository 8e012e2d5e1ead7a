#include "strategy_test_support.hpp"

using namespace troupe::downing;
using k = decision_kind;

TEST_CASE("indirectly connected: an observer that is also a subject is "
          "downed, the rest decided normally") {
  // d sees a unreachable, b sees d unreachable: d is both observer and
  // subject; a is only observed by d, whose observations no longer count.
  auto view = test::view_of("{a,b,c,d,e}", "c", "d->a, b->d");
  CHECK(test::names(view.indirectly_connected()) == "{d}");
  CHECK(test::names(view.unreachable()) == "{a,d}");
  check_rows(
    keep_majority{},
    {
      {"{a,b,c,d,e}", "c", "d->a, b->d", k::down_indirectly_connected, "{d}"},
      {"{a,b,c,d,e}", "d", "d->a, b->d", k::down_indirectly_connected, "{d}"},
    });
}

TEST_CASE("indirectly connected: a mutual unreachability downs both ends") {
  check_rows(
    keep_majority{},
    {
      {"{a,b,c}", "c", "a->b, b->a", k::down_indirectly_connected, "{a,b}"},
      {"{a,b,c}", "a", "a->b, b->a", k::down_indirectly_connected, "{a,b}"},
    });
}

TEST_CASE("indirectly connected: a ring of unreachability downs the ring") {
  auto view = test::view_of("{a,b,c,d,e}", "d", "a->b, b->c, c->a");
  CHECK(test::names(view.indirectly_connected()) == "{a,b,c}");
  check_rows(keep_majority{}, {
                                {"{a,b,c,d,e}", "d", "a->b, b->c, c->a",
                                 k::down_indirectly_connected, "{a,b,c}"},
                              });
  check_rows(static_quorum{3, ""}, {
                                     {"{a,b,c,d,e}", "e", "a->b, b->c, c->a",
                                      k::down_indirectly_connected, "{a,b,c}"},
                                   });
}

TEST_CASE("indirectly connected plus a clean partition: the indirectly "
          "connected and the minority are downed") {
  check_rows(keep_majority{}, {
                                {"{a,b,c,d} | {e}", "a", "b->c, c->b",
                                 k::down_indirectly_connected, "{b,c,e}"},
                              });
}

TEST_CASE("indirectly connected: a subject that has seen the current gossip "
          "is indirectly connected with its observer") {
  auto view = test::view_of("{a,b,c,d}", "c", "a->b", "{a,b,c,d}");
  CHECK(test::names(view.indirectly_connected()) == "{a,b}");
  auto d = decide(keep_majority{}, view);
  CHECK(d.kind == k::down_indirectly_connected);
  CHECK(test::names(nodes_to_down(keep_majority{}, d, view)) == "{a,b}");
}

TEST_CASE("indirectly connected: an observer on the other side of a clean "
          "partition is never a double decision (akka/akka PR 32794)") {
  // a marked b unreachable, then a clean partition put a and b on the
  // minority side. Akka downs all on the majority side. In troupe the
  // majority drops a's records (a is cut off: every member c can ask finds
  // it unreachable, and c cannot ask b, which it finds unreachable too) and
  // downs the unreachable minority; a, alone on its side, downs itself, and
  // b (whose observer a is reachable to it) downs the indirectly connected
  // a and itself. Nobody downs all, and the majority is never downed.
  check_rows(
    keep_majority{},
    {
      {"{a,b} | {c,d,e}", "c", "a->b", k::down_unreachable, "{a,b}"},
      {"{a,b} | {c,d,e}", "a", "a->b", k::down_reachable, "{a}"},
      {"{a,b} | {c,d,e}", "b", "a->b", k::down_indirectly_connected, "{a,b}"},
    });
}

TEST_CASE("lease_majority with indirectly connected nodes acquires without "
          "delay and reverses to the indirectly connected plus own side") {
  strategy s = lease_majority{};
  auto view = test::view_of("{a,b,c,d} | {e}", "a", "b->c, c->b");
  auto d = decide(s, view);
  CHECK(d.kind == k::acquire_lease_and_down_indirectly_connected);
  CHECK(d.acquire_delay == timespan{0});
  CHECK(test::names(nodes_to_down(s, after_lease(d, true), view)) == "{b,c,e}");
  CHECK(test::names(nodes_to_down(s, after_lease(d, false), view))
        == "{a,b,c,d}");
}

TEST_CASE("down_all ignores indirectly connected nodes") {
  check_rows(down_all_nodes{},
             {
               {"{a,b,c}", "c", "a->b, b->a", k::down_all, "{a,b,c}"},
             });
}
