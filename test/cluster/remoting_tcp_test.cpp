// Remoting between nodes in one process over real loopback sockets
// (tcp_transport): custom types, replies, unregistered types at both ends,
// watches on stop (with a backlog), blackhole and removal.

#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tcp_remoting.hpp"
#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/cluster/remoting_wire.hpp"

using namespace troupe;
using namespace troupe::test;
using namespace std::chrono_literals;
using cluster::down_cause;
using cluster::remoting_errc;

namespace {

caf::message order_msg(int64_t qty) {
  return caf::make_message(order{"ACME", qty, {1.5, 2.5, double(qty)}});
}

// Sends orders 1..n (~850 bytes each) to `to` when told, then stops.
caf::behavior chatter(caf::event_based_actor* self, remoting_handle remoting,
                      remote_ref to, int n) {
  return {
    [=](caf::atom_value) {
      // (Errors would show as missing orders at the receiver.)
      for (int i = 1; i <= n; ++i)
        remoting.send(to, caf::make_message(
                            order{"ACME", i, std::vector<double>(100, 0.5)}));
      self->quit();
    },
  };
}

caf::behavior idle(caf::event_based_actor*) {
  return {[](int32_t) {}};
}

} // namespace

TEST_CASE("remoting (tcp): three nodes exchange a registered struct and get "
          "replies through reply references") {
  real_node a, b, c;
  REQUIRE(b.remoting.publish("orders", b.spawn(acker, b.remoting, "b")));
  REQUIRE(c.remoting.publish("orders", c.spawn(acker, c.remoting, "c")));
  auto me = a.remoting.reply_ref(a.rec);
  for (int i = 1; i <= 10; ++i) {
    REQUIRE(!a.remoting.send(b.ref("orders"), order_msg(i), me));
    REQUIRE(!a.remoting.send(c.ref("orders"), order_msg(100 + i), me));
  }
  REQUIRE(eventually([&] { return a.log->ack_count() == 20; }));
  a.log->read([&](const recorded& r) {
    std::vector<int64_t> from_b, from_c;
    for (auto& [from, x] : r.acks) {
      CHECK(from.name.empty());
      (from.node == b.addr() ? from_b : from_c).push_back(x.total);
      CHECK(x.who == (from.node == b.addr() ? "b" : "c"));
    }
    CHECK(from_b
          == std::vector<int64_t>{10, 20, 30, 40, 50, 60, 70, 80, 90, 100});
    CHECK(from_c.size() == 10);
    CHECK(from_c.front() == 1010);
    return 0;
  });
  // The payload itself, with its vector, as the sender wrote it.
  REQUIRE(!a.remoting.send(b.ref("log"), order_msg(7), me));
  REQUIRE(eventually([&] { return b.log->order_count() == 1; }));
  b.log->read([&](const recorded& r) {
    CHECK(r.orders[0].first == me);
    CHECK(r.orders[0].second == order{"ACME", 7, {1.5, 2.5, 7.0}});
    return 0;
  });
}

TEST_CASE("remoting (tcp): five nodes, each sends to every other, in order "
          "per sender") {
  std::vector<std::unique_ptr<real_node>> nodes;
  for (int i = 0; i < 5; ++i)
    nodes.push_back(std::make_unique<real_node>());
  constexpr int per_pair = 200;
  for (size_t i = 0; i < 5; ++i)
    for (size_t j = 0; j < 5; ++j)
      if (i != j)
        for (int k = 0; k < per_pair; ++k)
          REQUIRE(!nodes[i]->remoting.send(nodes[j]->ref("log"),
                                           order_msg(int64_t(k))));
  for (auto& n : nodes)
    REQUIRE(eventually([&] { return n->log->order_count() == 4 * per_pair; }));
  for (auto& n : nodes)
    n->log->read([&](const recorded& r) {
      std::map<unique_address, int64_t> next;
      for (auto& [from, o] : r.orders)
        CHECK(o.qty == next[from.node]++);
      CHECK(next.size() == 4);
      return 0;
    });
}

