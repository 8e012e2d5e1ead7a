// The management API of real cluster nodes (three cluster_systems in this
// process on loopback, real transport, file leases, real HTTP): what each
// endpoint shows is what the nodes run, asked of any node.

#include <catch2/catch.hpp>

#include <filesystem>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <rapidjson/document.h>

#include <caf/event_based_actor.hpp>

#include "troupe/cluster_system.hpp"
#include "troupe/runtime/config_loader.hpp"
#include "troupe/test/eventually.hpp"
#include "troupe/test/free_ports.hpp"

using namespace troupe;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

struct reply {
  unsigned status = 0;
  std::string body;
};

// One request on a fresh connection (the server's keep-alive is tested in
// http_server_test).
reply call(uint16_t port, http::verb verb, const std::string& target,
           std::string body = {}) {
  asio::io_context ioc;
  tcp::socket sock{ioc};
  sock.connect({asio::ip::make_address("127.0.0.1"), port});
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, "127.0.0.1");
  if (!body.empty())
    req.set(http::field::content_type, "application/x-www-form-urlencoded");
  req.body() = std::move(body);
  req.prepare_payload();
  http::write(sock, req);
  beast::flat_buffer buf;
  http::response<http::string_body> res;
  http::read(sock, buf, res);
  return {res.result_int(), res.body()};
}

