// Multi-process test of "a second cluster is detected and healed": five
// cluster_node processes on 127.0.0.1 form two clusters of one name on
// purpose (started apart, each group with its own seed), each with the
// lease-guarded singleton "jobs" (one file lease for both: the same store).
// Then every node is handed every node's endpoint as a contact point: the
// smaller cluster (2 nodes, although the older, holding the lease) leaves,
// its processes exit with the merge's exit code (75), this test restarts
// them as a supervisor would (every node as a seed), and they join the
// other: one cluster of five. Verdicts: the processes' event and log lines
// for the cluster, and the store-side oracle for the singleton (its shared
// journal: no two instances overlap, tokens increase), never the nodes'
// own reports of it.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "cluster_process.hpp"
#include "singleton_journal.hpp"
#include "singleton_processes.hpp"

using namespace troupe::test;

namespace {

struct merge_cluster {
  temp_dir dir;
  std::filesystem::path journal = dir.path / "journal";
  std::filesystem::path leases = dir.path / "leases";
  std::vector<uint16_t> ports = free_ports(5);
  cluster_processes ps{5};

  std::string endpoint(size_t i) const {
    return "127.0.0.1:" + std::to_string(ports[i]);
  }

  std::filesystem::path contacts(size_t i) const {
    return dir.path / ("contacts-" + std::to_string(i + 1));
  }

  /// Node i (0-based) joining through `seeds`; `name` its output file.
  void start(size_t i, const std::string& seeds, const std::string& name) {
    auto flags = cluster_node_flags("127.0.0.1", ports[i], seeds);
    for (auto& f :
         with_file_lease(singleton_flags(journal), leases, std::string{"3s"}))
      flags.push_back(f);
    flags.push_back("--contacts_file=" + contacts(i).string());
    flags.push_back("--cluster.incarnation_probe_interval=500ms");
    ps[i] = std::make_unique<cluster_process>(dir, name, std::move(flags));
    ps[i]->wait_ready();
  }

  /// Every node of `group` printed member_up for every node of it.
  bool group_up(const std::vector<size_t>& group) const {
    for (auto i : group)
      for (auto j : group)
        if (!ps[i]->printed("member_up", ps[j]->addr()))
          return false;
    return true;
  }

  /// Hands every node every endpoint as its contact points (written to a
  /// temporary file first: a reader never sees half a list).
  void connect() {
    std::string all;
    for (size_t i = 0; i < ports.size(); ++i)
      all += (i ? "," : "") + endpoint(i);
    for (size_t i = 0; i < ports.size(); ++i) {
      auto tmp = contacts(i).string() + ".tmp";
      std::ofstream{tmp} << all << "\n";
      std::filesystem::rename(tmp, contacts(i));
    }
  }

  std::string report() const {
    return outputs(ps) + "---- journal\n" + journal_text(journal);
  }
};

/// True if `p` logged an error naming both incarnations of a meeting: its
/// own and another one.
bool logged_meeting(const cluster_process& p) {
  for (auto& l : p.lines())
    if (l.find("another cluster of this name was met") != std::string::npos
        && l.find("this node's cluster is incarnation") != std::string::npos
        && l.find("belongs to incarnation") != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST_CASE("cluster merge, 5 processes on loopback: two clusters made on "
          "purpose become one, the smaller leaves with exit code 75 and "
          "rejoins, the lease-guarded singleton never runs twice") {
  merge_cluster c;
  const std::vector<size_t> small{3, 4}, large{0, 1, 2};
  // The small cluster forms first: it is the older, and its singleton
  // holds the lease.
  for (auto i : small)
    c.start(i, c.endpoint(3), "node" + std::to_string(i + 1));
  REQUIRE(eventually([&] { return c.group_up(small); }, 30s));
  auto first = wait_for_instance(c.ps, c.journal, c.ps[3]->addr(), 1, 20s);
  for (auto i : large)
    c.start(i, c.endpoint(0), "node" + std::to_string(i + 1));
  {
    INFO(c.report());
    REQUIRE(eventually([&] { return c.group_up(large); }, 30s));
  }
  // Two clusters now: the large one's singleton manager cannot get the
  // lease, so one instance runs.
  CHECK(instance_windows(read_journal(c.journal)).size() == 1);
  c.connect();
  // The small cluster (2 < 3) leaves, although older: both its processes
  // exit for the merge.
  for (auto i : small) {
    INFO(c.report());
    REQUIRE(c.ps[i]->proc().reap(30s));
    auto st = c.ps[i]->proc().status();
    REQUIRE(st);
    REQUIRE(WIFEXITED(*st));
    CHECK(WEXITSTATUS(*st) == 75);
    CHECK(c.ps[i]->has_line("stopped"));
  }
  // Nodes that met the other cluster logged it as an error naming both
  // incarnations, on both sides (a member that learned the merge from its
  // own cluster's gossip first need not have met anyone).
  auto met = [&](const std::vector<size_t>& group) {
    return std::any_of(group.begin(), group.end(),
                       [&](size_t i) { return logged_meeting(*c.ps[i]); });
  };
  CHECK(met(small));
  CHECK(met(large));
  for (auto i : large)
    CHECK(c.ps[i]->proc().running());
  // Restarted by the supervisor (this test), every node as a seed: they
  // join the large cluster.
  std::string seeds;
  for (size_t i = 0; i < 5; ++i)
    seeds += (i ? "," : "") + c.endpoint(i);
  std::vector<std::unique_ptr<cluster_process>> old;
  for (auto i : small) {
    old.push_back(std::move(c.ps[i]));
    c.start(i, seeds, "node" + std::to_string(i + 1) + "-restarted");
  }
  {
    INFO(c.report());
    REQUIRE(eventually([&] { return c.group_up({0, 1, 2, 3, 4}); }, 30s));
  }
  // The large cluster's singleton took over only after the old instance
  // stopped and its lease was released (the store's journal), with a
  // greater token; nothing else ran.
  auto next = wait_for_successor(c.ps, c.journal, first, 20s);
  CHECK(next.node == c.ps[0]->addr());
  CHECK(next.token > first.token);
  check_oracle(c.journal, true);
  auto windows = instance_windows(read_journal(c.journal));
  CHECK(windows.size() == 2);
  CHECK(windows.front().stop_ns.has_value());
  check_graceful_stop(c.ps);
}
