// The chaos test's network (troupe/test/netns_network.hpp) with real
// sockets: node namespaces on a bridge, a listener in the hub, partitions
// that cut nodes from each other but never from the hub, an asymmetric
// shape that drops one direction only, heals.
//
// Each socket lives in the namespace of the thread that created it, so the
// endpoints are sockets made by short-lived threads that entered a node's
// (or the hub's) namespace; the test then drives them from its own thread.
// (The same as a process per namespace, without a helper program.)
//
// Needs root (ip netns, iptables). Without it the test prints the skip
// marker (CTest reports it skipped, see nemesis.cmake) and the reason;
// under CI=true it fails instead (DESIGN.md §10).

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "troupe/test/command.hpp"
#include "troupe/test/netns_network.hpp"

using namespace troupe::test;
using namespace std::chrono_literals;

namespace {

constexpr uint16_t tcp_port = 7100;
constexpr uint16_t udp_port = 7200;

/// How long a packet may take on the bridge before the test calls it lost.
constexpr auto lost_after = 1000ms;

/// How long a packet that must arrive may take (generous: a loaded host).
constexpr auto arrives_within = 5000ms;

/// A file descriptor, closed on destruction.
class fd {
public:
  explicit fd(int value = -1) : value_(value) {}
  fd(fd&& other) noexcept : value_(std::exchange(other.value_, -1)) {}
  fd& operator=(fd&& other) noexcept {
    std::swap(value_, other.value_);
    return *this;
  }
  ~fd() {
    if (value_ >= 0)
      ::close(value_);
  }
  int get() const {
    return value_;
  }

private:
  int value_;
};

/// The network, or nothing when this environment cannot run it (the skip
/// marker is printed then; under CI=true the test fails).
std::unique_ptr<netns_network> make_network(size_t nodes) {
  auto net = std::make_unique<netns_network>(nodes);
  if (auto why = net->unsupported()) {
    if (in_ci())
      FAIL("network namespaces are required under CI=true: " << *why);
    std::cout << skip_marker << " " << *why << std::endl;
    WARN("skipped: " << *why);
    return nullptr;
  }
  auto err = net->create();
  INFO(err.message);
  REQUIRE(!err);
  return net;
}

/// Node `node`'s address (0: the hub's) and `port`.
sockaddr_in endpoint(size_t node, uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  auto host
    = node == 0 ? netns_network::hub_address() : netns_network::address(node);
  ::inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  return addr;
}

/// A socket of `type` in node `node`'s namespace (0: the hub's), bound to
/// that namespace's address and `port`.
fd socket_in(const netns_network& net, size_t node, int type, uint16_t port) {
  int made = -1;
  troupe::runtime::error err;
  std::thread{[&] {
    err = node == 0 ? net.enter_hub() : net.enter_node(node);
    if (!err)
      made = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  }}.join();
  INFO(err.message);
  REQUIRE(!err);
  REQUIRE(made >= 0);
  fd s{made};
  int one = 1;
  ::setsockopt(s.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  auto addr = endpoint(node, port);
  REQUIRE(::bind(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr))
          == 0);
  return s;
}

bool readable(int s, std::chrono::milliseconds bound) {
  pollfd p{s, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(bound.count())) == 1;
}

/// The TCP listeners of every node and the hub (index 0) on tcp_port.
struct listeners {
  std::vector<fd> by_node;

  listeners(const netns_network& net) {
    for (size_t i = 0; i <= net.size(); ++i) {
      by_node.push_back(socket_in(net, i, SOCK_STREAM, tcp_port));
      REQUIRE(::listen(by_node.back().get(), 64) == 0);
    }
  }

