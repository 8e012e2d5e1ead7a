#include "strategy_test_support.hpp"

using namespace troupe::downing;
using namespace std::chrono_literals;
using k = decision_kind;

TEST_CASE("keep_majority decision table") {
  check_rows(keep_majority{},
             {
               {"{a,b,c} | {d,e}", "a", "", k::down_unreachable, "{d,e}"},
               {"{a,b,c} | {d,e}", "d", "", k::down_reachable, "{d,e}"},
               {"{a,c,e} | {b,d}", "a", "", k::down_unreachable, "{b,d}"},
               {"{a,c,e} | {b,d}", "b", "", k::down_reachable, "{b,d}"},
               {"{a,b} | {c}", "a", "", k::down_unreachable, "{c}"},
               {"{a,b} | {c}", "c", "", k::down_reachable, "{c}"},
               // three sides and no majority: every side downs itself
               {"{a,b} | {c,d} | {e}", "a", "", k::down_reachable, "{a,b}"},
               {"{a,b} | {c,d} | {e}", "c", "", k::down_reachable, "{c,d}"},
               {"{a,b} | {c,d} | {e}", "e", "", k::down_reachable, "{e}"},
             });
}

TEST_CASE("keep_majority: equal halves, the side with the lowest address "
          "survives") {
  check_rows(keep_majority{},
             {
               {"{a,b} | {c,d}", "a", "", k::down_unreachable, "{c,d}"},
               {"{a,b} | {c,d}", "c", "", k::down_reachable, "{c,d}"},
               {"{b,c} | {a,d}", "b", "", k::down_reachable, "{b,c}"},
               {"{b,c} | {a,d}", "d", "", k::down_unreachable, "{b,c}"},
               {"{a} | {b}", "a", "", k::down_unreachable, "{b}"},
               {"{a} | {b}", "b", "", k::down_reachable, "{b}"},
             });
}

TEST_CASE("keep_majority: joining and weakly_up members are not counted "
          "but are downed with their side") {
  check_rows(
    keep_majority{},
    {
      {"{a,b,x/joining,y/weakly_up} | {c,d,e}", "a", "", k::down_reachable,
       "{a,b,x,y}"},
      // seen from the majority, x and y may be up over there
      // (4 vs 3): the edge case downs all
      {"{a,b,x/joining,y/weakly_up} | {c,d,e}", "c", "", k::down_all,
       "{a,b,c,d,e,x,y}"},
      {"{a,b,x/joining} | {c,d,e,f}", "c", "", k::down_unreachable, "{a,b,x}"},
      // down and exiting members neither count nor get downed
      {"{a,b,c/down,x/exiting} | {d,e}", "a", "", k::down_unreachable, "{d,e}"},
    });
}

TEST_CASE("keep_majority: membership change during the partition => down all "
          "on the side that could be the minority") {
  check_rows(
    keep_majority{},
    {
      // two joining members may be up on the other side: 3 vs 4
      {"{a,b,c} | {d,e,x/joining,y/joining}", "a", "", k::down_all,
       "{a,b,c,d,e,x,y}"},
      // leaving members may be exiting on the other side: 1 vs 2
      {"{a,b/leaving,c/leaving} | {d,e}", "a", "", k::down_all, "{a,b,c,d,e}"},
      // one leaving member: still 2 vs 2 with a lowest on this side
      {"{a,b/leaving,c} | {d,e}", "a", "", k::down_unreachable, "{d,e}"},
    });
}

TEST_CASE("keep_majority: a role counts only the members with that role") {
  check_rows(keep_majority{"seed"},
             {
               {"{a:seed,b,c,d} | {e:seed,f:seed}", "a", "", k::down_reachable,
                "{a,b,c,d}"},
               {"{a:seed,b,c,d} | {e:seed,f:seed}", "e", "",
                k::down_unreachable, "{a,b,c,d}"},
               // no member has the role: down all
               {"{a,b,c} | {d}", "a", "", k::down_all, "{a,b,c,d}"},
             });
}

TEST_CASE("static_quorum decision table") {
  check_rows(
    static_quorum{3, ""},
    {
      {"{a,b,c} | {d,e}", "a", "", k::down_unreachable, "{d,e}"},
      {"{a,b,c} | {d,e}", "d", "", k::down_reachable, "{d,e}"},
      {"{a,b} | {c,d,e}", "a", "", k::down_reachable, "{a,b}"},
      // the cluster shrank below the quorum: both sides go
      {"{a,b} | {c}", "a", "", k::down_reachable, "{a,b}"},
      {"{a,b} | {c}", "c", "", k::down_reachable, "{c}"},
      // joining members do not count towards 2 * quorum_size - 1
      {"{a,b,c,x/joining} | {d,e}", "a", "", k::down_unreachable, "{d,e}"},
    });
  check_rows(
    static_quorum{2, "seed"},
    {
      {"{a:seed,b:seed,c} | {d:seed,e}", "a", "", k::down_unreachable, "{d,e}"},
      {"{a:seed,b:seed,c} | {d:seed,e}", "d", "", k::down_reachable, "{d,e}"},
    });
}

