#include <catch2/catch.hpp>

#include "partition_notation.hpp"
#include "troupe/downing/downing_engine.hpp"

using namespace troupe::downing;
using namespace std::chrono_literals;
using phase = downing_engine::phase;

namespace {

const timestamp t0{std::chrono::hours{1}};

downing_engine engine(strategy s, std::string_view self,
                      timespan stable_after = 5s,
                      timespan down_all_when_unstable = 0s) {
  downing_engine_settings settings;
  settings.downing.active_strategy = std::move(s);
  settings.downing.stability = {stable_after, down_all_when_unstable};
  return downing_engine{test::node(self), settings, t0};
}

/// The downed nodes as names, in the order of the effect: "d,e".
std::string downs(const downing_effects& fx) {
  std::string result;
  for (const auto& node : fx.down) {
    if (!result.empty())
      result += ',';
    result += test::names({node}).substr(1, 1);
  }
  return result;
}

bool logged(const downing_effects& fx, log_level level,
            std::string_view needle) {
  for (const auto& line : fx.log)
    if (line.level == level && line.text.find(needle) != std::string::npos)
      return true;
  return false;
}

lease_majority lease(timespan delay = 2s, timespan release_after = 10s) {
  lease_majority result;
  result.acquire_lease_delay_for_minority = delay;
  result.release_after = release_after;
  return result;
}

} // namespace

TEST_CASE("downing_engine: off does nothing") {
  downing_engine_settings settings;
  settings.downing.active_strategy.reset();
  downing_engine e{test::node("a"), settings, t0};
  CHECK(e.on_view(test::view_of("{a,b,c} | {d,e}", "a"), t0).empty());
  CHECK(e.tick(t0 + 1h).empty());
  CHECK(e.on_quarantined_by_remote(t0 + 1h).empty());
  CHECK(e.next_tick() == std::nullopt);
}

TEST_CASE("downing_engine: keep_majority downs the minority after "
          "stable_after, once, with one INFO line") {
  auto e = engine(keep_majority{}, "a");
  CHECK(e.on_view(test::view_of("{a,b,c} | {d,e}", "a"), t0).empty());
  CHECK(e.next_tick() == t0 + 5s);
  CHECK(e.tick(t0 + 4s).empty());
  auto fx = e.tick(t0 + 5s);
  CHECK(downs(fx) == "d,e");
  REQUIRE(fx.log.size() == 1);
  CHECK(fx.log[0].level == log_level::info);
  CHECK(logged(fx, log_level::info,
               "decision down_unreachable (keep_majority)"
               " and is downing {d:2552#1, e:2552#1}"));
  CHECK(logged(fx, log_level::info, "2 unreachable of 5 members"));
  CHECK(logged(fx, log_level::info, "stable for 5s"));
  CHECK_FALSE(fx.acquire_lease);
  // waits until the downs are visible; then nothing is unreachable any more
  CHECK(e.tick(t0 + 20s).empty());
  CHECK(
    e.on_view(test::view_of("{a,b,c,d/down,e/down}", "a"), t0 + 21s).empty());
  CHECK(e.tick(t0 + 1h).empty());
  CHECK(e.next_tick() == std::nullopt);
}

TEST_CASE("downing_engine: the minority's leader downs its own side, self "
          "last") {
  auto e = engine(keep_majority{}, "a");
  e.on_view(test::view_of("{a,b} | {c,d,e}", "a"), t0);
  auto fx = e.tick(t0 + 5s);
  CHECK(downs(fx) == "b,a");
}

TEST_CASE("downing_engine: only the side leader acts, a change resets the "
          "stable deadline") {
  auto b = engine(keep_majority{}, "b");
  b.on_view(test::view_of("{a,b,c} | {d,e}", "b"), t0);
  CHECK(b.tick(t0 + 5s).empty());
  CHECK(b.next_tick() == std::nullopt); // only a new view changes anything
  auto a = engine(keep_majority{}, "a");
  a.on_view(test::view_of("{a,b,c} | {d,e}", "a"), t0);
  a.on_view(test::view_of("{a,b,c,d} | {e}", "a"), t0 + 3s);
  CHECK(a.next_tick() == t0 + 8s);
  CHECK(a.tick(t0 + 5s).empty());
  CHECK(downs(a.tick(t0 + 8s)) == "e");
}

