#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "membership_fixtures.hpp"
#include "troupe/sharding/region_engine.hpp"

// The shard region's pure core (region_engine.hpp): routing, buffering,
// registration and fencing, hand-off (scenario H1 on the region side),
// passivation, graceful shutdown and downing. Commands are rendered as
// short strings: "a: get_shard_home s1" (to the coordinator on a),
// "e1#2 <- m" (to the second incarnation of e1), "direct e1#1 <- m" (the
// hot path returned the reference), "forward b s1 e1 <- m", "stop e1#1",
// "kill e1#1", "hold_exit on", "stopped". Log lines are kept apart.

using membership_test::make_gossip;
using membership_test::node;
using troupe::cluster::membership_state;
using namespace troupe::sharding;
using namespace std::chrono_literals;

namespace {

using engine = region_engine<std::string, std::string>;
using strings = std::vector<std::string>;

const timestamp t0{std::chrono::hours{1}};

// The usual cluster: a is the oldest (the coordinator), c is this node.
constexpr std::string_view abc = "a:up:1 b:up:2 c:up:3";

std::string join(const std::vector<std::string>& xs) {
  std::string result;
  for (const auto& x : xs)
    result += (result.empty() ? "" : ",") + x;
  return result;
}

std::string render(const to_coordinator& m) {
  if (auto x = std::get_if<register_region>(&m))
    return fmt::format("register_region{} [{}]", x->proxy ? " proxy" : "",
                       join(x->shards));
  if (auto x = std::get_if<get_shard_home>(&m))
    return "get_shard_home " + x->shard;
  if (auto x = std::get_if<shard_started>(&m))
    return "shard_started " + x->shard;
  if (auto x = std::get_if<begin_hand_off_ack>(&m))
    return "begin_hand_off_ack " + x->shard;
  if (auto x = std::get_if<shard_stopped>(&m))
    return "shard_stopped " + x->shard;
  return "graceful_shutdown_request";
}

// One region on node `self` with a fake spawn: entity e's n-th incarnation
// is "e#n"; entities in `failing` fail to spawn (empty reference).
struct region {
  char self;
  std::map<entity_id, int> incarnations;
  std::set<entity_id> failing;
  engine e;
  std::vector<log_line> logs;
  timestamp now = t0;

  explicit region(sharding_settings s = {}, bool proxy = false,
                  char self_name = 'c')
    : self(self_name), e{node(self_name), std::move(s), proxy,
                         [this](const entity_id& id, const shard_id&) {
                           if (failing.count(id) > 0)
                             return std::string{};
                           return id + "#" + std::to_string(++incarnations[id]);
                         }} {
    // nop
  }

  strings take() {
    strings out;
    e.drain([&](engine::command& c) {
      std::visit([&](auto& x) { put(out, x); }, c);
    });
    return out;
  }

  void put(strings& out, engine::send_to_coordinator& x) {
    out.push_back(x.coordinator.host + ": " + render(x.msg));
  }
  void put(strings& out, engine::to_entity& x) {
    out.push_back(x.ref + " <- " + x.msg);
  }
  void put(strings& out, engine::forward& x) {
    out.push_back(fmt::format("forward {} {} {} <- {}", x.region.host, x.shard,
                              x.entity, x.msg));
  }
  void put(strings& out, engine::stop_entity& x) {
    out.push_back("stop " + x.ref);
  }
  void put(strings& out, engine::kill_entity& x) {
    out.push_back("kill " + x.ref);
  }
  void put(strings& out, engine::hold_exit& x) {
    out.push_back(x.hold ? "hold_exit on" : "hold_exit off");
  }
  void put(strings& out, engine::stopped&) {
    out.push_back("stopped");
  }
  void put(strings&, log_line& x) {
    logs.push_back(x);
  }

  strings tell(const entity_id& entity, const shard_id& shard,
               std::string msg) {
    strings out;
    if (auto* ref = e.deliver(entity, shard, msg, now))
      out.push_back("direct " + *ref + " <- " + msg);
    auto rest = take();
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  }
  strings members(std::string_view specs) {
    e.on_membership(membership_state{make_gossip(specs), node(self)}, now);
    return take();
  }
  // `observations` as in make_gossip ("a>b": a sees b unreachable).
  strings members_observed(std::string_view specs,
                           std::string_view observations) {
    e.on_membership(
      membership_state{make_gossip(specs, "", observations), node(self)}, now);
    return take();
  }
  strings from(char sender, to_region msg) {
    e.on_coordinator_message(node(sender), msg, now);
    return take();
  }
  strings terminated(const entity_id& entity) {
    e.on_entity_terminated(entity, now);
    return take();
  }
  strings passivate(const entity_id& entity) {
    e.passivate(entity, now);
    return take();
  }
  strings at(timestamp t) {
    now = t;
    e.tick(now);
    return take();
  }
  strings shutdown() {
    e.shutdown(now);
    return take();
  }

  // The cluster abc, registered with the coordinator on a.
  void registered(std::string_view specs = abc) {
    REQUIRE(members(specs) == strings{"a: register_region []"});
    REQUIRE(from('a', register_ack{}).empty());
    REQUIRE(e.registered());
  }
  void host(const shard_id& shard) {
    REQUIRE(from('a', host_shard{shard})
            == strings{"a: shard_started " + shard});
  }

  // The log lines at `level` that contain `text`.
  size_t logged(log_level level, std::string_view text) const {
    size_t n = 0;
    for (const auto& x : logs)
      if (x.level == level && x.text.find(text) != std::string::npos)
        ++n;
    return n;
  }
};

sharding_settings with_buffer(size_t n) {
  sharding_settings s;
  s.buffer_size = n;
  return s;
}

} // namespace

// -- routing -----------------------------------------------------------------

namespace {

enum class situation {
  hosted_running,
  hosted_absent,
  hosted_passivating,
  remote_home,
  unknown_home,
  unknown_home_unregistered,
  hand_off_hosted,
  hand_off_remote,
  proxy_unknown,
  proxy_remote,
};

struct routing_row {
  const char* name;
  situation where;
  strings expected;
  size_t buffered;
};

} // namespace

