// The remoting actor, handle and listener over the simulated transport, on
// CAF's deterministic coordinator: translation, watches, removal and the
// order of downs, with simulated time and no sleeps.

#include <catch2/catch.hpp>

#include <caf/binary_serializer.hpp>

#include "sim_remoting.hpp"
#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/remoting_errc.hpp"
#include "troupe/cluster/remoting_wire.hpp"
#include "troupe/runtime/log.hpp"

using namespace troupe;
using namespace troupe::test;
using namespace std::chrono_literals;
using cluster::down_cause;
using cluster::remoting_errc;

namespace {

const unique_address a{"10.0.0.1", 2552, 11};
const unique_address b{"10.0.0.2", 2552, 22};
const unique_address c{"10.0.0.3", 2552, 33};

caf::message order_msg(int64_t qty) {
  return caf::make_message(order{"ACME", qty, {1.5, 2.5}});
}

uint64_t messages_in(remoting_handle& node, const unique_address& peer) {
  auto m = node.transport().metrics();
  auto* p = m.find(cluster::endpoint_of(peer));
  return p == nullptr ? 0 : p->counters.messages_in;
}

// Sends `n` orders (qty 1..n) to `to`, then stops itself.
caf::behavior chatter(caf::event_based_actor* self, remoting_handle remoting,
                      remote_ref to, int n) {
  return {
    [=](caf::atom_value) {
      for (int i = 1; i <= n; ++i)
        remoting.send(to, order_msg(i));
      self->quit();
    },
  };
}

caf::behavior idle(caf::event_based_actor*) {
  return {[](int32_t) {}};
}

// Both delivery paths: inbound actors (default) and the io thread.
cluster::remoting_settings delivery(bool on_io_thread) {
  cluster::remoting_settings s;
  s.deliver_on_io_thread = on_io_thread;
  return s;
}

} // namespace

TEST_CASE("remoting (sim): a registered struct with a string and a vector "
          "travels both ways, with the sending node and its reply-to") {
  auto on_io_thread = GENERATE(false, true);
  INFO("deliver_on_io_thread " << on_io_thread);
  sim_remoting w;
  auto A = w.start(a, delivery(on_io_thread));
  auto B = w.start(b, delivery(on_io_thread));
  auto [rec_a, log_a] = w.spawn_recorder();
  auto [rec_b, log_b] = w.spawn_recorder();
  REQUIRE(B.publish("orders", w.spawn(acker, B, std::string{"b"})));
  REQUIRE(B.publish("log", rec_b));
  auto me = A.reply_ref(rec_a);
  CHECK(me.node == a);
  CHECK(me.name == "$" + std::to_string(rec_a.id()));
  REQUIRE(!A.send(remote_ref{b, "orders"}, order_msg(5), me));
  REQUIRE(!A.send(remote_ref{b, "log"}, order_msg(6), me));
  w.advance(100ms);
  REQUIRE(log_b->orders.size() == 1);
  CHECK(log_b->orders[0].first == me); // the sender's node and reply-to
  CHECK(log_b->orders[0].second == order{"ACME", 6, {1.5, 2.5}});
  REQUIRE(log_a->acks.size() == 1);
  CHECK(log_a->acks[0].first == remote_ref{b, ""}); // anonymous reply
  CHECK(log_a->acks[0].second == ack{50, "b"});
  CHECK(A.metrics().sent == 2);
  CHECK(B.metrics().delivered == 2);
  CHECK(A.metrics().delivered == 1);
}

TEST_CASE("remoting (sim): a reply reference keeps an actor that nothing "
          "else references alive until its reply came") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  REQUIRE(B.publish("orders", w.spawn(acker, B, std::string{"b"})));
  auto log = std::make_shared<recorded>();
  {
    auto waiting = w.sys().spawn(recorder, log); // the only handle, dropped
    REQUIRE(
      !A.send(remote_ref{b, "orders"}, order_msg(4), A.reply_ref(waiting)));
  }
  w.advance(100ms);
  REQUIRE(log->acks.size() == 1);
  CHECK(log->acks[0].second.total == 40);
}

