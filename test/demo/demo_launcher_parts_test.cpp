// Unit tests of the demo launcher's pure parts: the management answers it
// reads, the failover floor and the failover measured from the store's
// ledger (the console's lines: demo_console_test.cpp).

#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "cluster_view.hpp"
#include "demo_timing.hpp"
#include "failover_measure.hpp"
#include "log_scan.hpp"
#include "troupe/sharding/shard_id.hpp"

using namespace std::chrono_literals;
using namespace troupe::demo;

namespace {

const char* members_json = R"({"self":"127.0.0.1:1#1","leader":"127.0.0.1:1#1",
  "oldest":"127.0.0.1:2#2","members":[
  {"address":"127.0.0.1:1#1","status":"up","roles":[],"up_number":1,"reachable":true},
  {"address":"127.0.0.1:2#2","status":"up","roles":[],"up_number":2,"reachable":true},
  {"address":"127.0.0.1:3#3","status":"up","roles":[],"up_number":3,"reachable":false}],
  "unreachable":[{"address":"127.0.0.1:3#3","observed_by":["127.0.0.1:1#1"]}]})";

} // namespace

TEST_CASE("cluster_view: members, leader and oldest from /cluster/members") {
  cluster_snapshot snap;
  REQUIRE(read_members(members_json, snap));
  REQUIRE(snap.members.size() == 3);
  CHECK(snap.members[2].reachable == false);
  CHECK(snap.leader == "127.0.0.1:1#1");
  CHECK(snap.oldest == "127.0.0.1:2#2");
  CHECK(snap.up_count() == 2);
  CHECK(snap.members_answered);
  CHECK(snap.members[1].up_number == 2);
  CHECK_FALSE(read_members("[]", snap));
  CHECK_FALSE(read_members("{", snap));
}

TEST_CASE("cluster_view: the scheduler's host, token and lease holder") {
  cluster_snapshot snap;
  REQUIRE(read_singletons(
    R"([{"type":"shard-coordinator-account","host":"127.0.0.1:1#1"},
        {"type":"scheduler","host":"127.0.0.1:2#2","running_here":false,
         "fencing_token":4}])",
    "scheduler", snap));
  CHECK(snap.singleton_host == "127.0.0.1:2#2");
  CHECK(snap.singleton_token == 4u);
  REQUIRE(read_leases(
    R"([{"name":"troupe-singleton-scheduler","holder":"x","held_here":false},
        {"name":"troupe-singleton-scheduler","holder":"127.0.0.1:2#2",
         "fencing_token":4,"held_here":true,"ttl_ms":3000}])",
    "scheduler", snap));
  CHECK(snap.lease_holder == "127.0.0.1:2#2");
  CHECK(snap.lease_token == 4u);
  cluster_snapshot none;
  REQUIRE(read_singletons(R"([{"type":"scheduler","host":null}])", "scheduler",
                          none));
  CHECK_FALSE(none.singleton_host);
  CHECK_FALSE(read_leases("{}", "scheduler", none));
}

TEST_CASE("cluster_view: shards per region") {
  cluster_snapshot snap;
  CHECK_FALSE(snap.shards_answered);
  REQUIRE(read_shards(R"({"type":"account","regions":[
    {"address":"127.0.0.1:1#1","shards":["1","4"],"entities":3},
    {"address":"127.0.0.1:2#2","shards":["2"],"entities":1}]})",
                      snap));
  CHECK(snap.shards_answered);
  REQUIRE(snap.shards.size() == 2);
  CHECK(snap.shards[0].second == std::vector<std::string>{"1", "4"});
}

TEST_CASE("demo_timing: the failover floor follows from the settings") {
  demo_timing t;
  auto f = floor_of(t);
  // phi 8 with a 200ms mean and the 100ms deviation bound: about 5.2
  // deviations past mean + acceptable pause.
  CHECK(f.detection > 1400ms);
  CHECK(f.detection < 1700ms);
  CHECK(f.downed == f.detection + 2s);
  CHECK(f.lease_expiry == 2s);
  CHECK(f.singleton == f.downed);
  CHECK(f.shards == f.downed + 3500ms);
  t.lease_ttl = 15s;
  CHECK(floor_of(t).singleton == 10s); // the lease decides
  CHECK_THAT(explain_singleton_floor(t, floor_of(t)),
             Catch::Contains("expires at 10.00s at the earliest and decides"));
  CHECK_THAT(explain_singleton_floor(demo_timing{}, f),
             Catch::EndsWith("the lease (ttl 3s, renewed every 1s) may expire "
                             "from 2.00s on, before the host is downed, so it "
                             "does not lengthen the floor"));
  CHECK(seconds_text(3520ms) == "3.52s");
  demo_timing k8s;
  k8s.lease_expiry_observed = true;
  auto fk = floor_of(k8s);
  CHECK(fk.singleton == fk.downed + 3s);
  CHECK(fk.shards == fk.downed + 3500ms);
}

