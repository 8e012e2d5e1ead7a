#include <catch2/catch.hpp>

#include "cluster_daemon_support.hpp"
#include "sim_remoting.hpp"
#include "troupe/cluster/message_codec.hpp"

// The cluster daemon's wiring on CAF's deterministic coordinator and the
// simulated transport: messages travel through remoting, timers run on
// simulated time, effects (events, removal, shutdown) are carried out.

using namespace troupe;
using namespace troupe::test;
using cluster::cluster_handle;
using cluster::current_cluster_state;
using cluster::down_cause;

namespace {

const unique_address a{"10.0.0.1", 2552, 11};
const unique_address b{"10.0.0.2", 2552, 22};
const unique_address c{"10.0.0.3", 2552, 33};
const unique_address d{"10.0.0.4", 2552, 44};

cluster::endpoint ep(const unique_address& x) {
  return cluster::endpoint_of(x);
}

/// Daemons on a sim_remoting world; stops them before the world ends.
class daemon_world {
public:
  ~daemon_world() {
    for (auto& h : handles_)
      h.stop();
    w.det().run();
  }

  /// Starts node `addr` joining through `seeds`.
  cluster_handle start(const unique_address& addr,
                       std::vector<cluster::endpoint> seeds,
                       std::shared_ptr<shutdown_log> stops,
                       cluster::join_config config = test_join_config()) {
    auto remoting = w.start(addr);
    cluster::cluster_daemon_settings s;
    s.membership = short_settings();
    s.membership.seed_nodes = std::move(seeds);
    s.config = std::move(config);
    s.on_shutdown = stops->hook();
    auto h = cluster_handle::start(w.sys(), remoting, std::move(s));
    REQUIRE(h);
    handles_.push_back(*h);
    remotings_.push_back(remoting);
    return *h;
  }

  /// Starts a, b and c (c with its own shutdown log) joining through a,
  /// and waits until all three are up.
  std::vector<cluster_handle>
  start_three(std::shared_ptr<shutdown_log> stops,
              std::shared_ptr<shutdown_log> c_stops) {
    std::vector<cluster_handle> hs{start(a, {ep(a)}, stops),
                                   start(b, {ep(a)}, stops),
                                   start(c, {ep(a)}, std::move(c_stops))};
    w.advance(10s);
    REQUIRE(all_up(state(hs[0]), 3));
    return hs;
  }

  remoting_handle remoting(size_t i) {
    return remotings_.at(i);
  }

  /// The daemon's snapshot, asked as an actor would.
  current_cluster_state state(const cluster_handle& h) {
    probe p{w.sys()};
    p.send(h.actor(), cluster::state_atom::value);
    w.det().run();
    auto got = p.poll<current_cluster_state>();
    REQUIRE(got);
    REQUIRE(*got);
    return **got;
  }

  /// A subscriber of `h` and its log.
  std::shared_ptr<event_log> subscribe(const cluster_handle& h) {
    auto log = std::make_shared<event_log>();
    h.subscribe(w.spawn(event_recorder, log));
    w.det().run();
    return log;
  }

  sim_remoting w;

private:
  std::vector<cluster_handle> handles_;
  std::vector<remoting_handle> remotings_;
};

} // namespace

TEST_CASE("cluster daemon (sim): three nodes join through the first seed, "
          "a subscriber gets the snapshot first, then every member_up") {
  daemon_world x;
  auto stops = std::make_shared<shutdown_log>();
  auto A = x.start(a, {ep(a)}, stops);
  auto log = x.subscribe(A);
  auto B = x.start(b, {ep(a)}, stops);
  auto C = x.start(c, {ep(a), ep(b)}, stops);
  x.w.advance(10s);
  for (auto* h : {&A, &B, &C}) {
    auto s = x.state(*h);
    INFO(to_string(h->self_address()));
    CHECK(all_up(s, 3));
    CHECK(s.leader == a);
  }
  auto lines = log->copy();
  REQUIRE(!lines.empty());
  // The first seed founded the cluster at once (it is the only seed).
  CHECK(lines.front() == "snapshot 1");
  CHECK(log->snapshots.front().leader == a);
  CHECK(log->has("member_up", to_string(a)));
  CHECK(log->has("member_up", to_string(b)));
  CHECK(log->has("member_up", to_string(c)));
  CHECK(log->index_of("member_joined", to_string(b))
        < log->index_of("member_up", to_string(b)));
  // A late subscriber's snapshot already holds the three members.
  auto late = x.subscribe(B);
  REQUIRE(late->snapshots.size() == 1);
  CHECK(all_up(late->snapshots.front(), 3));
  CHECK(stops->count() == 0);
}

