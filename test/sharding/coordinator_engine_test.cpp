// The shard coordinator's core: recovery from the regions' reports,
// allocation behind the lease, rebalance and hand-off, the removal margin,
// and scenarios H1, H2, H5 and H8 (../shared/scenarios/README.md).

#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "membership_fixtures.hpp"
#include "troupe/sharding/coordinator_engine.hpp"
#include "troupe/sharding/least_shard_allocation.hpp"

using namespace troupe::sharding;
using namespace std::chrono_literals;
using membership_test::make_gossip;
using membership_test::node;
using troupe::cluster::membership_state;
using troupe::runtime::timestamp;

namespace {

sharding_settings test_settings() {
  sharding_settings s;
  s.number_of_shards = 100;
  s.retry_interval = 2s;
  s.hand_off_timeout = 10s;
  s.rebalance_interval = 10s;
  s.down_removal_margin = 20s;
  return s;
}

struct coordinator_fixture {
  timestamp now{std::chrono::hours{1}};
  bool lease = true;
  coordinator_engine engine;
  std::vector<region_send> sent;
  std::vector<unique_address> watched;
  std::vector<log_line> logs;

  explicit coordinator_fixture(sharding_settings s = test_settings(),
                               coordinator_bug bug = coordinator_bug::none,
                               bool use_lease = false)
    : engine(node('a'), std::move(s),
             std::make_shared<least_shard_allocation>(
               least_shard_allocation_settings{20, 0.5}),
             use_lease ? std::function<bool()>{[this] { return lease; }}
                       : std::function<bool()>{},
             bug) {}

  void apply(coordinator_effects fx) {
    sent.insert(sent.end(), fx.send.begin(), fx.send.end());
    watched.insert(watched.end(), fx.watch.begin(), fx.watch.end());
    logs.insert(logs.end(), fx.log.begin(), fx.log.end());
  }

  static membership_state view(std::string_view specs,
                               std::string_view observations = "") {
    return membership_state{make_gossip(specs, "", observations), node('a')};
  }

  void start(std::string_view specs, std::string_view observations = "") {
    apply(engine.start(view(specs, observations), now));
  }
  void members(std::string_view specs, std::string_view observations = "") {
    apply(engine.on_membership(view(specs, observations), now));
  }
  void from(char region, to_coordinator m) {
    apply(engine.on_message(node(region), m, now));
  }
  void reg(char region, std::vector<shard_id> shards = {},
           uint32_t number_of_shards = 100) {
    from(region, register_region{false, number_of_shards, std::move(shards)});
  }
  void gone(char region, region_gone why) {
    apply(engine.on_region_terminated(node(region), why, now));
  }
  void advance(troupe::runtime::timespan d) {
    auto until = now + d;
    while (true) {
      auto t = engine.next_tick();
      if (!t || *t > until)
        break;
      now = std::max(now, *t);
      apply(engine.tick(now));
    }
    now = until;
  }

  /// Takes the messages of type T sent to `to` (removes them).
  template <class T>
  std::vector<T> take(char to) {
    std::vector<T> out;
    for (auto i = sent.begin(); i != sent.end();) {
      if (i->to == node(to) && std::holds_alternative<T>(i->message)) {
        out.push_back(std::get<T>(i->message));
        i = sent.erase(i);
      } else {
        ++i;
      }
    }
    return out;
  }

  /// The shard a host_shard to `to` carried, or "" when none (removes it).
  std::vector<shard_id> hosted(char to) {
    std::vector<shard_id> out;
    for (auto& m : take<host_shard>(to))
      out.push_back(m.shard);
    return out;
  }

  /// Brings the coordinator to active with regions on every letter of
  /// `regions` (each reporting `shards` for the first one).
  void active(std::string_view specs, std::string_view regions) {
    start(specs);
    for (char r : regions)
      reg(r);
    REQUIRE(engine.phase() == coordinator_phase::active);
    sent.clear();
  }
};

} // namespace