TEST_CASE("demo_timing: the node flags carry the settings") {
  auto flags = demo_timing{}.node_flags();
  auto has = [&](const std::string& f) {
    return std::find(flags.begin(), flags.end(), f) != flags.end();
  };
  CHECK(has("--cluster.failure_detector.heartbeat_interval=200ms"));
  CHECK(has("--downing.stable_after=2s"));
  CHECK(has("--downing.down_all_when_unstable=1500ms"));
  CHECK(has("--lease.ttl=3s"));
  CHECK(has("--singleton.use_lease=true"));
}

TEST_CASE("failover_measure: the first accepted higher token after the kill") {
  std::string ledger
    = R"({"mono_ns":100,"token":3,"seq":1,"owner":"a","accepted":true})"
      "\n"
      R"({"mono_ns":200,"token":4,"seq":1,"owner":"b","accepted":false})"
      "\n"
      "garbage\n"
      R"({"mono_ns":300,"token":4,"seq":1,"owner":"b","accepted":true})"
      "\n"
      R"({"mono_ns":400,"token":5,"seq":1,"owner":"c","accepted":true})";
  CHECK(first_takeover_ns(ledger, 3, 150) == 300);
  CHECK(first_takeover_ns(ledger, 3, 350) == 400);
  CHECK(first_takeover_ns(ledger, 5, 0) == std::nullopt);
  CHECK(first_takeover_ns("", 0, 0) == std::nullopt);
}

TEST_CASE("failover_measure: the first ack of a new deposit to a victim "
          "account, from another node than the victim") {
  using troupe::sharding::default_shard_id;
  auto shard_of
    = [](const char* account) { return *default_shard_id(account, 30); };
  std::set<std::string> victim{shard_of("acct-1")};
  REQUIRE(shard_of("acct-2") != shard_of("acct-1"));
  std::string log = "100 sent d0 acct-1 5\n"
                    "210 acked d0 acct-1 5 1\n" // answered before the kill
                    "220 sent d1 acct-2 5\n"
                    "230 acked d1 acct-2 5 1\n" // not a victim account
                    "240 sent d2 acct-1 5\n"
                    "900 acked d2 acct-1 5 2\n"
                    // A partitioned victim still answers for its shards:
                    // its own acks do not count.
                    "910 sent d3 acct-1 5\n"
                    "920 acked d3 acct-1 5 3 127.0.0.1:9001\n"
                    "930 sent d4 acct-1 5\n"
                    "990 acked d4 acct-1 5 4 127.0.0.1:9002\n";
  CHECK(first_victim_ack_ns(log, victim, 30, 200, "127.0.0.1:9001") == 900);
  CHECK(first_victim_ack_ns(log, victim, 30, 905, "127.0.0.1:9001") == 990);
  CHECK(first_victim_ack_ns(log, victim, 30, 905, "") == 920);
  CHECK(first_victim_ack_ns(log, victim, 30, 995, "") == std::nullopt);
  CHECK(first_victim_ack_ns(log, {}, 30, 0, "") == std::nullopt);
}

TEST_CASE("demo_io: the last warning or error about a subject in a node's "
          "log") {
  std::string log
    = "2026-11-30T15:00:00.000Z info    lease: acquiring\n"
      "2026-11-30T15:00:01.000Z warning lease: etcd: connect failed\n"
      "2026-11-30T15:00:02.000Z warning cluster: marking x unreachable\n"
      "2026-11-30T15:00:03.000Z error   lease: etcd: POST "
      "http://127.0.0.1:1/v3/lease/grant: Connection refused\n"
      "garbage\n";
  CHECK(last_problem(log, "lease")
        == "error   lease: etcd: POST http://127.0.0.1:1/v3/lease/grant: "
           "Connection refused");
  CHECK(last_problem(log, "sharding").empty());
  CHECK(last_problem("", "lease").empty());
}