TEST_CASE("downing_engine: a node that becomes responsible on a stable view "
          "decides with that view") {
  auto b = engine(keep_majority{}, "b");
  b.on_view(test::view_of("{a,b,c} | {d,e}", "b"), t0);
  CHECK(b.tick(t0 + 6s).empty());
  // a leaves the cluster and is exiting: b is now the side leader
  auto fx = b.on_view(test::view_of("{a/exiting,b,c} | {d,e}", "b"), t0 + 7s);
  // a left the up/leaving set: a new stable_after
  CHECK(fx.empty());
  CHECK(downs(b.tick(t0 + 12s)) == "d,e");
}

TEST_CASE("downing_engine: lease_majority, the majority acquires at once, "
          "downs the minority and releases the lease release_after after "
          "they were removed") {
  auto e = engine(lease(2s, 10s), "a");
  e.on_view(test::view_of("{a,b,c} | {d,e}", "a"), t0);
  auto fx = e.tick(t0 + 5s);
  CHECK(fx.acquire_lease);
  CHECK(fx.down.empty());
  CHECK(e.current_phase() == phase::acquiring);
  CHECK(e.next_tick() == t0 + 10s); // lease_answer_timeout 5s
  fx = e.on_lease_acquired(true, t0 + 6s);
  CHECK(downs(fx) == "d,e");
  CHECK(logged(fx, log_level::info, "SBR acquired the lease"));
  CHECK(e.holds_lease());
  CHECK(e.current_phase() == phase::watching);
  // down but not yet removed: keep the lease
  CHECK_FALSE(e.on_view(test::view_of("{a,b,c,d/down,e/down}", "a"), t0 + 7s)
                .release_lease);
  CHECK_FALSE(e.tick(t0 + 30s).release_lease);
  // removed at 31s: release at 41s
  CHECK_FALSE(e.on_view(test::view_of("{a,b,c}", "a"), t0 + 31s).release_lease);
  CHECK(e.next_tick() == t0 + 41s);
  CHECK_FALSE(e.tick(t0 + 40s).release_lease);
  fx = e.tick(t0 + 41s);
  CHECK(fx.release_lease);
  CHECK_FALSE(e.holds_lease());
  CHECK(e.next_tick() == std::nullopt);
}

TEST_CASE("downing_engine: lease_majority, the minority waits its delay, "
          "is refused and downs itself, self last") {
  auto e = engine(lease(2s), "d");
  e.on_view(test::view_of("{d,e} | {a,b,c}", "d"), t0);
  auto fx = e.tick(t0 + 5s);
  CHECK(fx.empty() == false); // the decision's INFO line
  CHECK_FALSE(fx.acquire_lease);
  CHECK(e.current_phase() == phase::waiting_to_acquire);
  CHECK(e.next_tick() == t0 + 7s);
  CHECK(e.tick(t0 + 6s).empty());
  CHECK(e.tick(t0 + 7s).acquire_lease);
  fx = e.on_lease_acquired(false, t0 + 8s);
  CHECK(downs(fx) == "e,d");
  CHECK(logged(fx, log_level::info, "decision down_reachable"));
  CHECK_FALSE(e.holds_lease());
}

TEST_CASE("downing_engine: lease_majority, an answer that never comes counts "
          "as refused, a late acquisition is released at once") {
  auto e = engine(lease(0s), "a");
  e.on_view(test::view_of("{a,b,c} | {d,e}", "a"), t0);
  REQUIRE(e.tick(t0 + 5s).acquire_lease);
  CHECK(e.tick(t0 + 9s).empty());
  auto fx = e.tick(t0 + 10s);
  CHECK(logged(fx, log_level::warning, "no answer from the lease within 5s"));
  CHECK(downs(fx) == "b,c,a");
  CHECK_FALSE(e.holds_lease());
  fx = e.on_lease_acquired(true, t0 + 11s);
  CHECK(fx.release_lease);
  CHECK(fx.down.empty());
  // a late refusal needs nothing
  CHECK(e.on_lease_acquired(false, t0 + 12s).empty());
}

TEST_CASE("downing_engine: views are stashed while waiting for the lease, "
          "the decision acts on its own view, then the latest view counts") {
  auto e = engine(lease(0s), "a");
  e.on_view(test::view_of("{a,b,c} | {d,e}", "a"), t0);
  REQUIRE(e.tick(t0 + 5s).acquire_lease);
  // c becomes unreachable too while the lease is being acquired: stashed
  CHECK(e.on_view(test::view_of("{a,b} | {c,d,e}", "a"), t0 + 6s).empty());
  CHECK(e.on_quarantined_by_remote(t0 + 6s).empty());
  auto fx = e.on_lease_acquired(true, t0 + 7s);
  // acted on the decision's view (d, e), then on the stashed quarantine
  CHECK(downs(fx) == "d,e,a");
  CHECK(logged(fx, log_level::info, "down_self_quarantined_by_remote"));
}

