#include "troupe/test/netns_network.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include "troupe/runtime/assert.hpp"
#include "troupe/test/command.hpp"

namespace troupe::test {

namespace {

/// What every namespace name of a netns_network starts with; the owning
/// process's pid follows.
constexpr std::string_view ns_prefix = "trns";

/// Numbers the networks of this process.
std::atomic<unsigned> networks{0};

runtime::error failed(std::string message) {
  return runtime::make_error(netns_errc::command_failed, std::move(message));
}

runtime::error bad_argument(std::string message) {
  return runtime::make_error(netns_errc::bad_argument,
                             "netns network: " + std::move(message));
}

std::string address_list(const std::vector<size_t>& nodes) {
  std::string out;
  for (auto i : nodes)
    out += (out.empty() ? "" : ",") + netns_network::address(i);
  return out;
}

/// The pid in a name `trns<pid>-...`, or 0.
pid_t owner_of(const std::string& name) {
  if (name.rfind(ns_prefix, 0) != 0)
    return 0;
  auto digits = name.substr(ns_prefix.size());
  digits = digits.substr(0, digits.find('-'));
  if (digits.empty() || digits.size() > 9
      || digits.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return static_cast<pid_t>(std::stol(digits));
}

} // namespace

const char* to_string(netns_errc x) noexcept {
  switch (x) {
    case netns_errc::none:
      return "none";
    case netns_errc::command_failed:
      return "command_failed";
    case netns_errc::bad_argument:
      return "bad_argument";
  }
  return "?";
}

bool in_ci() {
  auto ci = std::getenv("CI");
  return ci != nullptr && std::string{ci} == "true";
}

netns_network::netns_network(size_t nodes) {
  TROUPE_ASSERT(nodes >= 1 && nodes <= 253);
  ip_ = find_program("ip");
  iptables_ = find_program("iptables");
  auto base = std::string{ns_prefix} + std::to_string(::getpid()) + "-"
              + std::to_string(++networks);
  hub_ = base + "-hub";
  for (size_t i = 1; i <= nodes; ++i)
    nodes_.push_back(base + "-n" + std::to_string(i));
}

netns_network::~netns_network() {
  for (auto& ns : created_)
    run_command({ip_, "netns", "del", ns});
}

std::optional<std::string> netns_network::unsupported() {
  if (::geteuid() != 0)
    return "not root: network namespaces and iptables need root";
  if (ip_.empty())
    return "no `ip` program (Debian package iproute2)";
  if (iptables_.empty())
    return "no `iptables` program (Debian package iptables)";
  remove_stale();
  if (auto err = add_namespace(hub_))
    return "cannot create a network namespace: " + err.message;
  return std::nullopt;
}

runtime::error netns_network::create() {
  auto br = std::vector<std::string>{"-n", hub_};
  auto in_hub = [&](std::vector<std::string> args) {
    args.insert(args.begin(), br.begin(), br.end());
    return ip(std::move(args));
  };
  if (auto err = in_hub({"link", "set", "lo", "up"}))
    return err;
  if (auto err = in_hub({"link", "add", "br0", "type", "bridge"}))
    return err;
  if (auto err = in_hub({"link", "set", "br0", "up"}))
    return err;
  if (auto err = in_hub({"addr", "add", hub_address() + "/24", "dev", "br0"}))
    return err;
  for (size_t i = 1; i <= nodes_.size(); ++i) {
    auto& ns = nodes_[i - 1];
    auto peer = "v" + std::to_string(i);
    std::vector<std::vector<std::string>> steps = {
      {"-n", ns, "link", "set", "lo", "up"},
      {"-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", peer,
       "netns", hub_},
      {"-n", hub_, "link", "set", peer, "master", "br0", "up"},
      {"-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0"},
      {"-n", ns, "link", "set", "eth0", "up"},
    };
    if (auto err = add_namespace(ns))
      return err;
    for (auto& step : steps)
      if (auto err = ip(step))
        return err;
    // Connection tracking from the start: an asymmetric partition matches
    // conntrack's direction, which is only right for connections tracked
    // since their first packet. This rule makes the namespace track (any
    // rule with a conntrack match does); nothing is forwarded here, and
    // heal_all leaves FORWARD alone.
    if (auto err = iptables(i, {"-A", "FORWARD", "-m", "conntrack", "--ctstate",
                                "INVALID", "-j", "DROP"}))
      return err;
  }
  return {};
}

std::string netns_network::address(size_t i) {
  return "10.77.0." + std::to_string(i);
}

std::string netns_network::hub_address() {
  return "10.77.0.254";
}

const std::string& netns_network::node_namespace(size_t i) const {
  TROUPE_ASSERT(i >= 1 && i <= nodes_.size());
  return nodes_[i - 1];
}

std::vector<std::string> netns_network::launcher(size_t i) const {
  return {ip_, "netns", "exec", node_namespace(i)};
}

std::vector<std::string> netns_network::hub_launcher() const {
  return {ip_, "netns", "exec", hub_};
}

runtime::error netns_network::enter_hub() const {
  return enter(hub_);
}

runtime::error netns_network::enter_node(size_t i) const {
  if (auto err = check_node(i))
    return err;
  return enter(nodes_[i - 1]);
}

runtime::expected<uint32_t>
netns_network::partition(const std::vector<size_t>& a,
                         const std::vector<size_t>& b, partition_shape shape) {
  if (a.empty() || b.empty())
    return bad_argument("a partition needs two non-empty sides");
  for (auto i : a) {
    if (auto err = check_node(i))
      return err;
    for (auto j : b)
      if (i == j)
        return bad_argument("node " + std::to_string(i)
                            + " is on both sides of the partition");
  }
  for (auto j : b)
    if (auto err = check_node(j))
      return err;
  auto id = next_id_++;
  // Rules in the receivers' INPUT: packets leave the sender and vanish, as
  // on a real network (a DROP in OUTPUT fails the sender's calls with
  // EPERM instead).
  auto drop_from = [id](size_t node, const std::vector<size_t>& senders,
                        bool only_original) {
    std::vector<std::string> spec = {"-s", address_list(senders)};
    if (only_original)
      spec.insert(spec.end(), {"-m", "conntrack", "--ctdir", "ORIGINAL"});
    spec.insert(spec.end(),
                {"-m", "comment", "--comment",
                 "troupe-partition-" + std::to_string(id), "-j", "DROP"});
    return rule{node, "INPUT", std::move(spec)};
  };
  std::vector<rule> rules;
  bool asymmetric = shape == partition_shape::asymmetric;
  for (auto j : b)
    rules.push_back(drop_from(j, a, asymmetric));
  if (!asymmetric)
    for (auto i : a)
      rules.push_back(drop_from(i, b, false));
  if (auto err = add_rules(id, std::move(rules)))
    return err;
  return id;
}

runtime::expected<uint32_t> netns_network::isolate(size_t i) {
  if (auto err = check_node(i))
    return err;
  auto id = next_id_++;
  std::vector<std::string> tag
    = {"-m", "comment", "--comment", "troupe-partition-" + std::to_string(id)};
  std::vector<std::string> in = {"!", "-i", "lo"};
  std::vector<std::string> out = {"!", "-o", "lo"};
  for (auto* spec : {&in, &out}) {
    spec->insert(spec->end(), tag.begin(), tag.end());
    spec->insert(spec->end(), {"-j", "DROP"});
  }
  if (auto err = add_rules(id, {{i, "INPUT", in}, {i, "OUTPUT", out}}))
    return err;
  return id;
}

runtime::expected<uint32_t>
netns_network::redirect(size_t i, const std::string& address, uint16_t port,
                        const std::string& to_address, uint16_t to_port) {
  if (auto err = check_node(i))
    return err;
  auto id = next_id_++;
  rule r{i,
         "OUTPUT",
         {"-p", "tcp", "-d", address, "--dport", std::to_string(port), "-m",
          "comment", "--comment", "troupe-redirect-" + std::to_string(id), "-j",
          "DNAT", "--to-destination",
          to_address + ":" + std::to_string(to_port)},
         "nat"};
  if (auto err = add_rules(id, {std::move(r)}))
    return err;
  return id;
}

runtime::error netns_network::heal(uint32_t id) {
  auto found = partitions_.find(id);
  if (found == partitions_.end())
    return bad_argument("no partition " + std::to_string(id)
                        + " in force (healed already, or never made)");
  auto rules = std::move(found->second);
  partitions_.erase(found);
  runtime::error first;
  for (auto& r : rules) {
    std::vector<std::string> args = {"-t", r.table, "-D", r.chain};
    args.insert(args.end(), r.spec.begin(), r.spec.end());
    auto err = iptables(r.node, std::move(args));
    if (err && !first)
      first = std::move(err);
  }
  return first;
}

runtime::error netns_network::heal_all() {
  partitions_.clear();
  runtime::error first;
  for (size_t i = 1; i <= nodes_.size(); ++i)
    for (auto [table, chain] :
         {std::pair{"filter", "INPUT"}, std::pair{"filter", "OUTPUT"},
          std::pair{"nat", "OUTPUT"}})
      if (auto err = iptables(i, {"-t", table, "-F", chain}); err && !first)
        first = std::move(err);
  return first;
}

std::vector<uint32_t> netns_network::partitions() const {
  std::vector<uint32_t> out;
  for (auto& [id, rules] : partitions_)
    out.push_back(id);
  return out;
}

runtime::error netns_network::ip(std::vector<std::string> args) {
  args.insert(args.begin(), ip_);
  auto r = run_command(args);
  return r.ok ? runtime::error{} : failed(r.output);
}

runtime::error netns_network::iptables(size_t node,
                                       std::vector<std::string> args) {
  std::vector<std::string> cmd
    = {ip_, "netns", "exec", nodes_[node - 1], iptables_, "-w"};
  cmd.insert(cmd.end(), args.begin(), args.end());
  auto r = run_command(cmd);
  return r.ok ? runtime::error{} : failed(r.output);
}

runtime::error netns_network::add_namespace(const std::string& name) {
  auto err = ip({"netns", "add", name});
  if (!err)
    created_.push_back(name);
  return err;
}

runtime::error netns_network::add_rules(uint32_t id, std::vector<rule> rules) {
  // The rules added before a failure stay recorded under `id` (heal_all
  // removes them).
  auto& kept = partitions_[id];
  for (auto& r : rules) {
    std::vector<std::string> args = {"-t", r.table, "-A", r.chain};
    args.insert(args.end(), r.spec.begin(), r.spec.end());
    if (auto err = iptables(r.node, std::move(args)))
      return err;
    kept.push_back(std::move(r));
  }
  return {};
}

runtime::error netns_network::check_node(size_t i) const {
  if (i >= 1 && i <= nodes_.size())
    return {};
  return bad_argument("node " + std::to_string(i) + " is not in 1.."
                      + std::to_string(nodes_.size()));
}

runtime::error netns_network::enter(const std::string& name) const {
  auto path = "/var/run/netns/" + name;
  auto fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return failed("open " + path + ": " + std::strerror(errno));
  auto rc = ::setns(fd, CLONE_NEWNET);
  auto saved = errno;
  ::close(fd);
  if (rc != 0)
    return failed("setns " + path + ": " + std::strerror(saved));
  return {};
}

void netns_network::remove_stale() {
  auto r = run_command({ip_, "netns", "list"});
  std::istringstream in{r.output};
  for (std::string line; std::getline(in, line);) {
    auto name = line.substr(0, line.find(' '));
    auto pid = owner_of(name);
    if (pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH)
      run_command({ip_, "netns", "del", name});
  }
}

} // namespace troupe::test
