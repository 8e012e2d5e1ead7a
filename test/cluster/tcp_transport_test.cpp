#include <catch2/catch.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tcp_fixture.hpp"
#include "troupe/cluster/errc.hpp"

using namespace std::chrono_literals;
using namespace troupe::cluster;
using namespace troupe::test;

TEST_CASE("tcp: 2 to 5 nodes exchange frames, FIFO per sender and lane") {
  auto n = GENERATE(2, 5);
  INFO(n << " nodes");
  std::vector<std::unique_ptr<tcp_node>> nodes;
  for (int i = 0; i < n; ++i)
    nodes.push_back(std::make_unique<tcp_node>(loopback()));
  const int ordinary = 300;
  const int control = 30;
  for (auto& from : nodes)
    for (auto& to : nodes)
      if (from != to) {
        for (int k = 0; k < ordinary; ++k) {
          from->send(to->addr(), lane::ordinary, "o" + std::to_string(k));
          if (k % 10 == 0)
            from->send(to->addr(), lane::control, "c" + std::to_string(k / 10));
        }
      }
  size_t expected = static_cast<size_t>((n - 1) * (ordinary + control));
  for (auto& to : nodes)
    REQUIRE(eventually([&] { return to->events->frame_count() == expected; }));
  for (auto& to : nodes)
    for (auto& from : nodes)
      if (from != to) {
        CHECK(to->events->payloads(from->ep(), lane::ordinary)
              == numbered("o", 0, ordinary));
        CHECK(to->events->payloads(from->ep(), lane::control)
              == numbered("c", 0, control));
        CHECK(to->counters_of(from->ep()).messages_in
              == static_cast<uint64_t>(ordinary + control));
        CHECK(from->counters_of(to->ep()).messages_out
              == static_cast<uint64_t>(ordinary + control));
        CHECK(to->events->has_event("up inbound " + to_string(from->addr())));
        CHECK(from->events->has_event("up outbound " + to_string(to->addr())));
      }
  for (auto& node : nodes)
    CHECK(node->total().dropped() == 0);
}

TEST_CASE("tcp: sends from several threads, idle and in bursts, arrive "
          "whole and in order per thread") {
  // An idle connection is written by the sending thread itself; a send
  // finding a busy connection queues for the io thread. While the receiver
  // stops reading, a large frame fills the socket buffers, the direct write
  // comes up short, and the io thread must go on in the middle of a frame.
  tcp_node a{loopback()};
  tcp_node b{loopback()};
  const int threads = 4;
  auto payload = [](int t, int k) {
    auto head = "t" + std::to_string(t) + "-" + std::to_string(k) + "-";
    bool large = k % 40 == 0 || (t == 0 && k < 40);
    size_t size = large ? 600 * 1024 : 16 + static_cast<size_t>(k % 5);
    return head + std::string(size, static_cast<char>('a' + (t + k) % 26));
  };
  std::vector<int> sent(threads, 0);
  // Each thread pauses after every `pause_every` sends (the connection
  // goes idle, the next send writes directly).
  auto round = [&](int count, int pause_every) {
    std::vector<std::thread> senders;
    for (int t = 0; t < threads; ++t)
      senders.emplace_back([&, t] {
        for (int i = 0; i < count; ++i) {
          auto p = payload(t, sent[static_cast<size_t>(t)]++);
          CHECK(a.transport->send(b.addr(), lane::ordinary, bytes_of(p)).message
                == "");
          if (i % pause_every == 0)
            std::this_thread::sleep_for(std::chrono::microseconds{500});
        }
      });
    for (auto& s : senders)
      s.join();
  };
  a.send(b.addr(), lane::ordinary, "warm-up");
  REQUIRE(eventually([&] { return b.events->frame_count() == 1; }));
  // b stops reading. Large frames, one at a time, each written directly
  // once the io thread is idle again, until the socket buffers are full:
  // then a direct write comes up short and the rest waits for b.
  b.events->hold();
  uint64_t written = 1;
  while (sent[0] < 40) {
    auto p = payload(0, sent[0]++);
    REQUIRE(a.transport->send(b.addr(), lane::ordinary, bytes_of(p)).message
            == "");
    if (!eventually(
          [&] { return a.counters_of(b.ep()).messages_out == written + 1; },
          std::chrono::milliseconds{300}))
      break;
    ++written;
    std::this_thread::sleep_for(std::chrono::milliseconds{2}); // io idle
  }
  INFO("frames written whole before the buffers were full: " << written - 1);
  CHECK(sent[0] < 40);
  b.events->release();
  round(100, 3);
  size_t total = 1;
  for (auto n : sent)
    total += static_cast<size_t>(n);
  REQUIRE(eventually([&] { return b.events->frame_count() == total; }));
  auto got = b.events->payloads(a.ep(), lane::ordinary);
  REQUIRE(got.size() == total);
  CHECK(got.front() == "warm-up");
  std::vector<int> next(threads, 0);
  for (size_t i = 1; i < got.size(); ++i) {
    auto t = got[i][1] - '0';
    REQUIRE((t >= 0 && t < threads));
    CHECK(got[i] == payload(t, next[static_cast<size_t>(t)]));
    ++next[static_cast<size_t>(t)];
  }
  CHECK(next == sent);
  CHECK(a.total().dropped() == 0);
  CHECK(a.counters_of(b.ep()).messages_out == total);
  CHECK(b.counters_of(a.ep()).messages_in == total);
}

