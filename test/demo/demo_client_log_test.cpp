// Unit tests of the load driver's pure parts: the client.log line format,
// the latency histograms (whole run and recent window) and the choice of
// node for each attempt.

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "client/client_log.hpp"
#include "client/latency_histogram.hpp"
#include "client/node_choice.hpp"
#include "client/recent_latency.hpp"

using namespace std::chrono_literals;
using namespace troupe::demo::client;

namespace {

client_event sent(int64_t t, std::string d, std::string a, int64_t amount) {
  return {t, client_event_kind::sent, std::move(d), std::move(a), amount, 0,
          {}};
}

client_event acked(int64_t t, std::string d, std::string a, int64_t amount,
                   uint64_t seq) {
  return {t, client_event_kind::acked, std::move(d), std::move(a), amount, seq,
          {}};
}

client_event failed(int64_t t, std::string d, std::string why) {
  return {t, client_event_kind::failed, std::move(d), {}, 0, 0, std::move(why)};
}

client_event unfinished(int64_t t, std::string d, std::string why) {
  return {
    t, client_event_kind::unfinished, std::move(d), {}, 0, 0, std::move(why)};
}

} // namespace

TEST_CASE("client log: each kind of line round-trips") {
  auto [ev, line] = GENERATE(table<client_event, std::string>({
    {sent(17, "d3", "acct-1", 4), "17 sent d3 acct-1 4\n"},
    {acked(18, "d3", "acct-1", 4, 9), "18 acked d3 acct-1 4 9\n"},
    {[] {
       auto x = acked(18, "d3", "acct-1", 4, 9);
       x.node = "127.0.0.1:8081";
       return x;
     }(),
     "18 acked d3 acct-1 4 9 127.0.0.1:8081\n"},
    {failed(19, "d3", "127.0.0.1:8081 answered 503: {\"error\":\"x y\"}"),
     "19 failed d3 127.0.0.1:8081 answered 503: {\"error\":\"x y\"}\n"},
    {failed(20, "d4", ""), "20 failed d4 \n"},
    {unfinished(21, "d5", "the client stopped before attempt 2"),
     "21 unfinished d5 the client stopped before attempt 2\n"},
  }));
  CHECK(format_client_event(ev) == line);
  auto back = parse_client_event(line.substr(0, line.size() - 1));
  REQUIRE(back);
  CHECK(*back == ev);
}

TEST_CASE("client log: a failed reason loses its line breaks") {
  CHECK(format_client_event(failed(1, "d1", "a\nb\rc"))
        == "1 failed d1 a b c\n");
}

TEST_CASE("client log: malformed lines do not parse") {
  auto line = GENERATE(
    as<std::string>{}, "", "17", "17 sent", "17 sent d3 acct-1",
    "17 sent d3 acct-1 4 5", "17 sent d3 acct-1 4 ", "17 sent d3 acct-1 x",
    "17 sent d3 acct-1 0", "17 sent d3 acct-1 -2", "x sent d3 acct-1 4",
    "17 acked d3 acct-1 4", "17 acked d3 acct-1 4 -1", "17 wired d3 acct-1 4",
    "17 sent  acct-1 4", "17 failed", "17 acked d3 acct-1 4 9 n1 n2",
    "17 acked d3 acct-1 4 9 ", "17 sent d3 acct-1 4 n1");
  CAPTURE(line);
  CHECK_FALSE(parse_client_event(line));
}

TEST_CASE("latency histogram: quantiles within 1/32 above the truth, never "
          "above the max") {
  latency_histogram h;
  CHECK(h.quantile(0.5) == 0us);
  for (int i = 1; i <= 1000; ++i)
    h.add(std::chrono::microseconds{i * 100});
  CHECK(h.count() == 1000);
  CHECK(h.max() == 100000us);
  auto [q, truth] = GENERATE(table<double, int64_t>({
    {0.5, 50000},
    {0.9, 90000},
    {0.99, 99000},
    {1.0, 100000},
    {0.001, 100},
  }));
  CAPTURE(q);
  auto got = h.quantile(q).count();
  CHECK(got >= truth);
  CHECK(got <= truth + truth / 32);
  CHECK(got <= 100000);
}

TEST_CASE("latency histogram: exact below 32 us, huge and negative values "
          "are clamped") {
  latency_histogram h;
  h.add(3us);
  h.add(3us);
  h.add(31us);
  CHECK(h.quantile(0.5) == 3us);
  CHECK(h.quantile(1.0) == 31us);
  h.add(-5us);
  CHECK(h.quantile(0.01) == 0us);
  h.add(std::chrono::hours{24 * 365});
  CHECK(h.max() == std::chrono::hours{24 * 365});
  CHECK(h.quantile(1.0) > std::chrono::hours{24 * 12});
}