TEST_CASE("coordinator recovery waits for every member's region") {
  coordinator_fixture f;
  f.start("a:up:1 b:up:2 c:up:3");
  CHECK(f.engine.phase() == coordinator_phase::recovering);
  CHECK(f.engine.awaiting_reports() == membership_test::nodes("abc"));
  // Every member is asked and its region watched.
  CHECK(f.take<coordinator_hello>('b').size() == 1);
  CHECK(f.take<coordinator_hello>('c').size() == 1);
  CHECK(f.watched.size() == 3);
  // A request during recovery waits (no allocation, no answer).
  f.reg('a');
  f.from('a', get_shard_home{"7"});
  CHECK(f.hosted('a').empty());
  CHECK(f.hosted('b').empty());
  // b hosts shard 7 (the previous coordinator allocated it there).
  f.reg('b', {"7"});
  CHECK(f.engine.phase() == coordinator_phase::recovering);
  // Nothing is published as c's region: it hosts nothing.
  f.gone('c', region_gone::not_published);
  CHECK(f.engine.phase() == coordinator_phase::active);
  // The waiting request is answered with the reported home, not allocated
  // again.
  auto homes = f.take<shard_home>('a');
  REQUIRE(homes.size() == 1);
  CHECK(homes[0] == shard_home{"7", node('b')});
  CHECK(f.hosted('a').empty());
  CHECK(f.hosted('b').empty());
  CHECK(f.engine.home("7") == node('b'));
}

TEST_CASE("coordinator recovery counts a joining member too") {
  // A member is moved to up (and may get shards) only after every member
  // saw it joining: the new coordinator must hear from it as well.
  coordinator_fixture f;
  f.start("a:up:1 b:joining");
  f.reg('a');
  CHECK(f.engine.phase() == coordinator_phase::recovering);
  CHECK(f.engine.awaiting_reports() == membership_test::nodes("b"));
  f.reg('b', {"3"});
  CHECK(f.engine.phase() == coordinator_phase::active);
  CHECK(f.engine.home("3") == node('b'));
}

TEST_CASE("coordinator recovery waits out the removal margin of a downed "
          "member") {
  coordinator_fixture f;
  f.start("a:up:1 b:up:2 c:up:3", "a>c");
  f.reg('a');
  f.reg('b');
  f.from('b', get_shard_home{"9"});
  // c is unreachable: no report, no allocation.
  f.advance(30s);
  CHECK(f.engine.phase() == coordinator_phase::recovering);
  CHECK(f.take<coordinator_hello>('c').size() >= 10);
  // c is downed and removed; it may still run shard 9 until it learns it.
  f.members("a:up:1 b:up:2 c:down:3", "a>c");
  f.members("a:up:1 b:up:2");
  f.advance(19s);
  CHECK(f.engine.phase() == coordinator_phase::recovering);
  CHECK(f.hosted('a').empty());
  CHECK(f.hosted('b').empty());
  f.advance(2s);
  CHECK(f.engine.phase() == coordinator_phase::active);
  CHECK(f.hosted('a').size() + f.hosted('b').size() == 1);
}

TEST_CASE("coordinator allocates a new shard with the strategy") {
  coordinator_fixture f;
  f.active("a:up:1 b:up:2", "ab");
  f.from('a', get_shard_home{"1"});
  auto first = f.hosted('a').size() + f.hosted('b').size();
  CHECK(first == 1);
  auto home1 = *f.engine.home("1");
  // The next goes to the region with fewer shards.
  f.from('a', get_shard_home{"2"});
  auto home2 = *f.engine.home("2");
  CHECK(home1 != home2);
  // A known shard is answered, not allocated again.
  f.sent.clear();
  f.from('b', get_shard_home{"1"});
  auto answers = f.take<shard_home>('b');
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].region == home1);
  CHECK(f.engine.counters().allocations == 2);
}

TEST_CASE("coordinator allocates only to up reachable regions") {
  coordinator_fixture f;
  f.active("a:up:1 b:up:2 c:up:3", "abc");
  f.members("a:up:1 b:leaving:2 c:up:3", "a>c");
  for (int i = 0; i < 6; ++i)
    f.from('a', get_shard_home{std::to_string(i)});
  CHECK(f.hosted('b').empty());
  CHECK(f.hosted('c').empty());
  CHECK(f.hosted('a').size() == 6);
}

TEST_CASE("coordinator makes no allocation without its lease") {
  coordinator_fixture f{test_settings(), coordinator_bug::none, true};
  f.lease = false;
  f.active("a:up:1 b:up:2", "ab");
  f.from('b', get_shard_home{"5"});
  CHECK(f.hosted('a').empty());
  CHECK(f.hosted('b').empty());
  CHECK(f.take<shard_home>('b').empty());
  CHECK(f.engine.counters().lease_refusals >= 1);
  f.advance(30s);
  CHECK(f.hosted('a').size() + f.hosted('b').size() == 0);
  // The lease is held again: the waiting request is served at the next
  // retry, without a new request.
  f.lease = true;
  f.advance(2s);
  CHECK(f.hosted('a').size() + f.hosted('b').size() == 1);
  CHECK(f.take<shard_home>('b').size()
        == (f.engine.home("5") == node('b') ? 0u : 1u));
}