TEST_CASE("remoting (sim): a send to this node's own reference is delivered "
          "directly, with the same checks") {
  sim_remoting w;
  auto A = w.start(a);
  auto [rec, log] = w.spawn_recorder();
  auto ref = A.publish("self", rec);
  REQUIRE(ref);
  CHECK(*ref == remote_ref{a, "self"});
  REQUIRE(!A.send(*ref, order_msg(3), A.reply_ref(rec)));
  // uid 0 means "whoever lives at host:port": here, this node.
  REQUIRE(!A.send(remote_ref{{a.host, a.port, 0}, "self"}, order_msg(4)));
  auto err = A.send(*ref, caf::make_message(unregistered_thing{}));
  CHECK(err.code == static_cast<uint8_t>(remoting_errc::unregistered_type));
  w.advance(1ms);
  REQUIRE(log->orders.size() == 2);
  CHECK(log->orders[0].first.name == "$" + std::to_string(rec.id()));
  CHECK(log->orders[1].first == remote_ref{a, ""});
}

TEST_CASE("remoting (sim): an unregistered type is an error at the sender "
          "naming the type, and nothing is sent") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  auto [rec_b, log_b] = w.spawn_recorder();
  REQUIRE(B.publish("log", rec_b));
  REQUIRE(!A.send(remote_ref{b, "log"}, order_msg(1)));
  w.advance(100ms);
  auto out_before = A.transport().metrics().total.messages_out;
  auto err = A.send(remote_ref{b, "log"},
                    caf::make_message(order{}, unregistered_thing{1}));
  REQUIRE(err);
  CHECK(err.category == "remoting");
  CHECK(err.code == static_cast<uint8_t>(remoting_errc::unregistered_type));
  CHECK_THAT(err.message, Catch::Contains("troupe::test::unregistered_thing"));
  CHECK_THAT(err.message, Catch::Contains("log@10.0.0.2:2552#22"));
  w.advance(100ms);
  CHECK(A.transport().metrics().total.messages_out == out_before);
  CHECK(A.metrics().sent == 1);
  CHECK(log_b->orders.size() == 1);
  CHECK(B.metrics().undecodable == 0);
}

TEST_CASE("remoting (sim): undecodable payloads are counted drops at the "
          "receiver, recorded in the transport, the connection stays up") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  auto [rec_b, log_b] = w.spawn_recorder();
  REQUIRE(B.publish("log", rec_b));
  // A payload that is no envelope at all, and a message whose element type
  // B does not know (as from a node that registered more types).
  std::vector<char> garbage{9, 9, 9};
  std::vector<char> unknown;
  cluster::append_message_header(unknown, "log", "");
  caf::binary_serializer sink{w.sys(), unknown};
  REQUIRE(!sink(uint16_t{1}, uint16_t{0}, std::string{"troupe.test.other"},
                int32_t{1}));
  REQUIRE(!A.transport().send(b, cluster::lane::ordinary,
                              std::as_bytes(std::span{garbage})));
  REQUIRE(!A.transport().send(b, cluster::lane::control,
                              std::as_bytes(std::span{unknown})));
  REQUIRE(!A.send(remote_ref{b, "log"}, order_msg(2)));
  w.advance(100ms);
  CHECK(B.metrics().undecodable == 2);
  auto m = B.transport().metrics();
  CHECK(m.total.dropped(cluster::drop_reason::undecodable) == 2);
  REQUIRE(log_b->orders.size() == 1); // later traffic still flows
  CHECK(log_b->orders[0].second.qty == 2);
}

TEST_CASE("remoting (sim): a message for a name nothing is published under "
          "is a dead letter at the receiver") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  REQUIRE(!A.send(remote_ref{b, "nobody"}, order_msg(1)));
  w.advance(100ms);
  CHECK(B.metrics().dead_letters == 1);
  CHECK(B.metrics().delivered == 0);
}

