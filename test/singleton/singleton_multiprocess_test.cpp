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

#include "cluster_process.hpp"
#include "singleton_journal.hpp"

using namespace troupe::test;

namespace {

std::string journal_text(const std::filesystem::path& p) {
  std::ifstream in{p};
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

/// Waits until `node` started its `n`-th instance; returns its window.
instance_window wait_for_instance(const cluster_processes& ps,
                                  const std::filesystem::path& journal,
                                  const std::string& node, size_t n,
                                  std::chrono::milliseconds bound) {
  auto ok = eventually(
    [&] { return instances_on(read_journal(journal), node).size() >= n; },
    bound);
  INFO(outputs(ps) << "---- journal\n" << journal_text(journal));
  REQUIRE(ok);
  return instances_on(read_journal(journal), node)[n - 1];
}

/// Waits until an instance started on a node other than `old`'s (the next
/// oldest: node 2 or node 3, whichever became up first); returns it.
instance_window wait_for_successor(const cluster_processes& ps,
                                   const std::filesystem::path& journal,
                                   const instance_window& old,
                                   std::chrono::milliseconds bound) {
  auto successor = [&]() -> std::optional<instance_window> {
    for (auto& w : instance_windows(read_journal(journal)))
      if (w.node != old.node)
        return w;
    return std::nullopt;
  };
  auto ok = eventually([&] { return successor().has_value(); }, bound);
  INFO(outputs(ps) << "---- journal\n" << journal_text(journal));
  REQUIRE(ok);
  return *successor();
}

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

/// Stops the proxy client on `p` (its second SIGUSR2) and waits until the
/// journal shows its last message and every message it sent to `next` or
/// buffered after `old` stopped arrived (or 10 s passed).
delivery_report stop_client(cluster_process& p,
                            const std::filesystem::path& journal,
                            const instance_window& old,
                            const instance_window& next) {
  p.proc().signal(SIGUSR2);
  auto done = eventually(
    [&] { return !entries(read_journal(journal), "client_done").empty(); },
    10s);
  REQUIRE(done);
  delivery_report r;
  eventually(
    [&] {
      r = judge_delivery(read_journal(journal), old, next);
      return r.buffered_arrived_after_start == r.buffered
             && r.to_next_arrived == r.to_next;
    },
    10s);
  return r;
}

/// The checks every test ends with: I1 from the journal, and with a lease
/// strictly increasing tokens.
void check_oracle(const std::filesystem::path& journal, bool lease) {
  auto j = read_journal(journal);
  INFO("journal\n" << journal_text(journal));
  CHECK(overlap_violation(j) == "");
  if (lease)
    CHECK(token_violation(j) == "");
}

double seconds_between(uint64_t from_ns, uint64_t to_ns) {
  return static_cast<double>(static_cast<int64_t>(to_ns - from_ns)) / 1e9;
}

} // namespace

TEST_CASE("singleton, 3 processes on loopback: graceful leave of the oldest "
          "hands over to the next oldest, never two at once, and the proxy "
          "on node 3 delivers what it buffered") {
  temp_dir dir;
  auto journal = dir.path / "journal";
  auto ps = loopback_processes(dir, 3, singleton_flags(journal));
  require_all_up(ps);
  auto first = wait_for_instance(ps, journal, ps[0]->addr(), 1, 20s);
  ps[2]->proc().signal(SIGUSR2); // the client starts
  wait_for_receipts(journal, first, 20);
  auto leave_ns = monotonic_ns();
  ps[0]->proc().signal(SIGUSR1); // node 1 leaves
  auto next = wait_for_successor(ps, journal, first, 20s);
  wait_for_receipts(journal, next, 30);
  auto r = stop_client(*ps[2], journal, first, next);
  // Node 1 stops by itself once removed.
  CHECK(ps[0]->proc().reap(20s));
  auto j = read_journal(journal);
  auto old = instances_on(j, ps[0]->addr());
  INFO(outputs(ps) << "---- journal\n" << journal_text(journal));
  INFO("delivery: " << to_string(r));
  REQUIRE(old.size() == 1);
  REQUIRE(old[0].stop_ns);
  CHECK(*old[0].stop_ns < next.first_ns);
  CHECK(instance_windows(j).size()
        == 2); // one each on node 1 and its successor
  WARN("leave to start " << seconds_between(leave_ns, next.first_ns)
                         << " s, stop to start "
                         << seconds_between(*old[0].stop_ns, next.first_ns)
                         << " s; delivery: " << to_string(r));
  CHECK(r.buffered > 0);
  CHECK(r.buffered_arrived_after_start == r.buffered);
  CHECK(r.to_next > 0);
  CHECK(r.to_next_arrived == r.to_next);
  CHECK(r.duplicates == 0);
  CHECK(r.reordered == 0);
  check_oracle(journal, false);
  ps.erase(ps.begin()); // node 1 is gone
  check_graceful_stop(ps);
}

TEST_CASE("singleton with a file lease, 3 processes on loopback: after kill "
          "-9 of the oldest the next oldest runs the singleton (detection, "
          "downing, lease ttl) with a greater token, and the proxy on node 3 "
          "delivers what it buffered") {
  temp_dir dir;
  auto journal = dir.path / "journal";
  auto leases = dir.path / "leases";
  auto ps = loopback_processes(
    dir, 3, with_file_lease(singleton_flags(journal), leases, "3s"));
  require_all_up(ps);
  auto first = wait_for_instance(ps, journal, ps[0]->addr(), 1, 20s);
  CHECK(first.token > 0);
  ps[2]->proc().signal(SIGUSR2);
  wait_for_receipts(journal, first, 20);
  auto kill_ns = monotonic_ns();
  ps[0]->proc().signal(SIGKILL);
  auto next = wait_for_successor(ps, journal, first, 30s);
  wait_for_receipts(journal, next, 30);
  auto r = stop_client(*ps[2], journal, first, next);
  auto j = read_journal(journal);
  auto old = instances_on(j, ps[0]->addr());
  INFO(outputs(ps) << "---- journal\n" << journal_text(journal));
  INFO("delivery: " << to_string(r));
  REQUIRE(old.size() == 1);
  CHECK(!old[0].stop_ns); // killed: no stop line
  CHECK(old[0].last_ns < next.first_ns);
  CHECK(next.token > first.token);
  // Not before the lease expired: the contender waits a whole ttl (3 s)
  // without a change of the record, and nothing changes it after the kill.
  auto failover = seconds_between(kill_ns, next.first_ns);
  WARN("kill to start " << failover << " s; delivery: " << to_string(r));
  CHECK(failover > 2.0);
  CHECK(r.buffered > 0);
  CHECK(r.buffered_arrived_after_start == r.buffered);
  CHECK(r.to_next_arrived == r.to_next);
  CHECK(r.duplicates == 0);
  CHECK(r.reordered == 0);
  check_oracle(journal, true);
  ps.erase(ps.begin()); // node 1 is gone
  check_graceful_stop(ps);
}

TEST_CASE("singleton with a file lease, 3 processes on loopback: the lease "
          "record deleted in the backend stops the instance within the local "
          "deadline, and it comes back on the same node with a greater token") {
  temp_dir dir;
  auto journal = dir.path / "journal";
  auto leases = dir.path / "leases";
  auto ps = loopback_processes(
    dir, 3, with_file_lease(singleton_flags(journal), leases, "3s"));
  require_all_up(ps);
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
    for (auto& f : std::filesystem::directory_iterator{leases})
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
