#include <catch2/catch.hpp>

#include "troupe/cluster/watch_table.hpp"

using namespace troupe::cluster;
using namespace std::chrono_literals;
using troupe::runtime::timestamp;

namespace {

const unique_address a{"10.0.0.1", 2552, 1};
const unique_address b{"10.0.0.2", 2552, 2};
const unique_address c{"10.0.0.3", 2552, 3};
const timestamp t0{std::chrono::hours{1}};

remote_ref ref(const unique_address& node, std::string name) {
  return remote_ref{node, std::move(name)};
}

template <class T>
std::vector<T> only(const watch_effects& effects) {
  std::vector<T> result;
  for (auto& e : effects)
    if (auto* x = std::get_if<T>(&e))
      result.push_back(*x);
  return result;
}

// The watchers notified, in order.
std::vector<watcher_id> notified(const watch_effects& effects) {
  std::vector<watcher_id> result;
  for (auto& n : only<notify_watcher>(effects))
    result.push_back(n.watcher);
  return result;
}

} // namespace

TEST_CASE("watch_table: the first watcher of a reference sends the watch "
          "request, the last one to leave sends the unwatch") {
  watch_table t{a, 3s};
  CHECK(only<send_watch>(t.watch(1, ref(b, "jobs")))
        == std::vector{send_watch{ref(b, "jobs")}});
  CHECK(t.watch(2, ref(b, "jobs")).empty());
  CHECK(t.watch(2, ref(b, "jobs")).empty()); // idempotent
  CHECK(t.size() == 2);
  CHECK(t.watchers_of(ref(b, "jobs")) == std::vector<watcher_id>{1, 2});
  CHECK(t.unwatch(1, ref(b, "jobs")).empty());
  CHECK(t.unwatch(1, ref(b, "jobs")).empty()); // not watching any more
  CHECK(only<send_unwatch>(t.unwatch(2, ref(b, "jobs")))
        == std::vector{send_unwatch{ref(b, "jobs")}});
  CHECK(t.size() == 0);
}

TEST_CASE("watch_table: a stopped watcher's watches go, unwatching the "
          "references it was the last watcher of") {
  watch_table t{a, 3s};
  t.watch(1, ref(b, "x"));
  t.watch(1, ref(b, "y"));
  t.watch(2, ref(b, "y"));
  auto out = t.watcher_stopped(1);
  CHECK(out == watch_effects{send_unwatch{ref(b, "x")}});
  CHECK(t.watched_by(1).empty());
  CHECK(t.watchers_of(ref(b, "y")) == std::vector<watcher_id>{2});
  CHECK(t.watcher_stopped(1).empty());
}

TEST_CASE("watch_table: a down fires once, after the ordinary copy or the "
          "flush timeout, whatever order the two copies come in") {
  using troupe::cluster::lane;
  // Arrivals of the two copies of down #7 ('o' ordinary, 'c' control) and
  // timer ticks ('t', at +3s), the step after which the watch fires, and
  // whether a flush timer was armed.
  auto [arrivals, fires_after, expect_timer]
    = GENERATE(table<std::string, int, bool>({
      {"oc", 0, false},  // ordinary first: fires at once, control ignored
      {"co", 1, true},   // control first: waits for the ordinary copy
      {"ct", 1, true},   // ordinary copy lost: the flush timeout fires it
      {"cto", 1, true},  // ... and the late ordinary copy is ignored
      {"otc", 0, false}, // a timer tick changes nothing after firing
    }));
  INFO("arrivals " << arrivals);
  watch_table t{a, 3s};
  t.watch(1, ref(b, "jobs"));
  t.watch(2, ref(b, "jobs"));
  std::vector<int> fired_at;
  bool timer = false;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    watch_effects out;
    switch (arrivals[i]) {
      case 'o':
        out = t.down_received(b, lane::ordinary, "jobs",
                              down_cause::actor_stopped, 7, "stopped", t0);
        break;
      case 'c':
        out = t.down_received(b, lane::control, "jobs",
                              down_cause::actor_stopped, 7, "stopped", t0);
        break;
      default:
        CHECK(t.flush_timer_fired(t0 + 2999ms).empty());
        out = t.flush_timer_fired(t0 + 3s);
        break;
    }
    for (auto& s : only<start_flush_timer>(out)) {
      CHECK(s.at == t0 + 3s);
      timer = true;
    }
    auto n = only<notify_watcher>(out);
    if (!n.empty()) {
      CHECK(notified(out) == std::vector<watcher_id>{1, 2});
      CHECK(
        n[0].down
        == remote_down{ref(b, "jobs"), down_cause::actor_stopped, "stopped"});
      fired_at.push_back(static_cast<int>(i));
    }
  }
  CHECK(fired_at == std::vector<int>{fires_after});
  CHECK(timer == expect_timer);
  CHECK(t.size() == 0);
}