TEST_CASE("static_quorum: more than 2 * quorum_size - 1 members => down all "
          "with an error") {
  auto view = test::view_of("{a,b,c} | {d,e,f}", "a");
  strategy s = static_quorum{3, ""};
  auto d = decide(s, view);
  CHECK(d.kind == k::down_all);
  CHECK(d.error.find("6 members exceed 2 * quorum_size - 1 = 5")
        != std::string::npos);
  CHECK(test::names(nodes_to_down(s, d, view)) == "{a,b,c,d,e,f}");
}

TEST_CASE("keep_oldest decision table") {
  check_rows(keep_oldest{},
             {
               {"{a,b} | {c,d,e}", "a", "", k::down_unreachable, "{c,d,e}"},
               {"{a,b} | {c,d,e}", "c", "", k::down_reachable, "{c,d,e}"},
               // explicit up numbers: c is the oldest
               {"{a^5,b^6} | {c^1,d^2}", "a", "", k::down_reachable, "{a,b}"},
             });
  check_rows(keep_oldest{true, "x"},
             {
               {"{a,b:x} | {c:x,d}", "a", "", k::down_unreachable, "{c,d}"},
             });
}

TEST_CASE("keep_oldest: the oldest alone with down_if_alone on downs itself") {
  check_rows(keep_oldest{true, ""},
             {
               {"{a} | {b,c,d}", "a", "", k::down_reachable, "{a}"},
               {"{a} | {b,c,d}", "b", "", k::down_unreachable, "{a}"},
               // two nodes: the oldest stays even when alone
               {"{a} | {b}", "a", "", k::down_unreachable, "{b}"},
               {"{a} | {b}", "b", "", k::down_reachable, "{b}"},
             });
}

TEST_CASE("keep_oldest: the oldest alone with down_if_alone off stays") {
  check_rows(keep_oldest{false, ""},
             {
               {"{a} | {b,c,d}", "a", "", k::down_unreachable, "{b,c,d}"},
               {"{a} | {b,c,d}", "b", "", k::down_reachable, "{b,c,d}"},
             });
}

TEST_CASE("keep_oldest: oldest leaving on one side and exiting on the other "
          "=> the side that sees it leaving downs all") {
  check_rows(keep_oldest{},
             {
               {"{a/leaving,b} | {c,d,e}", "b", "", k::down_all, "{a,b,c,d,e}"},
               {"{a/exiting,b} | {c,d,e}", "c", "", k::down_unreachable, "{b}"},
             });
}

TEST_CASE("down_all decision table") {
  check_rows(down_all_nodes{},
             {
               {"{a,b,c} | {d}", "a", "", k::down_all, "{a,b,c,d}"},
               {"{a,b,c} | {d}", "d", "", k::down_all, "{a,b,c,d}"},
             });
}

TEST_CASE("keep_referee decision table") {
  check_rows(keep_referee{{"c", 2552}, 1},
             {
               {"{a,b,c} | {d,e}", "a", "", k::down_unreachable, "{d,e}"},
               {"{a,b,c} | {d,e}", "d", "", k::down_reachable, "{d,e}"},
               {"{a,b} | {c,d,e}", "a", "", k::down_reachable, "{a,b}"},
             });
  // the referee's side is smaller than down_all_if_less_than_nodes
  check_rows(keep_referee{{"c", 2552}, 3},
             {
               {"{a,c} | {b,d,e}", "a", "", k::down_all, "{a,b,c,d,e}"},
               {"{a,c} | {b,d,e}", "b", "", k::down_reachable, "{b,d,e}"},
               {"{a,b,c} | {d,e}", "a", "", k::down_unreachable, "{d,e}"},
             });
  // a referee that is not a member: every side downs itself
  check_rows(keep_referee{{"z", 2552}, 1},
             {
               {"{a,b} | {d}", "a", "", k::down_reachable, "{a,b}"},
             });
}

