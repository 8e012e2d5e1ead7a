#include <string>

#include <catch2/catch.hpp>

#include "membership_fixtures.hpp"
#include "troupe/singleton/proxy_core.hpp"

// The proxy's buffer and identification (proxy_core.hpp), and scenario S5
// on the core: a restart on the same node is looked up again.

using membership_test::make_gossip;
using membership_test::node;
using troupe::cluster::membership_state;
using troupe::runtime::timestamp;
using namespace troupe::singleton;
using namespace std::chrono_literals;

namespace {

// The instance as the proxy knows it: its host and incarnation.
struct target {
  char host;
  int incarnation;
  friend bool operator==(const target&, const target&) = default;
};

using core = proxy_core<std::string, target>;

membership_state view(std::string_view specs, char self = 'c') {
  return membership_state{make_gossip(specs), node(self)};
}

proxy_settings small_buffer(size_t n) {
  proxy_settings s;
  s.buffer_size = n;
  return s;
}

} // namespace

TEST_CASE("proxy: buffers while unknown, asks the oldest, delivers in order "
          "once identified") {
  core p{proxy_settings{}};
  timestamp now{};
  auto fx = p.on_membership(view("a:up:1 b:up:2 c:up:3"), now);
  REQUIRE(fx.identify);
  CHECK(*fx.identify == node('a'));
  CHECK(p.send("m1").deliver.empty());
  CHECK(p.send("m2").deliver.empty());
  CHECK(p.buffered() == 2);
  // asks again every identification_interval while unknown
  CHECK(p.next_tick() == now + 1s);
  CHECK(!p.tick(now + 999ms).identify);
  CHECK(p.tick(now + 1s).identify == node('a'));
  auto got = p.on_identified(target{'a', 1}, now + 1100ms);
  CHECK(got.deliver == std::vector<std::string>{"m1", "m2"});
  CHECK(p.buffered() == 0);
  CHECK(p.next_tick() == std::nullopt);
  // known: straight through
  CHECK(p.send("m3").deliver == std::vector<std::string>{"m3"});
}

TEST_CASE("proxy: a full buffer drops the oldest and counts it") {
  core p{small_buffer(2)};
  p.on_membership(view("a:up:1 c:up:2"), timestamp{});
  p.send("m1");
  p.send("m2");
  p.send("m3");
  CHECK(p.dropped() == 1);
  auto got = p.on_identified(target{'a', 1}, timestamp{});
  CHECK(got.deliver == std::vector<std::string>{"m2", "m3"});
  core none{small_buffer(0)};
  none.send("x");
  CHECK(none.dropped() == 1);
  CHECK(none.buffered() == 0);
}

TEST_CASE("proxy: a new oldest makes the proxy forget the instance and ask "
          "the new host") {
  core p{proxy_settings{}};
  timestamp now{};
  p.on_membership(view("a:up:1 b:up:2 c:up:3"), now);
  p.on_identified(target{'a', 1}, now);
  // a leaving is still the host (the instance runs there until it exits)
  CHECK(!p.on_membership(view("a:leaving:1 b:up:2 c:up:3"), now).identify);
  CHECK(p.target());
  auto fx = p.on_membership(view("a:exiting:1 b:up:2 c:up:3"), now);
  CHECK(fx.identify == node('b'));
  CHECK_FALSE(p.target());
  CHECK(p.send("m").deliver.empty());
}

TEST_CASE("proxy: weakly_up and joining members never host") {
  core p{proxy_settings{}};
  auto fx = p.on_membership(view("a:weakly_up b:joining c:up:1"), timestamp{});
  CHECK(fx.identify == node('c'));
}

TEST_CASE("scenario S5: the instance restarts on the same oldest after a "
          "lease loss => the proxy asks again at once and delivers what it "
          "buffered meanwhile") {
  core p{proxy_settings{}};
  timestamp now{};
  p.on_membership(view("a:up:1 b:up:2 c:up:3"), now);
  p.on_identified(target{'a', 1}, now);
  // the instance stopped (the watch fired); the oldest did not change
  now += 5s;
  auto gone = p.on_instance_gone(now);
  CHECK(gone.identify == node('a'));
  CHECK(p.send("during").deliver.empty());
  // same membership: no change, but the proxy keeps asking
  CHECK(!p.on_membership(view("a:up:1 b:up:2 c:up:3"), now).identify);
  CHECK(p.tick(now + 1s).identify == node('a'));
  auto back = p.on_identified(target{'a', 2}, now + 1500ms);
  CHECK(back.deliver == std::vector<std::string>{"during"});
  CHECK(p.target() == target{'a', 2});
}

TEST_CASE("proxy: asks the singleton target, which a member of a higher "
          "app_version becomes once up, and asks again when it does") {
  core p{proxy_settings{}};
  timestamp now{};
  auto fx = p.on_membership(view("a:up:1@1 b:up:2@1 d:joining@2"), now);
  CHECK(fx.identify == node('a'));
  p.on_identified(target{'a', 1}, now);
  // d comes up with version 2: the instance moves there; forget a's
  fx = p.on_membership(view("a:up:1@1 b:up:2@1 d:up:3@2"), now + 1s);
  CHECK(fx.identify == node('d'));
  CHECK(p.expected_host() == node('d'));
  CHECK_FALSE(p.target());
  // more new members come up: the target stays d, nothing to ask
  p.on_identified(target{'d', 1}, now + 2s);
  fx = p.on_membership(view("a:up:1@1 b:up:2@1 d:up:3@2 e:up:4@2"), now + 3s);
  CHECK_FALSE(fx.identify);
  CHECK(p.target() == target{'d', 1});
}