TEST_CASE("coordinator stops allocating at once when the lease is lost") {
  coordinator_fixture f{test_settings(), coordinator_bug::none, true};
  f.active("a:up:1 b:up:2", "ab");
  f.from('b', get_shard_home{"1"});
  CHECK(f.engine.counters().allocations == 1);
  f.lease = false;
  f.from('b', get_shard_home{"2"});
  CHECK(f.engine.counters().allocations == 1);
  CHECK_FALSE(f.engine.home("2"));
  // No rebalance either, although [10, 0] wants one.
  for (int i = 3; i < 13; ++i)
    f.engine.on_message(node('a'), get_shard_home{std::to_string(i)}, f.now);
  f.advance(60s);
  CHECK(f.engine.counters().rebalances_started == 0);
}

TEST_CASE("coordinator refuses a region with another number of shards") {
  coordinator_fixture f;
  f.start("a:up:1 b:up:2");
  f.reg('b', {}, 64);
  auto acks = f.take<register_ack>('b');
  REQUIRE(acks.size() == 1);
  CHECK_FALSE(acks[0].accepted);
  CHECK(acks[0].reason.find("sharding.number_of_shards") != std::string::npos);
  CHECK(acks[0].reason.find("64") != std::string::npos);
  CHECK(acks[0].reason.find("100") != std::string::npos);
  CHECK(f.engine.counters().refused_registrations == 1);
  f.reg('a');
  // b takes no shards.
  f.from('a', get_shard_home{"1"});
  f.from('a', get_shard_home{"2"});
  CHECK(f.hosted('b').empty());
}

namespace {

// Ten shards on a, b joins: the state after `active` with 10 on a.
void ten_on_a(coordinator_fixture& f, std::string_view specs,
              std::string_view regions) {
  f.start("a:up:1");
  f.reg('a');
  for (int i = 0; i < 10; ++i)
    f.from('a', get_shard_home{std::to_string(i)});
  REQUIRE(f.hosted('a').size() == 10);
  f.members(specs);
  for (char r : regions)
    f.reg(r);
  f.sent.clear();
}

// Plays every region's part of the rebalances in flight: acks, and the
// owner's shard_stopped; returns the shards moved.
std::vector<shard_id> play_regions(coordinator_fixture& f,
                                   std::string_view regions, char owner) {
  std::vector<shard_id> stopped;
  for (char r : regions)
    for (auto& m : f.take<begin_hand_off>(r))
      f.from(r, begin_hand_off_ack{m.shard});
  for (auto& m : f.take<hand_off>(owner)) {
    f.from(owner, shard_stopped{m.shard});
    stopped.push_back(m.shard);
  }
  return stopped;
}

} // namespace

TEST_CASE("scenario H8: ten shards, a second region, exactly five move and "
          "are allocated at once") {
  coordinator_fixture f;
  ten_on_a(f, "a:up:1 b:up:2", "b");
  f.advance(10s);
  CHECK(f.engine.counters().rebalances_started == 5);
  auto moved = play_regions(f, "ab", 'a');
  CHECK(moved.size() == 5);
  // Each moved shard was allocated again right away, to b.
  CHECK(f.hosted('b').size() == 5);
  CHECK(f.engine.shard_map().at(node('a')).size() == 5);
  CHECK(f.engine.shard_map().at(node('b')).size() == 5);
  // Balanced: the next rounds move nothing.
  f.advance(30s);
  CHECK(f.engine.counters().rebalances_started == 5);
}

TEST_CASE("coordinator defers requests for a shard in hand-off") {
  coordinator_fixture f;
  ten_on_a(f, "a:up:1 b:up:2", "b");
  f.advance(10s);
  auto begins = f.take<begin_hand_off>('b');
  REQUIRE(!begins.empty());
  auto shard = begins[0].shard;
  f.sent.clear();
  f.from('b', get_shard_home{shard});
  CHECK(f.take<shard_home>('b').empty());
  f.from('b', begin_hand_off_ack{shard});
  for (auto& m : f.take<begin_hand_off>('a'))
    f.from('a', begin_hand_off_ack{m.shard});
  f.from('a', shard_stopped{shard});
  // Answered once the shard has its new home.
  CHECK(f.engine.home(shard).has_value());
  CHECK(f.hosted('b').size() + f.take<shard_home>('b').size() >= 1);
}