TEST_CASE("tcp: a restart with a new uid replaces and quarantines the old") {
  tcp_node a{loopback()};
  auto b = std::make_unique<tcp_node>(loopback());
  auto b_old = b->addr();
  a.send(b_old, lane::ordinary, "hello");
  b->send(a.addr(), lane::ordinary, "hi");
  REQUIRE(eventually([&] { return b->events->frame_count() == 1; }));
  REQUIRE(eventually([&] { return a.events->frame_count() == 1; }));
  b.reset(); // stops b: a sees both connections go down
  REQUIRE(eventually([&] {
    return a.events->has_event("down outbound " + to_string(b_old))
           && a.events->has_event("down inbound " + to_string(b_old));
  }));
  CHECK(!a.transport->is_quarantined(b_old));
  // The new incarnation, same host:port, new uid.
  tcp_node b2{loopback(b_old.port)};
  REQUIRE(b2.addr().uid != b_old.uid);
  a.send(b2.any(), lane::ordinary, "to whoever lives there");
  REQUIRE(eventually([&] { return b2.events->frame_count() == 1; }));
  CHECK(a.events->has_event("quarantined " + to_string(b_old)));
  CHECK(a.events->has_event("up outbound " + to_string(b2.addr())));
  CHECK(a.transport->is_quarantined(b_old));
  auto err = a.transport->send(b_old, lane::ordinary, bytes_of("late"));
  CHECK(err.code == static_cast<uint8_t>(errc::quarantined));
  CHECK(a.counters_of(b2.ep()).dropped(drop_reason::quarantined) == 1);
  // The new incarnation's own connection to a is accepted.
  b2.send(a.addr(), lane::ordinary, "from b2");
  REQUIRE(eventually([&] { return a.events->frame_count() == 2; }));
  CHECK(a.events->frames().back().from == b2.addr());
}

TEST_CASE("tcp: an old incarnation coming back is refused") {
  tcp_node a{loopback()};
  auto b = std::make_unique<tcp_node>(loopback());
  auto b_old = b->addr();
  b->send(a.addr(), lane::ordinary, "old");
  REQUIRE(eventually([&] { return a.events->frame_count() == 1; }));
  b.reset();
  {
    tcp_node b2{loopback(b_old.port)}; // replaces b_old at a
    b2.send(a.addr(), lane::ordinary, "new");
    REQUIRE(eventually([&] { return a.events->frame_count() == 2; }));
  }
  REQUIRE(a.transport->is_quarantined(b_old));
  // A process with the old uid (as if b had been frozen, not dead).
  tcp_node zombie{loopback(b_old.port, b_old.uid)};
  zombie.send(a.addr(), lane::ordinary, "zombie");
  REQUIRE(eventually(
    [&] { return zombie.counters_of(a.ep()).handshake_failures >= 2; }));
  CHECK(a.events->frame_count() == 2);
  CHECK(a.counters_of(zombie.ep()).handshake_failures >= 1);
}