TEST_CASE("lease_majority: the minority waits acquire_lease_delay_for_"
          "minority, the majority none") {
  strategy s = lease_majority{"", "sbr", 2s, 40s};
  struct row {
    std::string partition;
    std::string self;
    timespan delay;
    std::string acquired;
    std::string refused;
  };
  auto rows = std::vector<row>{
    {"{a,b,c} | {d,e}", "a", 0s, "{d,e}", "{a,b,c}"},
    {"{a,b,c} | {d,e}", "d", 2s, "{a,b,c}", "{d,e}"},
    // equal halves: the side with the lowest address tries first
    {"{a,b} | {c,d}", "a", 0s, "{c,d}", "{a,b}"},
    {"{a,b} | {c,d}", "c", 2s, "{a,b}", "{c,d}"},
  };
  for (const auto& r : rows) {
    DYNAMIC_SECTION("lease_majority: " << r.partition << " as " << r.self) {
      auto view = test::view_of(r.partition, r.self);
      auto d = decide(s, view);
      CHECK(d.kind == k::acquire_lease_and_down_unreachable);
      CHECK(d.acquire_delay == r.delay);
      CHECK(test::names(nodes_to_down(s, after_lease(d, true), view))
            == r.acquired);
      auto refused = after_lease(d, false);
      CHECK(refused.kind == k::down_reachable);
      CHECK(test::names(nodes_to_down(s, refused, view)) == r.refused);
    }
  }
}

TEST_CASE("lease_majority: a role counts only the members with that role for "
          "the delay") {
  strategy s = lease_majority{"seed", "sbr", 2s, 40s};
  auto big = test::view_of("{a:seed,b,c,d} | {e:seed,f:seed}", "a");
  CHECK(decide(s, big).acquire_delay == 2s);
  auto small = test::view_of("{a:seed,b,c,d} | {e:seed,f:seed}", "e");
  CHECK(decide(s, small).acquire_delay == 0s);
}

TEST_CASE("after_lease: decisions without a lease pass unchanged") {
  auto d = decision{k::down_unreachable, 0s, {}};
  CHECK(after_lease(d, false) == d);
  auto ic = decision{k::acquire_lease_and_down_indirectly_connected, 0s, {}};
  CHECK(after_lease(ic, false).kind == k::reverse_down_indirectly_connected);
  CHECK(after_lease(ic, true) == ic);
}

TEST_CASE("down_self_quarantined_by_remote downs self only") {
  auto view = test::view_of("{a,b,c} | {d}", "b");
  auto d = decision{k::down_self_quarantined_by_remote, 0s, {}};
  CHECK(test::names(nodes_to_down(keep_majority{}, d, view)) == "{b}");
}

TEST_CASE("decisions render with their delay and error") {
  CHECK(to_string(decision{k::acquire_lease_and_down_unreachable, 2s, {}})
        == "acquire_lease_and_down_unreachable (delay 2s)");
  CHECK(to_string(decision{k::down_all, 0s, "too many"})
        == "down_all (too many)");
  CHECK(std::string{name_of(strategy{keep_referee{}})} == "keep_referee");
}

TEST_CASE("Akka's documented cases: static_quorum 9 nodes with quorum_size "
          "5, then a second failure downs all") {
  check_rows(
    static_quorum{5, ""},
    {
      {"{a,b,c,d,e} | {f,g,h,i}", "a", "", k::down_unreachable, "{f,g,h,i}"},
      {"{a,b,c,d,e} | {f,g,h,i}", "f", "", k::down_reachable, "{f,g,h,i}"},
      // the remaining 5 cannot handle another failure
      {"{a,b,c,d} | {e}", "a", "", k::down_reachable, "{a,b,c,d}"},
      {"{a,b,c,d} | {e}", "e", "", k::down_reachable, "{e}"},
    });
}

TEST_CASE("Akka's documented cases: keep_majority with more than half "
          "crashed downs the survivors") {
  check_rows(keep_majority{},
             {
               {"{a,b} | {c,d,e}", "a", "", k::down_reachable, "{a,b}"},
             });
}

TEST_CASE("Akka's documented cases: keep_oldest keeps the small side with "
          "the oldest") {
  check_rows(
    keep_oldest{},
    {
      {"{a,b} | {c,d,e,f,g,h}", "a", "", k::down_unreachable, "{c,d,e,f,g,h}"},
      {"{a,b} | {c,d,e,f,g,h}", "c", "", k::down_reachable, "{c,d,e,f,g,h}"},
    });
}

TEST_CASE("Akka's documented cases: lease_majority with the lease "
          "unreachable from every side downs all") {
  strategy s = lease_majority{};
  std::set<troupe::runtime::unique_address> downed;
  for (auto self : {"a", "d"}) {
    auto view = test::view_of("{a,b,c} | {d,e}", self);
    for (const auto& n :
         nodes_to_down(s, after_lease(decide(s, view), false), view))
      downed.insert(n);
  }
  CHECK(test::names(downed) == "{a,b,c,d,e}");
}
