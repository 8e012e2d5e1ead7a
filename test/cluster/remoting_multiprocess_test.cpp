// Multi-process test of remoting: this process is one node (real_node over
// tcp_transport); remoting_node processes are the others. A peer is killed
// (SIGKILL) and restarted on the same port with a new uid, frozen
// (SIGSTOP) and blackholed; remote watches must fire only for a stopped
// actor, a replaced incarnation or a node declared removed.

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "tcp_remoting.hpp"
#include "troupe/cluster/errc.hpp"
#include "troupe/test/child_process.hpp"

#ifndef TROUPE_REMOTING_NODE
#  error "TROUPE_REMOTING_NODE must name the remoting_node executable"
#endif

using namespace troupe;
using namespace troupe::test;
using namespace std::chrono_literals;
using cluster::down_cause;

namespace {

// A remoting_node process of the same cluster as `loopback()` nodes.
class node_process {
public:
  node_process(const temp_dir& dir, const std::string& name, uint16_t port)
    : out_(dir.path / (name + ".out")),
      proc_(name,
            {TROUPE_REMOTING_NODE, "--cluster.name=it",
             "--cluster.secret=" + test_secret, "--cluster.host=127.0.0.1",
             "--cluster.port=" + std::to_string(port),
             "--cluster.transport.reconnect_backoff_min=20ms",
             "--cluster.transport.reconnect_backoff_max=200ms",
             "--cluster.transport.handshake_timeout=2s",
             "--cluster.remoting.down_flush_timeout=1s", "--log.level=info"},
            out_) {
    REQUIRE(proc_.pid() > 0);
    REQUIRE(eventually([&] { return ready(); }, 20s));
  }

  /// The node's address from its ready line.
  const unique_address& addr() const {
    return addr_;
  }

  remote_ref ref(std::string name) const {
    return remote_ref{addr_, std::move(name)};
  }

  child& proc() {
    return proc_;
  }

  std::string output() const {
    std::ifstream in{out_};
    return std::string{std::istreambuf_iterator<char>{in}, {}};
  }

private:
  bool ready() {
    if (proc_.crashed())
      FAIL("remoting_node exited:\n" << output());
    std::smatch m;
    auto text = output();
    static const std::regex line{"ready (\\S+)"};
    if (!std::regex_search(text, m, line))
      return false;
    auto a = runtime::parse_unique_address(m[1].str());
    REQUIRE(a);
    addr_ = *a;
    return true;
  }

  fs::path out_;
  child proc_;
  unique_address addr_;
};

caf::message order_msg(int64_t qty) {
  return caf::make_message(order{"ACME", qty, {1.0, 2.0}});
}

// Sends `qty` to `echo` and waits for its ack at `a`'s recorder.
void round_trip(real_node& a, const remote_ref& echo, int64_t qty) {
  auto before = a.log->ack_count();
  REQUIRE(!a.remoting.send(echo, order_msg(qty), a.remoting.reply_ref(a.rec)));
  REQUIRE(eventually([&] { return a.log->ack_count() == before + 1; }));
  a.log->read([&](const recorded& r) {
    CHECK(r.acks.back().second.total == qty * 10);
    auto& from = r.acks.back().first.node;
    CHECK(cluster::endpoint_of(from) == cluster::endpoint_of(echo.node));
    if (echo.node.uid != 0)
      CHECK(from.uid == echo.node.uid);
    return 0;
  });
}

} // namespace

