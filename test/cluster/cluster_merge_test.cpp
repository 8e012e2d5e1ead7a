#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "membership_fixtures.hpp"
#include "troupe/cluster/cluster_merge.hpp"

// The pure parts of "a second cluster is detected and healed": the
// incarnation's order and rendering, the size that the merge rule counts,
// the rule itself, and the merge mark in the gossip (its merge laws).

using namespace std::chrono_literals;
using namespace troupe::cluster;
using membership_test::make_gossip;

namespace {

cluster_incarnation inc(uint64_t id, int64_t founded_ms) {
  return cluster_incarnation{id,
                             wall_time{std::chrono::milliseconds{founded_ms}}};
}

} // namespace

TEST_CASE("cluster incarnation: older is the earlier founding, then the "
          "smaller id, rendered as hex id and UTC time") {
  CHECK(is_older(inc(9, 1000), inc(1, 2000)));
  CHECK_FALSE(is_older(inc(1, 2000), inc(9, 1000)));
  CHECK(is_older(inc(1, 1000), inc(2, 1000)));
  CHECK_FALSE(is_older(inc(2, 1000), inc(2, 1000)));
  CHECK(to_string(inc(0x4d2, 1'700'000'000'000))
        == "00000000000004d2@2023-11-14T22:13:20.000Z");
  CHECK(to_string(inc(0xffffffffffffffff, 1'700'000'000'123))
        == "ffffffffffffffff@2023-11-14T22:13:20.123Z");
  CHECK(to_string(cluster_incarnation{}) == "none");
  CHECK_FALSE(cluster_incarnation{}.is_set());
  // A draw of 0 still gives a set incarnation.
  CHECK(found_incarnation(0, wall_time{}).id == 1);
  CHECK(found_incarnation(77, wall_time{}).id == 77);
}

TEST_CASE("cluster size: joining, weakly up and up members count, the "
          "others do not") {
  auto r = GENERATE(table<const char*, uint32_t>({
    {"a:up:1", 1},
    {"a:up:1 b:joining c:weakly_up", 3},
    {"a:up:1 b:leaving:2 c:exiting:3", 1},
    {"a:up:1 b:down:2 c:up:3", 2},
    {"a:leaving:1", 0},
  }));
  INFO(std::get<0>(r));
  CHECK(cluster_size(make_gossip(std::get<0>(r))) == std::get<1>(r));
}

TEST_CASE("merge rule: the smaller cluster leaves, at equal sizes the "
          "younger incarnation") {
  auto older = inc(5, 1000);
  auto younger = inc(3, 2000);
  using v = merge_verdict;
  auto r = GENERATE_COPY(table<cluster_side, cluster_side, merge_verdict>({
    // {this side}, {other side} => who leaves
    {{older, 2}, {younger, 3}, v::this_side_leaves},
    {{older, 3}, {younger, 2}, v::other_side_leaves},
    {{younger, 2}, {older, 3}, v::this_side_leaves},
    {{younger, 3}, {older, 2}, v::other_side_leaves},
    {{older, 3}, {younger, 3}, v::other_side_leaves},
    {{younger, 3}, {older, 3}, v::this_side_leaves},
    {{younger, 1}, {older, 1}, v::this_side_leaves},
    {{inc(1, 1000), 4}, {inc(2, 1000), 4}, v::other_side_leaves},
    {{inc(2, 1000), 4}, {inc(1, 1000), 4}, v::this_side_leaves},
    {{older, 0}, {younger, 1}, v::this_side_leaves},
  }));
  auto [self, other, expected] = r;
  INFO(to_string(self.incarnation)
       << " (" << self.size << ") meets " << to_string(other.incarnation)
       << " (" << other.size << ")");
  CHECK(decide_merge(self, other) == expected);
  // Antisymmetric: the other side's reading names the same side.
  auto mirrored = expected == v::this_side_leaves ? v::other_side_leaves
                                                  : v::this_side_leaves;
  CHECK(decide_merge(other, self) == mirrored);
  // Only the older side judges.
  CHECK(judges(self.incarnation, other.incarnation)
        != judges(other.incarnation, self.incarnation));
}

