// Multi-process tests of the cluster singleton on the real transport: three
// cluster_node processes on 127.0.0.1 run a singleton manager and proxy
// each (--singleton). The verdicts come from the shared journal the
// instances and the proxy client append to (singleton_journal.hpp), never
// from the nodes' own reports (DESIGN.md §10): no two instances' windows
// overlap (I1), with a lease the fencing tokens strictly increase, and the
// proxy's buffered messages arrive at the next instance. Real time with
// DESIGN.md §10's shortened settings; every wait polls with a deadline.

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <map>

#include "cluster_process.hpp"
#include "singleton_processes.hpp"

using namespace troupe::test;

namespace {

/// Waits until the instance `w` received at least `n` client messages.
void wait_for_receipts(const std::filesystem::path& journal,
                       const instance_window& w, size_t n) {
  auto count = [&] {
    size_t k = 0;
    for (auto& e : entries(read_journal(journal), "recv"))
      k += e.node == w.node && e.incarnation == w.incarnation ? 1 : 0;
    return k;
  };
  auto ok = eventually([&] { return count() >= n; }, 15s);
  INFO("journal\n" << journal_text(journal));
  REQUIRE(ok);
}

/// Stops the proxy clients of nodes 2 and 3 (their second SIGUSR2), waits
/// until the journal shows both last messages and every message the client
/// on `remote` sent to `next` or buffered after `old` stopped arrived (or
/// 10 s passed), and judges the clients on `remote` and `local`.
std::pair<delivery_report, delivery_report>
stop_clients(cluster_processes& ps, const std::filesystem::path& journal,
             const std::string& remote, const std::string& local,
             const instance_window& old, const instance_window& next) {
  ps[1]->proc().signal(SIGUSR2);
  ps[2]->proc().signal(SIGUSR2);
  auto done = eventually(
    [&] { return entries(read_journal(journal), "client_done").size() == 2; },
    10s);
  REQUIRE(done);
  auto complete = [](const delivery_report& r) {
    return r.buffered_arrived_after_start == r.buffered
           && r.to_next_arrived == r.to_next;
  };
  std::pair<delivery_report, delivery_report> r;
  eventually(
    [&] {
      auto j = read_journal(journal);
      r = {judge_delivery(j, remote, old, next),
           judge_delivery(j, local, old, next)};
      return complete(r.first) && complete(r.second);
    },
    10s);
  return r;
}

/// What one fault did: node 1's instance, its successor, the time of the
/// fault (CLOCK_MONOTONIC ns) and what became of the messages of the proxy
/// client on the node that does not host the successor (`delivery`) and on
/// the one that does (`local_delivery`).
struct fault_outcome {
  instance_window first;
  instance_window next;
  uint64_t fault_ns = 0;
  delivery_report delivery;
  delivery_report local_delivery;
};

/// The scenario of both fault tests: the instance starts on node 1 (the
/// seed, the oldest), the proxy clients of nodes 2 and 3 start and 20 of
/// their messages arrive, then `signal` goes to node 1 (and `after_fault`
/// runs); waits for the successor (node 2 or 3, whichever became up first)
/// and until both clients sent it 10 messages, stops the clients and judges
/// their messages.
template <class AfterFault = void (*)()>
fault_outcome fault_with_client(
  cluster_processes& ps, const std::filesystem::path& journal, int signal,
  AfterFault after_fault = [] {}) {
  fault_outcome o;
  o.first = wait_for_instance(ps, journal, ps[0]->addr(), 1, 20s);
  ps[1]->proc().signal(SIGUSR2); // the clients start
  ps[2]->proc().signal(SIGUSR2);
  wait_for_receipts(journal, o.first, 20);
  o.fault_ns = monotonic_ns();
  ps[0]->proc().signal(signal);
  after_fault();
  o.next = wait_for_successor(ps, journal, o.first, 30s);
  // Both proxies know the successor and each client sent it 10 messages.
  auto sent_to_next = [&] {
    std::map<std::string, size_t> per_client;
    for (auto& e : entries(read_journal(journal), "send"))
      per_client[e.node] += e.target == o.next.node ? 1 : 0;
    return per_client[ps[1]->addr()] >= 10 && per_client[ps[2]->addr()] >= 10;
  };
  auto known = eventually(sent_to_next, 15s);
  INFO("journal\n" << journal_text(journal));
  REQUIRE(known);
  auto local = o.next.node;
  auto remote = ps[1]->addr() == local ? ps[2]->addr() : ps[1]->addr();
  std::tie(o.delivery, o.local_delivery)
    = stop_clients(ps, journal, remote, local, o.first, o.next);
  return o;
}

/// The proxy's promises (Akka's): what it buffered after the old instance
/// was gone arrived at the next, after its start; what it sent to the next
/// arrived; nothing twice, nothing out of order. With `must_buffer`, the
/// remote proxy must have buffered: after a crash it does for seconds; in
/// a graceful hand-over the gap between the old instance's stop and the new
/// one's start is about a millisecond, and a proxy that asks while the new
/// one already runs may never be seen without a target at the client's
/// 10 ms pace.
void check_delivery(const fault_outcome& o, bool must_buffer) {
  for (auto* r : {&o.delivery, &o.local_delivery}) {
    INFO("delivery (" << (r == &o.delivery ? "remote" : "local")
                      << " proxy): " << to_string(*r));
    CHECK(r->buffered_arrived_after_start == r->buffered);
    CHECK(r->to_next_arrived == r->to_next);
    CHECK(r->duplicates == 0);
    CHECK(r->reordered == 0);
  }
  if (must_buffer)
    CHECK(o.delivery.buffered > 0);
}

} // namespace