TEST_CASE("scenario H1: shard_stopped from a region that is not the home is "
          "ignored") {
  for (auto bug :
       {coordinator_bug::none, coordinator_bug::trust_any_shard_stopped}) {
    coordinator_fixture f{test_settings(), bug};
    f.active("a:up:1 b:up:2 c:up:3", "abc");
    f.from('b', get_shard_home{"s"});
    auto home = *f.engine.home("s");
    char other = home == node('a') ? 'b' : 'a';
    f.from(other, shard_stopped{"s"});
    if (bug == coordinator_bug::none) {
      CHECK(f.engine.home("s") == home);
      CHECK(f.engine.counters().ignored_messages == 1);
    } else {
      // The planted bug deallocates it and allocates it again.
      CHECK(f.engine.counters().ignored_messages == 0);
      CHECK(f.engine.counters().allocations == 2);
    }
  }
}

TEST_CASE("scenario H2: a late shard_stopped from the owner completes the "
          "hand-off after the timeout") {
  auto s = test_settings();
  s.rebalance_interval = 60s;
  coordinator_fixture f{s};
  ten_on_a(f, "a:up:1 b:up:2", "b");
  f.advance(60s);
  for (char r : {'a', 'b'})
    for (auto& m : f.take<begin_hand_off>(r))
      f.from(r, begin_hand_off_ack{m.shard});
  auto hand_offs = f.take<hand_off>('a');
  REQUIRE(hand_offs.size() == 5);
  // The owner's entities take longer than hand_off_timeout to stop.
  f.advance(11s);
  CHECK(f.engine.counters().rebalances_timed_out == 5);
  CHECK(f.engine.rebalancing().empty());
  CHECK(f.engine.home(hand_offs[0].shard) == node('a'));
  // Its shard_stopped still moves the shard, exactly once.
  f.sent.clear();
  f.from('a', shard_stopped{hand_offs[0].shard});
  CHECK(f.engine.home(hand_offs[0].shard) == node('b'));
  CHECK(f.hosted('b') == std::vector<shard_id>{hand_offs[0].shard});
  // A duplicate from a (no longer the owner) is ignored.
  f.from('a', shard_stopped{hand_offs[0].shard});
  CHECK(f.engine.home(hand_offs[0].shard) == node('b'));
}

TEST_CASE("coordinator never answers the owner's own get_shard_home with "
          "its own address after a timed-out hand_off") {
  // Found by the sharding simulation (seed 21 without a lease, entities
  // slower to stop than hand_off_timeout): the owner, buffering a message
  // for the shard it hands off, asked for its home; after the timeout the
  // coordinator answered shard_home naming the owner, which crossed the
  // owner's shard_stopped; the owner hosted the shard again while the
  // coordinator allocated it to another region (two homes).
  auto s = test_settings();
  s.rebalance_interval = 60s;
  coordinator_fixture f{s};
  ten_on_a(f, "a:up:1 b:up:2", "b");
  f.advance(60s);
  for (char r : {'a', 'b'})
    for (auto& m : f.take<begin_hand_off>(r))
      f.from(r, begin_hand_off_ack{m.shard});
  auto hand_offs = f.take<hand_off>('a');
  REQUIRE(!hand_offs.empty());
  auto shard = hand_offs[0].shard;
  f.from('a', get_shard_home{shard});
  f.advance(13s); // the rebalance times out; the request is retried
  CHECK(f.engine.counters().rebalances_timed_out >= 1);
  f.from('a', get_shard_home{shard});
  for (auto& h : f.take<shard_home>('a'))
    CHECK(!(h.shard == shard && h.region == node('a')));
  // Instead the owner gets the hand_off again, in case the first one was
  // lost (lease seed 188: the owner, handing off since begin_hand_off,
  // never got it and asked for ever while the request waited).
  auto again = f.take<hand_off>('a');
  REQUIRE(again.size() == 1);
  CHECK(again[0].shard == shard);
  // The owner's shard_stopped moves the shard and answers the request.
  f.from('a', shard_stopped{shard});
  CHECK(f.engine.home(shard) == node('b'));
  auto homes = f.take<shard_home>('a');
  CHECK(std::any_of(homes.begin(), homes.end(), [&](auto& h) {
    return h.shard == shard && h.region == node('b');
  }));
}