TEST_CASE("remoting (tcp): an unregistered type is an error at the sender, "
          "a type only the sender knows is a counted drop at the receiver") {
  real_node a;
  real_node b{loopback(), false}; // does not know order and ack
  auto err
    = a.remoting.send(b.ref("log"), caf::make_message(unregistered_thing{1}));
  CHECK(err.code == static_cast<uint8_t>(remoting_errc::unregistered_type));
  CHECK_THAT(err.message, Catch::Contains("troupe::test::unregistered_thing"));
  REQUIRE(!a.remoting.send(b.ref("log"), order_msg(1)));
  REQUIRE(!a.remoting.send(b.ref("log"), caf::make_message(int32_t{5})));
  REQUIRE(eventually([&] { return b.remoting.metrics().undecodable == 1; }));
  auto m = b.remoting.transport().metrics();
  CHECK(m.total.dropped(cluster::drop_reason::undecodable) == 1);
  CHECK(a.remoting.metrics().sent == 2);
  // The int arrived (the recorder ignores it: no order, no down).
  REQUIRE(eventually([&] { return b.remoting.metrics().delivered == 1; }));
  CHECK(b.log->order_count() == 0);
}

TEST_CASE("remoting (tcp): a watch fires when the remote actor stops, after "
          "all 40000 messages it sent before (the control copy of the down "
          "overtakes a backlog larger than the socket buffers, and "
          "waits)") {
  auto settings = loopback();
  settings.outbound_queue_size = 100000; // no overflow in the burst
  real_node a, b{settings};
  auto talker = b.spawn(chatter, b.remoting, a.ref("log"), 40000);
  REQUIRE(b.remoting.publish("talker", talker));
  REQUIRE(!a.remoting.watch(b.ref("talker"), a.rec));
  // The watch request must reach b before the talker stops.
  REQUIRE(eventually([&] {
    auto m = b.remoting.transport().metrics();
    return m.total.messages_in >= 1;
  }));
  caf::anon_send(talker, caf::atom("go"));
  REQUIRE(eventually([&] { return a.log->down_count() == 1; }, 30s));
  a.log->read([&](const recorded& r) {
    CHECK(r.orders.size() == 40000);
    CHECK(r.sequence.back() == "down actor_stopped");
    CHECK(r.downs[0].ref == b.ref("talker"));
    return 0;
  });
}

TEST_CASE("remoting (tcp): a blackhole fires no watch and traffic resumes "
          "after it, node_removed fires the watch") {
  real_node a, b;
  REQUIRE(b.remoting.publish("svc", b.spawn(idle)));
  REQUIRE(!a.remoting.watch(b.ref("svc"), a.rec));
  REQUIRE(!a.remoting.send(b.ref("log"), order_msg(1)));
  REQUIRE(eventually([&] { return b.log->order_count() == 1; }));
  auto ep = cluster::endpoint_of(b.addr());
  cluster::link_fault hole;
  hole.blackhole = true;
  a.remoting.transport().set_fault(ep, cluster::direction::outbound, hole);
  a.remoting.transport().set_fault(ep, cluster::direction::inbound, hole);
  REQUIRE(!a.remoting.send(b.ref("log"), order_msg(2))); // dropped
  std::this_thread::sleep_for(2s);                       // a short partition
  CHECK(a.log->down_count() == 0);
  a.remoting.transport().heal(ep);
  REQUIRE(!a.remoting.send(b.ref("log"), order_msg(3)));
  REQUIRE(eventually([&] { return b.log->order_count() == 2; }));
  CHECK(a.log->down_count() == 0);
  a.remoting.node_removed(b.addr(), "declared removed by the test", 0s);
  REQUIRE(eventually([&] { return a.log->down_count() == 1; }));
  a.log->read([&](const recorded& r) {
    CHECK(r.downs[0].ref == b.ref("svc"));
    CHECK(r.downs[0].cause == down_cause::node_removed);
    CHECK(r.downs[0].reason == "declared removed by the test");
    return 0;
  });
  CHECK(a.remoting.transport().is_quarantined(b.addr()));
}