  /// The next connection accepted by node `node`'s listener.
  fd accept(size_t node) {
    auto l = by_node[node].get();
    REQUIRE(readable(l, arrives_within));
    return fd{::accept4(l, nullptr, nullptr, SOCK_CLOEXEC)};
  }
};

/// A TCP connection from node `from` (0: the hub) to `to`'s listener, or
/// nothing if the handshake does not complete within `bound`.
std::optional<fd> connect(const netns_network& net, size_t from, size_t to,
                          std::chrono::milliseconds bound) {
  auto s = socket_in(net, from, SOCK_STREAM, 0);
  ::fcntl(s.get(), F_SETFL, O_NONBLOCK);
  auto addr = endpoint(to, tcp_port);
  if (::connect(s.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0
      && errno != EINPROGRESS)
    return std::nullopt;
  pollfd p{s.get(), POLLOUT, 0};
  if (::poll(&p, 1, static_cast<int>(bound.count())) != 1)
    return std::nullopt;
  int error = 0;
  socklen_t len = sizeof(error);
  ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &error, &len);
  if (error != 0)
    return std::nullopt;
  ::fcntl(s.get(), F_SETFL, 0);
  return s;
}

/// True if a TCP connection from `from` to `to` opens (and is accepted).
bool reaches(const netns_network& net, listeners& ls, size_t from, size_t to) {
  auto c = connect(net, from, to, arrives_within);
  if (!c)
    return false;
  ls.accept(to);
  return true;
}

/// True if a TCP connection from `from` to `to` does not open.
bool cut_off(const netns_network& net, size_t from, size_t to) {
  return !connect(net, from, to, lost_after).has_value();
}

/// Sends `text` on `s` and tells whether `peer` receives `expect` (default:
/// `text`) within `bound`.
bool delivered(int s, int peer, const std::string& text,
               std::chrono::milliseconds bound, std::string expect = {}) {
  if (expect.empty())
    expect = text;
  if (::send(s, text.data(), text.size(), MSG_NOSIGNAL)
      != static_cast<ssize_t>(text.size()))
    return false;
  std::string got;
  auto until = std::chrono::steady_clock::now() + bound;
  while (got.size() < expect.size()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !readable(peer, left))
      return false;
    char buf[256];
    auto n = ::recv(peer, buf, sizeof(buf), MSG_DONTWAIT);
    if (n <= 0)
      return false;
    got.append(buf, static_cast<size_t>(n));
  }
  return got == expect;
}

/// True if a datagram from node `from` reaches node `to` within `bound`.
bool datagram_arrives(const netns_network& net, size_t from, size_t to,
                      std::chrono::milliseconds bound) {
  auto rx = socket_in(net, to, SOCK_DGRAM, udp_port);
  auto tx = socket_in(net, from, SOCK_DGRAM, 0);
  auto addr = endpoint(to, udp_port);
  std::string text = "hello from " + std::to_string(from);
  ::sendto(tx.get(), text.data(), text.size(), 0,
           reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  if (!readable(rx.get(), bound))
    return false;
  char buf[64];
  auto n = ::recv(rx.get(), buf, sizeof(buf), 0);
  return n == static_cast<ssize_t>(text.size());
}

} // namespace

TEST_CASE("netns network: a symmetric partition cuts {1} from {2,3} both "
          "ways, every node still reaches the hub, healing restores it") {
  auto net = make_network(3);
  if (!net)
    return;
  listeners ls{*net};
  for (size_t i = 1; i <= 3; ++i) {
    CHECK(reaches(*net, ls, i, 0));
    CHECK(reaches(*net, ls, 0, i));
  }
  CHECK(reaches(*net, ls, 1, 2));
  auto id = net->partition({1}, {2, 3}, partition_shape::symmetric);
  INFO((id ? std::string{} : id.error().message));
  REQUIRE(id);
  CHECK(net->partitions() == std::vector<uint32_t>{*id});
  CHECK(cut_off(*net, 1, 2));
  CHECK(cut_off(*net, 3, 1));
  CHECK(!datagram_arrives(*net, 2, 1, lost_after));
  CHECK(reaches(*net, ls, 2, 3));
  for (size_t i = 1; i <= 3; ++i) {
    CHECK(reaches(*net, ls, i, 0));
    CHECK(reaches(*net, ls, 0, i));
  }
  auto err = net->heal(*id);
  INFO(err.message);
  REQUIRE(!err);
  CHECK(net->partitions().empty());
  CHECK(reaches(*net, ls, 1, 2));
  CHECK(reaches(*net, ls, 3, 1));
  CHECK(datagram_arrives(*net, 2, 1, arrives_within));
}