TEST_CASE("region: routing a message for e1 of s1, case by case") {
  auto row = GENERATE(values<routing_row>({
    {"hosted, e1 running: straight through",
     situation::hosted_running,
     {"direct e1#1 <- m"},
     0},
    {"hosted, e1 absent: spawned, then the message",
     situation::hosted_absent,
     {"e1#1 <- m"},
     0},
    {"hosted, e1 passivating: its buffer",
     situation::hosted_passivating,
     {},
     1},
    {"home b: forwarded", situation::remote_home, {"forward b s1 e1 <- m"}, 0},
    {"home unknown: buffered, asked",
     situation::unknown_home,
     {"a: get_shard_home s1"},
     1},
    {"home unknown before register_ack: buffered, asked later",
     situation::unknown_home_unregistered,
     {},
     1},
    {"hosted but in hand-off: buffered at the region, asked",
     situation::hand_off_hosted,
     {"a: get_shard_home s1"},
     1},
    {"home b in hand-off: buffered, asked",
     situation::hand_off_remote,
     {"a: get_shard_home s1"},
     1},
    {"proxy-only, home unknown: buffered, asked",
     situation::proxy_unknown,
     {"a: get_shard_home s1"},
     1},
    {"proxy-only, home b: forwarded",
     situation::proxy_remote,
     {"forward b s1 e1 <- m"},
     0},
  }));
  INFO(row.name);
  bool proxy = row.where == situation::proxy_unknown
               || row.where == situation::proxy_remote;
  auto setup = [&](region& r) {
    if (row.where == situation::unknown_home_unregistered) {
      REQUIRE(r.members(abc) == strings{"a: register_region []"});
    } else if (proxy) {
      REQUIRE(r.members(abc) == strings{"a: register_region proxy []"});
      REQUIRE(r.from('a', register_ack{}).empty());
    } else {
      r.registered();
    }
    switch (row.where) {
      case situation::hosted_running:
        r.host("s1");
        REQUIRE(r.tell("e1", "s1", "m0") == strings{"e1#1 <- m0"});
        break;
      case situation::hosted_absent:
        r.host("s1");
        break;
      case situation::hosted_passivating:
        r.host("s1");
        REQUIRE(r.tell("e1", "s1", "m0") == strings{"e1#1 <- m0"});
        REQUIRE(r.passivate("e1") == strings{"stop e1#1"});
        break;
      case situation::hand_off_hosted:
        r.host("s1");
        REQUIRE(r.tell("e1", "s1", "m0") == strings{"e1#1 <- m0"});
        REQUIRE(r.from('a', begin_hand_off{"s1"})
                == strings{"a: begin_hand_off_ack s1"});
        break;
      case situation::hand_off_remote:
        REQUIRE(r.from('a', shard_home{"s1", node('b')}).empty());
        REQUIRE(r.from('a', begin_hand_off{"s1"})
                == strings{"a: begin_hand_off_ack s1"});
        break;
      case situation::remote_home:
      case situation::proxy_remote:
        REQUIRE(r.from('a', shard_home{"s1", node('b')}).empty());
        break;
      default:
        break;
    }
  };
  region r{sharding_settings{}, proxy};
  setup(r);
  // The send path's forwarding shortcut agrees with the routing: it gives
  // the home exactly when the message would be forwarded (and counts it).
  {
    region shortcut{sharding_settings{}, proxy};
    setup(shortcut);
    bool forwarded
      = !row.expected.empty() && row.expected.front().rfind("forward", 0) == 0;
    const auto* home = shortcut.e.forward_home("s1");
    CHECK((home != nullptr) == forwarded);
    if (home != nullptr)
      CHECK(*home == node('b'));
    CHECK(shortcut.e.counters().forwarded == (forwarded ? 1u : 0u));
    CHECK(!shortcut.e.has_commands());
  }
  // The first-message shortcut takes exactly the spawning case.
  {
    region first{sharding_settings{}, proxy};
    setup(first);
    bool spawns = row.where == situation::hosted_absent;
    auto before = first.e.counters();
    auto x = first.e.first_message("e1", "s1", first.now);
    CHECK(x.taken == spawns);
    CHECK((x.ref != nullptr) == spawns);
    CHECK(first.e.counters().spawned == before.spawned + (spawns ? 1 : 0));
    CHECK(first.e.counters().delivered == before.delivered + (spawns ? 1 : 0));
    CHECK(first.e.buffered() == 0);
  }
  CHECK(r.tell("e1", "s1", "m") == row.expected);
  CHECK(r.e.buffered() == row.buffered);
  CHECK(r.e.buffered("s1") == row.buffered);
  CHECK(r.e.counters().buffered == row.buffered);
  CHECK(r.e.counters().dropped == 0);
}

TEST_CASE("region: the hot path touches the entity and counts the delivery") {
  region r;
  r.registered();
  r.host("s1");
  CHECK(r.tell("e1", "s1", "m1") == strings{"e1#1 <- m1"});
  r.now = t0 + 5s;
  CHECK(r.tell("e1", "s1", "m2") == strings{"direct e1#1 <- m2"});
  CHECK(r.e.counters().delivered == 2);
  CHECK(r.e.counters().spawned == 1);
  // the idle deadline counts from the last message
  CHECK(r.e.next_tick() == t0 + 5s + 120s);
}