TEST_CASE("latency histogram: a merge holds both sets of values") {
  latency_histogram a;
  latency_histogram b;
  a.add(10us);
  b.add(20us);
  b.add(30us);
  a.merge(b);
  CHECK(a.count() == 3);
  CHECK(a.max() == 30us);
  CHECK(a.quantile(0.5) == 20us);
}

TEST_CASE("recent latency: only the last five seconds count") {
  auto [now, count, p99] = GENERATE(table<int64_t, uint64_t, int64_t>({
    {3, 1, 7000000}, // the slow second alone
    {7, 5, 7000000}, // seconds 3..7: the slow ack is in the window
    {8, 5, 2000},    // seconds 4..8: it slid out
    {12, 5, 2000},   // seconds 8..12
    {16, 1, 2000},   // seconds 12..16: only second 12 had acks
    {17, 0, 0},      // seconds 13..17: none
  }));
  CAPTURE(now);
  // A slow second (a failover), then one fast ack a second up to second 12,
  // as far as time has come.
  recent_latency r;
  r.add(3, 7000ms);
  for (int64_t s = 4; s <= std::min<int64_t>(now, 12); ++s)
    r.add(s, 2ms);
  auto w = r.window(now);
  CHECK(w.count() == count);
  auto got = w.quantile(0.99).count();
  CHECK(got >= p99);
  CHECK(got <= p99 + p99 / 32);
}

TEST_CASE("recent latency: a slot reused for a later second forgets the "
          "earlier one") {
  recent_latency r;
  r.add(0, 9000ms);
  r.add(5, 1ms); // the same slot as second 0
  CHECK(r.window(5).count() == 1);
  CHECK(r.window(5).max() == 1ms);
}

TEST_CASE("node choice: attempts skip a node that refused connections, "
          "retry at once after a refusal, and probe it again after the "
          "pause") {
  using ms = std::chrono::milliseconds;
  // Three nodes, node 0 refused at t=0 (a killed node), pause 1s.
  node_choice c{3, ms{1000}};
  c.on_refused(0, ms{0});
  auto [what, got, expected] = GENERATE(table<std::string, size_t, size_t>({
    {"deposit 0 starts past the refusing node", 0, 1},
    {"deposit 1 starts at its own node", 1, 1},
    {"deposit 2 starts at its own node", 2, 2},
    {"deposit 3 starts past the refusing node", 3, 1},
  }));
  CAPTURE(what);
  auto n = static_cast<uint64_t>(got);
  CHECK(c.first(n, ms{500}) == expected);
  // After the pause it is probed again.
  CHECK(c.first(0, ms{1000}) == 0);
  CHECK(c.first(3, ms{1500}) == 0);
}

TEST_CASE("node choice: the next attempt and whether it waits") {
  using ms = std::chrono::milliseconds;
  auto [what, refused_nodes, previous, was_refused, next, waits] = GENERATE(
    table<std::string, std::vector<size_t>, size_t, bool, size_t, bool>({
      {"a 504 is retried on the next node after the delay",
       {},
       0,
       false,
       1,
       true},
      {"a refusal is retried on the next node at once", {0}, 0, true, 1, false},
      {"the next node wraps around", {}, 2, false, 0, true},
      {"a refusing next node is skipped", {2}, 1, false, 0, true},
      {"after a refusal the refusing node is skipped, no wait",
       {0, 1},
       1,
       true,
       2,
       false},
      {"every node refusing: round-robin, and wait",
       {0, 1, 2},
       0,
       true,
       1,
       true},
    }));
  CAPTURE(what);
  node_choice c{3, ms{1000}};
  for (auto n : refused_nodes)
    c.on_refused(n, ms{0});
  CHECK(c.all_refusing(ms{10}) == (refused_nodes.size() == 3));
  auto got = c.next(previous, ms{10});
  CHECK(got == next);
  CHECK(c.waits_before(got, was_refused, ms{10}) == waits);
}

TEST_CASE("node choice: an answer clears a node's refusal") {
  using ms = std::chrono::milliseconds;
  node_choice c{2, ms{1000}};
  c.on_refused(1, ms{0});
  CHECK(c.is_refusing(1, ms{999}));
  CHECK_FALSE(c.is_refusing(1, ms{1000}));
  c.on_answered(1);
  CHECK_FALSE(c.is_refusing(1, ms{1}));
}