TEST_CASE("remoting (tcp): tagged messages reach the name's tagged receiver "
          "in order with the sender's node and the tag, a name without one "
          "drops them as dead letters") {
  real_node a, b;
  struct seen {
    unique_address from;
    std::string tag;
    int32_t value = 0;
    size_t size = 0;
  };
  std::mutex mtx;
  std::vector<seen> got;
  auto receiver
    = [&](const unique_address& from, std::string_view tag, caf::message msg) {
        std::lock_guard<std::mutex> guard{mtx};
        seen x{from, std::string{tag}, 0, msg.size()};
        if (msg.size() == 1 && msg.match_element<int32_t>(0))
          x.value = msg.get_as<int32_t>(0);
        got.push_back(std::move(x));
      };
  REQUIRE(b.remoting.publish("router", b.spawn(idle), receiver));
  REQUIRE(b.remoting.publish("plain", b.spawn(idle)));
  auto count = [&] {
    std::lock_guard<std::mutex> guard{mtx};
    return got.size();
  };
  for (int32_t i = 1; i <= 100; ++i)
    REQUIRE(!a.remoting.send_tagged(b.addr(), "router", "t" + std::to_string(i),
                                    caf::make_message(i)));
  // A binary tag with a NUL, and the longest tag.
  REQUIRE(!a.remoting.send_tagged(b.addr(), "router", std::string("x\0y", 3),
                                  caf::make_message(int32_t{101})));
  REQUIRE(!a.remoting.send_tagged(b.addr(), "router",
                                  std::string(cluster::max_tag_size, 'L'),
                                  caf::make_message(int32_t{102})));
  REQUIRE(eventually([&] { return count() == 102; }));
  {
    std::lock_guard<std::mutex> guard{mtx};
    for (int32_t i = 1; i <= 100; ++i) {
      auto& x = got[static_cast<size_t>(i - 1)];
      CHECK(x.from == a.addr());
      CHECK(x.tag == "t" + std::to_string(i));
      CHECK(x.size == 1); // the body's elements only: no sender element
      CHECK(x.value == i);
    }
    CHECK(got[100].tag == std::string("x\0y", 3));
    CHECK(got[101].tag.size() == cluster::max_tag_size);
  }
  // Too long a tag, a bad node, a bad name: errors, nothing sent.
  auto err = a.remoting.send_tagged(b.addr(), "router",
                                    std::string(cluster::max_tag_size + 1, 'L'),
                                    caf::make_message(int32_t{1}));
  REQUIRE(err);
  CHECK(err.code == static_cast<uint8_t>(remoting_errc::invalid_ref));
  CHECK(err.message.find("tag is longer") != std::string::npos);
  CHECK(a.remoting.send_tagged(unique_address{}, "router", "t",
                               caf::make_message(int32_t{1})));
  CHECK(
    a.remoting.send_tagged(b.addr(), "", "t", caf::make_message(int32_t{1})));
  // Tagged messages for a name without a tagged receiver, or for nothing:
  // dead letters at the receiver.
  auto dead_before = b.remoting.metrics().dead_letters;
  REQUIRE(!a.remoting.send_tagged(b.addr(), "plain", "t",
                                  caf::make_message(int32_t{1})));
  REQUIRE(!a.remoting.send_tagged(b.addr(), "nobody", "t",
                                  caf::make_message(int32_t{1})));
  REQUIRE(eventually(
    [&] { return b.remoting.metrics().dead_letters == dead_before + 2; }));
  // On the sender's own node the receiver runs on the sending thread.
  std::vector<std::string> local_tags;
  REQUIRE(a.remoting.publish(
    "local-router", a.spawn(idle),
    [&](const unique_address& from, std::string_view tag, caf::message) {
      CHECK(from == a.addr());
      local_tags.emplace_back(tag);
    }));
  REQUIRE(!a.remoting.send_tagged(a.addr(), "local-router", "here",
                                  caf::make_message(int32_t{1})));
  CHECK(local_tags == std::vector<std::string>{"here"});
  CHECK(count() == 102);
}
