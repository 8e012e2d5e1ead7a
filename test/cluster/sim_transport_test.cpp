#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "recording_listener.hpp"
#include "troupe/cluster/errc.hpp"
#include "troupe/cluster/sim_transport.hpp"

using namespace std::chrono_literals;
using namespace troupe::cluster;
using troupe::test::bytes_of;
using troupe::test::recording_listener;

namespace {

unique_address addr(uint16_t port, uint64_t uid) {
  return {"10.0.0.1", port, uid};
}

const unique_address a1 = addr(1, 101);
const unique_address b1 = addr(2, 201);
const unique_address b2 = addr(2, 202); // b restarted
const endpoint a_ep{"10.0.0.1", 1};
const endpoint b_ep{"10.0.0.1", 2};

std::vector<std::string> numbered(const std::string& prefix, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; ++i)
    out.push_back(prefix + std::to_string(i));
  return out;
}

void send_all(transport& t, const unique_address& to, lane ln,
              const std::vector<std::string>& payloads) {
  for (auto& p : payloads)
    REQUIRE(!t.send(to, ln, bytes_of(p)));
}

struct two_nodes {
  explicit two_nodes(uint64_t seed = 1, sim_settings s = {})
    : net(seed, s), a(net.start_node(a1, la)), b(&net.start_node(b1, lb)) {}

  recording_listener la;
  recording_listener lb;
  sim_network net;
  sim_transport& a;
  sim_transport* b;
};

} // namespace

TEST_CASE("sim: frames arrive after the handshake and latency, FIFO per lane") {
  two_nodes w;
  send_all(w.a, b1, lane::ordinary, numbered("o", 0, 50));
  send_all(w.a, b1, lane::control, numbered("c", 0, 5));
  auto t0 = w.net.now();
  // Handshake 4 ms, then 1 ms latency: nothing before t0 + 5ms.
  w.net.advance_to(t0 + 4ms);
  CHECK(w.lb.frame_count() == 0);
  w.net.advance_to(t0 + 5ms);
  CHECK(w.lb.payloads(a_ep, lane::ordinary) == numbered("o", 0, 50));
  CHECK(w.lb.payloads(a_ep, lane::control) == numbered("c", 0, 5));
  CHECK(w.la.events()
        == std::vector<std::string>{"up outbound " + to_string(b1)});
  CHECK(w.lb.events()
        == std::vector<std::string>{"up inbound " + to_string(a1)});
  auto metrics = w.a.metrics();
  auto m = metrics.find(b_ep);
  REQUIRE(m);
  CHECK(m->uid == 201);
  CHECK(m->counters.messages_out == 55);
  CHECK(w.b->metrics().find(a_ep)->counters.messages_in == 55);
}

TEST_CASE("sim: jitter never reorders, and a seed replays exactly") {
  auto run = [](uint64_t seed) {
    sim_settings s;
    s.jitter = 5ms;
    two_nodes w{seed, s};
    std::vector<std::string> trace;
    for (int round = 0; round < 20; ++round) {
      send_all(w.a, b1, lane::ordinary,
               numbered("r" + std::to_string(round), 0, 10));
      w.net.advance_to(w.net.now() + 1ms);
      trace.push_back(std::to_string(w.lb.frame_count()));
    }
    w.net.run_until_idle();
    auto got = w.lb.payloads(a_ep, lane::ordinary);
    std::vector<std::string> want;
    for (int round = 0; round < 20; ++round)
      for (auto& p : numbered("r" + std::to_string(round), 0, 10))
        want.push_back(p);
    CHECK(got == want);
    return trace;
  };
  CHECK(run(5) == run(5));
  CHECK(run(5) != run(6));
}