TEST_CASE("remoting (sim): dead letters are logged at info, and at debug "
          "once the receiver's shutdown began") {
  auto sink = std::make_shared<runtime::capture_sink>();
  runtime::add_log_sink(sink);
  auto level = runtime::current_log_level();
  runtime::set_log_level(runtime::log_level::debug);
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  REQUIRE(!A.send(remote_ref{b, "nobody"}, order_msg(1)));
  w.advance(100ms);
  B.begin_shutdown();
  REQUIRE(!A.send(remote_ref{b, "nobody"}, order_msg(2)));
  w.advance(100ms);
  runtime::set_log_level(level);
  runtime::remove_log_sink(sink);
  CHECK(B.metrics().dead_letters == 2);
  std::vector<runtime::log_level> levels;
  for (auto& r : sink->records())
    if (r.message.find("dead letter") != std::string::npos)
      levels.push_back(r.level);
  INFO(sink->dump());
  CHECK(levels
        == std::vector{runtime::log_level::info, runtime::log_level::debug});
}

TEST_CASE("remoting (sim): bad references and names are errors") {
  sim_remoting w;
  auto A = w.start(a);
  auto rec = w.spawn_recorder().first;
  auto code = [](const runtime::error& e) { return e.code; };
  CHECK(code(A.send(remote_ref{b, ""}, order_msg(1)))
        == static_cast<uint8_t>(remoting_errc::invalid_ref));
  CHECK(code(A.send(remote_ref{b, "x"}, order_msg(1), remote_ref{c, "y"}))
        == static_cast<uint8_t>(remoting_errc::invalid_ref));
  CHECK(code(A.watch(remote_ref{{b.host, b.port, 0}, "x"}, rec))
        == static_cast<uint8_t>(remoting_errc::invalid_ref));
  CHECK(A.publish("$1", rec).error().code
        == static_cast<uint8_t>(remoting_errc::invalid_name));
  REQUIRE(A.publish("x", rec));
  REQUIRE(A.publish("x", rec)); // the same actor again
  auto other = w.spawn(idle);
  auto taken = A.publish("x", other);
  REQUIRE(!taken);
  CHECK(taken.error().code == static_cast<uint8_t>(remoting_errc::name_taken));
  CHECK(A.unpublish("x"));
  CHECK(!A.unpublish("x"));
  A.stop();
  CHECK(code(A.send(remote_ref{b, "x"}, order_msg(1)))
        == static_cast<uint8_t>(remoting_errc::not_running));
}

TEST_CASE("remoting (sim): a watch fires when the remote actor stops, after "
          "every message it sent before stopping") {
  auto on_io_thread = GENERATE(false, true);
  INFO("deliver_on_io_thread " << on_io_thread);
  sim_remoting w;
  auto A = w.start(a, delivery(on_io_thread));
  auto B = w.start(b, delivery(on_io_thread));
  auto [rec, log] = w.spawn_recorder();
  REQUIRE(A.publish("log", rec));
  auto talker = w.spawn(chatter, B, remote_ref{a, "log"}, 50);
  REQUIRE(B.publish("talker", talker));
  REQUIRE(!A.watch(remote_ref{b, "talker"}, rec));
  w.advance(100ms);
  caf::anon_send(talker, caf::atom("go"));
  w.advance(10s);
  REQUIRE(log->orders.size() == 50);
  REQUIRE(log->downs.size() == 1);
  CHECK(log->downs[0].ref == remote_ref{b, "talker"});
  CHECK(log->downs[0].cause == down_cause::actor_stopped);
  CHECK(log->sequence.back() == "down actor_stopped");
  CHECK(log->sequence[49] == "order 50");
  // The name is gone on B.
  w.advance(1s);
  CHECK(log->downs.size() == 1);
}

TEST_CASE("remoting (sim): a watch fires on unpublish, and at once for a "
          "name nothing is published under") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  auto [rec, log] = w.spawn_recorder();
  REQUIRE(B.publish("svc", w.spawn(idle)));
  REQUIRE(!A.watch(remote_ref{b, "svc"}, rec));
  REQUIRE(!A.watch(remote_ref{b, "ghost"}, rec));
  w.advance(100ms);
  REQUIRE(log->downs.size() == 1);
  CHECK(log->downs[0].ref == remote_ref{b, "ghost"});
  CHECK(log->downs[0].cause == down_cause::not_published);
  CHECK(B.unpublish("svc"));
  w.advance(100ms);
  REQUIRE(log->downs.size() == 2);
  CHECK(log->downs[1].ref == remote_ref{b, "svc"});
  CHECK(log->downs[1].cause == down_cause::unpublished);
}