TEST_CASE("singleton, 3 processes on loopback: graceful leave of the oldest "
          "hands over to the next oldest, never two at once, and the proxies "
          "deliver what they buffered") {
  temp_dir dir;
  auto journal = dir.path / "journal";
  auto ps = loopback_processes(dir, 3, singleton_flags(journal));
  require_all_up(ps);
  auto o = fault_with_client(ps, journal, SIGUSR1);
  auto& next = o.next;
  // Node 1 stops by itself once removed.
  CHECK(ps[0]->proc().reap(20s));
  auto j = read_journal(journal);
  auto old = instances_on(j, ps[0]->addr());
  INFO(outputs(ps) << "---- journal\n" << journal_text(journal));
  REQUIRE(old.size() == 1);
  REQUIRE(old[0].stop_ns);
  CHECK(*old[0].stop_ns < next.first_ns);
  // One each on node 1 and its successor.
  CHECK(instance_windows(j).size() == 2);
  WARN("leave to start " << seconds_between(o.fault_ns, next.first_ns)
                         << " s, stop to start "
                         << seconds_between(*old[0].stop_ns, next.first_ns)
                         << " s; delivery: remote proxy "
                         << to_string(o.delivery) << "; local proxy "
                         << to_string(o.local_delivery));
  CHECK(o.delivery.to_next > 0);
  check_delivery(o, false);
  check_oracle(journal, false);
  ps.erase(ps.begin()); // node 1 is gone
  check_graceful_stop(ps);
}

TEST_CASE("singleton with a file lease, 3 processes on loopback: after kill "
          "-9 of the oldest the next oldest runs the singleton (detection, "
          "downing, lease ttl) with a greater token, and the proxies "
          "deliver what they buffered") {
  leased_cluster c;
  auto& [dir, journal, leases, ps] = c;
  uint64_t expiry_ns = 0; // node 1's lease record's, read right after the kill
  auto o = fault_with_client(ps, journal, SIGKILL,
                             [&] { expiry_ns = lease_expiry_ns(leases); });
  auto& [first, next, kill_ns, remote, local] = o;
  CHECK(first.token > 0);
  REQUIRE(expiry_ns > 0);
  auto j = read_journal(journal);
  auto old = instances_on(j, ps[0]->addr());
  INFO(outputs(ps) << "---- journal\n" << journal_text(journal));
  REQUIRE(old.size() == 1);
  CHECK(!old[0].stop_ns); // killed: no stop line
  CHECK(old[0].last_ns < next.first_ns);
  CHECK(next.token > first.token);
  // Not before node 1's lease record expired (nothing renews it after the
  // kill; the successor's acquire, after node 1 was downed and removed, is
  // refused until then), nor before node 1 could have been downed
  // (detection about 1.6 s plus stable_after 2 s).
  CHECK(next.first_ns >= expiry_ns);
  auto failover = seconds_between(kill_ns, next.first_ns);
  WARN("kill to start " << failover << " s, lease expiry "
                        << seconds_between(kill_ns, expiry_ns)
                        << " s after the kill; delivery: remote proxy "
                        << to_string(remote) << "; local proxy "
                        << to_string(local));
  CHECK(failover > 3.0);
  check_delivery(o, true);
  check_oracle(journal, true);
  ps.erase(ps.begin()); // node 1 is gone
  check_graceful_stop(ps);
}