TEST_CASE("downing_engine: a stashed view is observed after the lease answer "
          "and decided on after a new stable_after") {
  auto e = engine(lease(0s), "a");
  e.on_view(test::view_of("{a,b,c,d} | {e}", "a"), t0);
  REQUIRE(e.tick(t0 + 5s).acquire_lease);
  e.on_view(test::view_of("{a,b,c,e/down} | {d}", "a"), t0 + 6s);
  CHECK(downs(e.on_lease_acquired(true, t0 + 7s)) == "e");
  CHECK(e.next_tick() == t0 + 12s);
  CHECK(e.tick(t0 + 12s).acquire_lease);
  CHECK(downs(e.on_lease_acquired(true, t0 + 12s)) == "d");
}

namespace {

/// A lease layer's answers to an acquire (scenario D3): the backend
/// created the record, found it already existing and held by this owner
/// (the benign 409 of an idempotent create), or found it held by another.
enum class backend_answer {
  created,
  already_exists_held_by_self,
  held_by_other
};

/// The mapping the lease layer must make: held by this owner = acquired.
bool acquired(backend_answer x) {
  return x != backend_answer::held_by_other;
}

} // namespace

TEST_CASE("scenario D3 (engine): a lease layer that reports a benign "
          "already-exists as acquired keeps the majority") {
  auto a = engine(lease(2s), "a");
  auto d = engine(lease(2s), "d");
  a.on_view(test::view_of("{a,b,c} | {d,e}", "a"), t0);
  d.on_view(test::view_of("{d,e} | {a,b,c}", "d"), t0);
  REQUIRE(a.tick(t0 + 5s).acquire_lease);
  // the majority's create hits a record its own earlier try left: 409
  auto fx = a.on_lease_acquired(
    acquired(backend_answer::already_exists_held_by_self), t0 + 5s);
  CHECK(downs(fx) == "d,e");
  CHECK_FALSE(d.tick(t0 + 5s).acquire_lease); // the minority waits 2s
  REQUIRE(d.tick(t0 + 7s).acquire_lease);
  CHECK(
    downs(d.on_lease_acquired(acquired(backend_answer::held_by_other), t0 + 7s))
    == "e,d");
  // treating the 409 as refused would have downed the majority
  auto wrong = engine(lease(2s), "a");
  wrong.on_view(test::view_of("{a,b,c} | {d,e}", "a"), t0);
  REQUIRE(wrong.tick(t0 + 5s).acquire_lease);
  CHECK(downs(wrong.on_lease_acquired(false, t0 + 5s)) == "b,c,a");
}

TEST_CASE("downing_engine: down_all_when_unstable downs all with a WARNING "
          "on any node") {
  auto b = engine(keep_majority{}, "b", 5s, 4s);
  const char* views[] = {"{a,b,c,d} | {e}", "{a,b,c} | {d,e}"};
  auto t = t0;
  for (int i = 0; t < t0 + 9s; ++i, t += 2s)
    CHECK(b.on_view(test::view_of(views[i % 2], "b"), t).empty());
  CHECK(b.next_tick() == t0 + 9s);
  auto fx = b.tick(t0 + 9s);
  CHECK(logged(fx, log_level::warning, "instability"));
  CHECK(logged(fx, log_level::info, "decision down_all"));
  CHECK(downs(fx) == "a,c,d,e,b");
}

TEST_CASE("downing_engine: a decision with an error text logs an ERROR") {
  static_quorum s;
  s.quorum_size = 3;
  auto e = engine(s, "a");
  e.on_view(test::view_of("{a,b,c} | {d,e,f}", "a"), t0);
  auto fx = e.tick(t0 + 5s);
  CHECK(downs(fx) == "b,c,d,e,f,a");
  CHECK(logged(fx, log_level::error, "quorum"));
}

TEST_CASE("downing_engine: quarantined by a remote node downs self only") {
  auto e = engine(keep_majority{}, "b");
  e.on_view(test::view_of("{a,b,c,d,e}", "b"), t0);
  auto fx = e.on_quarantined_by_remote(t0 + 1s);
  CHECK(downs(fx) == "b");
  CHECK(logged(fx, log_level::info, "down_self_quarantined_by_remote"));
}