TEST_CASE("remoting (sim): a local watch of this node's own name works the "
          "same way") {
  sim_remoting w;
  auto A = w.start(a);
  auto [rec, log] = w.spawn_recorder();
  auto svc = w.spawn(idle);
  REQUIRE(A.publish("svc", svc));
  REQUIRE(!A.watch(remote_ref{a, "svc"}, rec));
  w.advance(1ms);
  caf::anon_send_exit(svc, caf::exit_reason::user_shutdown);
  w.advance(1ms);
  REQUIRE(log->downs.size() == 1);
  CHECK(log->downs[0].cause == down_cause::actor_stopped);
  CHECK_THAT(log->downs[0].reason, Catch::Contains("user_shutdown"));
}

TEST_CASE("remoting (sim): connection blips and a blackhole fire no watch, "
          "node_removed fires every watch on the node, once") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  auto C = w.start(c);
  auto [rec, log] = w.spawn_recorder();
  REQUIRE(B.publish("x", w.spawn(idle)));
  REQUIRE(B.publish("y", w.spawn(idle)));
  REQUIRE(C.publish("z", w.spawn(idle)));
  for (auto& ref : {remote_ref{b, "x"}, remote_ref{b, "y"}, remote_ref{c, "z"}})
    REQUIRE(!A.watch(ref, rec));
  w.advance(100ms);
  // Blips.
  w.net().disconnect(cluster::endpoint_of(a), cluster::endpoint_of(b));
  w.advance(1s);
  // A blackhole in both directions for a while (as a partition).
  A.transport().set_fault(cluster::endpoint_of(b), cluster::direction::outbound,
                          cluster::link_fault{true});
  A.transport().set_fault(cluster::endpoint_of(b), cluster::direction::inbound,
                          cluster::link_fault{true});
  w.advance(30s);
  CHECK(log->downs.empty());
  auto status = [&](remoting_handle& n) {
    probe p{w.sys()};
    p.send(n.actor(), cluster::status_atom::value);
    w.advance(1ms);
    return p.poll<cluster::remoting_status>()->value();
  };
  CHECK(status(A).watches == 3);
  // Membership declares B removed.
  A.node_removed(b, "removed by the test", 0s);
  w.advance(1ms);
  REQUIRE(log->downs.size() == 2);
  for (auto& d : log->downs) {
    CHECK(d.ref.node == b);
    CHECK(d.cause == down_cause::node_removed);
    CHECK(d.reason == "removed by the test");
  }
  CHECK(A.transport().is_quarantined(b));
  A.node_removed(b, "again", 0s);
  w.advance(1s);
  CHECK(log->downs.size() == 2);
  CHECK(status(A).watches == 1); // c's
  // Later watches of B fire at once.
  REQUIRE(!A.watch(remote_ref{b, "x"}, rec));
  w.advance(1ms);
  REQUIRE(log->downs.size() == 3);
  CHECK(log->downs[2].cause == down_cause::node_removed);
}

TEST_CASE("remoting (sim): node_removed fires the watches at once, traffic "
          "flows both ways until the quarantine, which comes after the "
          "delay") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  auto [rec, log] = w.spawn_recorder();
  auto [rec_a, log_a] = w.spawn_recorder();
  auto [rec_b, log_b] = w.spawn_recorder();
  REQUIRE(A.publish("log", rec_a));
  REQUIRE(B.publish("log", rec_b));
  REQUIRE(B.publish("svc", w.spawn(idle)));
  REQUIRE(!A.watch(remote_ref{b, "svc"}, rec));
  w.advance(100ms);
  REQUIRE(log->downs.empty());
  auto removed_at = w.det().now();
  A.node_removed(b, "removed by the test", 5s);
  w.det().run(); // no time passes
  REQUIRE(log->downs.size() == 1);
  CHECK(log->downs[0].ref == remote_ref{b, "svc"});
  CHECK(log->downs[0].cause == down_cause::node_removed);
  CHECK(log->downs[0].reason == "removed by the test");
  CHECK(!A.transport().is_quarantined(b));
  // A new watch of the removed incarnation fires at once, without asking B.
  auto [late, late_log] = w.spawn_recorder();
  REQUIRE(!A.watch(remote_ref{b, "svc"}, late));
  w.det().run();
  REQUIRE(late_log->downs.size() == 1);
  CHECK(late_log->downs[0].cause == down_cause::node_removed);
  CHECK(w.det().now() == removed_at);
  // Until the quarantine, messages still flow both ways.
  w.advance(4s);
  REQUIRE(!A.send(remote_ref{b, "log"}, order_msg(1)));
  REQUIRE(!B.send(remote_ref{a, "log"}, order_msg(2)));
  w.advance(100ms);
  CHECK(log_b->orders.size() == 1);
  CHECK(log_a->orders.size() == 1);
  w.run_until(removed_at + 5s - 1ms);
  CHECK(!A.transport().is_quarantined(b));
  w.run_until(removed_at + 5s);
  CHECK(A.transport().is_quarantined(b));
  auto err = A.send(remote_ref{b, "log"}, order_msg(3));
  CHECK(err.code == static_cast<uint8_t>(cluster::errc::quarantined));
  w.advance(1s);
  CHECK(log_b->orders.size() == 1);
  // The transport's quarantine report fires nothing more.
  CHECK(log->downs.size() == 1);
  CHECK(late_log->downs.size() == 1);
}

