#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/cluster/heartbeat_ring.hpp"
#include "troupe/cluster/heartbeat_sender_state.hpp"

using namespace std::chrono_literals;
using namespace troupe::cluster;
using troupe::runtime::unique_address;
using addresses = std::set<unique_address>;

namespace {

const timestamp t0 = timestamp{1h};

// Node "x" is x:2552#1. The ring order of a..l (ascending ring_hash,
// computed independently in Python from the documented hash) is
//   i c b k l a j f h d e g
unique_address node(char name) {
  return unique_address{std::string(1, name), 2552, 1};
}

addresses nodes(std::string_view names) {
  addresses result;
  for (char c : names)
    result.insert(node(c));
  return result;
}

std::string names(const addresses& xs) {
  std::string result;
  for (const auto& x : xs)
    result += x.host;
  return result;
}

std::string names(const std::vector<unique_address>& xs) {
  std::string result;
  for (const auto& x : xs)
    result += x.host;
  return result;
}

} // namespace

TEST_CASE("ring_hash: FNV-1a 64 plus the splitmix64 finalizer, stable "
          "values") {
  // Golden values: the hash must not change between platforms or releases.
  CHECK(ring_hash(unique_address{"10.0.0.1", 2552, 1})
        == 0xfed67f4de0c02730ull);
  CHECK(ring_hash(unique_address{"10.0.0.2", 2552, 1})
        == 0x36ab0630a0b804f2ull);
  CHECK(ring_hash(unique_address{"", 0, 0}) == 0x4f0cf98170798ffdull);
  CHECK(ring_hash(unique_address{"a", 1, 1}) == 0x73067f8c92898201ull);
}

TEST_CASE("heartbeat_node_ring: nodes are ordered by ring hash") {
  heartbeat_node_ring ring{node('a'), nodes("abcdefghijkl"), {}, 3};
  CHECK(names(ring.ring_order()) == "icbklajfhdeg");
  for (size_t i = 1; i < ring.ring_order().size(); ++i)
    CHECK(ring_hash(ring.ring_order()[i - 1])
          < ring_hash(ring.ring_order()[i]));
  // self is always on the ring
  heartbeat_node_ring alone{node('a'), {}, {}, 9};
  CHECK(names(alone.nodes()) == "a");
  CHECK(alone.my_receivers().empty());
}

// Ring order i c b k l a j f h d e g; "|" separates the reachable from the
// unreachable nodes of each row; monitored_by_nr_of_members 3 unless said.
TEST_CASE("heartbeat_node_ring: receivers follow Akka's rule") {
  using row = std::tuple<std::string, char, std::string, std::string, size_t,
                         std::string>;
  auto [label, sender, members, unreachable, monitored, expected] = GENERATE(
    table<std::string, char, std::string, std::string, size_t, std::string>({
      row{"the next 3 after a", 'a', "abcdefghijkl", "", 3, "fhj"},
      row{"wraps around after g", 'g', "abcdefghijkl", "", 3, "bci"},
      row{"k: l a j", 'k', "abcdefghijkl", "", 3, "ajl"},
      row{"an unreachable one is taken but not counted", 'a', "abcdefghijkl",
          "f", 3, "dfhj"},
      row{"unreachable ones after 3 taken are skipped", 'a', "abcdefghijkl",
          "dfj", 3, "efghj"},
      row{"all others unreachable: the first 3", 'a', "abcdefghijkl",
          "bcdefghijkl", 3, "fhj"},
      row{"small ring: every other node, unreachable too", 'a', "abcd", "bc", 3,
          "bcd"},
      row{"defaults: 9 of 12", 'a', "abcdefghijkl", "", 9, "bcdefghij"},
      row{"defaults: 10 nodes is everyone else", 'a', "abcdefghij", "", 9,
          "bcdefghij"},
      // x is after g on the ring: i c b follow
      row{"a sender not on the ring starts at its hash", 'x', "abcdefghijkl",
          "", 3, "bci"},
    }));
  INFO(label);
  heartbeat_node_ring ring{node('a'), nodes(members), nodes(unreachable),
                           monitored};
  CHECK(names(ring.receivers(node(sender))) == expected);
  if (sender == 'a')
    CHECK(ring.my_receivers() == ring.receivers(node('a')));
}