// Found by the simulator (lease seed 37): a coordinator that starts after a
// member was removed from down never saw it, so it cannot know the shards
// it hosted; the node's removal record makes recovery wait out the margin.
TEST_CASE("coordinator started just after a member's removal keeps that "
          "member's shards for the margin") {
  for (auto bug : {coordinator_bug::none, coordinator_bug::no_removal_margin}) {
    coordinator_fixture f{test_settings(), bug};
    // c hosted shard s and was removed from down 5s before this start.
    std::vector<recent_removal> removals{{node('c'), f.now - 5s}};
    f.apply(f.engine.start(coordinator_fixture::view("a:up:1 b:up:2"), f.now,
                           removals));
    f.reg('a');
    f.reg('b');
    f.from('b', get_shard_home{"s"});
    if (bug == coordinator_bug::none) {
      CHECK(f.engine.phase() == coordinator_phase::recovering);
      CHECK(f.engine.awaiting_reports() == membership_test::nodes("c"));
      f.advance(14s);
      CHECK_FALSE(f.engine.home("s").has_value());
      f.advance(2s);
      CHECK(f.engine.phase() == coordinator_phase::active);
      CHECK(f.engine.home("s").has_value());
    } else {
      CHECK(f.engine.home("s").has_value());
    }
  }
}

TEST_CASE("removal tracker: downed and unseen tombstoned members count, a "
          "graceful exit does not") {
  using troupe::cluster::gossip;
  removal_tracker t;
  auto t0 = timestamp{std::chrono::hours{1}};
  // x was removed before this node's first view: only its tombstone shows.
  auto g0 = make_gossip("a:up:1 b:up:2 c:up:3 d:exiting:4");
  g0.remove(node('x'), troupe::cluster::wall_time{});
  t.on_view(g0, t0);
  t.on_view(make_gossip("a:up:1 b:up:2 c:down:3 d:exiting:4"), t0 + 1s);
  t.on_view(make_gossip("a:up:1 b:up:2"), t0 + 2s);
  auto r = t.recent(t0 + 3s, 20s);
  REQUIRE(r.size() == 2);
  CHECK(r[0] == recent_removal{node('x'), t0});
  CHECK(r[1] == recent_removal{node('c'), t0 + 2s});
  // After the margin they are forgotten.
  CHECK(t.recent(t0 + 21s, 20s).size() == 1);
  CHECK(t.recent(t0 + 23s, 20s).empty());
}

TEST_CASE("scenario H5: a region removed before its ack counts as acked") {
  coordinator_fixture f;
  ten_on_a(f, "a:up:1 b:up:2 c:up:3 d:up:4", "bcd");
  f.advance(10s);
  auto begins = f.take<begin_hand_off>('d');
  REQUIRE(!begins.empty());
  // Every region but d acks.
  for (char r : {'a', 'b', 'c'})
    for (auto& m : f.take<begin_hand_off>(r))
      f.from(r, begin_hand_off_ack{m.shard});
  CHECK(f.take<hand_off>('a').empty());
  // d crashes: downed, removed.
  f.members("a:up:1 b:up:2 c:up:3 d:down:4", "a>d");
  f.members("a:up:1 b:up:2 c:up:3");
  auto hand_offs = f.take<hand_off>('a');
  CHECK(hand_offs.size() == begins.size());
  CHECK(f.engine.counters().rebalances_timed_out == 0);
}

TEST_CASE("scenario H5: a region that stopped before its ack counts as acked") {
  coordinator_fixture f;
  ten_on_a(f, "a:up:1 b:up:2 c:up:3", "bc");
  f.advance(10s);
  for (char r : {'a', 'b'})
    for (auto& m : f.take<begin_hand_off>(r))
      f.from(r, begin_hand_off_ack{m.shard});
  CHECK(f.take<hand_off>('a').empty());
  f.gone('c', region_gone::stopped);
  CHECK(!f.take<hand_off>('a').empty());
}