TEST_CASE("region: get_shard_home is asked once, then every retry_interval "
          "while messages wait, and shard_home flushes them in order") {
  region r;
  r.registered();
  CHECK(r.tell("e1", "s1", "m1") == strings{"a: get_shard_home s1"});
  CHECK(r.tell("e2", "s1", "m2").empty());
  CHECK(r.tell("e3", "s2", "m3") == strings{"a: get_shard_home s2"});
  CHECK(r.e.next_tick() == t0 + 2s);
  CHECK(r.at(t0 + 1999ms).empty());
  CHECK(r.at(t0 + 2s)
        == strings{"a: get_shard_home s1", "a: get_shard_home s2"});
  CHECK(r.from('a', shard_home{"s1", node('b')})
        == strings{"forward b s1 e1 <- m1", "forward b s1 e2 <- m2"});
  CHECK(r.e.home_of("s1") == node('b'));
  CHECK(r.e.buffered() == 1);
  CHECK(r.e.counters().forwarded == 2);
  // s1 is not asked any more, s2 still is
  CHECK(r.e.next_tick() == t0 + 4s);
  CHECK(r.at(t0 + 4s) == strings{"a: get_shard_home s2"});
  CHECK(r.from('a', shard_home{"s2", node('a')})
        == strings{"forward a s2 e3 <- m3"});
  CHECK(r.e.next_tick() == std::nullopt);
  CHECK(r.tell("e1", "s1", "m4") == strings{"forward b s1 e1 <- m4"});
}

TEST_CASE("region: register_ack asks at once for every shard with waiting "
          "messages") {
  region r;
  REQUIRE(r.members(abc) == strings{"a: register_region []"});
  CHECK(r.tell("e1", "s1", "m1").empty());
  CHECK(r.tell("e2", "s2", "m2").empty());
  auto out = r.from('a', register_ack{});
  std::sort(out.begin(), out.end());
  CHECK(out == strings{"a: get_shard_home s1", "a: get_shard_home s2"});
}

// -- the buffer bound ---------------------------------------------------------

TEST_CASE("region: all buffered messages together are at most buffer_size, "
          "the rest is dropped, counted and logged") {
  using row_t = std::tuple<size_t, int, size_t, uint64_t, size_t>;
  // buffer_size, messages, buffered, dropped, warnings
  auto [size, messages, buffered, dropped, warnings]
    = GENERATE(table<size_t, int, size_t, uint64_t, size_t>(
      {row_t{3, 5, 3, 2, 1}, row_t{10, 10, 10, 0, 0}, row_t{0, 1, 0, 1, 1},
       row_t{0, 999, 0, 999, 1}, row_t{0, 2000, 0, 2000, 3}}));
  region r{with_buffer(size)};
  r.registered();
  for (int i = 0; i < messages; ++i)
    r.tell("e" + std::to_string(i), "s" + std::to_string(i % 7),
           "m" + std::to_string(i));
  CHECK(r.e.buffered() == buffered);
  CHECK(r.e.counters().dropped == dropped);
  CHECK(r.logged(log_level::warning, "the buffer is full") == warnings);
  if (dropped >= 1000)
    CHECK(r.logged(log_level::warning, "(1000 dropped so far)") == 1);
}

TEST_CASE("region: the buffers of passivating entities count in the region's "
          "buffer bound") {
  region r{with_buffer(2)};
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m0");
  r.passivate("e1");
  CHECK(r.tell("e1", "s1", "m1").empty());
  CHECK(r.tell("e9", "s9", "m2") == strings{"a: get_shard_home s9"});
  CHECK(r.tell("e1", "s1", "m3").empty());
  CHECK(r.e.buffered() == 2);
  CHECK(r.e.counters().dropped == 1);
  // the survivor reaches the new incarnation
  CHECK(r.terminated("e1") == strings{"e1#2 <- m1"});
  CHECK(r.e.buffered() == 1);
}

// -- the coordinator ----------------------------------------------------------

TEST_CASE("region: registers with the oldest member with the role, every "
          "retry_interval until register_ack") {
  sharding_settings s;
  s.role = "shard";
  s.number_of_shards = 64;
  region r{s};
  // a is older but lacks the role
  std::vector<engine::command> raw;
  r.e.on_membership(membership_state{make_gossip("a:up:1:x b:up:2:shard "
                                                 "c:up:3:shard"),
                                     node('c')},
                    r.now);
  r.e.drain([&](engine::command& c) { raw.push_back(c); });
  REQUIRE(raw.size() == 2); // the INFO line, then the registration
  auto* send = std::get_if<engine::send_to_coordinator>(&raw[1]);
  REQUIRE(send != nullptr);
  CHECK(send->coordinator == node('b'));
  CHECK(send->msg == to_coordinator{register_region{false, 64, {}}});
  CHECK(r.e.coordinator() == node('b'));
  CHECK(r.e.next_tick() == t0 + 2s);
  CHECK(r.at(t0 + 2s) == strings{"b: register_region []"});
  CHECK(r.at(t0 + 4s) == strings{"b: register_region []"});
  CHECK(r.from('b', register_ack{}).empty());
  CHECK(r.e.registered());
  CHECK(r.e.next_tick() == std::nullopt);
  CHECK(r.at(t0 + 6s).empty());
}

TEST_CASE("region: a new coordinator gets the hosted shards, and the old one "
          "is fenced off") {
  region r;
  r.registered();
  r.host("s1");
  r.host("s2");
  r.tell("e1", "s1", "m1");
  // a is removed: b is the oldest now
  CHECK(r.members("b:up:2 c:up:3") == strings{"b: register_region [s1,s2]"});
  CHECK(!r.e.registered());
  CHECK(r.e.coordinator() == node('b'));
  // late messages of the previous coordinator are ignored
  CHECK(r.from('a', hand_off{"s1"}).empty());
  CHECK(r.from('a', host_shard{"s3"}).empty());
  CHECK(r.e.counters().ignored_coordinator_messages == 2);
  CHECK(r.logged(log_level::debug, "ignored hand_off from a:2552#1") == 1);
  CHECK(r.e.state_of_shard("s1") == shard_state::active);
  CHECK(r.e.state_of_shard("s3") == shard_state::none);
  CHECK(r.e.state_of("e1") == entity_state::active);
  CHECK(r.from('b', register_ack{}).empty());
  CHECK(r.e.registered());
}