TEST_CASE("watch_table: after a down fired, a re-watch of the same name is "
          "fired by the next down, not by a late copy of the old one") {
  watch_table t{a, 3s};
  t.watch(1, ref(b, "jobs"));
  auto out = t.down_received(b, lane::ordinary, "jobs",
                             down_cause::actor_stopped, 7, "", t0);
  CHECK(notified(out) == std::vector<watcher_id>{1});
  // Re-watch before the control copy of #7 came.
  CHECK(only<send_watch>(t.watch(1, ref(b, "jobs"))).size() == 1);
  // B answers the new request with down #8 (nothing published now); its
  // ordinary copy overtakes the control copy of #7.
  out = t.down_received(b, lane::ordinary, "jobs", down_cause::not_published, 8,
                        "", t0);
  CHECK(notified(out) == std::vector<watcher_id>{1});
  CHECK(only<notify_watcher>(out)[0].down.cause == down_cause::not_published);
  t.watch(1, ref(b, "jobs"));
  // Late copies of #7 and #8 fire nothing and arm no timer.
  CHECK(t.down_received(b, lane::control, "jobs", down_cause::actor_stopped, 7,
                        "", t0)
          .empty());
  CHECK(t.down_received(b, lane::control, "jobs", down_cause::not_published, 8,
                        "", t0)
          .empty());
  CHECK(t.watchers_of(ref(b, "jobs")) == std::vector<watcher_id>{1});
}

TEST_CASE("watch_table: a down for an unwatched reference, or whose watcher "
          "left while it waited for its ordinary copy, fires nothing") {
  watch_table t{a, 3s};
  CHECK(t.down_received(b, lane::ordinary, "x", down_cause::actor_stopped, 1,
                        "", t0)
          .empty());
  t.watch(1, ref(b, "y"));
  CHECK(only<start_flush_timer>(t.down_received(b, lane::control, "y",
                                                down_cause::actor_stopped, 2,
                                                "", t0))
          .size()
        == 1);
  t.unwatch(1, ref(b, "y"));
  CHECK(t.flush_timer_fired(t0 + 1h).empty());
  CHECK(t.down_received(b, lane::ordinary, "y", down_cause::actor_stopped, 2,
                        "", t0)
          .empty());
}

TEST_CASE("watch_table: a connection blip fires nothing, when the peer is "
          "back every watch request for it is sent again") {
  watch_table t{a, 3s};
  t.watch(1, ref(b, "x"));
  t.watch(2, ref(b, "y"));
  t.watch(1, ref(c, "z"));
  CHECK(t.peer_up(b).empty()); // first connection: nothing to repeat
  t.peer_down(b);
  t.peer_down(b);
  CHECK(t.size() == 3);
  auto out = t.peer_up(b);
  CHECK(out == watch_effects{send_watch{ref(b, "x")}, send_watch{ref(b, "y")}});
  CHECK(t.peer_up(b).empty());
}