TEST_CASE("remoting, 2 processes: kill -9 and a restart on the same port: "
          "traffic resumes to the new incarnation, the old uid is "
          "quarantined and its watches fire") {
  temp_dir dir;
  real_node a;
  auto first = std::make_unique<node_process>(dir, "b1", 0);
  auto old_addr = first->addr();
  INFO("first incarnation " << to_string(old_addr));
  REQUIRE(!a.remoting.watch(first->ref("echo"), a.rec));
  round_trip(a, first->ref("echo"), 1);
  round_trip(a, first->ref("echo"), 2);

  first->proc().signal(SIGKILL);
  REQUIRE(first->proc().reap(5s));
  // The connection broke, nothing more: a kill is not a removal.
  std::this_thread::sleep_for(1500ms);
  CHECK(a.log->down_count() == 0);
  CHECK(!a.remoting.transport().is_quarantined(old_addr));

  node_process second{dir, "b2", old_addr.port};
  INFO("second incarnation " << to_string(second.addr()));
  REQUIRE(second.addr().port == old_addr.port);
  REQUIRE(second.addr().uid != old_addr.uid);
  // Traffic to the new incarnation (the reconnect's handshake names the
  // new uid, which replaces and quarantines the old one).
  round_trip(a, second.ref("echo"), 3);
  REQUIRE(eventually([&] { return a.log->down_count() == 1; }));
  a.log->read([&](const recorded& r) {
    CHECK(r.downs[0].ref == remote_ref{old_addr, "echo"});
    CHECK(r.downs[0].cause == down_cause::node_quarantined);
    return 0;
  });
  CHECK(a.remoting.transport().is_quarantined(old_addr));
  auto err = a.remoting.send(remote_ref{old_addr, "echo"}, order_msg(4));
  CHECK(err.code == static_cast<uint8_t>(cluster::errc::quarantined));
  // Addressed by host:port alone (uid 0), traffic reaches the new one.
  round_trip(a, remote_ref{{old_addr.host, old_addr.port, 0}, "echo"}, 5);
  CHECK(second.proc().stop(10s)); // graceful shutdown exits 0
}

TEST_CASE("remoting, 2 processes: watches fire when the remote actor stops "
          "and when the node is declared removed, not on a short blackhole "
          "or freeze") {
  temp_dir dir;
  real_node a;
  node_process b{dir, "b", 0};
  REQUIRE(!a.remoting.watch(b.ref("echo"), a.rec));
  REQUIRE(!a.remoting.watch(b.ref("svc"), a.rec));
  round_trip(a, b.ref("echo"), 1);

  // The remote actor stops: one down, for that actor.
  REQUIRE(!a.remoting.send(b.ref("svc"), caf::make_message(caf::atom("stop"))));
  REQUIRE(eventually([&] { return a.log->down_count() == 1; }));
  a.log->read([&](const recorded& r) {
    CHECK(r.downs[0].ref == b.ref("svc"));
    CHECK(r.downs[0].cause == down_cause::actor_stopped);
    return 0;
  });

  // A short blackhole in both directions: nothing fires.
  auto ep = cluster::endpoint_of(b.addr());
  cluster::link_fault hole;
  hole.blackhole = true;
  a.remoting.transport().set_fault(ep, cluster::direction::outbound, hole);
  a.remoting.transport().set_fault(ep, cluster::direction::inbound, hole);
  std::this_thread::sleep_for(2s);
  a.remoting.transport().heal(ep);
  // A frozen peer (SIGSTOP): nothing fires either.
  b.proc().signal(SIGSTOP);
  std::this_thread::sleep_for(1500ms);
  b.proc().signal(SIGCONT);
  round_trip(a, b.ref("echo"), 2);
  CHECK(a.log->down_count() == 1);

  // Membership declares b removed: the remaining watch fires.
  a.remoting.node_removed(b.addr(), "removed by the test's membership", 0s);
  REQUIRE(eventually([&] { return a.log->down_count() == 2; }));
  a.log->read([&](const recorded& r) {
    CHECK(r.downs[1].ref == b.ref("echo"));
    CHECK(r.downs[1].cause == down_cause::node_removed);
    CHECK(r.downs[1].reason == "removed by the test's membership");
    return 0;
  });
  CHECK(a.remoting.transport().is_quarantined(b.addr()));
  CHECK(b.proc().stop(10s));
}