TEST_CASE("region: coordinator messages from a node other than the oldest "
          "with the role are ignored and counted") {
  auto [sender, msg] = GENERATE(table<char, to_region>({
    {'b', to_region{host_shard{"s1"}}},
    {'b', to_region{hand_off{"s1"}}},
    {'c', to_region{shard_home{"s1", node('c')}}},
    {'b', to_region{register_ack{}}},
    {'b', to_region{coordinator_hello{}}},
    {'d', to_region{begin_hand_off{"s1"}}},
  }));
  region r;
  REQUIRE(r.members(abc) == strings{"a: register_region []"});
  CHECK(r.from(sender, msg).empty());
  CHECK(r.e.counters().ignored_coordinator_messages == 1);
  CHECK(r.e.shards().empty());
  CHECK(!r.e.registered());
  CHECK(r.logged(log_level::debug, "the coordinator is a:2552#1") == 1);
}

TEST_CASE("region: coordinator_hello registers again at once with the hosted "
          "shards") {
  region r;
  r.registered();
  r.host("s1");
  CHECK(r.from('a', coordinator_hello{}) == strings{"a: register_region [s1]"});
  CHECK(!r.e.registered());
  CHECK(r.e.next_tick() == t0 + 2s);
  CHECK(r.from('a', register_ack{}).empty());
  CHECK(r.e.registered());
}

TEST_CASE("region: a refused registration is an ERROR and ends the attempts "
          "to that coordinator") {
  region r;
  REQUIRE(r.members(abc) == strings{"a: register_region []"});
  CHECK(r.from('a', register_ack{false, "number_of_shards 100 differs from "
                                        "1000"})
          .empty());
  CHECK(r.logged(log_level::error, "number_of_shards 100 differs from 1000")
        == 1);
  CHECK(r.e.counters().registrations_refused == 1);
  CHECK(r.e.next_tick() == std::nullopt);
  CHECK(r.at(t0 + 10s).empty());
  // messages keep buffering, nobody is asked
  CHECK(r.tell("e1", "s1", "m").empty());
  CHECK(r.e.buffered() == 1);
  // a new coordinator gets a new attempt
  CHECK(r.members("b:up:2 c:up:3") == strings{"b: register_region []"});
}

TEST_CASE("region: homes on removed members are forgotten") {
  region r;
  r.registered();
  REQUIRE(r.from('a', shard_home{"s1", node('b')}).empty());
  REQUIRE(r.tell("e1", "s1", "m1") == strings{"forward b s1 e1 <- m1"});
  // b down: still in the view, still the home
  CHECK(r.members("a:up:1 b:down:2 c:up:3").empty());
  CHECK(r.tell("e1", "s1", "m2") == strings{"forward b s1 e1 <- m2"});
  // b removed
  CHECK(r.members("a:up:1 c:up:3").empty());
  CHECK(r.e.home_of("s1") == std::nullopt);
  CHECK(r.tell("e1", "s1", "m3") == strings{"a: get_shard_home s1"});
  CHECK(r.e.buffered() == 1);
}

TEST_CASE("region: messages for a shard whose home is unreachable wait, and "
          "go to it in order once it is reachable again") {
  region r;
  r.registered();
  REQUIRE(r.from('a', shard_home{"s1", node('b')}).empty());
  REQUIRE(r.tell("e1", "s1", "m1") == strings{"forward b s1 e1 <- m1"});
  // a sees b unreachable: nothing is forwarded, nothing asked
  CHECK(r.members_observed(abc, "a>b").empty());
  CHECK(r.logged(log_level::warning, "is unreachable: messages for its 1 "
                                     "shard(s) wait here")
        == 1);
  CHECK(r.e.forward_home("s1") == nullptr); // the send path's shortcut too
  CHECK(r.tell("e1", "s1", "m2").empty());
  CHECK(r.tell("e2", "s1", "m3").empty());
  CHECK(r.e.buffered() == 2);
  CHECK(r.at(t0 + 10s).empty());
  // the coordinator naming the same home does not release them
  CHECK(r.from('a', shard_home{"s1", node('b')}).empty());
  CHECK(r.e.buffered() == 2);
  // reachable again: in order, then straight through
  CHECK(r.members(abc)
        == strings{"forward b s1 e1 <- m2", "forward b s1 e2 <- m3"});
  CHECK(r.e.buffered() == 0);
  CHECK(r.tell("e1", "s1", "m4") == strings{"forward b s1 e1 <- m4"});
  CHECK(r.e.counters().forwarded == 4);
  REQUIRE(r.e.forward_home("s1") != nullptr);
  CHECK(*r.e.forward_home("s1") == node('b'));
  CHECK(r.e.counters().forwarded == 6);
}

TEST_CASE("region: messages for a shard whose unreachable home is removed go "
          "to the shard's new home") {
  region r;
  r.registered();
  REQUIRE(r.from('a', shard_home{"s1", node('b')}).empty());
  REQUIRE(r.members_observed(abc, "a>b").empty());
  REQUIRE(r.tell("e1", "s1", "m1").empty());
  // b downed, then removed: the home is forgotten and asked for
  CHECK(r.members_observed("a:up:1 b:down:2 c:up:3", "a>b").empty());
  CHECK(r.members("a:up:1 c:up:3") == strings{"a: get_shard_home s1"});
  CHECK(r.from('a', shard_home{"s1", node('c')})
        == strings{"a: shard_started s1", "e1#1 <- m1"});
  CHECK(r.e.buffered() == 0);
}

// -- hand-off -----------------------------------------------------------------

