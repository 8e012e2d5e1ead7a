// The loopback network of fault_network.hpp: partitions through each
// node's management `/faults`.

#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "demo_http.hpp"
#include "fault_network.hpp"
#include "troupe/test/free_ports.hpp"

namespace troupe::chaos {

std::string node_place::cluster_endpoint() const {
  return fmt::format("{}:{}", host, cluster_port);
}

std::string node_place::management_url() const {
  return fmt::format("http://{}:{}", host, management_port);
}

namespace {

constexpr const char* loopback = "127.0.0.1";

// What one node drops from or to one peer, or the delay it adds to both
// directions (a blackhole wins; the schedule never asks for both).
struct cut {
  bool inbound = false;
  bool outbound = false;
  std::chrono::milliseconds delay{0};

  friend bool operator==(const cut&, const cut&) = default;

  const char* direction() const {
    return inbound && outbound ? "both" : inbound ? "inbound" : "outbound";
  }

  // The `/faults` form that puts it in force.
  std::string form() const {
    if (inbound || outbound)
      return fmt::format("blackhole=true&direction={}", direction());
    return fmt::format("delay_ms={}&direction=both", delay.count());
  }
};

// (node, peer) -> the cut node applies to its traffic with peer.
using cut_map = std::map<std::pair<size_t, size_t>, cut>;

cut_map cuts_of(const std::map<uint64_t, partition_spec>& active,
                const std::map<size_t, std::chrono::milliseconds>& slowed,
                size_t nodes) {
  cut_map out;
  // Set on the other nodes only: they hold it while the slow node
  // restarts (a new process has no faults until it is told).
  for (auto& [slow, delay] : slowed)
    for (size_t j = 0; j < nodes; ++j)
      if (j != slow)
        out[{j, slow}].delay = delay;
  for (auto& [id, p] : active)
    for (auto a : p.from)
      for (auto b : p.to) {
        // Both sides cut, so a node that restarts (and forgets its faults
        // until it is told again) is still cut off by the others.
        out[{a, b}].outbound = true;
        out[{b, a}].inbound = true;
        if (p.symmetric) {
          out[{a, b}].inbound = true;
          out[{b, a}].outbound = true;
        }
      }
  return out;
}

class transport_network : public fault_network {
public:
  explicit transport_network(size_t n) {
    auto ports = test::free_ports(3 * n);
    for (size_t i = 0; i < n; ++i)
      nodes_.push_back({fmt::format("node-{}", i + 1), loopback, ports[3 * i],
                        ports[3 * i + 1], ports[3 * i + 2]});
  }

  std::string mechanism() const override {
    return "transport";
  }

  const std::vector<node_place>& nodes() const override {
    return nodes_;
  }

  std::string hub_host() const override {
    return loopback;
  }

  std::vector<std::string> launcher(size_t) const override {
    return {};
  }

  std::string partition(const partition_spec& p) override {
    active_[p.id] = p;
    return sync();
  }

  std::string heal(uint64_t id) override {
    if (id == 0) {
      active_.clear();
      slowed_.clear();
    } else
      active_.erase(id);
    return sync();
  }

  std::string slow_links(size_t i, std::chrono::milliseconds delay) override {
    slowed_[i] = delay;
    return sync();
  }

  std::string fast_links(size_t i) override {
    if (slowed_.erase(i) == 0)
      return {};
    return sync();
  }

  std::string node_started(size_t i) override {
    // The new process has no faults: forget what the old one had.
    for (auto it = applied_.begin(); it != applied_.end();)
      it = it->first.first == i ? applied_.erase(it) : std::next(it);
    return sync();
  }

private:
  std::string fault_url(size_t node, size_t peer) const {
    return fmt::format("{}/faults/{}", nodes_[node].management_url(),
                       nodes_[peer].cluster_endpoint());
  }

  // Makes every node's faults those of the active partitions: a changed
  // (node, peer) is deleted, then put again if still wanted.
  std::string sync() {
    auto wanted = cuts_of(active_, slowed_, nodes_.size());
    std::vector<runtime::http_request> deletes;
    std::vector<runtime::http_request> puts;
    std::set<std::pair<size_t, size_t>> keys;
    for (auto& [k, c] : applied_)
      keys.insert(k);
    for (auto& [k, c] : wanted)
      keys.insert(k);
    for (auto& k : keys) {
      auto w = wanted.find(k);
      auto a = applied_.find(k);
      bool has_w = w != wanted.end();
      bool has_a = a != applied_.end();
      if (has_w && has_a && w->second == a->second)
        continue;
      if (has_a) {
        runtime::http_request r;
        r.method = "DELETE";
        r.url = fault_url(k.first, k.second);
        r.timeout = std::chrono::seconds{2};
        deletes.push_back(std::move(r));
      }
      if (has_w) {
        runtime::http_request r;
        r.method = "PUT";
        r.url = fault_url(k.first, k.second);
        r.headers.push_back(
          {"Content-Type", "application/x-www-form-urlencoded"});
        r.body = w->second.form();
        r.timeout = std::chrono::seconds{2};
        puts.push_back(std::move(r));
      }
    }
    std::string errors;
    for (auto* batch : {&deletes, &puts}) {
      if (batch->empty())
        continue;
      auto answers = http_.call_all(*batch);
      for (size_t i = 0; i < answers.size(); ++i) {
        auto& r = (*batch)[i];
        if (!answers[i])
          errors += fmt::format("{} {}: {}; ", r.method, r.url,
                                answers[i].error().message);
        else if (answers[i]->status != 200)
          errors += fmt::format("{} {}: HTTP {}: {}; ", r.method, r.url,
                                answers[i]->status, answers[i]->body);
      }
    }
    // A node that did not answer (paused, dead) is told again when it
    // starts (node_started); the others hold the cut meanwhile.
    applied_ = std::move(wanted);
    return errors;
  }

  std::vector<node_place> nodes_;
  std::map<uint64_t, partition_spec> active_;
  std::map<size_t, std::chrono::milliseconds> slowed_;
  cut_map applied_;
  demo::http_getter http_;
};

} // namespace

std::unique_ptr<fault_network> make_transport_network(size_t nodes) {
  return std::make_unique<transport_network>(nodes);
}

} // namespace troupe::chaos
