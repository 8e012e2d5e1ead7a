#include "strategy_test_support.hpp"
#include "troupe/downing/stability_tracker.hpp"

using namespace troupe::downing;
using namespace std::chrono_literals;
using k = decision_kind;

namespace {

/// The nodes a lease_majority side downs once the lease outcome is known.
std::string lease_outcome(const strategy& s, const downing_view& view,
                          bool acquired) {
  auto d = after_lease(decide(s, view), acquired);
  return test::names(nodes_to_down(s, d, view));
}

} // namespace

TEST_CASE("scenario D1: lease_majority, d restarts after it saw c as "
          "unreachable => down d only, never all") {
  // 4 nodes; d goes away for a restart; before it went, it had recorded c
  // as unreachable and that record reached everyone. c is reachable from
  // a and b. Akka finds c and d indirectly connected and downs c too (or,
  // with records from nodes going away, all: akka/akka#30391).
  strategy s = lease_majority{};
  for (auto self : {"a", "b", "c"}) {
    auto view = test::view_of("{a,b,c} | {d}", self, "d->c");
    CHECK(view.indirectly_connected().empty());
    CHECK(lease_outcome(s, view, true) == "{d}");
  }
  // the old incarnation is already down and its record still in the
  // table, a new incarnation e is joining: nothing to decide
  auto rolling = test::view_of("{a,b,c,d/down,e/joining}", "a", "d->c");
  CHECK(rolling.unreachable().empty());
}

TEST_CASE("scenario D1: lease_majority, c unreachable to everyone while d "
          "restarts => down c and d, the majority survives") {
  // The log of akka/akka#30391: every node sees c and the old d as
  // unreachable, c saw d as unreachable. Akka: "SBR double
  // AcquireLeaseAndDownIndirectlyConnected decision, downing all instead".
  strategy s = lease_majority{};
  auto view = test::view_of("{a,b,e/joining} | {c,d}", "a", "c->d");
  CHECK(lease_outcome(s, view, true) == "{c,d}");
  // c and d on their side never get the lease and down themselves
  auto other = test::view_of("{a,b,e/joining} | {c} | {d}", "c");
  CHECK(lease_outcome(s, other, false) == "{c}");
}

TEST_CASE("scenario D1: an observer seen unreachable by a subset is "
          "indirectly connected, the fully connected majority survives") {
  // c is briefly unreachable to d only while d restarts; a and b see d
  // unreachable, c does not: d is indirectly connected (observer and
  // subject) and downed, c is only observed by d and survives.
  strategy s = lease_majority{};
  auto view = test::view_of("{a,b,c,d}", "a", "a->d, b->d, d->c");
  CHECK(test::names(view.indirectly_connected()) == "{d}");
  CHECK(lease_outcome(s, view, true) == "{d}");
  // when c itself still observes d (both directions), both are indirectly
  // connected and downed; a and b survive, never all
  auto both = test::view_of("{a,b,c,d}", "a", "a->d, c->d, d->c");
  CHECK(lease_outcome(s, both, true) == "{c,d}");
}

TEST_CASE("scenario D3: lease_majority 3|2, the lease answers a benign "
          "already-exists as acquired => the majority survives") {
  strategy s = lease_majority{};
  auto majority = test::view_of("{a,b,c} | {d,e}", "a");
  auto minority = test::view_of("{a,b,c} | {d,e}", "d");
  auto d = decide(s, majority);
  CHECK(d.acquire_delay == 0s);
  CHECK(decide(s, minority).acquire_delay == 2s);
  // The backend's ensure/create step answered "already exists": the lease
  // layer must report acquired = true; then the majority downs d and e.
  CHECK(lease_outcome(s, majority, true) == "{d,e}");
  // The minority tries 2 s later and is refused: it downs itself.
  CHECK(lease_outcome(s, minority, false) == "{d,e}");
  // Had "already exists" been taken as a refusal (the bug), the majority
  // would have downed itself: the reverse decision.
  CHECK(lease_outcome(s, majority, false) == "{a,b,c}");
}