TEST_CASE("sim: blackhole then heal, per direction") {
  two_nodes w;
  send_all(w.a, b1, lane::ordinary, {"before"});
  w.net.run_until_idle();
  SECTION("outbound at the sender") {
    w.a.set_fault(b_ep, direction::outbound, link_fault{true});
  }
  SECTION("inbound at the receiver") {
    w.b->set_fault(a_ep, direction::inbound, link_fault{true});
  }
  send_all(w.a, b1, lane::ordinary, numbered("lost", 0, 10));
  w.net.run_until_idle();
  w.a.heal(b_ep);
  w.b->heal(a_ep);
  send_all(w.a, b1, lane::ordinary, numbered("after", 0, 10));
  w.net.run_until_idle();
  auto want = numbered("after", 0, 10);
  want.insert(want.begin(), "before");
  CHECK(w.lb.payloads(a_ep, lane::ordinary) == want);
  auto drops = w.a.metrics().total.dropped(drop_reason::blackholed)
               + w.b->metrics().total.dropped(drop_reason::blackholed);
  CHECK(drops == 10);
  CHECK(w.la.dropped(drop_reason::blackholed)
          + w.lb.dropped(drop_reason::blackholed)
        == 10);
  // A blackhole is not a disconnect.
  CHECK(w.la.events().size() == 1);
}

TEST_CASE("sim: drop probability drops about that share, counted") {
  two_nodes w{42};
  w.a.set_fault(b_ep, direction::outbound, link_fault{false, 0s, 0.3});
  send_all(w.a, b1, lane::ordinary, numbered("m", 0, 2000));
  w.net.run_until_idle();
  auto got = w.lb.frame_count();
  CHECK(got > 1300);
  CHECK(got < 1500);
  CHECK(w.a.metrics().total.dropped(drop_reason::injected) == 2000 - got);
}

TEST_CASE("sim: injected delay delays without reordering") {
  two_nodes w;
  send_all(w.a, b1, lane::ordinary, {"warm-up"});
  w.net.run_until_idle();
  w.a.set_fault(b_ep, direction::outbound, link_fault{false, 50ms});
  send_all(w.a, b1, lane::ordinary, {"slow"});
  w.a.heal(b_ep);
  send_all(w.a, b1, lane::ordinary, {"fast"}); // must not overtake
  auto t0 = w.net.now();
  w.net.advance_to(t0 + 50ms);
  CHECK(w.lb.frame_count() == 1);
  w.net.advance_to(t0 + 51ms);
  CHECK(w.lb.payloads(a_ep, lane::ordinary)
        == std::vector<std::string>{"warm-up", "slow", "fast"});
}

TEST_CASE("sim: a crash is a disconnect, a restart quarantines the old uid") {
  two_nodes w;
  send_all(w.a, b1, lane::ordinary, {"one"});
  w.net.run_until_idle();
  w.net.crash(b_ep);
  w.net.run_until_idle();
  CHECK(w.la.has_event("down outbound " + to_string(b1)));
  CHECK(!w.la.has_event("quarantined " + to_string(b1)));
  // Frames for the old uid and for "any" wait while b is gone.
  send_all(w.a, b1, lane::ordinary, {"for-old"});
  send_all(w.a, addr(2, 0), lane::ordinary, {"for-any"});
  w.net.advance_to(w.net.now() + 2s); // reconnect attempts fail meanwhile
  CHECK(w.a.metrics().find(b_ep)->counters.reconnects >= 2);
  recording_listener lb2;
  w.net.start_node(b2, lb2);
  w.net.advance_to(w.net.now() + 10s);
  CHECK(w.la.has_event("quarantined " + to_string(b1)));
  CHECK(w.la.has_event("up outbound " + to_string(b2)));
  CHECK(lb2.payloads(a_ep, lane::ordinary)
        == std::vector<std::string>{"for-any"});
  CHECK(w.a.metrics().total.dropped(drop_reason::quarantined) == 1);
  CHECK(w.a.is_quarantined(b1));
  auto err = w.a.send(b1, lane::ordinary, bytes_of("late"));
  CHECK(err.code == static_cast<uint8_t>(errc::quarantined));
}

TEST_CASE("sim: remove_node quarantines and refuses the live old node") {
  two_nodes w;
  send_all(w.a, b1, lane::ordinary, {"one"});
  send_all(*w.b, a1, lane::ordinary, {"back"});
  w.net.run_until_idle();
  w.a.remove_node(b1);
  w.net.run_until_idle();
  CHECK(w.la.has_event("quarantined " + to_string(b1)));
  CHECK(w.la.has_event("down outbound " + to_string(b1)));
  CHECK(w.la.has_event("down inbound " + to_string(b1)));
  CHECK(w.lb.has_event("down outbound " + to_string(a1)));
  // b keeps trying to reach a and is refused every time.
  send_all(*w.b, a1, lane::ordinary, {"refused"});
  w.net.advance_to(w.net.now() + 3s);
  CHECK(w.la.payloads(b_ep, lane::ordinary)
        == std::vector<std::string>{"back"});
  CHECK(w.b->metrics().find(a_ep)->counters.handshake_failures >= 2);
  CHECK(w.a.send(b1, lane::ordinary, bytes_of("x")).code
        == static_cast<uint8_t>(errc::quarantined));
}