TEST_CASE("watch_table: node removal fires every watch on that node once, "
          "and later watches of it at once") {
  auto cause = GENERATE(down_cause::node_removed, down_cause::node_quarantined);
  watch_table t{a, 3s};
  t.watch(1, ref(b, "x"));
  t.watch(2, ref(b, "x"));
  t.watch(2, ref(b, "y"));
  t.watch(3, ref(c, "x"));
  auto out = t.node_removed(b, cause, "removed by membership");
  auto n = only<notify_watcher>(out);
  REQUIRE(n.size() == 3);
  CHECK(n[0]
        == notify_watcher{
          1, remote_down{ref(b, "x"), cause, "removed by membership"}});
  CHECK(n[1].watcher == 2);
  CHECK(n[1].down.ref == ref(b, "x"));
  CHECK(n[2].watcher == 2);
  CHECK(n[2].down.ref == ref(b, "y"));
  CHECK(only<send_unwatch>(out).empty());
  CHECK(t.size() == 1); // c's watch is untouched
  CHECK(t.is_removed(b));
  // Idempotent, whatever the cause of the later call.
  CHECK(t.node_removed(b, down_cause::node_removed, "again").empty());
  CHECK(t.node_removed(b, down_cause::node_quarantined, "again").empty());
  // A later watch of the removed node fires at once, with the first cause.
  out = t.watch(4, ref(b, "x"));
  REQUIRE(only<notify_watcher>(out).size() == 1);
  CHECK(only<notify_watcher>(out)[0].down.cause == cause);
  CHECK(only<send_watch>(out).empty());
  // A blip report of a removed node is not remembered.
  t.peer_down(b);
  CHECK(t.peer_up(b).empty());
  // Another incarnation at the same host:port is another node.
  unique_address b2{b.host, b.port, 22};
  CHECK(only<send_watch>(t.watch(4, ref(b2, "x"))).size() == 1);
}

TEST_CASE("watch_table: watched end answers, reports and forgets") {
  watch_table t{b, 3s};
  // Nothing published: an immediate not_published down.
  auto out = t.watch_received(a, "ghost", false);
  REQUIRE(only<send_down>(out).size() == 1);
  auto d = only<send_down>(out)[0];
  CHECK(d.to == a);
  CHECK(d.name == "ghost");
  CHECK(d.cause == down_cause::not_published);
  CHECK(d.seq == 1);
  CHECK(d.reason == "nothing is published under \"ghost\"");
  // Published: remembered per node, idempotent.
  CHECK(t.watch_received(a, "jobs", true).empty());
  CHECK(t.watch_received(a, "jobs", true).empty());
  CHECK(t.watch_received(c, "jobs", true).empty());
  CHECK(t.watch_received(c, "mail", true).empty());
  CHECK(t.nodes_watching("jobs") == std::vector<unique_address>{a, c});
  t.unwatch_received(c, "mail");
  CHECK(t.nodes_watching("mail").empty());
  CHECK(t.published_gone("mail", down_cause::actor_stopped, "").empty());
  // Each watching node gets the down, with one new seq.
  out = t.published_gone("jobs", down_cause::actor_stopped, "user_shutdown");
  CHECK(out
        == watch_effects{
          send_down{a, "jobs", down_cause::actor_stopped, 2, "user_shutdown"},
          send_down{c, "jobs", down_cause::actor_stopped, 2, "user_shutdown"}});
  CHECK(t.published_gone("jobs", down_cause::actor_stopped, "").empty());
  // A removed node's watches are forgotten, and its requests ignored.
  t.watch_received(a, "jobs", true);
  t.node_removed(a, down_cause::node_removed, "");
  CHECK(t.nodes_watching("jobs").empty());
  CHECK(t.watch_received(a, "jobs", false).empty());
  // Seqs keep increasing.
  out = t.watch_received(c, "ghost", false);
  CHECK(only<send_down>(out)[0].seq == 3);
}

TEST_CASE("watch_table: a down from this node itself is its only copy") {
  watch_table t{a, 3s};
  t.watch(1, ref(a, "local"));
  auto out = t.down_received(a, lane::control, "local", down_cause::unpublished,
                             4, "unpublished", t0);
  CHECK(notified(out) == std::vector<watcher_id>{1});
  CHECK(only<start_flush_timer>(out).empty());
  // Nothing remembered: a new watch fires on the next down with seq 5.
  t.watch(1, ref(a, "local"));
  CHECK(notified(t.down_received(a, lane::ordinary, "local",
                                 down_cause::actor_stopped, 5, "", t0))
        == std::vector<watcher_id>{1});
}