TEST_CASE("scenario D4: 10 nodes, unreachability flapping every 2s => no "
          "decision before 35s, down all exactly then") {
  stability_tracker st{{20s, 15s}, timestamp{1h}};
  const timestamp t0{1h};
  const char* sides[]
    = {"{a,b,c,d,e,f,g,h,i} | {j}", "{a,b,c,d,e,f,g,h} | {i,j}",
       "{a,b,c,d,e,f,g,h,j} | {i}", "{a,b,c,d,e,f,g,i,j} | {h}"};
  for (int second = 0; second < 35; ++second) {
    auto now = t0 + std::chrono::seconds{second};
    if (second % 2 == 0)
      st.observe(test::view_of(sides[(second / 2) % 4], "a"), now);
    auto verdict = st.evaluate(now);
    CHECK(verdict == stability_verdict::unstable);
  }
  CHECK(st.evaluate(t0 + 35s) == stability_verdict::down_all_when_unstable);
  auto view = test::view_of(sides[1], "a");
  CHECK(test::names(
          nodes_to_down(keep_majority{}, decision{k::down_all, 0s, {}}, view))
        == "{a,b,c,d,e,f,g,h,i,j}");
}

TEST_CASE("scenario D4: flapping stops before the window => the normal "
          "decision after stable_after, never down all") {
  stability_tracker st{{20s, 15s}, timestamp{1h}};
  const timestamp t0{1h};
  const char* sides[]
    = {"{a,b,c,d,e,f,g,h,i} | {j}", "{a,b,c,d,e,f,g,h} | {i,j}"};
  for (int second = 0; second <= 10; second += 2)
    st.observe(test::view_of(sides[(second / 2) % 2], "a"),
               t0 + std::chrono::seconds{second});
  // last change at 10 s with {j} unreachable: stable at 30 s < 35 s
  CHECK(st.evaluate(t0 + 29s) == stability_verdict::unstable);
  REQUIRE(st.evaluate(t0 + 30s) == stability_verdict::decide);
  auto view = test::view_of(sides[1], "a");
  strategy s = keep_majority{};
  auto down = nodes_to_down(s, decide(s, view), view);
  CHECK(test::names(down) == "{i,j}");
  st.acted(down, t0 + 30s);
  CHECK(st.change_count() == 0);
  CHECK(st.evaluate(t0 + 36s) == stability_verdict::downing_in_progress);
}

TEST_CASE("scenario D4: flapping through a fully healed view restarts the "
          "measurement") {
  stability_tracker st{{20s, 15s}, timestamp{1h}};
  const timestamp t0{1h};
  for (int second = 0; second < 60; second += 2)
    st.observe(test::view_of(second % 4 ? "{a,b,c,d,e,f,g,h,i,j}"
                                        : "{a,b,c,d,e,f,g,h,i} | {j}",
                             "a"),
               t0 + std::chrono::seconds{second});
  CHECK(st.evaluate(t0 + 59s) == stability_verdict::idle);
}

TEST_CASE("scenario D6: keep_majority role=seed, {seed1,w1..w5} | "
          "{seed2,w6} => a 1-1 tie of seeds, the lowest address wins") {
  // seed1 = a, seed2 = b; workers c..h. Worker counts do not matter.
  strategy s = keep_majority{"seed"};
  auto partition = "{a:seed,c,d,e,f,g} | {b:seed,h}";
  auto big = test::view_of(partition, "a");
  auto small = test::view_of(partition, "b");
  CHECK(decide(s, big).kind == k::down_unreachable);
  CHECK(test::names(nodes_to_down(s, decide(s, big), big)) == "{b,h}");
  CHECK(decide(s, small).kind == k::down_reachable);
  CHECK(test::names(nodes_to_down(s, decide(s, small), small)) == "{b,h}");
  // with the seeds the other way round the small side survives
  auto flipped = "{b:seed,c,d,e,f,g} | {a:seed,h}";
  auto v = test::view_of(flipped, "b");
  CHECK(test::names(nodes_to_down(s, decide(s, v), v)) == "{b,c,d,e,f,g}");
  // every node of a side agrees, not only seeds (the role counts, it does
  // not decide)
  auto worker = test::view_of(flipped, "h");
  CHECK(test::names(nodes_to_down(s, decide(s, worker), worker))
        == "{b,c,d,e,f,g}");
}