TEST_CASE("netns network: an asymmetric partition {1} -> {2} drops what 1 "
          "sends to 2 and delivers what 2 sends to 1, also on connections "
          "opened before") {
  auto net = make_network(2);
  if (!net)
    return;
  listeners ls{*net};
  // Connections of both directions, opened before the partition.
  auto one_to_two = connect(*net, 1, 2, arrives_within);
  REQUIRE(one_to_two);
  auto two_accepted = ls.accept(2);
  auto two_to_one = connect(*net, 2, 1, arrives_within);
  REQUIRE(two_to_one);
  auto one_accepted = ls.accept(1);
  REQUIRE(
    delivered(one_to_two->get(), two_accepted.get(), "before", arrives_within));
  auto id = net->partition({1}, {2}, partition_shape::asymmetric);
  INFO((id ? std::string{} : id.error().message));
  REQUIRE(id);
  // 2 -> 1 works: the old connection both ways, 1 sending first (the
  // first packet conntrack sees after the partition goes from 1 to 2, yet
  // the flow is 2's), new connections.
  CHECK(
    delivered(one_accepted.get(), two_to_one->get(), "pong", arrives_within));
  CHECK(
    delivered(two_to_one->get(), one_accepted.get(), "ping", arrives_within));
  CHECK(reaches(*net, ls, 2, 1));
  CHECK(datagram_arrives(*net, 2, 1, arrives_within));
  // 1 -> 2 is lost: a new connection, the old one, a datagram.
  CHECK(cut_off(*net, 1, 2));
  CHECK(!delivered(one_to_two->get(), two_accepted.get(), "lost", lost_after));
  CHECK(!datagram_arrives(*net, 1, 2, lost_after));
  CHECK(reaches(*net, ls, 1, 0));
  auto err = net->heal_all();
  INFO(err.message);
  REQUIRE(!err);
  CHECK(net->partitions().empty());
  CHECK(reaches(*net, ls, 1, 2));
  CHECK(datagram_arrives(*net, 1, 2, arrives_within));
  // The connection opened before delivers again, "lost" first (TCP
  // retransmits it).
  CHECK(delivered(one_to_two->get(), two_accepted.get(), "again",
                  arrives_within * 4, "lostagain"));
}

TEST_CASE("netns network: partitions heal one by one, isolate cuts the hub "
          "too, bad arguments are errors") {
  auto net = make_network(3);
  if (!net)
    return;
  listeners ls{*net};
  auto a = net->partition({1}, {2}, partition_shape::symmetric);
  auto b = net->partition({3}, {2}, partition_shape::symmetric);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(*a != *b);
  CHECK(cut_off(*net, 1, 2));
  CHECK(cut_off(*net, 2, 3));
  CHECK(reaches(*net, ls, 1, 3));
  REQUIRE(!net->heal(*a));
  CHECK(reaches(*net, ls, 1, 2));
  CHECK(cut_off(*net, 2, 3));
  auto again = net->heal(*a);
  CHECK(again.message.find("no partition") != std::string::npos);
  REQUIRE(!net->heal(*b));
  CHECK(reaches(*net, ls, 2, 3));

  auto iso = net->isolate(2);
  REQUIRE(iso);
  CHECK(cut_off(*net, 2, 0));
  CHECK(cut_off(*net, 0, 2));
  CHECK(reaches(*net, ls, 1, 0));
  REQUIRE(!net->heal(*iso));
  CHECK(reaches(*net, ls, 2, 0));

  CHECK(!net->partition({1}, {1, 2}, partition_shape::symmetric));
  CHECK(!net->partition({}, {2}, partition_shape::symmetric));
  auto out_of_range = net->partition({4}, {2}, partition_shape::asymmetric);
  REQUIRE(!out_of_range);
  CHECK(out_of_range.error().message == "netns network: node 4 is not in 1..3");
  CHECK(net->enter_node(0).message.find("not in 1..3") != std::string::npos);
}