TEST_CASE("tcp: blackhole then heal, FIFO for what was sent after the heal") {
  tcp_node a{loopback()};
  tcp_node b{loopback()};
  a.send(b.addr(), lane::ordinary, "before");
  REQUIRE(eventually([&] { return b.events->frame_count() == 1; }));
  bool outbound = GENERATE(true, false);
  INFO((outbound ? "outbound at the sender" : "inbound at the receiver"));
  if (outbound)
    a.transport->set_fault(b.ep(), direction::outbound, link_fault{true});
  else
    b.transport->set_fault(a.ep(), direction::inbound, link_fault{true});
  for (auto& p : numbered("lost", 0, 50))
    a.send(b.addr(), lane::ordinary, p);
  auto& dropper = outbound ? a : b;
  auto& dropped_peer = outbound ? b : a;
  REQUIRE(eventually([&] {
    return dropper.counters_of(dropped_peer.ep())
             .dropped(drop_reason::blackholed)
           == 50;
  }));
  a.transport->heal(b.ep());
  b.transport->heal(a.ep());
  for (auto& p : numbered("after", 0, 50))
    a.send(b.addr(), lane::ordinary, p);
  REQUIRE(eventually([&] { return b.events->frame_count() == 51; }));
  auto want = numbered("after", 0, 50);
  want.insert(want.begin(), "before");
  CHECK(b.events->payloads(a.ep(), lane::ordinary) == want);
  CHECK(dropper.events->dropped(drop_reason::blackholed) == 50);
  // A blackhole is not a disconnect: no down events.
  for (auto& e : a.events->events())
    CHECK(e.rfind("down", 0) == std::string::npos);
}

TEST_CASE("tcp: injected delay holds frames and keeps their order") {
  tcp_node a{loopback()};
  tcp_node b{loopback()};
  a.send(b.addr(), lane::ordinary, "warm-up");
  REQUIRE(eventually([&] { return b.events->frame_count() == 1; }));
  b.transport->set_fault(a.ep(), direction::inbound, link_fault{false, 300ms});
  auto t0 = std::chrono::steady_clock::now();
  a.send(b.addr(), lane::ordinary, "slow");
  REQUIRE(
    eventually([&] { return b.events->frame_count() == 2; })); // after ~300 ms
  CHECK(std::chrono::steady_clock::now() - t0 >= 300ms);
  a.transport->set_fault(b.ep(), direction::outbound, link_fault{false, 200ms});
  a.send(b.addr(), lane::ordinary, "slower");
  a.transport->heal(b.ep());
  b.transport->heal(a.ep());
  a.send(b.addr(), lane::ordinary, "fast"); // must not overtake
  REQUIRE(eventually([&] { return b.events->frame_count() == 4; }));
  CHECK(b.events->payloads(a.ep(), lane::ordinary)
        == std::vector<std::string>{"warm-up", "slow", "slower", "fast"});
}

TEST_CASE("tcp: drop probability drops a share, counted") {
  auto s = loopback();
  s.seed = 99;
  tcp_node a{s};
  tcp_node b{loopback()};
  a.send(b.addr(), lane::ordinary, "warm-up");
  REQUIRE(eventually([&] { return b.events->frame_count() == 1; }));
  a.transport->set_fault(b.ep(), direction::outbound,
                         link_fault{false, 0s, 0.5});
  for (auto& p : numbered("m", 0, 1000))
    a.send(b.addr(), lane::ordinary, p);
  auto dropped = a.counters_of(b.ep()).dropped(drop_reason::injected);
  CHECK(dropped > 400);
  CHECK(dropped < 600);
  REQUIRE(
    eventually([&] { return b.events->frame_count() == 1001 - dropped; }));
}