TEST_CASE("cluster daemon (sim): leave moves a member through exiting to "
          "removed on the others, and the leaving node stops") {
  daemon_world x;
  auto stops = std::make_shared<shutdown_log>();
  auto c_stops = std::make_shared<shutdown_log>();
  auto hs = x.start_three(stops, c_stops);
  auto &A = hs[0], &B = hs[1];
  auto log = x.subscribe(B);
  A.leave(c);
  x.w.advance(10s);
  auto left = log->index_of("member_left", to_string(c));
  auto exited = log->index_of("member_exited", to_string(c));
  auto removed = log->index_of("member_removed", to_string(c));
  CHECK(left < exited);
  CHECK(exited < removed);
  CHECK(removed < log->copy().size());
  for (auto* h : {&A, &B}) {
    auto s = x.state(*h);
    CHECK(all_up(s, 2));
    CHECK(status_in(s, c).empty());
  }
  CHECK(stops->count() == 0);
  CHECK(c_stops->count() == 1);
}

TEST_CASE("cluster daemon (sim): a held exit keeps a leaving member exiting "
          "until its holder lets go, then it is removed") {
  daemon_world x;
  auto stops = std::make_shared<shutdown_log>();
  auto c_stops = std::make_shared<shutdown_log>();
  auto hs = x.start_three(stops, c_stops);
  auto &A = hs[0], &C = hs[2];
  C.hold_exit("singleton:jobs", true);
  A.leave(c);
  x.w.advance(10s);
  CHECK(status_in(x.state(A), c) == "exiting");
  CHECK(c_stops->count() == 0);
  C.hold_exit("singleton:jobs", false);
  x.w.advance(10s);
  auto s = x.state(A);
  CHECK(all_up(s, 2));
  CHECK(status_in(s, c).empty());
  CHECK(c_stops->count() == 1);
}

TEST_CASE("cluster daemon (sim): down removes a member, fires the remote "
          "watch on it, and the downed node's shutdown hook runs") {
  daemon_world x;
  auto stops = std::make_shared<shutdown_log>();
  auto c_stops = std::make_shared<shutdown_log>();
  auto hs = x.start_three(stops, c_stops);
  auto &A = hs[0], &B = hs[1];
  // A watches an actor published on C.
  auto [target, target_log] = x.w.spawn_recorder();
  REQUIRE(x.remoting(2).publish("svc", target));
  auto [watcher, watcher_log] = x.w.spawn_recorder();
  REQUIRE(!x.remoting(0).watch(remote_ref{c, "svc"}, watcher));
  auto log = x.subscribe(A);
  x.w.advance(1s);
  CHECK(watcher_log->downs.empty());
  B.down(c);
  x.w.advance(10s);
  CHECK(log->index_of("member_downed", to_string(c))
        < log->index_of("member_removed", to_string(c)));
  CHECK(log->has("member_removed", to_string(c)));
  REQUIRE(watcher_log->downs.size() == 1);
  CHECK(watcher_log->downs[0].ref == remote_ref{c, "svc"});
  CHECK(all_up(x.state(A), 2));
  CHECK(c_stops->count() == 1);
  CHECK(stops->count() == 0);
}