TEST_CASE("heartbeat_node_ring: add, remove and reachability update the "
          "receivers") {
  heartbeat_node_ring ring{node('a'), nodes("adefh"), {}, 3};
  CHECK(names(ring.my_receivers()) == "dfh"); // after a: f h d e
  ring.add(node('j'));
  CHECK(names(ring.my_receivers()) == "fhj"); // j f h
  ring.set_unreachable(node('j'), true);
  CHECK(names(ring.my_receivers()) == "dfhj"); // j taken, not counted
  ring.remove(node('j'));
  CHECK(names(ring.unreachable()).empty());
  CHECK(names(ring.my_receivers()) == "dfh");
  ring.reset(nodes("bc"), nodes("c"));
  CHECK(names(ring.nodes()) == "abc");
  CHECK(names(ring.my_receivers()) == "bc");
}

TEST_CASE("heartbeat_sender_state: empty until members are known") {
  heartbeat_sender_state s{node('a'), 3, phi_accrual_settings{}};
  CHECK(s.active_receivers().empty());
  auto round = s.tick(t0);
  CHECK(round.receivers.empty());
  CHECK(round.heartbeat.from == node('a'));
  CHECK(round.heartbeat.sequence_nr == 1);
  s.add_member(node('a'), t0); // self is never a receiver
  CHECK(s.active_receivers().empty());
}

TEST_CASE("heartbeat_sender_state: tick stamps the round and lists the "
          "receivers not yet monitored") {
  heartbeat_sender_state s{node('a'), 3, phi_accrual_settings{}};
  s.init(nodes("adefhj"), {});
  auto round = s.tick(t0);
  CHECK(round.heartbeat == heartbeat{node('a'), 1, t0.time_since_epoch()});
  CHECK(names(round.receivers) == "fhj");
  CHECK(names(round.first_heartbeat_to) == "fhj");
  s.heartbeat_response(respond_to(round.heartbeat, node('f')), t0 + 5ms);
  round = s.tick(t0 + 1s);
  CHECK(round.heartbeat.sequence_nr == 2);
  CHECK(round.heartbeat.creation_time == (t0 + 1s).time_since_epoch());
  CHECK(names(round.first_heartbeat_to) == "hj");
  CHECK(s.failure_detector().is_monitoring(node('f')));
}

TEST_CASE("heartbeat_sender_state: the expected first heartbeat starts "
          "monitoring a silent receiver") {
  heartbeat_sender_state s{node('a'), 3, phi_accrual_settings{}};
  s.init(nodes("adefhj"), {});
  s.tick(t0);
  s.expected_first_heartbeat(node('j'), t0 + 1s);
  s.expected_first_heartbeat(node('d'), t0 + 1s); // not a receiver: ignored
  CHECK(s.failure_detector().is_monitoring(node('j')));
  CHECK_FALSE(s.failure_detector().is_monitoring(node('d')));
  // j never answers: unavailable after the detection time of one heartbeat
  // (5306ms with the defaults).
  CHECK(s.failure_detector().is_available(node('j'), t0 + 1s + 5306ms));
  CHECK_FALSE(s.failure_detector().is_available(node('j'), t0 + 1s + 5307ms));
  // A later trigger does not reset a monitored node.
  s.expected_first_heartbeat(node('j'), t0 + 6s);
  CHECK_FALSE(s.failure_detector().is_available(node('j'), t0 + 7s));
}

TEST_CASE("heartbeat_sender_state: responses count only from active "
          "receivers") {
  heartbeat_sender_state s{node('a'), 3, phi_accrual_settings{}};
  s.init(nodes("adefhj"), {});
  s.heartbeat_response(heartbeat_response{node('d'), 1, {}}, t0);
  CHECK_FALSE(s.failure_detector().is_monitoring(node('d')));
  s.heartbeat_response(heartbeat_response{node('j'), 1, {}}, t0);
  CHECK(s.failure_detector().is_monitoring(node('j')));
}

