#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "troupe/bootstrap/errc.hpp"
#include "troupe/bootstrap/seed_nodes_answer.hpp"
#include "troupe/cluster/gossip.hpp"
#include "troupe/cluster/member.hpp"

using namespace troupe;
using namespace troupe::bootstrap;
using cluster::member;
using cluster::member_status;
using runtime::unique_address;

namespace {

unique_address node(char name) {
  return unique_address{std::string(1, name), 2552,
                        static_cast<uint64_t>(name)};
}

member with(char name, member_status status, int32_t up_number) {
  auto m = member::joining(node(name));
  m.status = status;
  m.up_number = up_number;
  return m;
}

cluster::membership_state view(char self, std::vector<member> members) {
  return cluster::membership_state{cluster::gossip{std::move(members)},
                                   node(self)};
}

std::string names(const seed_nodes_answer& a) {
  std::string out;
  for (const auto& s : a.seed_nodes)
    out += s.node.host;
  return out;
}

} // namespace

TEST_CASE("seed nodes: an up member offers the up and weakly_up members, "
          "oldest first") {
  auto v = view('c', {with('a', member_status::up, 2),
                      with('b', member_status::joining, member::no_up_number),
                      with('c', member_status::up, 1),
                      with('d', member_status::weakly_up, member::no_up_number),
                      with('e', member_status::leaving, 3),
                      with('f', member_status::down, 4)});
  auto a = seed_nodes_of(node('c'), &v);
  CHECK(a.self_node == node('c'));
  CHECK(names(a) == "cad");
  CHECK(a.seed_nodes[0].status == "up");
  CHECK(a.seed_nodes[2].status == "weakly_up");
}

TEST_CASE("seed nodes: a node that is not up or weakly_up offers none") {
  using row = std::tuple<std::string, member_status>;
  auto [name, status] = GENERATE(table<std::string, member_status>({
    row{"joining", member_status::joining},
    row{"leaving", member_status::leaving},
    row{"exiting", member_status::exiting},
    row{"down", member_status::down},
  }));
  CAPTURE(name);
  auto v = view('a', {with('a', status, 1), with('b', member_status::up, 2)});
  auto a = seed_nodes_of(node('a'), &v);
  CHECK_FALSE(a.in_cluster());
  CHECK(seed_nodes_of(node('a'), nullptr).seed_nodes.empty());
}

TEST_CASE("seed nodes: at most five, and self among them") {
  std::vector<member> ms;
  for (char c = 'a'; c <= 'h'; ++c)
    ms.push_back(with(c, member_status::up, c - 'a' + 1));
  auto v = view('h', ms);
  auto a = seed_nodes_of(node('h'), &v);
  CHECK(names(a) == "abcdh");
}

TEST_CASE("seed nodes: JSON round trip") {
  seed_nodes_answer a{
    node('a'), {{node('a'), "up", {"backend"}}, {node('b'), "weakly_up", {}}}};
  auto json = to_json(a);
  CHECK(json
        == R"({"self_node":"a:2552#97","seed_nodes":[{"node":"a:2552#97",)"
           R"("status":"up","roles":["backend"]},{"node":"b:2552#98",)"
           R"("status":"weakly_up","roles":[]}]})");
  auto back = parse_seed_nodes_answer(json);
  REQUIRE(back);
  CHECK(*back == a);
}

TEST_CASE("seed nodes: bad answers are errors that say what was wrong") {
  using row = std::tuple<std::string, std::string>;
  auto [json, message] = GENERATE(table<std::string, std::string>({
    row{"", "seed-nodes answer: not JSON: The document is empty. at offset 0"},
    row{"[]", "seed-nodes answer: not a JSON object"},
    row{R"({"seed_nodes":[]})",
        "seed-nodes answer: \"self_node\" is missing or not a string"},
    row{R"({"self_node":"a:2552","seed_nodes":[]})",
        "seed-nodes answer: \"self_node\": "},
    row{R"({"self_node":"a:2552#1"})",
        "seed-nodes answer: \"seed_nodes\" is missing or not an array"},
    row{R"({"self_node":"a:2552#1","seed_nodes":[{"node":"a:2552#1",)"
        R"("status":"leaving"}]})",
        "seed-nodes answer: seed_nodes[0]: status \"leaving\" is not up or "
        "weakly_up"},
    row{R"({"self_node":"a:2552#1","seed_nodes":[1]})",
        "seed-nodes answer: seed_nodes[0]: not an object"},
    row{R"({"self_node":"a:2552#1","seed_nodes":[{},{},{},{},{},{}]})",
        "seed-nodes answer: 6 seed nodes, more than the 5 a node offers"},
  }));
  CAPTURE(json);
  auto a = parse_seed_nodes_answer(json);
  REQUIRE_FALSE(a);
  CHECK(a.error().category == "bootstrap");
  CHECK(a.error().code == static_cast<uint8_t>(errc::bad_probe_answer));
  CHECK(a.error().message.rfind(message, 0) == 0);
}