TEST_CASE("remoting (sim): a removal fires every watch of one watcher, "
          "which can watch again afterwards") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  auto C = w.start(c);
  auto [rec, log] = w.spawn_recorder();
  REQUIRE(B.publish("x", w.spawn(idle)));
  REQUIRE(B.publish("y", w.spawn(idle)));
  REQUIRE(!A.watch(remote_ref{b, "x"}, rec));
  REQUIRE(!A.watch(remote_ref{b, "y"}, rec));
  w.advance(100ms);
  A.node_removed(b, "gone", 0s);
  w.advance(1ms);
  REQUIRE(log->downs.size() == 2);
  CHECK(log->downs[0].ref == remote_ref{b, "x"});
  CHECK(log->downs[1].ref == remote_ref{b, "y"});
  // The same watcher, with no watch left, watches something else.
  REQUIRE(!A.watch(remote_ref{c, "ghost"}, rec));
  w.advance(100ms);
  REQUIRE(log->downs.size() == 3);
  CHECK(log->downs[2].cause == down_cause::not_published);
}

TEST_CASE("remoting (sim): after a blip the watch still fires when the "
          "remote actor stops") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  auto [rec, log] = w.spawn_recorder();
  auto svc = w.spawn(idle);
  REQUIRE(B.publish("svc", svc));
  REQUIRE(!A.watch(remote_ref{b, "svc"}, rec));
  w.advance(100ms);
  w.net().disconnect(cluster::endpoint_of(a), cluster::endpoint_of(b));
  w.advance(1s);
  caf::anon_send_exit(svc, caf::exit_reason::user_shutdown);
  w.advance(10s);
  REQUIRE(log->downs.size() == 1);
  CHECK(log->downs[0].cause == down_cause::actor_stopped);
}

TEST_CASE("remoting (sim): a down whose ordinary copy is lost fires after "
          "the flush timeout") {
  sim_remoting w;
  auto A = w.start(a, cluster::remoting_settings{2s});
  auto B = w.start(b);
  auto [rec, log] = w.spawn_recorder();
  REQUIRE(B.publish("svc", w.spawn(idle)));
  REQUIRE(!A.watch(remote_ref{b, "svc"}, rec));
  w.advance(100ms);
  // Only the control copy of a down reaches A (as if the ordinary copy
  // were lost with a broken connection).
  std::vector<char> down;
  cluster::append_down(down, "svc", down_cause::actor_stopped, 999, "crafted");
  REQUIRE(!B.transport().send(a, cluster::lane::control,
                              std::as_bytes(std::span{down})));
  w.advance(1900ms);
  CHECK(log->downs.empty());
  w.advance(200ms);
  REQUIRE(log->downs.size() == 1);
  CHECK(log->downs[0].reason == "crafted");
  // The late ordinary copy changes nothing.
  REQUIRE(!B.transport().send(a, cluster::lane::ordinary,
                              std::as_bytes(std::span{down})));
  w.advance(1s);
  CHECK(log->downs.size() == 1);
}