TEST_CASE("cluster daemon (sim): a watch on a leaving node fires at its "
          "removal, the removed node still gets the gossip and stops, and "
          "the quarantine comes quarantine_removed_after later") {
  daemon_world x;
  auto stops = std::make_shared<shutdown_log>();
  auto c_stops = std::make_shared<shutdown_log>();
  auto hs = x.start_three(stops, c_stops);
  auto& A = hs[0];
  auto& transport = x.remoting(0).transport();
  auto [target, target_log] = x.w.spawn_recorder();
  REQUIRE(x.remoting(2).publish("svc", target));
  auto [watcher, watcher_log] = x.w.spawn_recorder();
  REQUIRE(!x.remoting(0).watch(remote_ref{c, "svc"}, watcher));
  auto log = x.subscribe(A);
  x.w.advance(1s);
  REQUIRE(watcher_log->downs.empty());
  A.leave(c);
  // Step 10 ms at a time until A (the leader) has removed C.
  auto deadline = x.w.det().now() + 30s;
  while (!log->has("member_removed", to_string(c))
         && x.w.det().now() < deadline)
    x.w.advance(10ms);
  REQUIRE(log->has("member_removed", to_string(c)));
  auto removed_at = x.w.det().now();
  // The watch fired in the step of the removal, not 5 s later.
  REQUIRE(watcher_log->downs.size() == 1);
  CHECK(watcher_log->downs[0].ref == remote_ref{c, "svc"});
  CHECK(watcher_log->downs[0].cause == down_cause::node_removed);
  CHECK(!transport.is_quarantined(c));
  // A watch after the removal fires at once (no time passes).
  auto [late, late_log] = x.w.spawn_recorder();
  REQUIRE(!x.remoting(0).watch(remote_ref{c, "svc"}, late));
  x.w.det().run();
  REQUIRE(late_log->downs.size() == 1);
  CHECK(late_log->downs[0].cause == down_cause::node_removed);
  CHECK(x.w.det().now() == removed_at);
  // C still hears of its removal (traffic flows) and stops, before the
  // quarantine.
  while (c_stops->count() == 0 && x.w.det().now() < removed_at + 5s)
    x.w.advance(10ms);
  CHECK(c_stops->count() == 1);
  CHECK_THAT(c_stops->first(), Catch::Contains("removed"));
  CHECK(!transport.is_quarantined(c));
  // The quarantine: quarantine_removed_after (5 s) after the removal, which
  // happened within the last 10 ms step before removed_at.
  x.w.run_until(removed_at + 5s - 20ms);
  CHECK(!transport.is_quarantined(c));
  x.w.run_until(removed_at + 5s);
  CHECK(transport.is_quarantined(c));
  CHECK(watcher_log->downs.size() == 1);
  CHECK(stops->count() == 0);
}

TEST_CASE("cluster daemon (sim): a crashed node becomes unreachable for the "
          "others' subscribers") {
  daemon_world x;
  auto stops = std::make_shared<shutdown_log>();
  auto hs = x.start_three(stops, stops);
  auto &A = hs[0], &B = hs[1];
  auto log = x.subscribe(A);
  x.w.net().crash(ep(c));
  x.w.advance(5s);
  CHECK(log->has("unreachable_member", to_string(c)));
  auto s = x.state(B);
  REQUIRE(s.unreachable.size() == 1);
  CHECK(s.unreachable.front().address == c);
}

TEST_CASE("cluster daemon (sim): a node with another protocol version is "
          "refused and gives up, naming the key") {
  daemon_world x;
  auto stops = std::make_shared<shutdown_log>();
  auto d_stops = std::make_shared<shutdown_log>();
  auto A = x.start(a, {ep(a)}, stops);
  x.w.advance(5s);
  REQUIRE(all_up(x.state(A), 1));
  auto D = x.start(d, {ep(a)}, d_stops, test_join_config("2"));
  x.w.advance(30s);
  REQUIRE(d_stops->count() == 1);
  CHECK_THAT(d_stops->first(), Catch::Contains("troupe.protocol_major"));
  CHECK(all_up(x.state(A), 1));
}

TEST_CASE("cluster daemon (sim): a snapshot with leaders and role leaders "
          "and an event with an empty leader survive CAF's serializer") {
  deterministic_system sys{{cluster::add_cluster_types}};
  current_cluster_state s;
  s.members.push_back(
    cluster::member{a, cluster::member_status::up, {"web"}, 1});
  s.unreachable.push_back(s.members.front());
  s.seen_by = {a, b};
  s.leader = a;
  s.role_leaders = {{"web", a}, {"db", std::nullopt}};
  cluster::leader_changed none{std::nullopt};
  std::vector<char> buf;
  REQUIRE(!cluster::encode_message(sys.sys(), caf::make_message(s, none), buf));
  auto got = cluster::decode_message(sys.sys(), std::as_bytes(std::span{buf}),
                                     remote_ref{b, ""});
  REQUIRE(got);
  REQUIRE(got->match_elements<remote_ref, current_cluster_state,
                              cluster::leader_changed>());
  CHECK(got->get_as<current_cluster_state>(1) == s);
  CHECK(got->get_as<cluster::leader_changed>(2) == none);
}

