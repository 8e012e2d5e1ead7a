#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "membership_fixtures.hpp"
#include "troupe/cluster/gossip.hpp"

using namespace troupe::cluster;
using namespace std::chrono_literals;
using membership_test::letters;
using membership_test::make_gossip;
using membership_test::member_specs;
using membership_test::members;
using membership_test::node;

namespace {

const auto a = node('a');
const auto b = node('b');
const auto c = node('c');
const wall_time t0{std::chrono::hours{1000}};

} // namespace

TEST_CASE("gossip: members stay sorted, add refuses known and tombstoned "
          "addresses, update replaces or adds") {
  auto g = make_gossip("c:up:2 a:up:1");
  CHECK(member_specs(g) == "a:up:1 c:up:2");
  CHECK(g.add(member::joining(b)));
  CHECK_FALSE(g.add(member::joining(b)));
  CHECK(member_specs(g) == "a:up:1 b:joining c:up:2");
  g.update(members("b:up:3 d:joining"));
  CHECK(member_specs(g) == "a:up:1 b:up:3 c:up:2 d:joining");
  g.remove(node('d'), t0);
  CHECK_FALSE(g.add(member::joining(node('d'))));
  CHECK(g.add(member::joining(unique_address{"d", 2552, 2}))); // new uid
  REQUIRE(g.find(b) != nullptr);
  CHECK(g.find(b)->up_number == 3);
  CHECK(g.find(node('x')) == nullptr);
  CHECK(check_invariants(g).value_or("ok") == "ok");
}

TEST_CASE("gossip: seen set operations") {
  auto g = make_gossip("a:up:1 b:up:2 c:up:3", "ab");
  CHECK(letters(g.seen_by()) == "ab");
  CHECK(g.is_seen_by(a));
  CHECK_FALSE(g.is_seen_by(c));
  g.seen(c);
  CHECK(letters(g.seen_by()) == "abc");
  g.only_seen(b);
  CHECK(letters(g.seen_by()) == "b");
  g.merge_seen(make_gossip("a:up:1", "a"));
  CHECK(letters(g.seen_by()) == "ab");
  g.clear_seen();
  CHECK(g.seen_by().empty());
}

TEST_CASE("gossip: mark_as_down sets down and drops the member from the "
          "seen set") {
  auto g = make_gossip("a:up:1 b:leaving:2 c:up:3", "abc");
  CHECK(g.mark_as_down(b));
  CHECK(member_specs(g) == "a:up:1 b:down:2 c:up:3");
  CHECK(letters(g.seen_by()) == "ac");
  CHECK_FALSE(g.mark_as_down(b));
  CHECK_FALSE(g.mark_as_down(node('x')));
}

TEST_CASE("gossip: remove drops the member everywhere and tombstones it") {
  auto g = make_gossip("a:up:1 b:down:2 c:up:3", "abc", "a>b b>c c>b");
  g.increment(a);
  g.increment(b);
  g.remove(b, t0);
  CHECK(member_specs(g) == "a:up:1 c:up:3");
  CHECK(letters(g.seen_by()) == "ac");
  CHECK(g.reachability().records().empty());
  CHECK(g.reachability().versions().count(b) == 0);
  CHECK(g.version().counter(b) == 0);
  CHECK(g.version().counter(a) == 1);
  REQUIRE(g.tombstones().count(b) == 1);
  CHECK(g.tombstones().at(b) == t0);
  CHECK(check_invariants(g).value_or("ok") == "ok");
  g.prune_tombstones(t0 - 1ms);
  CHECK(g.tombstones().size() == 1);
  g.prune_tombstones(t0);
  CHECK(g.tombstones().empty());
}

TEST_CASE("gossip: reachability excluding downed observers and "
          "is_reachable") {
  auto g = make_gossip("a:up:1 b:down:2 c:up:3", "", "b>c a>b");
  CHECK(letters(g.reachability().all_unreachable()) == "bc");
  CHECK(letters(g.reachability_excluding_downed_observers().all_unreachable())
        == "b");
  CHECK_FALSE(g.is_reachable(a, b));
  CHECK(g.is_reachable(a, c));
  CHECK_FALSE(g.is_reachable(a, node('x')));
}

TEST_CASE("gossip: merge takes the higher member status, drops tombstoned "
          "members and empties the seen set") {
  auto x = make_gossip("a:up:1 b:up:2 c:joining", "abc", "a>c");
  x.increment(a);
  auto y = make_gossip("a:up:1 b:leaving:2 c:up:3 d:down:4", "ab");
  y.increment(b);
  y.remove(node('d'), t0);
  auto z = make_gossip("a:up:1 d:down:4");
  z.increment(node('d'));
  auto merged = merge(merge(x, y), z);
  CHECK(member_specs(merged) == "a:up:1 b:leaving:2 c:up:3");
  CHECK(merged.seen_by().empty());
  CHECK(merged.version().counter(a) == 1);
  CHECK(merged.version().counter(b) == 1);
  CHECK(merged.version().counter(node('d')) == 0); // pruned: tombstoned
  CHECK(merged.tombstones().count(node('d')) == 1);
  CHECK(letters(merged.reachability().all_unreachable()) == "c");
  CHECK(check_invariants(merged).value_or("ok") == "ok");
}

TEST_CASE("gossip: merge keeps the later of two removal times") {
  auto x = make_gossip("a:up:1 b:down:2");
  auto y = x;
  x.remove(b, t0);
  y.remove(b, t0 + 5s);
  CHECK(merge(x, y).tombstones().at(b) == t0 + 5s);
  CHECK(merge(y, x).tombstones().at(b) == t0 + 5s);
}

TEST_CASE("gossip: check_invariants names the broken invariant") {
  auto [spec_text, observations, expected]
    = GENERATE(table<std::string, std::string, std::string>({
      {"a:up:1 b:removed", "", "member b:2552#1 has status removed"},
      {"a:up:1", "a>x", "non-members in the reachability table: {x:2552#1}"},
    }));
  auto g = make_gossip(spec_text, "", observations);
  CHECK(check_invariants(g).value_or("ok") == expected);
  auto seen_outside = make_gossip("a:up:1", "ab");
  CHECK(check_invariants(seen_outside).value_or("ok")
        == "non-members in the seen set: {b:2552#1}");
  auto stale = make_gossip("a:up:1 b:down:2");
  stale.remove(b, t0);
  stale.increment(b);
  CHECK(check_invariants(stale).value_or("ok")
        == "version has an entry for tombstoned b:2552#1");
}
