#pragma once

// Cluster Bootstrap with real cluster_node processes on loopback: N nodes,
// each with a cluster port and a management port, formed through a
// discovery method (the flags `method_flags` gives), restartable on the
// same ports (a new incarnation, as Kubernetes restarts a pod). The
// verdicts come from the processes' own event and log lines and from
// their management APIs, read by the test.

#include <future>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "cluster_process.hpp"
#include "troupe/runtime/http_engine.hpp"

namespace troupe::test {

/// A blocking GET/PUT over the runtime's HTTP engine.
class blocking_http {
public:
  runtime::expected<runtime::http_response>
  call(std::string method, std::string url, std::string body = {}) {
    runtime::http_request req;
    req.method = std::move(method);
    req.url = std::move(url);
    req.body = std::move(body);
    if (!req.body.empty())
      req.headers.push_back({"Content-Type", "application/json"});
    req.timeout = 5s;
    std::promise<runtime::expected<runtime::http_response>> done;
    auto result = done.get_future();
    engine_.start(std::move(req), [&done](auto r) { done.set_value(r); });
    return result.get();
  }

private:
  runtime::http_engine engine_;
};

class bootstrap_processes {
public:
  /// `n` nodes; `method_flags(i)` are node i's discovery flags (the
  /// method and its keys); `extra` goes to every node.
  bootstrap_processes(const temp_dir& dir, size_t n,
                      std::function<std::vector<std::string>(size_t)> method,
                      std::vector<std::string> extra = {})
    : dir_(dir), method_(std::move(method)), extra_(std::move(extra)) {
    auto ports = free_ports(2 * n);
    for (size_t i = 0; i < n; ++i) {
      cluster_ports_.push_back(ports[2 * i]);
      management_ports_.push_back(ports[2 * i + 1]);
    }
    ps_.resize(n);
    incarnations_.resize(n, 0);
  }

  size_t size() const noexcept {
    return ps_.size();
  }

  uint16_t management_port(size_t i) const {
    return management_ports_[i];
  }

  uint16_t cluster_port(size_t i) const {
    return cluster_ports_[i];
  }

  /// "127.0.0.1:<management port>" of every node, comma-separated.
  std::string contact_points() const {
    std::string out;
    for (auto p : management_ports_)
      out += fmt::format("{}127.0.0.1:{}", out.empty() ? "" : ",", p);
    return out;
  }

  /// Starts (or restarts, after a kill) node i.
  void start(size_t i) {
    auto flags = cluster_node_flags("127.0.0.1", cluster_ports_[i], "");
    flags.push_back("--with_management");
    flags.push_back(fmt::format("--management.port={}", management_ports_[i]));
    flags.push_back("--management.fault_injection=true");
    flags.push_back("--cluster.bootstrap.stable_margin=1s");
    flags.push_back("--cluster.bootstrap.discovery_interval=200ms");
    flags.push_back("--cluster.bootstrap.probe_interval=200ms");
    flags.push_back("--cluster.bootstrap.probing_failure_timeout=1500ms");
    for (auto& f : method_(i))
      flags.push_back(std::move(f));
    flags.insert(flags.end(), extra_.begin(), extra_.end());
    ps_[i].reset();
    ps_[i] = std::make_unique<cluster_process>(
      dir_, fmt::format("node{}-{}", i + 1, ++incarnations_[i]),
      std::move(flags));
  }

  cluster_process& operator[](size_t i) {
    return *ps_[i];
  }

  cluster_processes& all() noexcept {
    return ps_;
  }

  /// The member addresses (`host:port#uid`, status up) node i's
  /// management API reports, sorted; empty when it does not answer.
  std::vector<std::string> up_members(size_t i) {
    auto r = http_.call("GET", fmt::format("http://127.0.0.1:{}/cluster/"
                                           "members",
                                           management_ports_[i]));
    std::vector<std::string> out;
    if (!r || r->status != 200)
      return out;
    rapidjson::Document doc;
    doc.Parse(r->body.c_str());
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("members"))
      return out;
    for (auto& m : doc["members"].GetArray())
      if (std::string{m["status"].GetString()} == "up")
        out.emplace_back(m["address"].GetString());
    std::sort(out.begin(), out.end());
    return out;
  }

  /// True when every running node's API reports the same up members and
  /// those are exactly the running nodes' current addresses: one cluster.
  bool one_cluster() {
    std::vector<std::string> expected;
    for (auto& p : ps_)
      if (p && p->proc().running() && !p->addr().empty())
        expected.push_back(p->addr());
    std::sort(expected.begin(), expected.end());
    if (expected.size() != ps_.size())
      return false;
    for (size_t i = 0; i < ps_.size(); ++i)
      if (up_members(i) != expected)
        return false;
    return true;
  }

  /// How many log lines of all incarnations say a cluster was founded.
  size_t foundings() const {
    size_t n = 0;
    for (auto& entry : std::filesystem::directory_iterator(dir_.path)) {
      auto text = journal_text(entry.path());
      for (size_t at = 0;
           (at = text.find("founding a new cluster", at)) != std::string::npos;
           ++at)
        ++n;
    }
    return n;
  }

  /// Sets a fault on node `on`'s link to node `peer`'s cluster endpoint
  /// through `PUT /faults` (`direction` both, inbound or outbound); no
  /// blackhole and `delay_ms` 0 heals it (`DELETE /faults`).
  void fault(size_t on, size_t peer, bool blackhole, int delay_ms = 0,
             const char* direction = "both") {
    auto url = fmt::format("http://127.0.0.1:{}/faults/127.0.0.1:{}",
                           management_ports_[on], cluster_ports_[peer]);
    auto r = !blackhole && delay_ms == 0
               ? http_.call("DELETE", url)
               : http_.call("PUT", url,
                            fmt::format(R"({{"blackhole":{},"delay_ms":{},)"
                                        R"("direction":"{}"}})",
                                        blackhole ? "true" : "false", delay_ms,
                                        direction));
    INFO("faults on node " << on + 1 << ": "
                           << (r ? r->body : r.error().message));
    REQUIRE(r);
    REQUIRE(r->status == 200);
  }

  std::string outputs() const {
    return troupe::test::outputs(ps_);
  }

private:
  const temp_dir& dir_;
  std::function<std::vector<std::string>(size_t)> method_;
  std::vector<std::string> extra_;
  std::vector<uint16_t> cluster_ports_;
  std::vector<uint16_t> management_ports_;
  std::vector<size_t> incarnations_;
  cluster_processes ps_;
  blocking_http http_;
};

/// The flags of the config method over `cp`'s contact points, every node
/// required for the first formation.
inline std::function<std::vector<std::string>(size_t)>
config_method(const bootstrap_processes* cp, size_t required) {
  return [cp, required](size_t) {
    return std::vector<std::string>{
      "--cluster.bootstrap.discovery_method=config",
      "--cluster.bootstrap.config.contact_points=" + cp->contact_points(),
      fmt::format("--cluster.bootstrap.required_contact_point_nr={}",
                  required)};
  };
}

} // namespace troupe::test