TEST_CASE("netns network: a redirect sends the connections node 1 opens to "
          "node 2 to a listener in the hub, and only those, until healed") {
  auto net = make_network(3);
  if (!net)
    return;
  listeners ls{*net};
  constexpr uint16_t proxy_port = tcp_port + 1;
  auto proxy = socket_in(*net, 0, SOCK_STREAM, proxy_port);
  REQUIRE(::listen(proxy.get(), 64) == 0);
  auto before = connect(*net, 1, 2, arrives_within);
  REQUIRE(before);
  auto before_accepted = ls.accept(2);
  auto id = net->redirect(1, netns_network::address(2), tcp_port,
                          netns_network::hub_address(), proxy_port);
  INFO((id ? std::string{} : id.error().message));
  REQUIRE(id);
  auto c = connect(*net, 1, 2, arrives_within);
  REQUIRE(c);
  REQUIRE(readable(proxy.get(), arrives_within));
  fd at_proxy{::accept4(proxy.get(), nullptr, nullptr, SOCK_CLOEXEC)};
  REQUIRE(at_proxy.get() >= 0);
  CHECK(delivered(c->get(), at_proxy.get(), "via the hub", arrives_within));
  CHECK_FALSE(readable(ls.by_node[2].get(), lost_after));
  // Other nodes' connections and node 1's older one keep their path.
  CHECK(reaches(*net, ls, 3, 2));
  CHECK(reaches(*net, ls, 1, 3));
  CHECK(
    delivered(before->get(), before_accepted.get(), "direct", arrives_within));
  REQUIRE(!net->heal(*id));
  CHECK(reaches(*net, ls, 1, 2));
  CHECK_FALSE(readable(proxy.get(), lost_after));
  auto bad = net->redirect(4, netns_network::address(2), tcp_port,
                           netns_network::hub_address(), proxy_port);
  REQUIRE(!bad);
  CHECK(bad.error().message == "netns network: node 4 is not in 1..3");
  // heal_all removes redirects too.
  REQUIRE(net->redirect(1, netns_network::address(2), tcp_port,
                        netns_network::hub_address(), proxy_port));
  REQUIRE(!net->heal_all());
  CHECK(net->partitions().empty());
  CHECK(reaches(*net, ls, 1, 2));
  CHECK_FALSE(readable(proxy.get(), lost_after));
}

TEST_CASE("netns network: a node's launcher runs a program in its namespace "
          "and the namespaces of dead processes are removed") {
  // A namespace named as if a process that no longer exists made it.
  auto dead = ::fork();
  if (dead == 0)
    ::_exit(0);
  REQUIRE(dead > 0);
  ::waitpid(dead, nullptr, 0);
  auto ip = find_program("ip");
  auto stale = "trns" + std::to_string(dead) + "-1-hub";
  bool made_stale = ::geteuid() == 0 && !ip.empty()
                    && run_command({ip, "netns", "add", stale}).ok;
  auto net = make_network(2);
  if (!net)
    return;
  REQUIRE(made_stale);
  auto list = run_command({ip, "netns", "list"});
  REQUIRE(list.ok);
  CHECK(list.output.find(stale) == std::string::npos);
  CHECK(list.output.find(net->hub_namespace()) != std::string::npos);
  auto cmd = net->launcher(2);
  cmd.insert(cmd.end(), {ip, "-o", "-4", "addr", "show", "dev", "eth0"});
  auto shown = run_command(cmd);
  INFO(shown.output);
  REQUIRE(shown.ok);
  CHECK(shown.output.find("inet 10.77.0.2/24") != std::string::npos);
  cmd = net->hub_launcher();
  cmd.insert(cmd.end(), {ip, "-o", "-4", "addr", "show", "dev", "br0"});
  shown = run_command(cmd);
  INFO(shown.output);
  REQUIRE(shown.ok);
  CHECK(shown.output.find("inet 10.77.0.254/24") != std::string::npos);
}

TEST_CASE("run_command: output, exit status and the time bound") {
  auto sh = find_program("sh");
  REQUIRE(!sh.empty());
  auto ok = run_command({sh, "-c", "echo out; echo err >&2"});
  CHECK(ok.ok);
  CHECK(ok.output == "out\nerr\n");
  auto bad = run_command({sh, "-c", "echo nope; exit 3"});
  CHECK(!bad.ok);
  CHECK(bad.output.find("failed (exit status 3): nope") != std::string::npos);
  auto start = std::chrono::steady_clock::now();
  auto slow = run_command({sh, "-c", "exec sleep 30"}, 200ms);
  CHECK(std::chrono::steady_clock::now() - start < 10s);
  CHECK(!slow.ok);
  CHECK(slow.output.find("timed out after 200ms") != std::string::npos);
  auto missing = run_command({"/nonexistent/program"});
  CHECK(!missing.ok);
  CHECK(missing.output.find("spawn") != std::string::npos);
  CHECK(find_program("no-such-program-here").empty());
}