TEST_CASE("tcp: a full queue drops the oldest frames, counted") {
  uint16_t port = 0;
  {
    tcp_node probe{loopback()};
    port = probe.addr().port;
  } // nothing listens on `port` now
  auto s = loopback();
  s.outbound_queue_size = 10;
  tcp_node a{s};
  unique_address b_any{"127.0.0.1", port, 0};
  for (auto& p : numbered("m", 0, 100))
    a.send(b_any, lane::ordinary, p);
  CHECK(a.counters_of({"127.0.0.1", port}).dropped(drop_reason::queue_overflow)
        == 90);
  // Connection refused at least twice before the peer appears.
  REQUIRE(eventually([&] {
    return a.counters_of({"127.0.0.1", port}).reconnects >= 1;
  }));
  tcp_node b{loopback(port)};
  REQUIRE(eventually([&] { return b.events->frame_count() == 10; }));
  CHECK(b.events->payloads(a.ep(), lane::ordinary) == numbered("m", 90, 100));
  CHECK(a.counters_of(b.ep()).reconnects >= 1);
  CHECK(a.events->dropped(drop_reason::queue_overflow) == 90);
}

TEST_CASE("tcp: within one batch control frames go first") {
  uint16_t port = 0;
  {
    tcp_node probe{loopback()};
    port = probe.addr().port;
  }
  tcp_node a{loopback()};
  unique_address b_any{"127.0.0.1", port, 0};
  // Both wait in the queues until b exists, then leave in one batch.
  a.send(b_any, lane::ordinary, "ordinary");
  a.send(b_any, lane::control, "control");
  REQUIRE(eventually([&] {
    return a.counters_of({"127.0.0.1", port}).reconnects >= 1;
  }));
  tcp_node b{loopback(port)};
  REQUIRE(eventually([&] { return b.events->frame_count() == 2; }));
  auto frames = b.events->frames();
  CHECK(frames[0].payload == "control");
  CHECK(frames[1].payload == "ordinary");
}

TEST_CASE("tcp: frames for another incarnation are dropped at the handshake") {
  auto b = std::make_unique<tcp_node>(loopback());
  auto b_old = b->addr();
  auto port = b_old.port;
  b.reset();
  tcp_node a{loopback()};
  // Queued while nobody listens: for b_old (a's membership view), for an
  // uid a never heard of, and for whoever lives there.
  a.send(b_old, lane::ordinary, "for the old one");
  a.send({"127.0.0.1", port, 4242}, lane::ordinary, "for a stranger");
  a.send({"127.0.0.1", port, 0}, lane::ordinary, "for anyone");
  REQUIRE(eventually([&] {
    return a.counters_of({"127.0.0.1", port}).reconnects >= 1;
  }));
  tcp_node b2{loopback(port)};
  REQUIRE(eventually([&] { return b2.events->frame_count() == 1; }));
  CHECK(b2.events->frames()[0].payload == "for anyone");
  auto& c = a.counters_of(b2.ep());
  CHECK(c.dropped(drop_reason::incarnation_mismatch) == 2);
  CHECK(a.events->dropped(drop_reason::incarnation_mismatch) == 2);
}

namespace {

// Records like recording_listener, but can hold the receiver's io thread in
// a callback, so that TCP back-pressure builds a backlog at the sender.
class gated_listener : public recording_listener {
public:
  void on_frames(const unique_address& from,
                 std::span<const received_frame> frames) override {
    recording_listener::on_frames(from, frames);
    if (closed_.load()) {
      held_ = true;
      while (closed_.load())
        std::this_thread::sleep_for(1ms);
    }
  }

  std::atomic<bool> closed_{false};
  std::atomic<bool> held_{false};
};

} // namespace

TEST_CASE("tcp: control frames overtake a backlog of ordinary frames") {
  auto s = loopback();
  s.outbound_queue_size = 5000;
  tcp_node a{s};
  auto gate = std::make_shared<gated_listener>();
  auto made = tcp_transport::make(loopback(), gate);
  REQUIRE(made);
  auto& b = **made;
  auto b_ep = endpoint_of(b.local_address());
  a.send(b.local_address(), lane::ordinary, "warm-up");
  REQUIRE(eventually([&] { return gate->frame_count() == 1; }));
  gate->closed_ = true;
  a.send(b.local_address(), lane::ordinary, "hold");
  REQUIRE(eventually([&] { return gate->held_.load(); }));
  // b reads nothing now: the kernel buffers fill, then a's queue.
  std::string big(20000, 'x');
  for (int i = 0; i < 4000; ++i)
    a.send(b.local_address(), lane::ordinary, big);
  a.send(b.local_address(), lane::control, "urgent");
  gate->closed_ = false;
  REQUIRE(eventually([&] { return gate->frame_count() == 4003; }, 30s));
  auto frames = gate->frames();
  size_t pos = 0;
  while (frames[pos].payload != "urgent")
    ++pos;
  INFO("control frame arrived as #" << pos << " of 4003");
  // Only what was already in the socket buffers (a few MB) goes first.
  CHECK(pos < 1000);
  CHECK(a.counters_of(b_ep).dropped() == 0);
}