TEST_CASE("merge rule: antisymmetric over every pair of sizes and ages") {
  std::vector<cluster_incarnation> incs{inc(1, 1000), inc(2, 1000),
                                        inc(1, 1001), inc(9, 999)};
  for (auto& x : incs)
    for (auto& y : incs)
      for (uint32_t sx = 0; sx < 5; ++sx)
        for (uint32_t sy = 0; sy < 5; ++sy) {
          if (x == y)
            continue;
          auto a = decide_merge({x, sx}, {y, sy});
          auto b = decide_merge({y, sy}, {x, sx});
          INFO(to_string(x)
               << " " << sx << " vs " << to_string(y) << " " << sy);
          CHECK(a != b);
        }
}

TEST_CASE("gossip merge mark: monotonic, the older winner is kept, never "
          "the own incarnation") {
  auto g = make_gossip("a:up:1");
  g.set_incarnation(inc(7, 5000));
  CHECK_FALSE(g.mark_merging_into(inc(7, 5000)));
  CHECK_FALSE(g.mark_merging_into(cluster_incarnation{}));
  CHECK(g.mark_merging_into(inc(3, 4000)));
  CHECK(g.merging_into() == inc(3, 4000));
  CHECK_FALSE(g.mark_merging_into(inc(8, 4500))); // younger: kept
  CHECK(g.merging_into() == inc(3, 4000));
  CHECK(g.mark_merging_into(inc(1, 3000))); // older: replaces
  CHECK(g.merging_into() == inc(1, 3000));
  CHECK_FALSE(check_invariants(g));
}

TEST_CASE("gossip merge mark: a mark without an incarnation, or naming the "
          "own one, breaks the invariants") {
  auto g = make_gossip("a:up:1");
  auto other = make_gossip("a:up:1");
  other.set_incarnation(inc(7, 5000));
  other.mark_merging_into(inc(3, 4000));
  // Carried over by a merge into a gossip without an incarnation, the mark
  // and the incarnation come together: fine.
  auto merged = merge(g, other);
  CHECK(merged.incarnation() == inc(7, 5000));
  CHECK(merged.merging_into() == inc(3, 4000));
  CHECK_FALSE(check_invariants(merged));
  // A gossip (as a peer could send it) whose mark names its own
  // incarnation is refused by the invariants, so never merged.
  auto marked = make_gossip("a:up:1");
  marked.set_incarnation(inc(1, 1));
  REQUIRE(marked.mark_merging_into(inc(2, 0)));
  marked.set_incarnation(inc(2, 0));
  auto problem = check_invariants(marked);
  REQUIRE(problem);
  CHECK_THAT(*problem, Catch::Contains("own incarnation"));
  marked.set_incarnation(cluster_incarnation{});
  problem = check_invariants(marked);
  REQUIRE(problem);
  CHECK_THAT(*problem, Catch::Contains("without an incarnation"));
}

TEST_CASE("gossip merge mark: merge is commutative, associative and "
          "idempotent on incarnation and mark") {
  std::vector<cluster_incarnation> marks{
    {}, inc(1, 1000), inc(2, 1000), inc(3, 500)};
  std::vector<gossip> gs;
  for (auto& m : marks) {
    auto g = make_gossip("a:up:1 b:up:2");
    g.set_incarnation(inc(9, 2000));
    g.mark_merging_into(m);
    gs.push_back(g);
  }
  gs.push_back(make_gossip("a:up:1")); // no incarnation yet
  for (auto& x : gs)
    for (auto& y : gs)
      for (auto& z : gs) {
        auto problem = check_merge_laws(x, y, z);
        INFO((problem ? *problem : std::string{}));
        CHECK_FALSE(problem);
      }
}
