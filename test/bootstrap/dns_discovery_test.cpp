// The dns discovery method against a real DNS server: Debian's dnsmasq on
// 127.0.0.1 (test/support dnsmasq_fixture), one per test case, serving the
// records the test gives it; and against servers that do not answer.

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "troupe/bootstrap/dns_discovery.hpp"
#include "troupe/bootstrap/errc.hpp"
#include "troupe/test/dnsmasq_fixture.hpp"

using namespace std::chrono_literals;
using namespace troupe;
using namespace troupe::bootstrap;
using troupe::test::dns_records;
using troupe::test::dnsmasq_server;
using steady = std::chrono::steady_clock;
using points = std::vector<contact_point>;

namespace {

const std::string srv_name = "_management._tcp.svc.troupe.test";

std::unique_ptr<dns_discovery>
make_discovery(std::string server, std::string name,
               dns_record_type type = dns_record_type::a) {
  dns_discovery_options opts;
  opts.service_name = std::move(name);
  opts.record_type = type;
  opts.server = std::move(server);
  opts.contact_point_port = 8558;
  auto d = dns_discovery::make(std::move(opts));
  REQUIRE(d);
  return std::move(*d);
}

// What one discover call gave, how long it took and where `done` ran.
struct answer {
  runtime::expected<points> result;
  steady::duration elapsed;
  bool on_caller_thread;
};

answer ask(contact_point_discovery& d, runtime::timespan timeout = 2s) {
  auto promise = std::make_shared<std::promise<answer>>();
  auto future = promise->get_future();
  auto caller = std::this_thread::get_id();
  auto start = steady::now();
  d.discover(timeout, [=](runtime::expected<points> r) {
    promise->set_value(answer{std::move(r), steady::now() - start,
                              std::this_thread::get_id() == caller});
  });
  // Generous bound: the contract says `timeout`; a hang fails here.
  REQUIRE(future.wait_for(timeout + 10s) == std::future_status::ready);
  return future.get();
}

points ask_points(contact_point_discovery& d) {
  auto a = ask(d);
  CAPTURE(d.describe());
  INFO((a.result ? std::string{"ok"} : a.result.error().message));
  REQUIRE(a.result);
  return *a.result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

dns_records::srv_record srv(std::string target, uint16_t port) {
  return dns_records::srv_record{srv_name, std::move(target), port};
}

} // namespace

TEST_CASE("dns discovery: A records of several addresses give sorted "
          "contact points without duplicates on the fallback port") {
  dnsmasq_server dns{{.hosts = {{"svc.troupe.test", "127.0.0.3"},
                                {"svc.troupe.test", "10.0.0.1"},
                                {"svc.troupe.test", "127.0.0.2"},
                                {"svc.troupe.test", "127.0.0.3"},
                                {"other.troupe.test", "10.9.9.9"}}}};
  auto d = make_discovery(dns.address(), "svc.troupe.test");
  auto a = ask(*d);
  REQUIRE(a.result);
  CHECK(
    *a.result
    == points{{"10.0.0.1", 8558}, {"127.0.0.2", 8558}, {"127.0.0.3", 8558}});
  CHECK_FALSE(a.on_caller_thread);
  CHECK(d->describe() == "DNS A/AAAA svc.troupe.test at " + dns.address());
}

TEST_CASE("dns discovery: AAAA records give IPv6 contact points beside the "
          "IPv4 ones") {
  dnsmasq_server dns{{.hosts = {{"svc.troupe.test", "fd00::2"},
                                {"svc.troupe.test", "::1"},
                                {"svc.troupe.test", "127.0.0.1"},
                                {"v6only.troupe.test", "::1"}}}};
  auto d = make_discovery(dns.address(), "svc.troupe.test");
  auto found = ask_points(*d);
  CHECK(found == points{{"127.0.0.1", 8558}, {"::1", 8558}, {"fd00::2", 8558}});
  CHECK(to_string(found[1]) == "[::1]:8558");
  auto v6 = make_discovery(dns.address(), "v6only.troupe.test.");
  CHECK(ask_points(*v6) == points{{"::1", 8558}});
}

TEST_CASE("dns discovery: SRV records give each target's address with the "
          "record's port") {
  dnsmasq_server dns{
    {.hosts = {{"pod-1.troupe.test", "10.0.0.1"},
               {"pod-2.troupe.test", "10.0.0.2"},
               {"pod-3.troupe.test", "fd00::3"},
               {"pod-3.troupe.test", "10.0.0.3"},
               {"pod-3.troupe.test", "10.0.0.13"}},
     .srv = {srv("pod-2.troupe.test", 8559),
             srv("pod-1.troupe.test", 8558),
             srv("pod-1.troupe.test", 8558),
             srv("pod-3.troupe.test", 8560),
             {"_http._tcp.svc.troupe.test", "pod-1.troupe.test", 80}}}};
  auto d
    = make_discovery(dns.address(), "svc.troupe.test", dns_record_type::srv);
  // pod-3: the lowest IPv4 address (text order) of its three.
  CHECK(ask_points(*d)
        == points{{"10.0.0.1", 8558}, {"10.0.0.13", 8560}, {"10.0.0.2", 8559}});
  CHECK(d->describe()
        == "DNS SRV _management._tcp.svc.troupe.test at " + dns.address());
  // dnsmasq put the targets' addresses in the additional section: no
  // A/AAAA query of a target was needed.
  CHECK_FALSE(contains(dns.log_tail(100), "query[A] pod-1.troupe.test"));
}

TEST_CASE("dns discovery: an SRV target missing from the additional section "
          "is resolved by A and AAAA queries") {
  // dnsmasq adds no address for a target that is a CNAME; the A query
  // follows the CNAME. pod-6 has only an IPv6 address.
  dnsmasq_server dns{
    {.hosts
     = {{"pod-9.troupe.test", "10.0.0.9"}, {"pod-6.troupe.test", "fd00::6"}},
     .srv = {srv("alias.troupe.test", 8600), srv("pod-6.troupe.test", 8606),
             srv("gone.troupe.test", 8607)},
     .cnames = {{"alias.troupe.test", "pod-9.troupe.test"}}}};
  auto d
    = make_discovery(dns.address(), "svc.troupe.test", dns_record_type::srv);
  // gone.troupe.test has no address (NXDOMAIN): no contact point yet.
  CHECK(ask_points(*d) == points{{"10.0.0.9", 8600}, {"fd00::6", 8606}});
  auto log = dns.log_tail(100);
  CAPTURE(log);
  CHECK(contains(log, "query[A] alias.troupe.test"));
  CHECK(contains(log, "query[AAAA] alias.troupe.test"));
  CHECK(contains(log, "query[A] gone.troupe.test"));
}

TEST_CASE("dns discovery: the SRV target \".\" gives no contact point") {
  dnsmasq_server dns{{.srv = {srv("", 0)}}};
  auto d
    = make_discovery(dns.address(), "svc.troupe.test", dns_record_type::srv);
  CHECK(ask_points(*d).empty());
  // dnsmasq answered a record (target "."), not NODATA.
  CHECK(contains(dns.log_tail(100), "config " + srv_name + " is <SRV>"));
}

TEST_CASE("dns discovery: an SRV record with port 0 is a "
          "bad_discovery_answer naming the target") {
  dnsmasq_server dns{{.hosts = {{"pod-1.troupe.test", "10.0.0.1"}},
                      .srv = {srv("pod-1.troupe.test", 0)}}};
  auto d
    = make_discovery(dns.address(), "svc.troupe.test", dns_record_type::srv);
  auto a = ask(*d);
  REQUIRE_FALSE(a.result);
  CHECK(a.result.error().code
        == static_cast<uint8_t>(errc::bad_discovery_answer));
  CHECK(a.result.error().message
        == "DNS SRV " + srv_name + " at " + dns.address() + ": SRV " + srv_name
             + ": the record of target pod-1.troupe.test has port 0");
}

TEST_CASE("dns discovery: contact points appear when the records are "
          "reloaded") {
  dnsmasq_server dns;
  auto a = make_discovery(dns.address(), "svc.troupe.test");
  auto s
    = make_discovery(dns.address(), "svc.troupe.test", dns_record_type::srv);
  CHECK(ask_points(*a).empty());
  CHECK(ask_points(*s).empty());
  dns_records records{.hosts = {{"svc.troupe.test", "10.0.0.2"}}};
  dns.set_records(records); // SIGHUP
  CHECK(ask_points(*a) == points{{"10.0.0.2", 8558}});
  records.hosts.push_back({"svc.troupe.test", "10.0.0.1"});
  records.hosts.push_back({"pod-1.troupe.test", "10.0.1.1"});
  dns.set_records(records); // SIGHUP
  CHECK(ask_points(*a) == points{{"10.0.0.1", 8558}, {"10.0.0.2", 8558}});
  CHECK(ask_points(*s).empty());
  records.srv.push_back(srv("pod-1.troupe.test", 8558));
  dns.set_records(records); // restart
  CHECK(ask_points(*s) == points{{"10.0.1.1", 8558}});
}

TEST_CASE("dns discovery: NXDOMAIN is an empty list, not an error") {
  dnsmasq_server dns{{.hosts = {{"svc.troupe.test", "10.0.0.1"}}}};
  auto a = make_discovery(dns.address(), "nothing.troupe.test");
  CHECK(ask_points(*a).empty());
  auto s = make_discovery(dns.address(), "svc.troupe.test",
                          dns_record_type::srv); // the name has no SRV
  CHECK(ask_points(*s).empty());
  CHECK(contains(dns.log_tail(100), "nothing.troupe.test is NXDOMAIN"));
}

TEST_CASE("dns discovery: a name the server does not serve is REFUSED: "
          "discovery_refused naming the server and the name") {
  // dnsmasq with --no-resolv answers REFUSED for names outside its local
  // domain (it has nowhere to forward them), not NXDOMAIN.
  dnsmasq_server dns{{.hosts = {{"svc.troupe.test", "10.0.0.1"}}}};
  auto d = make_discovery(dns.address(), "troupe.example.org");
  auto a = ask(*d);
  REQUIRE_FALSE(a.result);
  auto& err = a.result.error();
  CAPTURE(err.message);
  CHECK(err.category == "bootstrap");
  CHECK(err.code == static_cast<uint8_t>(errc::discovery_refused));
  CHECK(contains(err.message,
                 "DNS A/AAAA troupe.example.org at " + dns.address() + ": "));
  CHECK(contains(err.message, "the server refused the query (REFUSED"));
}

TEST_CASE("dns discovery: a server that does not answer is "
          "discovery_unavailable within the timeout, naming the server") {
  test::silent_udp_server silent;
  auto d
    = make_discovery(silent.address(), "svc.troupe.test", dns_record_type::srv);
  auto a = ask(*d, 300ms);
  REQUIRE_FALSE(a.result);
  auto& err = a.result.error();
  CAPTURE(err.message);
  CHECK(err.code == static_cast<uint8_t>(errc::discovery_unavailable));
  CHECK(err.message
        == "DNS SRV _management._tcp.svc.troupe.test at " + silent.address()
             + ": no answer within 300ms (timeout; 1 of the queries "
               "unanswered)");
  CHECK(a.elapsed >= 300ms);
  CHECK(a.elapsed < 300ms + 2s); // the poll loop's slack, generously
}

TEST_CASE("dns discovery: a UDP port nobody serves is discovery_unavailable "
          "(connection refused) naming the server") {
  auto server = "127.0.0.1:" + std::to_string(test::free_udp_port());
  auto d = make_discovery(server, "svc.troupe.test");
  auto a = ask(*d, 2s);
  REQUIRE_FALSE(a.result);
  auto& err = a.result.error();
  CAPTURE(err.message);
  CHECK(err.code == static_cast<uint8_t>(errc::discovery_unavailable));
  // Which of the A and AAAA queries reports it first is up to c-ares.
  CHECK(err.message.rfind("DNS A/AAAA svc.troupe.test at " + server + ": ", 0)
        == 0);
  CHECK(contains(err.message, "A svc.troupe.test: could not contact the "
                              "server (connection refused)"));
  CHECK(a.elapsed < 2s);
}

TEST_CASE("dns discovery: destroying the discovery completes a pending "
          "call with discovery_unavailable") {
  test::silent_udp_server silent;
  auto d = make_discovery(silent.address(), "svc.troupe.test");
  std::atomic<int> calls{0};
  auto promise = std::make_shared<std::promise<runtime::expected<points>>>();
  auto future = promise->get_future();
  d->discover(30s, [&calls, promise](runtime::expected<points> r) {
    if (++calls == 1)
      promise->set_value(std::move(r));
  });
  auto start = steady::now();
  d.reset(); // joins the io thread: no call can come later
  CHECK(steady::now() - start < 5s);
  REQUIRE(future.wait_for(0s) == std::future_status::ready);
  CHECK(calls == 1);
  auto r = future.get();
  REQUIRE_FALSE(r);
  CHECK(r.error().code == static_cast<uint8_t>(errc::discovery_unavailable));
  CHECK(r.error().message
        == "DNS A/AAAA svc.troupe.test at " + silent.address()
             + ": discovery stopped before an answer (dns_discovery "
               "destroyed)");
}

TEST_CASE("dns discovery: concurrent calls from several threads each "
          "complete exactly once with the whole set") {
  dnsmasq_server dns{{.hosts = {{"svc.troupe.test", "10.0.0.1"},
                                {"svc.troupe.test", "10.0.0.2"}}}};
  auto d = make_discovery(dns.address(), "svc.troupe.test");
  constexpr int n = 24;
  std::vector<std::atomic<int>> calls(n);
  std::vector<std::promise<runtime::expected<points>>> results(n);
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int i = t; i < n; i += 4)
        d->discover(5s, [&, i](runtime::expected<points> r) {
          if (++calls[static_cast<size_t>(i)] == 1)
            results[static_cast<size_t>(i)].set_value(std::move(r));
        });
    });
  for (auto& c : callers)
    c.join();
  for (int i = 0; i < n; ++i) {
    auto f = results[static_cast<size_t>(i)].get_future();
    REQUIRE(f.wait_for(15s) == std::future_status::ready);
    auto r = f.get();
    REQUIRE(r);
    CHECK(*r == points{{"10.0.0.1", 8558}, {"10.0.0.2", 8558}});
  }
  d.reset();
  for (auto& c : calls)
    CHECK(c == 1);
}
