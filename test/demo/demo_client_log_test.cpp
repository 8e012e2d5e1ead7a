// Unit tests of the load driver's pure parts: the client.log line format
// and the latency histogram.

#include <catch2/catch.hpp>

#include <string>

#include "client/client_log.hpp"
#include "client/latency_histogram.hpp"

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