TEST_CASE("region: hand-off stops the shard's entities, answers shard_stopped "
          "only after all terminated, and its buffer goes to the new home") {
  region r;
  r.registered();
  r.host("s1");
  r.host("s2");
  r.tell("e1", "s1", "m1");
  r.tell("e2", "s1", "m2");
  r.tell("e3", "s2", "m3");
  CHECK(r.from('a', begin_hand_off{"s1"})
        == strings{"a: begin_hand_off_ack s1"});
  CHECK(r.e.state_of_shard("s1") == shard_state::handing_off);
  // the entities keep running, new messages wait at the region
  CHECK(r.e.state_of("e1") == entity_state::active);
  CHECK(r.tell("e1", "s1", "m4") == strings{"a: get_shard_home s1"});
  CHECK(r.tell("e2", "s1", "m5").empty());
  CHECK(r.e.buffered("s1") == 2);
  // other shards are not affected
  CHECK(r.tell("e3", "s2", "m6") == strings{"direct e3#1 <- m6"});
  CHECK(r.from('a', hand_off{"s1"}) == strings{"stop e1#1", "stop e2#1"});
  CHECK(r.e.state_of_shard("s1") == shard_state::stopping);
  CHECK(r.e.shards() == std::map<shard_id, size_t>{{"s1", 2}, {"s2", 1}});
  // duplicates change nothing
  CHECK(r.from('a', hand_off{"s1"}).empty());
  CHECK(r.terminated("e1").empty());
  CHECK(r.e.shards() == std::map<shard_id, size_t>{{"s1", 1}, {"s2", 1}});
  CHECK(r.e.entities("s1") == std::vector<entity_id>{"e2"});
  CHECK(r.terminated("e2")
        == strings{"a: shard_stopped s1", "a: get_shard_home s1"});
  CHECK(r.e.state_of_shard("s1") == shard_state::none);
  CHECK(r.e.shards() == std::map<shard_id, size_t>{{"s2", 1}});
  CHECK(r.from('a', shard_home{"s1", node('b')})
        == strings{"forward b s1 e1 <- m4", "forward b s1 e2 <- m5"});
  CHECK(r.e.buffered() == 0);
  CHECK(r.tell("e1", "s1", "m7") == strings{"forward b s1 e1 <- m7"});
  CHECK(r.e.counters().killed == 0);
}

TEST_CASE("region: a hand-off of a shard without entities answers at once") {
  region r;
  r.registered();
  r.host("s1");
  CHECK(r.from('a', begin_hand_off{"s1"})
        == strings{"a: begin_hand_off_ack s1"});
  CHECK(r.from('a', hand_off{"s1"}) == strings{"a: shard_stopped s1"});
  CHECK(r.e.shards().empty());
}

TEST_CASE("region: messages in a passivating entity's buffer survive its "
          "hand-off and go to the new home first") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m1");
  REQUIRE(r.passivate("e1") == strings{"stop e1#1"});
  CHECK(r.tell("e1", "s1", "m2").empty());
  CHECK(r.from('a', begin_hand_off{"s1"})
        == strings{"a: begin_hand_off_ack s1", "a: get_shard_home s1"});
  CHECK(r.tell("e1", "s1", "m3").empty());
  // the old incarnation terminates during the hand-off: no respawn
  CHECK(r.terminated("e1").empty());
  CHECK(r.e.entity_count() == 0);
  // asked again after shard_stopped: the coordinator deallocated s1
  CHECK(r.from('a', hand_off{"s1"})
        == strings{"a: shard_stopped s1", "a: get_shard_home s1"});
  CHECK(r.from('a', shard_home{"s1", node('b')})
        == strings{"forward b s1 e1 <- m2", "forward b s1 e1 <- m3"});
}

TEST_CASE("region: a hand_off without begin_hand_off keeps a passivating "
          "entity's messages for the new home") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m0");
  REQUIRE(r.passivate("e1") == strings{"stop e1#1"});
  CHECK(r.tell("e1", "s1", "m1").empty());
  // e1 is stopping already: no second stop; its message waits at the region
  CHECK(r.from('a', hand_off{"s1"}) == strings{"a: get_shard_home s1"});
  CHECK(r.e.buffered("s1") == 1);
  CHECK(r.from('a', shard_home{"s1", node('b')})
        == strings{"forward b s1 e1 <- m1"});
  CHECK(r.terminated("e1") == strings{"a: shard_stopped s1"});
  CHECK(r.tell("e1", "s1", "m2") == strings{"forward b s1 e1 <- m2"});
  CHECK(r.e.counters().spawned == 1);
}

TEST_CASE("region: an entity that does not stop within entity_stop_timeout "
          "is killed") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m1");
  r.now = t0 + 1s;
  CHECK(r.from('a', hand_off{"s1"}) == strings{"stop e1#1"});
  CHECK(r.e.next_tick() == t0 + 11s);
  CHECK(r.at(t0 + 11s - 1ns).empty());
  CHECK(r.at(t0 + 11s) == strings{"kill e1#1"});
  CHECK(r.logged(log_level::error, "entity e1 of shard s1 did not terminate "
                                   "within entity_stop_timeout (10000ms)")
        == 1);
  CHECK(r.e.state_of("e1") == entity_state::killed);
  CHECK(r.e.counters().killed == 1);
  CHECK(r.e.next_tick() == std::nullopt);
  CHECK(r.at(t0 + 30s).empty());
  CHECK(r.terminated("e1") == strings{"a: shard_stopped s1"});
}

TEST_CASE("scenario H1: a region that does not host the shard answers "
          "hand_off at once") {
  auto [name, prepare] = GENERATE(table<std::string, int>({
    {"never heard of s1", 0},
    {"s1 lives on b", 1},
    {"s1 was handed off already (a backup hand_off)", 2},
    {"s1 allocated here but never started (shutting down)", 3},
  }));
  INFO(name);
  region r;
  r.registered();
  if (prepare == 1) {
    REQUIRE(r.from('a', shard_home{"s1", node('b')}).empty());
  } else if (prepare == 2) {
    r.host("s1");
    REQUIRE(r.from('a', hand_off{"s1"}) == strings{"a: shard_stopped s1"});
  } else if (prepare == 3) {
    r.host("s2");
    r.tell("e2", "s2", "m");
    REQUIRE(r.shutdown()
            == strings{"hold_exit on", "a: graceful_shutdown_request"});
    REQUIRE(r.from('a', host_shard{"s1"}).empty());
  }
  CHECK(r.from('a', begin_hand_off{"s1"})
        == strings{"a: begin_hand_off_ack s1"});
  CHECK(r.from('a', hand_off{"s1"}) == strings{"a: shard_stopped s1"});
  CHECK(r.e.state_of_shard("s1") == shard_state::none);
  CHECK(r.e.entities("s1").empty());
}