TEST_CASE("cluster daemon (sim): a node that learns its removal from another "
          "node's gossip gives its view subscribers a last view without "
          "itself") {
  // A node cut off (or paused) for longer than failure detection plus
  // downing comes back to a cluster that removed it. Its own view still
  // lists it as up; its shard regions and singleton managers must learn
  // that it is out and stop at once, not hand off as if it were leaving.
  daemon_world x;
  auto stops = std::make_shared<shutdown_log>();
  auto c_stops = std::make_shared<shutdown_log>();
  auto hs = x.start_three(stops, c_stops);
  auto &A = hs[0], &B = hs[1], &C = hs[2];
  auto views = std::make_shared<std::vector<cluster::gossip>>();
  C.subscribe_view(x.w.spawn([views](caf::event_based_actor*) -> caf::behavior {
    return {[views](cluster::view_atom, const cluster::gossip& g) {
      views->push_back(g);
    }};
  }));
  x.w.det().run();
  cluster::link_fault hole;
  hole.blackhole = true;
  auto& t = x.remoting(2).transport();
  for (const auto& peer : {a, b})
    for (auto dir : {cluster::direction::inbound, cluster::direction::outbound})
      t.set_fault(ep(peer), dir, hole);
  x.w.advance(5s);
  B.down(c);
  // Back before the others quarantine it (quarantine_removed_after, 5s):
  // its gossip reaches them and theirs, without it, reaches it.
  for (int i = 0; i < 50 && !all_up(x.state(A), 2); ++i)
    x.w.advance(100ms);
  REQUIRE(all_up(x.state(A), 2));
  REQUIRE(c_stops->count() == 0);
  REQUIRE(!views->empty());
  REQUIRE(views->back().find(c) != nullptr);
  CHECK(views->back().find(c)->status == cluster::member_status::up);
  t.heal(ep(a));
  t.heal(ep(b));
  x.w.advance(3s);
  REQUIRE(c_stops->count() == 1);
  CHECK(c_stops->first().find("removed") != std::string::npos);
  CHECK(views->back().find(c) == nullptr);
  CHECK(views->back().tombstones().count(c) == 1);
}

TEST_CASE("cluster daemon (sim): two clusters of one name connect: the "
          "handshake's report reaches both engines, is counted and shown, "
          "and the younger single-node cluster stops for the merge") {
  daemon_world x;
  auto a_stops = std::make_shared<shutdown_log>();
  auto b_stops = std::make_shared<shutdown_log>();
  auto A = x.start(a, {ep(a)}, a_stops);
  x.w.advance(2s);
  auto B = x.start(b, {ep(b)}, b_stops);
  x.w.advance(2s);
  auto a_inc = A.incarnation().incarnation;
  auto b_inc = B.incarnation().incarnation;
  REQUIRE(a_inc.is_set());
  REQUIRE(b_inc.is_set());
  REQUIRE(is_older(a_inc, b_inc));
  CHECK(A.incarnation().foreign.empty());
  // Any traffic between them makes the transports shake hands, which
  // carries each daemon's incarnation (it told its transport).
  REQUIRE_FALSE(x.remoting(0).send(cluster::remote_ref{b, "nobody"},
                                   caf::make_message(std::string{"hi"})));
  x.w.advance(2s);
  auto seen = A.incarnation();
  REQUIRE(seen.foreign.size() == 1);
  CHECK(seen.foreign.front().incarnation == b_inc);
  CHECK(seen.foreign.front().seen_via == b);
  CHECK(A.counters().foreign_detections == 1);
  CHECK(B.counters().foreign_detections == 1);
  // Both size 1: the younger (b) left, by the verdict of the older (a).
  REQUIRE(b_stops->count() == 1);
  CHECK(b_stops->first().find("left to join the cluster of incarnation "
                              + to_string(a_inc))
        != std::string::npos);
  CHECK(B.incarnation().merging_into == a_inc);
  CHECK(a_stops->count() == 0);
  CHECK_FALSE(A.incarnation().merging_into.is_set());
}