rapidjson::Document json_of(const reply& r) {
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

caf::behavior idle_instance(caf::event_based_actor*,
                            const singleton::instance_context&) {
  return {[](int32_t) {}};
}

caf::behavior counter_entity(caf::event_based_actor*,
                             const sharding::entity_context&) {
  return {[](int32_t) {}};
}

struct three_nodes {
  std::filesystem::path dir;
  std::vector<std::unique_ptr<cluster_system>> nodes;
  std::vector<singleton::singleton_manager> managers;
  std::vector<sharding::shard_region> regions;

  explicit three_nodes(std::vector<std::string> extra = {}) {
    dir = std::filesystem::temp_directory_path()
          / ("troupe-mgmt-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto ports = test::free_ports(3);
    for (size_t i = 0; i < 3; ++i) {
      std::vector<std::string> args{
        "--cluster.port=" + std::to_string(ports[i]),
        "--cluster.seed_nodes=127.0.0.1:" + std::to_string(ports[0]),
        "--cluster.secret=management-test-secret-0123456789",
        "--cluster.gossip_interval=200ms",
        "--cluster.leader_actions_interval=200ms",
        "--management.port=0",
        "--lease.backend=file",
        "--lease.file.directory=" + dir.string(),
        "--lease.ttl=3s",
        "--singleton.use_lease=true",
        "--sharding.number_of_shards=20",
        "--log.level=warning"};
      args.insert(args.end(), extra.begin(), extra.end());
      runtime::node_options opts;
      opts.sources = runtime::sources_from_process(args, nullptr);
      auto sys = cluster_system::start(std::move(opts));
      REQUIRE(sys);
      auto m = (*sys)->start_singleton("jobs", idle_instance);
      REQUIRE(m);
      managers.push_back(*m);
      auto r = (*sys)->start_sharding("acct", counter_entity);
      REQUIRE(r);
      regions.push_back(*r);
      nodes.push_back(std::move(*sys));
    }
  }

  // As cluster_system::run ends: the coordinated shutdown (the youngest
  // first, so the singletons and the coordinator hand over once) hands off
  // the shards and leaves before it stops the node, so the others need no
  // failure detection and downing.
  ~three_nodes() {
    for (auto i = nodes.rbegin(); i != nodes.rend(); ++i)
      (*i)->shutdown();
    nodes.clear();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  uint16_t port(size_t i) {
    return nodes[i]->management().port();
  }

  std::string address(size_t i) {
    return runtime::to_string(nodes[i]->remoting().local_address());
  }

  size_t up_members(size_t i) {
    auto d = json_of(call(port(i), http::verb::get, "/cluster/members"));
    size_t n = 0;
    for (auto& m : d["members"].GetArray())
      n += std::string{m["status"].GetString()} == "up" ? 1 : 0;
    return n;
  }
};

// `address` without its uid.
std::string host_port(const std::string& address) {
  return address.substr(0, address.find('#'));
}

// The value of one sample line (`series value`), or -1.
double sample(const std::string& text, const std::string& series) {
  auto pos = text.find("\n" + series + " ");
  if (pos == std::string::npos)
    return -1;
  return std::stod(text.substr(pos + series.size() + 2));
}

} // namespace

TEST_CASE("management service: every node shows the cluster, the singleton "
          "host, the lease holder and the shards") {
  three_nodes c;
  for (size_t i = 0; i < 3; ++i)
    REQUIRE(c.port(i) != 0);
  REQUIRE(test::eventually([&] { return c.up_members(2) == 3; }, 20s, 100ms));
  // The oldest (node 0, the first seed) runs the singleton under the lease.
  auto singleton_host = [&](size_t asked) -> std::string {
    auto d = json_of(call(c.port(asked), http::verb::get, "/singletons"));
    for (auto& s : d.GetArray())
      if (std::string{s["type"].GetString()} == "jobs" && s["host"].IsString()
          && s["fencing_token"].IsUint64())
        return s["host"].GetString();
    return "";
  };
  REQUIRE(test::eventually([&] { return singleton_host(2) == c.address(0); },
                           20s, 100ms));
  CHECK(singleton_host(1) == c.address(0));
  {
    auto d = json_of(call(c.port(0), http::verb::get, "/singletons"));
    bool seen = false;
    for (auto& s : d.GetArray())
      if (std::string{s["type"].GetString()} == "jobs") {
        seen = true;
        CHECK(s["running_here"].GetBool());
        CHECK(s["fencing_token"].GetUint64() >= 1);
      }
    CHECK(seen);
  }
  // The lease holder, asked of a node that does not hold it.
  {
    auto d = json_of(call(c.port(1), http::verb::get, "/leases"));
    bool seen = false;
    for (auto& l : d.GetArray())
      if (std::string{l["name"].GetString()} == "troupe-singleton-jobs") {
        seen = true;
        CHECK(std::string{l["holder"].GetString()} == c.address(0));
        CHECK_FALSE(l["held_here"].GetBool());
        CHECK(l["fencing_token"].GetUint64() >= 1);
        CHECK(l["ttl_ms"].GetInt64() == 3000);
      }
    CHECK(seen);
  }
  // Entities on the shards' homes, counted by the homes themselves.
  for (int i = 0; i < 30; ++i)
    REQUIRE_FALSE(c.regions[1].tell("e" + std::to_string(i), int32_t{1}));
  auto entities = [&] {
    auto r = call(c.port(2), http::verb::get, "/cluster/shards/acct");
    if (r.status != 200)
      return uint64_t{0};
    auto d = json_of(r);
    uint64_t n = 0;
    for (auto& reg : d["regions"].GetArray())
      n += reg["entities"].GetUint64();
    return n;
  };
  CHECK(test::eventually([&] { return entities() == 30; }, 20s, 100ms));
  CHECK(call(c.port(0), http::verb::get, "/cluster/shards/nosuch").status
        == 404);
  // Metrics of the singleton's host.
  auto metrics = call(c.port(0), http::verb::get, "/metrics");
  REQUIRE(metrics.status == 200);
  INFO(metrics.body);
  CHECK(sample(metrics.body, "troupe_cluster_members{status=\"up\"}") == 3);
  CHECK(sample(metrics.body, "troupe_singleton_running{type=\"jobs\"}") == 1);
  CHECK(
    sample(metrics.body,
           "troupe_lease_acquisitions_total{name=\"troupe-singleton-jobs\"}")
    >= 1);
  CHECK(sample(metrics.body, "troupe_cluster_gossip_rounds_total") > 0);
  CHECK(sample(metrics.body, "troupe_transport_bytes_total{direction=\"out\"}")
        > 0);
  CHECK(sample(metrics.body, "troupe_sharding_shards{type=\"acct\"}") >= 0);
  // Probes.
  CHECK(call(c.port(1), http::verb::get, "/ready").status == 200);
  CHECK(call(c.port(1), http::verb::get, "/alive").status == 200);
  // The dashboard page.
  auto page = call(c.port(1), http::verb::get, "/");
  CHECK(page.status == 200);
  CHECK(page.body.find("<title>troupe cluster</title>") != std::string::npos);
}

TEST_CASE("management service: a member leaves through PUT, and a stopping "
          "node fails its probes") {
  three_nodes c;
  REQUIRE(test::eventually([&] { return c.up_members(0) == 3; }, 20s, 100ms));
  // An unknown member and an unknown operation are refused.
  CHECK(call(c.port(0), http::verb::put, "/cluster/members/127.0.0.1:1",
             "operation=leave")
          .status
        == 404);
  CHECK(call(c.port(0), http::verb::put, "/cluster/members/" + c.address(2),
             "operation=explode")
          .status
        == 400);
  // Node 2's status when its coordinated shutdown began (a task of its
  // first phase asks).
  std::promise<std::string> status_at_start;
  auto status_seen = status_at_start.get_future();
  REQUIRE_FALSE(c.nodes[2]->node().add_shutdown_task(
    runtime::shutdown_phase::before_service_unbind, "note the status",
    [&status_at_start, n = c.nodes[2].get()](const runtime::shutdown_context&) {
      auto me = n->cluster().self_member(2s);
      status_at_start.set_value(me ? std::string{cluster::to_string(me->status)}
                                   : "not a member");
    }));
  // Node 2 leaves, asked through node 0, by host:port only.
  auto target = c.address(2).substr(0, c.address(2).find('#'));
  auto r = call(c.port(0), http::verb::put, "/cluster/members/" + target,
                "operation=leave");
  CHECK(r.status == 200);
  auto gone = [&] {
    auto d = json_of(call(c.port(0), http::verb::get, "/cluster/members"));
    for (auto& m : d["members"].GetArray())
      if (std::string{m["address"].GetString()} == c.address(2))
        return false;
    return true;
  };
  CHECK(test::eventually(gone, 20s, 100ms));
  // The leave asked through another member started node 2's coordinated
  // shutdown (Akka's: a member that sees itself leaving runs it), which
  // handed off and left, and ends by itself.
  auto& sequence = c.nodes[2]->node().coordinated_shutdown();
  CHECK(sequence.reason() == runtime::shutdown_reason::cluster_leaving);
  CHECK(test::eventually([&] { return sequence.complete(); }, 20s, 100ms));
  // It began as soon as node 2 saw itself leaving, before its removal: its
  // shards were handed off while it was still a member.
  REQUIRE(status_seen.wait_for(1s) == std::future_status::ready);
  auto status = status_seen.get();
  CHECK((status == "leaving" || status == "exiting"));
  // A node whose stop began answers 503 on both probes.
  c.nodes[1]->management().set_stopping();
  auto ready = call(c.port(1), http::verb::get, "/ready");
  CHECK(ready.status == 503);
  CHECK(ready.body.find("shutting down") != std::string::npos);
  CHECK(call(c.port(1), http::verb::get, "/alive").status == 503);
  CHECK(call(c.port(0), http::verb::get, "/alive").status == 200);
}

TEST_CASE("management service: a peer cut off through /faults becomes "
          "unreachable, and healing the link makes it reachable again") {
  // No downing: the partition must outlive the check, not end in a down.
  three_nodes c{{"--management.fault_injection=true",
                 "--downing.active_strategy=off",
                 "--cluster.failure_detector.heartbeat_interval=200ms",
                 "--cluster.failure_detector.acceptable_heartbeat_pause=1s"}};
  REQUIRE(test::eventually([&] { return c.up_members(0) == 3; }, 20s, 100ms));
  auto reachable_in = [&](size_t observer, size_t i) {
    auto d
      = json_of(call(c.port(observer), http::verb::get, "/cluster/members"));
    for (auto& m : d["members"].GetArray())
      if (std::string{m["address"].GetString()} == c.address(i))
        return m["reachable"].GetBool();
    return false;
  };
  // Node 0 cuts node 2 off, both ways.
  auto peer = host_port(c.address(2));
  auto r
    = call(c.port(0), http::verb::put, "/faults/" + peer, "blackhole=true");
  CHECK(r.status == 200);
  auto listed = json_of(call(c.port(0), http::verb::get, "/faults"));
  REQUIRE(listed.Size() == 2);
  CHECK(std::string{listed[0]["peer"].GetString()} == peer);
  // Its own endpoint is refused.
  CHECK(call(c.port(0), http::verb::put, "/faults/" + host_port(c.address(0)),
             "blackhole=true")
          .status
        == 400);
  CHECK(test::eventually([&] { return !reachable_in(0, 2); }, 30s, 100ms));
  CHECK(test::eventually([&] { return !reachable_in(2, 0); }, 30s, 100ms));
  auto metrics = call(c.port(0), http::verb::get, "/metrics").body;
  CHECK(sample(metrics, "troupe_transport_drops_total{reason=\"blackholed\"}")
        > 0);
  // Healed: reachable again on both sides, and nothing is listed.
  CHECK(call(c.port(0), http::verb::delete_, "/faults").status == 200);
  CHECK(json_of(call(c.port(0), http::verb::get, "/faults")).Size() == 0);
  CHECK(test::eventually([&] { return reachable_in(0, 2); }, 30s, 100ms));
  CHECK(test::eventually([&] { return reachable_in(2, 0); }, 30s, 100ms));
}
