#include <catch2/catch.hpp>

#include "partition_notation.hpp"
#include "troupe/cluster/membership_state.hpp"

using namespace troupe;
using namespace troupe::downing;

TEST_CASE("partition notation: roles, statuses and up numbers") {
  auto view = test::view_of("{a:seed:x,b/joining} | {c/leaving^1}", "a");
  REQUIRE(view.all_members().size() == 3);
  const auto* a = view.find(test::node("a"));
  REQUIRE(a != nullptr);
  CHECK(a->roles == std::vector<std::string>{"seed", "x"});
  CHECK(a->up_number == 1);
  CHECK(view.find(test::node("b"))->up_number == member::no_up_number);
  CHECK(view.find(test::node("c"))->status == member_status::leaving);
  CHECK(test::names(view.unreachable()) == "{c}");
  CHECK(test::names(test::nodes("{c, a}")) == "{a,c}");
}

TEST_CASE("downing_view: counted members, sides and downable") {
  auto view = test::view_of(
    "{a,b/joining,c/weakly_up,d/leaving} | {e,f/down,g/exiting}", "a");
  auto names = [](const std::vector<member>& ms) {
    std::set<unique_address> result;
    for (const auto& m : ms)
      result.insert(m.address);
    return test::names(result);
  };
  CHECK(names(view.members()) == "{a,d,e}");
  CHECK(names(view.members({}, {true, false})) == "{a,b,c,d,e}");
  CHECK(names(view.members({}, {false, true})) == "{a,e}");
  CHECK(names(view.reachable_members()) == "{a,d}");
  CHECK(names(view.unreachable_members()) == "{e}");
  // records about down and exiting members do not count
  CHECK(test::names(view.unreachable()) == "{e}");
  CHECK(test::names(view.downable()) == "{a,b,c,d,e}");
}

TEST_CASE("downing_view: self is never unreachable and always on its side") {
  auto view = test::view_of("{a,b,c,d}", "a", "b->a, c->d");
  CHECK(test::names(view.unreachable()) == "{d}");
  CHECK(test::names(view.indirectly_connected()) == "{}");
}

TEST_CASE("downing_view: the observations of a member every other up member "
          "finds unreachable do not count") {
  // d crashed after it had recorded c as unreachable.
  auto view = test::view_of("{a,b,c} | {d}", "a", "d->c");
  CHECK(test::names(view.unreachable()) == "{d}");
  CHECK(test::names(view.indirectly_connected()) == "{}");
  // self's own observations always count
  auto own = test::view_of("{a,b,c} | {d}", "d", "a->d, b->d, c->d");
  CHECK(test::names(own.unreachable()) == "{a,b,c}");
}

TEST_CASE("downing_view: the side leader acts, one per side") {
  auto responsible = [](std::string_view self) {
    return test::view_of("{a,b,c} | {d,e}", self).is_responsible();
  };
  CHECK(responsible("a"));
  CHECK_FALSE(responsible("b"));
  CHECK(responsible("d"));
  CHECK_FALSE(responsible("e"));
  // a joining self never decides
  CHECK_FALSE(test::view_of("{a/joining,b} | {c}", "a").is_responsible());
  CHECK(test::view_of("{a/joining,b} | {c}", "b").is_responsible());
}

TEST_CASE("downing_view: self leads its side even when the other side's "
          "records name it (unlike membership_state::leader)") {
  auto view = test::view_of("{a,b,c} | {d,e}", "a", "d->a, e->a");
  CHECK(view.side_leader() == test::node("a"));
  CHECK(view.is_responsible());
}

TEST_CASE("downing_view::of reads the membership state") {
  std::vector<member> ms;
  for (auto name : {"a", "b", "c"}) {
    auto m = member::joining(test::node(name));
    ms.push_back(*m.with_up(static_cast<int32_t>(ms.size() + 1)));
  }
  cluster::gossip g{ms};
  g.reachability().unreachable(test::node("a"), test::node("c"));
  g.seen(test::node("a"));
  auto view = downing_view::of(cluster::membership_state{g, test::node("a")});
  CHECK(view.self() == test::node("a"));
  CHECK(test::names(view.unreachable()) == "{c}");
  CHECK(test::names(view.seen_by()) == "{a}");
  CHECK(view.is_responsible());
}

TEST_CASE("leader_by_status: up and leaving first, then weakly_up, joining, "
          "exiting, never down") {
  auto m = [](std::string_view name, member_status status) {
    member x;
    x.address = test::node(name);
    x.status = status;
    return x;
  };
  using s = member_status;
  CHECK(cluster::leader_by_status({m("a", s::joining), m("b", s::up)})
        == test::node("b"));
  CHECK(cluster::leader_by_status({m("a", s::exiting), m("b", s::joining)})
        == test::node("b"));
  CHECK(cluster::leader_by_status({m("a", s::down)}) == std::nullopt);
}

TEST_CASE("downing_view: a crashed member does not keep the stale records of "
          "a cut-off observer alive (downing simulator, seed 5)") {
  // f was partitioned with g, recorded the majority {b,c,d,e}
  // unreachable, and is now cut off from everyone; a crashed meanwhile and
  // never recorded f. g, back with the majority, must not find the
  // majority indirectly connected (nor unreachable) through f's stale
  // records: f's silence is stale, a's says nothing.
  auto view = test::view_of("{b,c,d,e,g} | {a} | {f}", "g",
                            "f->b, f->c, f->d, f->e, f->a");
  CHECK(view.indirectly_connected().empty());
  CHECK(test::names(view.unreachable()) == "{a,f}");
  CHECK(view.side_leader() == test::node("b"));
  CHECK_FALSE(view.is_responsible());
}