TEST_CASE("remoting (sim): a crashed node restarted with a new uid replaces "
          "the old one: watches of the old incarnation fire, traffic goes "
          "to the new one") {
  sim_remoting w;
  auto A = w.start(a);
  auto B1 = w.start(b);
  auto [rec, log] = w.spawn_recorder();
  REQUIRE(A.publish("log", rec));
  REQUIRE(B1.publish("svc", w.spawn(idle)));
  REQUIRE(!A.watch(remote_ref{b, "svc"}, rec));
  w.advance(100ms);
  // kill -9: no down is sent; nothing fires.
  w.net().crash(cluster::endpoint_of(b));
  B1.stop();
  w.advance(5s);
  CHECK(log->downs.empty());
  unique_address b2{b.host, b.port, 23};
  auto B2 = w.start(b2);
  // The new incarnation talks to A: A's transport quarantines the old uid.
  REQUIRE(!B2.send(remote_ref{a, "log"}, order_msg(7)));
  w.advance(1s);
  REQUIRE(log->orders.size() == 1);
  CHECK(log->orders[0].first.node == b2);
  REQUIRE(log->downs.size() == 1);
  CHECK(log->downs[0].ref == remote_ref{b, "svc"});
  CHECK(log->downs[0].cause == down_cause::node_quarantined);
  CHECK(A.transport().is_quarantined(b));
  // Sending to the old incarnation is refused; the new one is reachable.
  auto err = A.send(remote_ref{b, "svc"}, order_msg(1));
  CHECK(err.category == "cluster");
  CHECK(err.code == static_cast<uint8_t>(cluster::errc::quarantined));
  auto [rec2, log2] = w.spawn_recorder();
  REQUIRE(B2.publish("svc", rec2));
  REQUIRE(!A.send(remote_ref{b2, "svc"}, order_msg(8)));
  w.advance(1s);
  REQUIRE(log2->orders.size() == 1);
  CHECK(log2->orders[0].second.qty == 8);
}

TEST_CASE("remoting (sim): a stopped watcher's watches are dropped on both "
          "ends") {
  sim_remoting w;
  auto A = w.start(a);
  auto B = w.start(b);
  auto watcher = w.spawn(idle);
  auto svc = w.spawn(idle);
  REQUIRE(B.publish("svc", svc));
  REQUIRE(!A.watch(remote_ref{b, "svc"}, watcher));
  w.advance(100ms);
  auto in_before = messages_in(A, b);
  caf::anon_send_exit(watcher, caf::exit_reason::user_shutdown);
  w.advance(100ms);
  // B forgot A's watch: the stop sends no down to A.
  caf::anon_send_exit(svc, caf::exit_reason::user_shutdown);
  w.advance(1s);
  CHECK(messages_in(A, b) == in_before);
}

TEST_CASE("remoting (sim): five nodes, every node sends to every other") {
  sim_remoting w;
  std::vector<unique_address> addrs;
  std::vector<remoting_handle> nodes;
  std::vector<std::shared_ptr<recorded>> logs;
  for (uint16_t i = 0; i < 5; ++i) {
    addrs.push_back(unique_address{"10.0.1.1", uint16_t(2552 + i), 100u + i});
    nodes.push_back(w.start(addrs.back()));
    auto [rec, log] = w.spawn_recorder();
    REQUIRE(nodes.back().publish("log", rec));
    logs.push_back(log);
  }
  for (size_t i = 0; i < 5; ++i)
    for (size_t j = 0; j < 5; ++j)
      if (i != j)
        for (int k = 0; k < 3; ++k)
          REQUIRE(!nodes[i].send(remote_ref{addrs[j], "log"},
                                 order_msg(int64_t(i * 10 + k))));
  w.advance(1s);
  for (size_t j = 0; j < 5; ++j) {
    REQUIRE(logs[j]->orders.size() == 12);
    // Per sender, in send order.
    for (size_t i = 0; i < 5; ++i) {
      std::vector<int64_t> got;
      for (auto& [from, o] : logs[j]->orders)
        if (from.node == addrs[i])
          got.push_back(o.qty);
      if (i != j)
        CHECK(got
              == std::vector<int64_t>{int64_t(i * 10), int64_t(i * 10 + 1),
                                      int64_t(i * 10 + 2)});
    }
  }
}