TEST_CASE("coordinator keeps a downed member's shards for the removal "
          "margin") {
  for (auto bug : {coordinator_bug::none, coordinator_bug::no_removal_margin}) {
    coordinator_fixture f{test_settings(), bug};
    f.active("a:up:1 b:up:2", "ab");
    f.from('a', get_shard_home{"1"});
    f.from('a', get_shard_home{"2"});
    auto on_b = f.engine.shard_map().at(node('b'));
    REQUIRE(on_b.size() == 1);
    f.sent.clear();
    f.members("a:up:1 b:down:2", "a>b");
    f.members("a:up:1");
    f.from('a', get_shard_home{on_b[0]});
    if (bug == coordinator_bug::none) {
      // b may still run its entities until it decides it is down.
      CHECK(f.engine.home(on_b[0]) == node('b'));
      CHECK(f.take<shard_home>('a').empty());
      CHECK(f.hosted('a').empty());
      f.advance(19s);
      CHECK(f.hosted('a').empty());
      f.advance(2s);
      CHECK(f.hosted('a') == on_b);
    } else {
      CHECK(f.hosted('a') == on_b);
    }
  }
}

TEST_CASE("coordinator moves a gracefully removed member's shards at once") {
  coordinator_fixture f;
  f.active("a:up:1 b:up:2", "ab");
  f.from('a', get_shard_home{"1"});
  f.from('a', get_shard_home{"2"});
  auto on_b = f.engine.shard_map().at(node('b'));
  f.sent.clear();
  f.members("a:up:1 b:exiting:2");
  f.members("a:up:1");
  f.from('a', get_shard_home{on_b[0]});
  CHECK(f.hosted('a') == on_b);
}

TEST_CASE("coordinator hands off every shard of a region that shuts down") {
  coordinator_fixture f;
  f.active("a:up:1 b:up:2", "ab");
  for (int i = 0; i < 4; ++i)
    f.from('a', get_shard_home{std::to_string(i)});
  auto on_b = f.engine.shard_map().at(node('b'));
  REQUIRE(on_b.size() == 2);
  f.sent.clear();
  f.from('b', graceful_shutdown_request{});
  CHECK(f.take<graceful_shutdown_ack>('b').size() == 1);
  CHECK(f.engine.rebalancing().size() == 2);
  play_regions(f, "ab", 'b');
  CHECK(f.engine.shard_map().at(node('b')).empty());
  CHECK(f.engine.shard_map().at(node('a')).size() == 4);
  // Nothing new goes to b.
  f.from('a', get_shard_home{"9"});
  CHECK(f.hosted('b').empty());
}

TEST_CASE("coordinator asks a region reporting another's shard to hand it "
          "off") {
  coordinator_fixture f;
  f.active("a:up:1 b:up:2 c:up:3", "abc");
  f.from('a', get_shard_home{"1"});
  auto home = *f.engine.home("1");
  char other = home == node('b') ? 'c' : 'b';
  f.sent.clear();
  f.reg(other, {"1"});
  CHECK(f.engine.counters().conflicts == 1);
  CHECK(f.take<hand_off>(other).size() == 1);
  CHECK(f.engine.home("1") == home);
}

TEST_CASE("coordinator skip_recovery bug allocates a reported shard twice") {
  // The planted bug the simulator's checker must catch, shown here at the
  // unit level: without recovery a shard hosted by an unreported region
  // gets a second home.
  coordinator_fixture f{test_settings(), coordinator_bug::skip_recovery};
  f.start("a:up:1 b:up:2");
  f.reg('a');
  f.from('a', get_shard_home{"7"});
  CHECK(f.hosted('a') == std::vector<shard_id>{"7"});
  // b hosted 7 under the previous coordinator.
  f.reg('b', {"7"});
  CHECK(f.engine.counters().conflicts == 1);
}

TEST_CASE("coordinator waits hand_off_timeout + entity_stop_timeout for a "
          "member removed from exiting while unreachable") {
  auto s = test_settings(); // margin 20s
  s.hand_off_timeout = 60s;
  coordinator_fixture g{s};
  g.active("a:up:1 b:up:2", "ab");
  g.from('a', get_shard_home{"1"});
  g.from('a', get_shard_home{"2"});
  auto on_b = g.engine.shard_map().at(node('b'));
  REQUIRE(on_b.size() == 1);
  g.sent.clear();
  // b leaves; a partition cuts it off while it hands off; it is removed.
  g.members("a:up:1 b:exiting:2", "a>b");
  g.members("a:up:1");
  g.from('a', get_shard_home{on_b[0]});
  g.advance(69s); // 60s + 10s (entity_stop_timeout), not the 20s margin
  CHECK(g.hosted('a').empty());
  g.advance(2s);
  CHECK(g.hosted('a') == on_b);
}
