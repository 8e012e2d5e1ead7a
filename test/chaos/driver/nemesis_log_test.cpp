// The driver's nemesis.jsonl lines are what the checker reads: every op the
// driver writes parses back with its fields (nemesis_log.hpp against
// chaos_history.hpp's parse_nemesis).

#include <catch2/catch.hpp>

#include "chaos_history.hpp"
#include "nemesis_log.hpp"

using namespace troupe::chaos;

namespace {

using strings = std::vector<std::string>;

} // namespace

TEST_CASE("nemesis log: every line the driver writes parses in the checker") {
  std::string text;
  text += nemesis_line(1, "run_start",
                       {{"seed", uint64_t{7}},
                        {"nodes", uint64_t{5}},
                        {"mechanism", std::string{"netns"}},
                        {"duration_s", uint64_t{120}},
                        {"quiet_after_ms", uint64_t{7020}}});
  text += nemesis_line(2, "node_start",
                       {{"node", std::string{"node-1"}},
                        {"pid", uint64_t{42}},
                        {"start", uint64_t{1}}});
  text += nemesis_line(3, "nemesis_start", {});
  text += nemesis_line(4, "partition",
                       {{"id", uint64_t{3}},
                        {"kind", std::string{"asymmetric"}},
                        {"from", strings{"node-1", "node-2"}},
                        {"to", strings{"node-3"}},
                        {"mechanism", std::string{"transport"}}});
  text += nemesis_line(5, "etcd_slow", {{"delay_ms", uint64_t{700}}});
  text += nemesis_line(6, "lease_delete",
                       {{"key", std::string{"/troupe/leases/a\"b"}}});
  text += nemesis_line(7, "node_exit",
                       {{"node", std::string{"node-1"}},
                        {"pid", uint64_t{42}},
                        {"status", std::string{"killed by signal 9"}}});
  text += nemesis_line(8, "store_exit", {{"status", std::string{"exit 0"}}});
  text += nemesis_line(9, "majority_restart",
                       {{"nodes", strings{"node-1", "node-3", "node-4"}}});
  text += nemesis_line(10, "links_slow",
                       {{"node", std::string{"node-2"}},
                        {"delay_ms", uint64_t{1500}},
                        {"mechanism", std::string{"netns"}}});
  text += nemesis_line(11, "links_fast", {{"node", std::string{"node-2"}}});
  std::vector<std::string> problems;
  auto events = parse_nemesis(text, problems);
  CHECK(problems.empty());
  REQUIRE(events.size() == 11);
  CHECK(events[0].op == nemesis_op::run_start);
  CHECK(events[0].seed == 7);
  CHECK(events[0].duration_s == 120);
  CHECK(events[0].quiet_after_ms == 7020);
  CHECK(events[1].node == "node-1");
  CHECK(events[1].pid == 42);
  CHECK(events[1].start == 1);
  CHECK(events[2].op == nemesis_op::nemesis_start);
  CHECK(events[3].direction == "asymmetric");
  CHECK(events[3].from == strings{"node-1", "node-2"});
  CHECK(events[3].to == strings{"node-3"});
  CHECK(events[3].mechanism == "transport");
  CHECK(events[4].delay_ms == 700);
  CHECK(events[5].key == "/troupe/leases/a\"b");
  CHECK(events[6].status == "killed by signal 9");
  CHECK(events[7].op == nemesis_op::store_exit);
  CHECK(events[7].mono_ns == 8);
  CHECK(events[8].op == nemesis_op::majority_restart);
  CHECK(events[8].nodes_list == strings{"node-1", "node-3", "node-4"});
  CHECK(events[9].op == nemesis_op::links_slow);
  CHECK(events[9].node == "node-2");
  CHECK(events[9].delay_ms == 1500);
  CHECK(events[9].mechanism == "netns");
  CHECK(events[10].op == nemesis_op::links_fast);
  CHECK(events[10].node == "node-2");
  CHECK(describe(events[9])
        == "links_slow node=node-2 delay_ms=1500 mechanism=netns");
}
