#include <catch2/catch.hpp>

#include <random>
#include <string>

#include "membership_fixtures.hpp"
#include "troupe/cluster/reachability.hpp"

using namespace troupe::cluster;
using membership_test::letters;
using membership_test::node;
using membership_test::nodes;

namespace {

const auto a = node('a');
const auto b = node('b');
const auto c = node('c');
const auto d = node('d');
const auto e = node('e');

/// Applies "a>b a<b a!b" (unreachable, reachable, terminated) in order.
reachability table_of(std::string_view changes) {
  reachability r;
  for (const auto& x : membership_test::split(changes, ' ')) {
    auto observer = node(x.at(0));
    auto subject = node(x.at(2));
    switch (x.at(1)) {
      case '>':
        r.unreachable(observer, subject);
        break;
      case '<':
        r.reachable(observer, subject);
        break;
      default:
        r.terminated(observer, subject);
    }
  }
  return r;
}

/// Renders the records as "ab:u1 ac:r2" (observer, subject, status,
/// version).
std::string rows(const reachability& r) {
  std::string result;
  for (const auto& x : r.records()) {
    if (!result.empty())
      result += ' ';
    result += x.observer.host + x.subject.host + ':';
    result += to_string(x.status)[0];
    result += std::to_string(x.version);
  }
  return result;
}

} // namespace

TEST_CASE("reachability: changes by one observer, a table of histories") {
  auto [changes, expected_rows, version_of_a]
    = GENERATE(table<std::string, std::string, uint64_t>({
      // reachable is the default: recording it alone is a no-op
      {"a<b", "", 0},
      {"a>b", "ab:u1", 1},
      {"a>b a>b", "ab:u1", 1},
      {"a>b a>c", "ab:u1 ac:u2", 2},
      // all rows reachable again: the observer's rows go, its version stays
      {"a>b a<b", "", 2},
      {"a>b a>c a<b", "ab:r3 ac:u2", 3},
      {"a>b a>c a<b a<c", "", 4},
      // terminated is final for that observer
      {"a!b", "ab:t1", 1},
      {"a!b a<b", "ab:t1", 1},
      {"a!b a>b", "ab:t1", 1},
      {"a>b a!b", "ab:t2", 2},
      // a reachable record is kept while another row is unreachable
      {"a>b a<c", "ab:u1 ac:r2", 2},
    }));
  INFO(changes);
  auto r = table_of(changes);
  CHECK(rows(r) == expected_rows);
  auto i = r.versions().find(a);
  CHECK((i == r.versions().end() ? 0 : i->second) == version_of_a);
}

TEST_CASE("reachability: aggregated status and the unreachable sets") {
  auto r = table_of("a>c b>c b>d a!e c>e a>b a<b");
  CHECK(r.status(c) == reachability_status::unreachable);
  CHECK(r.status(e) == reachability_status::terminated);
  CHECK(r.status(b) == reachability_status::reachable);
  CHECK(r.status(a, b) == reachability_status::reachable);
  CHECK(r.status(b, d) == reachability_status::unreachable);
  CHECK(r.is_reachable(b));
  CHECK_FALSE(r.is_reachable(c));
  CHECK_FALSE(r.is_reachable(e));
  CHECK(r.is_reachable(a, d));
  CHECK_FALSE(r.is_reachable(b, d));
  CHECK(letters(r.all_unreachable()) == "cd");
  CHECK(letters(r.all_unreachable_or_terminated()) == "cde");
  CHECK(letters(r.all_unreachable_from(a)) == "c");
  CHECK(letters(r.all_unreachable_from(b)) == "cd");
  CHECK(letters(r.all_observers()) == "abc");
  auto grouped = r.observers_grouped_by_unreachable();
  REQUIRE(grouped.size() == 3);
  CHECK(letters(grouped.at(c)) == "ab");
  CHECK(letters(grouped.at(d)) == "b");
  CHECK(letters(grouped.at(e)) == "c");
  CHECK(r.records_from(b).size() == 2);
  CHECK(r.records_from(d).empty());
}

TEST_CASE("reachability: remove drops rows of and about nodes, "
          "remove_observers only their rows") {
  auto r = table_of("a>c b>c c>d");
  auto only_observers = r;
  r.remove(nodes("c"));
  CHECK(rows(r) == "");
  CHECK(r.versions().count(c) == 0);
  CHECK(r.versions().count(a) == 1);
  only_observers.remove_observers(nodes("b"));
  CHECK(rows(only_observers) == "ac:u1 cd:u1");
  CHECK(only_observers.versions().count(b) == 0);
}

TEST_CASE("reachability: merge keeps the rows of the higher observer "
          "version, restricted to allowed nodes") {
  auto x = table_of("a>b a>c b>c");     // a: v2, b: v1
  auto y = table_of("a>b a>c a<c b>c"); // a: v3 (ab:u1 ac:r3), b: v1
  y.unreachable(b, d);                  // b: v2
  y.unreachable(e, a);                  // e is not allowed
  auto merged = merge(nodes("abcd"), x, y);
  CHECK(rows(merged) == "ab:u1 ac:r3 bc:u1 bd:u2");
  CHECK(merged == merge(nodes("abcd"), y, x));
  CHECK(merged.versions().at(a) == 3);
  CHECK(merged.versions().count(e) == 0);
  // a subject outside allowed is dropped from the winning rows
  CHECK(rows(merge(nodes("abc"), x, y)) == "ab:u1 ac:r3 bc:u1");
  // an observer that dropped all its rows (newer version) wins over rows
  auto healed = table_of("a>b a<b");
  CHECK(rows(merge(nodes("ab"), table_of("a>b"), healed)) == "");
  CHECK(merge(nodes("ab"), table_of("a>b"), healed).versions().at(a) == 2);
}

TEST_CASE("reachability: merge is commutative, associative and idempotent "
          "on consistent tables (1000 seeded cases)") {
  // Consistent as between real nodes: every observer's rows at a version
  // are the same in every table that has them (here: one random history
  // per observer, each table holding a prefix of it).
  for (uint64_t seed = 1; seed <= 1000; ++seed) {
    std::mt19937_64 rng{seed};
    std::vector<std::vector<std::pair<char, char>>> history(4);
    for (auto& steps : history)
      for (int i = 0; i < 6; ++i)
        steps.emplace_back("><!"[rng() % 3], "abcd"[rng() % 4]);
    auto random_table = [&] {
      reachability r;
      for (size_t o = 0; o < history.size(); ++o)
        for (size_t i = 0, n = rng() % (history[o].size() + 1); i < n; ++i) {
          auto [kind, subject] = history[o][i];
          auto observer = node("abcd"[o]);
          if (kind == '>')
            r.unreachable(observer, node(subject));
          else if (kind == '<')
            r.reachable(observer, node(subject));
          else
            r.terminated(observer, node(subject));
        }
      return r;
    };
    auto x = random_table();
    auto y = random_table();
    auto z = random_table();
    auto all = nodes("abcd");
    INFO("seed " << seed << ": " << rows(x) << " | " << rows(y) << " | "
                 << rows(z));
    CHECK(merge(all, x, y) == merge(all, y, x));
    CHECK(merge(all, merge(all, x, y), z) == merge(all, x, merge(all, y, z)));
    CHECK(merge(all, x, x) == x);
  }
}