TEST_CASE("region: host_shard after begin_hand_off resumes local delivery "
          "(an abandoned rebalance)") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m1");
  REQUIRE(r.from('a', begin_hand_off{"s1"})
          == strings{"a: begin_hand_off_ack s1"});
  CHECK(r.tell("e1", "s1", "m2") == strings{"a: get_shard_home s1"});
  CHECK(r.tell("e2", "s1", "m3").empty());
  CHECK(r.from('a', shard_home{"s1", node('c')})
        == strings{"a: shard_started s1", "e1#1 <- m2", "e2#1 <- m3"});
  CHECK(r.e.state_of_shard("s1") == shard_state::active);
  CHECK(r.e.next_tick() == t0 + 120s);
  CHECK(r.tell("e1", "s1", "m4") == strings{"direct e1#1 <- m4"});
}

TEST_CASE("region: a shard_home naming another region for a shard running "
          "here is an ERROR and ignored") {
  region r;
  r.registered();
  r.host("s1");
  CHECK(r.from('a', shard_home{"s1", node('b')}).empty());
  CHECK(r.logged(log_level::error, "shard s1 lives on b:2552#1, but it runs "
                                   "here")
        == 1);
  CHECK(r.e.state_of_shard("s1") == shard_state::active);
  CHECK(r.tell("e1", "s1", "m") == strings{"e1#1 <- m"});
}

TEST_CASE("region: a proxy-only region asked to host logs an ERROR and "
          "ignores it") {
  region r{sharding_settings{}, true};
  REQUIRE(r.members(abc) == strings{"a: register_region proxy []"});
  REQUIRE(r.from('a', register_ack{}).empty());
  CHECK(r.from('a', host_shard{"s1"}).empty());
  CHECK(r.from('a', shard_home{"s1", node('c')}).empty());
  CHECK(r.logged(log_level::error, "proxy-only region to host shard s1") == 2);
  CHECK(r.e.shards().empty());
  CHECK(r.tell("e1", "s1", "m") == strings{"a: get_shard_home s1"});
  CHECK(r.e.entity_count() == 0);
}

// -- passivation --------------------------------------------------------------

TEST_CASE("region: an entity idle for passivation_idle_timeout is passivated, "
          "scanning from the least recently used") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m");
  r.now = t0 + 60s;
  r.tell("e2", "s1", "m");
  r.now = t0 + 70s;
  r.tell("e3", "s1", "m");
  r.now = t0 + 100s;
  REQUIRE(r.tell("e2", "s1", "m") == strings{"direct e2#1 <- m"});
  // LRU: e1 (t0), e3 (70s), e2 (100s)
  CHECK(r.e.next_tick() == t0 + 120s);
  CHECK(r.at(t0 + 120s - 1ns).empty());
  CHECK(r.at(t0 + 120s) == strings{"stop e1#1"});
  // the next: e3's idle deadline before e1's kill deadline
  CHECK(r.e.next_tick() == t0 + 130s);
  CHECK(r.at(t0 + 190s) == strings{"stop e3#1", "kill e1#1"});
  CHECK(r.e.counters().passivated == 2);
  CHECK(r.e.active_entities() == 1);
  CHECK(r.e.next_tick() == t0 + 200s);
}

TEST_CASE("region: passivation_idle_timeout 0 turns idle passivation off") {
  sharding_settings s;
  s.passivation_idle_timeout = timespan::zero();
  region r{s};
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m");
  CHECK(r.e.next_tick() == std::nullopt);
  CHECK(r.at(t0 + 24h).empty());
  CHECK(r.e.state_of("e1") == entity_state::active);
}

TEST_CASE("region: above the active-entity limit the least recently used "
          "entity is passivated first") {
  sharding_settings s;
  s.passivation_active_entity_limit = 2;
  region r{s};
  r.registered();
  r.host("s1");
  r.host("s2");
  CHECK(r.tell("e1", "s1", "m1") == strings{"e1#1 <- m1"});
  CHECK(r.tell("e2", "s2", "m2") == strings{"e2#1 <- m2"});
  CHECK(r.tell("e1", "s1", "m3") == strings{"direct e1#1 <- m3"});
  CHECK(r.tell("e3", "s1", "m4") == strings{"stop e2#1", "e3#1 <- m4"});
  CHECK(r.tell("e4", "s1", "m5") == strings{"stop e1#1", "e4#1 <- m5"});
  CHECK(r.e.active_entities() == 2);
  CHECK(r.e.entity_count() == 4);
  CHECK(r.e.counters().passivated == 2);
  // a message for a passivating entity waits; its new incarnation counts
  // against the limit too
  CHECK(r.tell("e2", "s2", "m6").empty());
  CHECK(r.terminated("e2") == strings{"stop e3#1", "e2#2 <- m6"});
}

TEST_CASE("region: messages during passivation reach the new incarnation in "
          "order") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m0");
  CHECK(r.passivate("e1") == strings{"stop e1#1"});
  CHECK(r.e.state_of("e1") == entity_state::stopping);
  // a second request changes nothing
  CHECK(r.passivate("e1").empty());
  CHECK(r.tell("e1", "s1", "m1").empty());
  CHECK(r.tell("e1", "s1", "m2").empty());
  CHECK(r.tell("e1", "s1", "m3").empty());
  CHECK(r.e.buffered() == 3);
  CHECK(r.terminated("e1")
        == strings{"e1#2 <- m1", "e1#2 <- m2", "e1#2 <- m3"});
  CHECK(r.e.buffered() == 0);
  CHECK(r.e.counters().spawned == 2);
  CHECK(r.e.counters().passivated == 1);
  CHECK(r.e.counters().delivered == 4);
  CHECK(r.tell("e1", "s1", "m4") == strings{"direct e1#2 <- m4"});
}