TEST_CASE("singleton with a file lease, 3 processes on loopback: the lease "
          "record deleted in the backend stops the instance within the local "
          "deadline, and it comes back on the same node with a greater token") {
  leased_cluster c;
  auto& [dir, journal, leases, ps] = c;
  // Twice: a backend that restarted its token counter with the record would
  // hand out the same token again the second time.
  for (size_t round = 1; round <= 2; ++round) {
    auto before = wait_for_instance(ps, journal, ps[0]->addr(), round, 20s);
    // Some effects first, then the record file goes.
    auto effects = eventually(
      [&] {
        return instances_on(read_journal(journal), ps[0]->addr())[round - 1]
                 .effects
               >= 5;
      },
      5s);
    REQUIRE(effects);
    auto delete_ns = monotonic_ns();
    size_t removed = 0;
    // The record files only: the backend's token counters (.tokens/) stay,
    // as an operator deleting a record by hand leaves them.
    for (auto& f : std::filesystem::directory_iterator{leases})
      if (f.is_regular_file())
        removed += std::filesystem::remove(f.path()) ? 1 : 0;
    REQUIRE(removed >= 1);
    auto again = wait_for_instance(ps, journal, ps[0]->addr(), round + 1, 20s);
    auto old = instances_on(read_journal(journal), ps[0]->addr())[round - 1];
    INFO(outputs(ps) << "---- journal\n" << journal_text(journal));
    REQUIRE(old.stop_ns);
    // The loss shows at the next renewal (1 s), at the latest at the local
    // deadline (ttl 3 s after the last renewal): within the ttl of the
    // deletion, plus slack for a loaded machine.
    auto stopped_after = seconds_between(delete_ns, *old.stop_ns);
    WARN("round " << round << ": deletion to stop " << stopped_after
                  << " s, to the restart "
                  << seconds_between(delete_ns, again.first_ns) << " s; tokens "
                  << before.token << " -> " << again.token);
    CHECK(stopped_after < 4.0);
    CHECK(again.token > before.token);
  }
  check_oracle(journal, true);
  check_graceful_stop(ps);
}

TEST_CASE("singleton with a file lease, 3 processes on loopback: a node of a "
          "higher cluster.app_version that joins takes the instance over by a "
          "graceful hand-over, with no node leaving") {
  temp_dir dir;
  auto journal = dir.path / "journal";
  auto leases = dir.path / "leases";
  auto flags = [&](const std::string& version) {
    auto f = with_file_lease(singleton_flags(journal), leases, "3s");
    f.push_back("--cluster.app_version=" + version);
    return f;
  };
  auto ps = loopback_processes(dir, 2, flags("1.0"));
  require_all_up(ps);
  auto first = wait_for_instance(ps, journal, ps[0]->addr(), 1, 20s);
  // The rolling update's first new node: version 1.1 joins through node 1.
  auto& seed = ps[0]->addr(); // host:port#uid
  auto node_flags = cluster_node_flags("127.0.0.1", free_ports(1)[0],
                                       seed.substr(0, seed.find('#')));
  auto more = flags("1.1");
  node_flags.insert(node_flags.end(), more.begin(), more.end());
  ps.push_back(
    std::make_unique<cluster_process>(dir, "node3", std::move(node_flags)));
  require_all_up(ps);
  auto next = wait_for_successor(ps, journal, first, 30s);
  INFO(outputs(ps) << "---- journal\n" << journal_text(journal));
  CHECK(next.node == ps[2]->addr());
  // A graceful hand-over: the old instance stopped before the new one
  // started, under a greater fencing token; nobody left or was downed.
  auto old = instances_on(read_journal(journal), ps[0]->addr());
  REQUIRE(old.size() == 1);
  REQUIRE(old[0].stop_ns);
  CHECK(*old[0].stop_ns < next.first_ns);
  check_oracle(journal, true);
  check_nobody_downed(ps);
  CHECK(instance_windows(read_journal(journal)).size() == 2);
  check_graceful_stop(ps);
}
