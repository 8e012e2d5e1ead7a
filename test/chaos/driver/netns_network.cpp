// The namespace network of fault_network.hpp over test::netns_network.

#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "fault_network.hpp"
#include "troupe/chaos/delay_proxy.hpp"
#include "troupe/test/netns_network.hpp"

namespace troupe::chaos {

namespace {

// Each node has its own address, so every node uses the same ports.
constexpr uint16_t cluster_port = 2552;
constexpr uint16_t management_port = 8558;
constexpr uint16_t api_port = 8080;

std::vector<size_t> one_based(const std::vector<size_t>& xs) {
  std::vector<size_t> out;
  for (auto x : xs)
    out.push_back(x + 1);
  return out;
}

class netns_fault_network : public fault_network {
public:
  explicit netns_fault_network(size_t n) : net_(n) {
    if (auto why = net_.unsupported())
      throw std::runtime_error("network namespaces: " + *why);
    if (auto err = net_.create())
      throw std::runtime_error("network namespaces: " + err.message);
    // Everything this process starts from now on (threads, etcd, the
    // store, the client's connections) lives in the hub.
    if (auto err = net_.enter_hub())
      throw std::runtime_error("network namespaces: " + err.message);
    for (size_t i = 1; i <= n; ++i)
      nodes_.push_back({fmt::format("node-{}", i),
                        test::netns_network::address(i), cluster_port,
                        management_port, api_port});
  }

  std::string mechanism() const override {
    return "netns";
  }

  const std::vector<node_place>& nodes() const override {
    return nodes_;
  }

  std::string hub_host() const override {
    return test::netns_network::hub_address();
  }

  std::vector<std::string> launcher(size_t i) const override {
    return net_.launcher(i + 1);
  }

  std::string partition(const partition_spec& p) override {
    auto id = net_.partition(one_based(p.from), one_based(p.to),
                             p.symmetric ? test::partition_shape::symmetric
                                         : test::partition_shape::asymmetric);
    if (!id)
      return id.error().message;
    ids_[p.id] = *id;
    return {};
  }

  std::string heal(uint64_t id) override {
    if (id == 0) {
      ids_.clear();
      // heal_all removes the redirects too; the proxies go with them.
      slowed_.clear();
      auto err = net_.heal_all();
      return err ? err.message : std::string{};
    }
    auto i = ids_.find(id);
    if (i == ids_.end())
      return fmt::format("no partition {} in force", id);
    auto err = net_.heal(i->second);
    ids_.erase(i);
    return err ? err.message : std::string{};
  }

  std::string node_started(size_t) override {
    return {}; // the rules live in the namespaces, not in the process
  }

  // One proxy in the hub per destination (the slow node for the others,
  // each other node for the slow one); each sender's new connections to
  // that destination's cluster port are redirected through it. A proxy
  // delays the chunks of both directions, so every frame between the slow
  // node and another is `delay` late.
  std::string slow_links(size_t i, std::chrono::milliseconds delay) override {
    auto err = fast_links(i);
    auto& slow = slowed_[i];
    auto to_slow = start_proxy(i, delay, err);
    for (size_t j = 0; j < nodes_.size(); ++j) {
      if (j == i)
        continue;
      if (to_slow)
        err += redirect(slow, j, i, to_slow->port());
      if (auto to_other = start_proxy(j, delay, err)) {
        err += redirect(slow, i, j, to_other->port());
        slow.proxies.push_back(std::move(to_other));
      }
    }
    if (to_slow)
      slow.proxies.push_back(std::move(to_slow));
    return err;
  }

  std::string fast_links(size_t i) override {
    auto found = slowed_.find(i);
    if (found == slowed_.end())
      return {};
    std::string err;
    for (auto id : found->second.redirects)
      if (auto e = net_.heal(id))
        err += e.message + "; ";
    // Closes the proxied connections: both sides reconnect directly.
    slowed_.erase(found);
    return err;
  }

private:
  struct slow_node {
    std::vector<std::unique_ptr<delay_proxy>> proxies;
    std::vector<uint32_t> redirects;
  };

  std::unique_ptr<delay_proxy>
  start_proxy(size_t to, std::chrono::milliseconds delay, std::string& err) {
    delay_proxy_config pc;
    pc.listen_host = hub_host();
    pc.upstream_host = nodes_[to].host;
    pc.upstream_port = nodes_[to].cluster_port;
    pc.delay = delay;
    auto proxy = delay_proxy::start(pc);
    if (!proxy) {
      err += fmt::format("a delay proxy to {}: {}; ", nodes_[to].name,
                         proxy.error().message);
      return nullptr;
    }
    return std::move(*proxy);
  }

  std::string redirect(slow_node& slow, size_t from, size_t to, uint16_t port) {
    auto id = net_.redirect(from + 1, nodes_[to].host, nodes_[to].cluster_port,
                            hub_host(), port);
    if (!id)
      return id.error().message + "; ";
    slow.redirects.push_back(*id);
    return {};
  }

  test::netns_network net_;
  std::vector<node_place> nodes_;
  // The schedule's partition ids -> the network's.
  std::map<uint64_t, uint32_t> ids_;
  // The slow nodes (0-based) and what makes them slow.
  std::map<size_t, slow_node> slowed_;
};

} // namespace

std::string netns_unsupported() {
  test::netns_network probe{1};
  auto why = probe.unsupported();
  return why ? *why : std::string{};
}

std::unique_ptr<fault_network> make_netns_network(size_t nodes) {
  return std::make_unique<netns_fault_network>(nodes);
}

} // namespace troupe::chaos