TEST_CASE("sim: a full queue drops the oldest, counted") {
  sim_settings s;
  s.outbound_queue_size = 3;
  recording_listener la;
  recording_listener lb;
  sim_network net{1, s};
  auto& a = net.start_node(a1, la);
  send_all(a, addr(2, 0), lane::ordinary, numbered("m", 0, 10));
  CHECK(a.metrics().total.dropped(drop_reason::queue_overflow) == 7);
  net.start_node(b1, lb);
  net.advance_to(net.now() + 5s);
  CHECK(lb.payloads(a_ep, lane::ordinary) == numbered("m", 7, 10));
  CHECK(la.dropped(drop_reason::queue_overflow) == 7);
}

TEST_CASE("sim: a disconnect is not a quarantine, traffic resumes") {
  two_nodes w;
  send_all(w.a, b1, lane::ordinary, {"one"});
  w.net.run_until_idle();
  w.net.disconnect(a_ep, b_ep);
  w.net.run_until_idle();
  CHECK(w.la.has_event("down outbound " + to_string(b1)));
  CHECK(w.lb.has_event("down inbound " + to_string(a1)));
  send_all(w.a, b1, lane::ordinary, {"two"});
  w.net.run_until_idle();
  CHECK(w.lb.payloads(a_ep, lane::ordinary)
        == std::vector<std::string>{"one", "two"});
  CHECK(!w.a.is_quarantined(b1));
}

TEST_CASE("sim: send refuses what it cannot address") {
  sim_settings s;
  s.max_frame_size = 16;
  two_nodes w{1, s};
  auto code = [&](const unique_address& to, size_t size) {
    return static_cast<errc>(
      w.a.send(to, lane::ordinary, std::vector<std::byte>(size)).code);
  };
  CHECK(code(b1, 16) == errc::none);
  CHECK(code(b1, 17) == errc::frame_too_large);
  CHECK(code(a1, 1) == errc::invalid_destination);
  CHECK(code(addr(0, 5), 1) == errc::invalid_destination);
  CHECK(code({"", 2, 5}, 1) == errc::invalid_destination);
  w.net.run_until_idle();
  CHECK(code(b2, 1) == errc::incarnation_mismatch);
  CHECK(w.a.metrics().total.dropped(drop_reason::incarnation_mismatch) == 1);
  w.a.shutdown();
  CHECK(code(b1, 1) == errc::shutting_down);
}

TEST_CASE("sim: the handshake reports another cluster incarnation on both "
          "sides, and the connection comes up anyway") {
  two_nodes w;
  cluster_incarnation x{0x11, wall_time{std::chrono::hours{1}}};
  cluster_incarnation y{0x22, wall_time{std::chrono::hours{2}}};
  w.a.set_incarnation(x);
  w.b->set_incarnation(y);
  send_all(w.a, b1, lane::control, {"hello"});
  w.net.advance_to(w.net.now() + 10ms);
  CHECK(w.lb.payloads(a_ep, lane::control)
        == std::vector<std::string>{"hello"});
  CHECK(w.la.has_event("foreign " + to_string(b1) + " " + to_string(y)));
  CHECK(w.lb.has_event("foreign " + to_string(a1) + " " + to_string(x)));
}

TEST_CASE("sim: the same incarnation, or one side without any, reports "
          "nothing") {
  auto [ia, ib] = GENERATE(table<uint64_t, uint64_t>({{7, 7}, {0, 7}, {7, 0}}));
  two_nodes w;
  w.a.set_incarnation({ia, wall_time{}});
  w.b->set_incarnation({ib, wall_time{}});
  send_all(w.a, b1, lane::control, {"hello"});
  w.net.advance_to(w.net.now() + 10ms);
  CHECK(w.lb.frame_count() == 1);
  for (auto* l : {&w.la, &w.lb})
    for (auto& e : l->events())
      CHECK(e.rfind("foreign", 0) != 0);
}