TEST_CASE("region: an entity that stops on its own is forgotten, and the next "
          "message spawns it again") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m0");
  CHECK(r.terminated("e1").empty());
  CHECK(r.e.entity_count() == 0);
  CHECK(r.e.active_entities() == 0);
  CHECK(r.e.shards() == std::map<shard_id, size_t>{{"s1", 0}});
  CHECK(r.e.next_tick() == std::nullopt);
  CHECK(r.tell("e1", "s1", "m1") == strings{"e1#2 <- m1"});
  // unknown entities are ignored
  CHECK(r.terminated("e9").empty());
}

TEST_CASE("region: a failed spawn drops the messages and logs an ERROR "
          "naming the entity") {
  region r;
  r.registered();
  r.failing.insert("e1");
  CHECK(r.tell("e1", "s1", "m0") == strings{"a: get_shard_home s1"});
  CHECK(r.tell("e1", "s1", "m1").empty());
  // the buffer is delivered on hosting: both messages dropped
  CHECK(r.from('a', host_shard{"s1"}) == strings{"a: shard_started s1"});
  CHECK(r.e.counters().spawn_failures == 2);
  CHECK(r.e.counters().dropped == 2);
  CHECK(r.logged(log_level::error, "spawning entity e1 of shard s1 failed")
        == 2);
  CHECK(r.e.entity_count() == 0);
  // The send path's first-message shortcut: taken, no reference, dropped.
  auto x = r.e.first_message("e1", "s1", r.now);
  CHECK(x.taken);
  CHECK(x.ref == nullptr);
  CHECK(r.e.counters().dropped == 3);
  CHECK(r.e.entity_count() == 0);
  r.failing.clear();
  CHECK(r.tell("e1", "s1", "m2") == strings{"e1#1 <- m2"});
  CHECK(r.logged(log_level::error, "spawning entity e1 of shard s1 failed")
        == 3);
}

// -- graceful shutdown and downing --------------------------------------------

TEST_CASE("region: graceful shutdown holds the exit, asks the coordinator, "
          "hands off and then stops") {
  region r;
  r.registered();
  r.host("s1");
  r.host("s2");
  r.tell("e1", "s1", "m1");
  CHECK(r.shutdown()
        == strings{"hold_exit on", "a: graceful_shutdown_request"});
  CHECK(r.e.shutting_down());
  CHECK(r.e.next_tick() == t0 + 2s);
  CHECK(r.at(t0 + 2s) == strings{"a: graceful_shutdown_request"});
  CHECK(r.from('a', graceful_shutdown_ack{}).empty());
  // allocations during the shutdown are not taken
  CHECK(r.from('a', host_shard{"s3"}).empty());
  CHECK(r.from('a', begin_hand_off{"s1"})
        == strings{"a: begin_hand_off_ack s1"});
  CHECK(r.tell("e1", "s1", "m2") == strings{"a: get_shard_home s1"});
  CHECK(r.from('a', hand_off{"s1"}) == strings{"stop e1#1"});
  CHECK(r.from('a', hand_off{"s2"}) == strings{"a: shard_stopped s2"});
  CHECK(r.terminated("e1")
        == strings{"a: shard_stopped s1", "a: get_shard_home s1"});
  // nothing hosted, one message waits for its new home
  CHECK(!r.e.is_stopped());
  CHECK(r.from('a', shard_home{"s1", node('b')})
        == strings{"forward b s1 e1 <- m2", "hold_exit off", "stopped"});
  CHECK(r.e.is_stopped());
  CHECK(r.e.next_tick() == std::nullopt);
  // after the stop everything is dropped
  CHECK(r.tell("e1", "s1", "m3").empty());
  CHECK(r.e.counters().dropped == 1);
}

TEST_CASE("region: this node leaving starts the graceful shutdown") {
  region r;
  r.registered();
  r.host("s1");
  CHECK(r.members("a:up:1 b:up:2 c:leaving:3")
        == strings{"hold_exit on", "a: graceful_shutdown_request"});
  CHECK(r.members("a:up:1 b:up:2 c:exiting:3").empty());
  CHECK(r.from('a', graceful_shutdown_ack{}).empty());
  CHECK(r.from('a', hand_off{"s1"})
        == strings{"a: shard_stopped s1", "hold_exit off", "stopped"});
}

TEST_CASE("region: shutting down with no member left to take the shards "
          "stops the entities locally at once, not after hand_off_timeout") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m1");
  // Every member leaves at once: this node (c) and the coordinator's (a).
  auto first = r.members("a:leaving:1 b:up:2 c:leaving:3");
  CHECK(first.front() == "hold_exit on");
  // All exiting: no member is up or leaving, so no coordinator can be.
  CHECK(r.members("a:exiting:1 b:exiting:2 c:exiting:3")
        == strings{"stop e1#1"});
  CHECK(r.logged(log_level::warning, "no member is left to take them") == 1);
  CHECK(r.terminated("e1") == strings{"hold_exit off", "stopped"});
}

TEST_CASE("region: a region that hosts and buffers nothing is done at once "
          "on shutdown") {
  region r{sharding_settings{}, true};
  REQUIRE(r.members(abc) == strings{"a: register_region proxy []"});
  REQUIRE(r.from('a', register_ack{}).empty());
  CHECK(r.shutdown()
        == strings{"hold_exit on", "a: graceful_shutdown_request",
                   "hold_exit off", "stopped"});
}

TEST_CASE("region: graceful shutdown without an answer from a coordinator "
          "stops the entities locally after hand_off_timeout") {
  region r;
  // registration never acknowledged; a still asks the region to host
  REQUIRE(r.members(abc) == strings{"a: register_region []"});
  r.host("s1");
  r.tell("e1", "s1", "m1");
  r.tell("e2", "s1", "m2");
  r.tell("e3", "s9", "m3");
  CHECK(r.shutdown() == strings{"hold_exit on"});
  CHECK(r.at(t0 + 2s) == strings{"a: register_region [s1]"});
  CHECK(r.at(t0 + 60s - 1ns) == strings{"a: register_region [s1]"});
  CHECK(r.at(t0 + 60s) == strings{"stop e1#1", "stop e2#1"});
  CHECK(r.logged(log_level::warning, "no coordinator answered within "
                                     "hand_off_timeout (60000ms)")
        == 1);
  CHECK(r.terminated("e1").empty());
  CHECK(r.terminated("e2")
        == strings{"a: shard_stopped s1", "hold_exit off", "stopped"});
  // the message that never found a home is dropped
  CHECK(r.e.counters().dropped == 1);
  CHECK(r.e.buffered() == 0);
}