TEST_CASE("tcp: remove_node quarantines a live node and closes its links") {
  tcp_node a{loopback()};
  tcp_node b{loopback()};
  a.send(b.addr(), lane::ordinary, "x");
  b.send(a.addr(), lane::ordinary, "y");
  REQUIRE(eventually([&] {
    return a.events->frame_count() == 1 && b.events->frame_count() == 1;
  }));
  a.transport->remove_node(b.addr());
  REQUIRE(eventually([&] {
    return a.events->has_event("quarantined " + to_string(b.addr()))
           && a.events->has_event("down outbound " + to_string(b.addr()))
           && a.events->has_event("down inbound " + to_string(b.addr()));
  }));
  CHECK(a.transport->send(b.addr(), lane::ordinary, bytes_of("z")).code
        == static_cast<uint8_t>(errc::quarantined));
  // b still tries, and is refused at every handshake.
  REQUIRE(eventually([&] {
    return b.events->has_event("down outbound " + to_string(a.addr()));
  }));
  b.send(a.addr(), lane::ordinary, "refused");
  REQUIRE(
    eventually([&] { return b.counters_of(a.ep()).handshake_failures >= 2; }));
  CHECK(a.events->frame_count() == 1);
}

TEST_CASE("tcp: send errors name the problem") {
  auto s = loopback();
  s.max_frame_size = 1024;
  tcp_node a{s};
  tcp_node b{loopback()};
  auto code = [&](const unique_address& to, size_t n) {
    return static_cast<errc>(
      a.transport->send(to, lane::ordinary, std::vector<std::byte>(n)).code);
  };
  CHECK(code(b.addr(), 1024) == errc::none);
  CHECK(code(b.addr(), 1025) == errc::frame_too_large);
  CHECK(code(a.addr(), 1) == errc::invalid_destination);
  REQUIRE(eventually([&] { return b.events->frame_count() == 1; }));
  auto wrong = b.addr();
  wrong.uid += 1;
  CHECK(code(wrong, 1) == errc::incarnation_mismatch);
  a.transport->shutdown();
  CHECK(code(b.addr(), 1) == errc::shutting_down);
}

TEST_CASE("tcp: a handshake between two cluster incarnations is reported on "
          "both nodes, and frames flow") {
  tcp_node a{loopback()};
  tcp_node b{loopback()};
  cluster_incarnation x{0x11, wall_time{std::chrono::hours{1}}};
  cluster_incarnation y{0x22, wall_time{std::chrono::hours{2}}};
  a.transport->set_incarnation(x);
  b.transport->set_incarnation(y);
  a.send(b.addr(), lane::control, "a->b");
  b.send(a.addr(), lane::control, "b->a");
  auto a_saw = "foreign " + to_string(b.addr()) + " " + to_string(y);
  auto b_saw = "foreign " + to_string(a.addr()) + " " + to_string(x);
  CHECK(eventually(
    [&] { return a.events->has_event(a_saw) && b.events->has_event(b_saw); }));
  CHECK(eventually([&] {
    return b.events->payloads(a.ep(), lane::control)
             == std::vector<std::string>{"a->b"}
           && a.events->payloads(b.ep(), lane::control)
                == std::vector<std::string>{"b->a"};
  }));
  // A new connection after set_incarnation carries the new value: the same
  // incarnation on both sides reports nothing more.
  tcp_node c{loopback()};
  c.transport->set_incarnation(y);
  c.send(b.addr(), lane::control, "c->b");
  REQUIRE(eventually(
    [&] { return b.events->payloads(c.ep(), lane::control).size() == 1; }));
  for (auto& e : b.events->events()) {
    bool about_c = e.find(to_string(c.addr())) != std::string::npos;
    CHECK_FALSE((about_c && e.rfind("foreign", 0) == 0));
  }
}