TEST_CASE("heartbeat_sender_state: latest_answered is the newest send "
          "time an active receiver answered") {
  heartbeat_sender_state s{node('a'), 3, phi_accrual_settings{}};
  CHECK_FALSE(s.has_receivers()); // alone: nobody to answer
  s.init(nodes("adefhj"), {});
  CHECK(s.has_receivers());
  CHECK_FALSE(s.latest_answered());
  auto first = s.tick(t0).heartbeat;
  auto second = s.tick(t0 + 1s).heartbeat;
  // Not an active receiver: no confirmation.
  s.heartbeat_response(respond_to(second, node('d')), t0 + 1s + 5ms);
  CHECK_FALSE(s.latest_answered());
  s.heartbeat_response(respond_to(second, node('f')), t0 + 1s + 5ms);
  CHECK(s.latest_answered() == (t0 + 1s).time_since_epoch());
  // A late answer to an older heartbeat (a process that resumes after
  // SIGSTOP reads its buffered answers) does not move it back, nor
  // forward: it vouches for the time that heartbeat was sent.
  s.heartbeat_response(respond_to(first, node('h')), t0 + 9s);
  CHECK(s.latest_answered() == (t0 + 1s).time_since_epoch());
  // An echoed time from the future counts as the arrival time.
  s.heartbeat_response(
    heartbeat_response{node('j'), 3, (t0 + 1h).time_since_epoch()}, t0 + 10s);
  CHECK(s.latest_answered() == (t0 + 10s).time_since_epoch());
}

TEST_CASE("heartbeat_sender_state: a receiver dropped while available is "
          "forgotten") {
  heartbeat_sender_state s{node('a'), 3, phi_accrual_settings{}};
  s.init(nodes("adefh"), {});
  CHECK(names(s.active_receivers()) == "dfh");
  for (char c : std::string{"dfh"})
    s.heartbeat_response(heartbeat_response{node(c), 1, {}}, t0);
  s.add_member(node('j'), t0 + 1s); // j f h: d is dropped
  CHECK(names(s.active_receivers()) == "fhj");
  CHECK(s.old_receivers_now_unreachable().empty());
  CHECK_FALSE(s.failure_detector().is_monitoring(node('d')));
}

TEST_CASE("heartbeat_sender_state: a receiver dropped while unavailable is "
          "kept until it responds") {
  auto responds = GENERATE(true, false);
  heartbeat_sender_state s{node('a'), 3, phi_accrual_settings{}};
  s.init(nodes("adfhj"), nodes("j"));
  CHECK(names(s.active_receivers()) == "dfhj");
  for (char c : std::string{"dfhj"})
    s.heartbeat_response(heartbeat_response{node(c), 1, {}}, t0);
  // 20s later every receiver is unavailable; j becomes reachable again, so
  // the receivers are j f h and d is dropped while unavailable.
  s.reachable_member(node('j'), t0 + 20s);
  CHECK(names(s.old_receivers_now_unreachable()) == "d");
  CHECK(names(s.active_receivers()) == "dfhj");
  CHECK(s.failure_detector().is_monitoring(node('d')));
  if (responds) {
    // Back: no need to keep heartbeating it.
    s.heartbeat_response(heartbeat_response{node('d'), 2, {}}, t0 + 21s);
    CHECK_FALSE(s.failure_detector().is_monitoring(node('d')));
  } else {
    s.remove_member(node('d'), t0 + 21s);
    CHECK_FALSE(s.contains(node('d')));
    CHECK_FALSE(s.failure_detector().is_monitoring(node('d')));
  }
  CHECK(s.old_receivers_now_unreachable().empty());
  CHECK(names(s.active_receivers()) == "fhj");
}

TEST_CASE("heartbeat_sender_state: an old receiver that becomes a receiver "
          "again stays monitored") {
  heartbeat_sender_state s{node('a'), 3, phi_accrual_settings{}};
  s.init(nodes("adfhj"), nodes("j"));
  for (char c : std::string{"dfhj"})
    s.heartbeat_response(heartbeat_response{node(c), 1, {}}, t0);
  s.reachable_member(node('j'), t0 + 20s);   // d: old receiver
  s.unreachable_member(node('j'), t0 + 20s); // d: receiver again
  CHECK(names(s.old_receivers_now_unreachable()) == "d");
  s.heartbeat_response(heartbeat_response{node('d'), 2, {}}, t0 + 21s);
  CHECK(s.old_receivers_now_unreachable().empty());
  CHECK(s.failure_detector().is_monitoring(node('d')));
  CHECK(names(s.active_receivers()) == "dfhj");
}

TEST_CASE("respond_to: echoes the sequence number and creation time") {
  heartbeat hb{node('a'), 42, 123456789ns};
  CHECK(respond_to(hb, node('b'))
        == heartbeat_response{node('b'), 42, 123456789ns});
}