TEST_CASE("region: messages still waiting after the last hand-off are dropped "
          "hand_off_timeout later") {
  region r;
  r.registered();
  r.host("s1");
  r.shutdown();
  r.from('a', graceful_shutdown_ack{});
  REQUIRE(r.from('a', begin_hand_off{"s1"})
          == strings{"a: begin_hand_off_ack s1"});
  REQUIRE(r.tell("e1", "s1", "m") == strings{"a: get_shard_home s1"});
  r.now = t0 + 5s;
  REQUIRE(r.from('a', hand_off{"s1"})
          == strings{"a: shard_stopped s1", "a: get_shard_home s1"});
  CHECK(r.e.next_tick() == t0 + 7s);
  CHECK(r.at(t0 + 7s) == strings{"a: get_shard_home s1"});
  CHECK(r.at(t0 + 65s - 1ns).size() >= 1);
  CHECK(r.at(t0 + 65s) == strings{"hold_exit off", "stopped"});
  CHECK(r.e.counters().dropped == 1);
}

TEST_CASE("region: this node downed or removed stops every entity at once, "
          "then stops for good") {
  auto [name, view] = GENERATE(table<std::string, std::string>({
    {"down", "a:up:1 b:up:2 c:down:3"},
    {"removed", "a:up:1 b:up:2"},
  }));
  INFO(name);
  region r;
  r.registered();
  r.host("s1");
  r.host("s2");
  r.tell("e1", "s1", "m1");
  r.tell("e2", "s2", "m2");
  r.tell("e3", "s9", "m3");
  CHECK(r.members(view) == strings{"stop e1#1", "stop e2#1"});
  CHECK(r.e.down());
  CHECK(r.e.counters().dropped == 1);
  CHECK(r.logged(log_level::warning, "this node is " + name) == 1);
  // no coordinator any more, never host again
  CHECK(r.from('a', host_shard{"s3"}).empty());
  CHECK(r.e.counters().ignored_coordinator_messages == 1);
  CHECK(r.tell("e1", "s1", "m4").empty());
  CHECK(r.e.counters().dropped == 2);
  CHECK(r.terminated("e1").empty());
  CHECK(r.terminated("e2") == strings{"stopped"});
  CHECK(r.e.is_stopped());
  CHECK(r.e.shards().empty());
  CHECK(r.e.next_tick() == std::nullopt);
}

TEST_CASE("region: downed during a graceful shutdown lets go of the exit") {
  region r;
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m1");
  REQUIRE(r.shutdown()
          == strings{"hold_exit on", "a: graceful_shutdown_request"});
  CHECK(r.members("a:up:1 b:up:2 c:down:3") == strings{"stop e1#1"});
  CHECK(r.at(t0 + 10s) == strings{"kill e1#1"});
  CHECK(r.terminated("e1") == strings{"hold_exit off", "stopped"});
}

// The gap the sharding simulator found (lease seed 311, leaves during
// partitions): the resolver never downs an exiting member, and the other
// side's leader removes it once it is unreachable, so a leaving member's
// entities stop only when its region's graceful shutdown ends. The
// coordinator waits hand_off_timeout + entity_stop_timeout after such a
// removal; the region stops its shards hand_off_timeout after its last
// progress, the coordinator's ack included.
TEST_CASE("region: a leaving region whose coordinator went silent after the "
          "ack stops its entities in bounded time") {
  sharding_settings s;
  s.passivation_idle_timeout = timespan::zero(); // e1 stays busy
  region r{s};
  r.registered();
  r.host("s1");
  r.tell("e1", "s1", "m1");
  REQUIRE(r.members("a:up:1 b:up:2 c:leaving:3")
          == strings{"hold_exit on", "a: graceful_shutdown_request"});
  REQUIRE(r.from('a', graceful_shutdown_ack{}).empty());
  // a partition cuts the coordinator off: no begin_hand_off, no hand_off
  REQUIRE(r.members("a:up:1 b:up:2 c:exiting:3").empty());
  strings out;
  std::optional<timestamp> stopped_at;
  for (auto t = t0 + 1s; t <= t0 + 10min; t += 1s) {
    auto step = r.at(t);
    if (!stopped_at && std::count(step.begin(), step.end(), "stop e1#1") > 0)
      stopped_at = t;
    out.insert(out.end(), step.begin(), step.end());
  }
  CHECK(std::count(out.begin(), out.end(), "stop e1#1") == 1);
  // within hand_off_timeout (60s) of the last progress (the ack at t0)
  REQUIRE(stopped_at);
  CHECK(*stopped_at <= t0 + s.hand_off_timeout + 1s);
}

TEST_CASE("region: a view without this node before it joined is not a "
          "removal") {
  region r;
  CHECK(r.members("a:up:1 b:up:2") == strings{"a: register_region []"});
  CHECK(!r.e.down());
  CHECK(r.members("a:up:1 b:up:2 c:joining") == strings{});
  CHECK(r.members("a:up:1 b:up:2") == strings{"stopped"});
  CHECK(r.e.down());
  CHECK(r.e.is_stopped());
}

TEST_CASE("region: an entity's record is at most 64 bytes with a pointer-sized "
          "reference") {
  // the memory-per-idle-entity target (<= 1.25x a bare CAF actor) leaves
  // little room: two intrusive lists, the shard, a time and a state
  CHECK(region_engine<std::string, void*>::entity_record_size() <= 64);
}
