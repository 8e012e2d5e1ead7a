// Adversarial faults on the cluster singleton with real processes: three
// cluster_node processes on 127.0.0.1 with --singleton and a file lease
// (ttl 3 s), as in singleton_multiprocess_test. Verdicts come from the shared
// journal (singleton_journal.hpp), never from the nodes' own reports
// (DESIGN.md §10): no effect of an instance after its lease's deadline, no two
// instances' effect windows overlapping, fencing tokens strictly increasing.
// Real time with short settings; every wait polls with a deadline.

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>

#include "singleton_processes.hpp"

using namespace troupe::test;

namespace {

/// Waits until node `i`'s instance `n` wrote at least `k` effects.
void wait_for_effects(const leased_cluster& c, size_t i, size_t n, size_t k) {
  auto ok = eventually(
    [&] {
      auto ws = instances_on(read_journal(c.journal), c.ps[i]->addr());
      return ws.size() >= n && ws[n - 1].effects >= k;
    },
    20s);
  INFO(outputs(c.ps) << "---- journal\n" << journal_text(c.journal));
  REQUIRE(ok);
}

/// Waits until the journal shows a stop line of node `i`'s instance `n`.
void wait_for_stop(const leased_cluster& c, size_t i, size_t n,
                   std::chrono::milliseconds bound) {
  auto ok = eventually(
    [&] {
      auto ws = instances_on(read_journal(c.journal), c.ps[i]->addr());
      return ws.size() >= n && ws[n - 1].stop_ns.has_value();
    },
    bound);
  INFO(outputs(c.ps) << "---- journal\n" << journal_text(c.journal));
  REQUIRE(ok);
}

/// Waits until an instance started on a node other than those in `not_on`.
instance_window wait_for_instance_elsewhere(const leased_cluster& c,
                                            std::vector<std::string> not_on,
                                            std::chrono::milliseconds bound) {
  auto find = [&]() -> std::optional<instance_window> {
    for (auto& w : instance_windows(read_journal(c.journal)))
      if (std::find(not_on.begin(), not_on.end(), w.node) == not_on.end())
        return w;
    return std::nullopt;
  };
  auto ok = eventually([&] { return find().has_value(); }, bound);
  INFO(outputs(c.ps) << "---- journal\n" << journal_text(c.journal));
  REQUIRE(ok);
  return *find();
}

/// The effect oracle: effect windows disjoint, tokens increasing.
void check_effects(const leased_cluster& c) {
  auto j = read_journal(c.journal);
  INFO("journal\n" << journal_text(c.journal));
  CHECK(effect_overlap_violation(j) == "");
  CHECK(token_violation(j) == "");
}

} // namespace

TEST_CASE("singleton fault: the oldest frozen (SIGSTOP) longer than the lease "
          "ttl writes no effect after its lease's deadline once it resumes, "
          "and no two effect windows overlap") {
  leased_cluster c;
  wait_for_effects(c, 0, 1, 5);
  c.ps[0]->proc().signal(SIGSTOP);
  // The record as node 1 last renewed it: nothing renews it any more.
  auto expiry_ns = lease_expiry_ns(c.leases);
  REQUIRE(expiry_ns > 0);
  // Downed by the majority (detection about 1.6 s, stable_after 2 s); the
  // successor acquires once the record expired.
  auto next = wait_for_instance_elsewhere(c, {c.ps[0]->addr()}, 30s);
  auto cont_ns = monotonic_ns();
  c.ps[0]->proc().signal(SIGCONT);
  CHECK(next.first_ns >= expiry_ns);
  // Node 1 resumes: its effect timer fires at once, its lease's deadline
  // passed long ago; it learns it was downed and stops its instance.
  wait_for_stop(c, 0, 1, 20s);
  auto j = read_journal(c.journal);
  auto frozen = instances_on(j, c.ps[0]->addr()).at(0);
  INFO(outputs(c.ps) << "---- journal\n" << journal_text(c.journal));
  uint64_t late = 0;
  for (auto& e : entries(j, "effect"))
    if (e.node == frozen.node && e.incarnation == frozen.incarnation
        && e.ns >= expiry_ns)
      ++late;
  CHECK(late == 0);
  CHECK(*frozen.stop_ns > cont_ns);
  CHECK(instances_on(j, c.ps[0]->addr()).size() == 1);
  check_effects(c);
}

TEST_CASE("singleton fault: the new oldest killed (kill -9) during the "
          "hand-over of a graceful leave: a remaining node runs the "
          "singleton, the leaving node still leaves, no overlap") {
  // Four nodes: with three, the survivor faces the crashed one alone (the
  // resolver ignores the exiting member), keep_majority's tie-break may
  // down it, and rightly nobody runs the singleton.
  leased_cluster c{4};
  wait_for_effects(c, 0, 1, 5);
  c.ps[0]->proc().signal(SIGUSR1);
  // The hand-over is under way once node 1 logged whom it hands over to
  // (the successor asked): that node is killed at once.
  std::string successor;
  auto asked = eventually(
    [&] {
      auto out = c.ps[0]->output();
      auto at = out.find("handing over to ");
      if (at == std::string::npos)
        return false;
      auto from = at + std::string_view{"handing over to "}.size();
      successor = out.substr(from, out.find('\n', from) - from);
      return true;
    },
    20s);
  INFO(outputs(c.ps));
  REQUIRE(asked);
  size_t victim = 1;
  while (victim < c.ps.size() && c.ps[victim]->addr() != successor)
    ++victim;
  REQUIRE(victim < c.ps.size());
  c.ps[victim]->proc().signal(SIGKILL);
  auto last = wait_for_instance_elsewhere(
    c, {c.ps[0]->addr(), c.ps[victim]->addr()}, 45s);
  CHECK(last.token > 1);
  // Node 1 left (its exit was not held forever).
  CHECK(c.ps[0]->proc().reap(30s));
  check_effects(c);
  check_oracle(c.journal, true);
}

TEST_CASE("singleton fault: scenario S1 with processes: the two oldest leave "
          "at the same moment, the third runs the singleton, no overlap") {
  leased_cluster c;
  wait_for_effects(c, 0, 1, 5);
  c.ps[0]->proc().signal(SIGUSR1);
  c.ps[1]->proc().signal(SIGUSR1);
  auto next
    = wait_for_instance_elsewhere(c, {c.ps[0]->addr(), c.ps[1]->addr()}, 45s);
  CHECK(next.node == c.ps[2]->addr());
  CHECK(c.ps[0]->proc().reap(30s));
  CHECK(c.ps[1]->proc().reap(30s));
  check_effects(c);
  check_oracle(c.journal, true);
}

TEST_CASE("singleton fault: the lease record deleted at the moment of a "
          "hand-over: the successor runs the singleton (again, after the "
          "loss, if it had already acquired) with greater tokens, no "
          "overlap") {
  leased_cluster c;
  wait_for_effects(c, 0, 1, 5);
  c.ps[0]->proc().signal(SIGUSR1);
  // Delete as soon as the instance on node 1 was asked to stop (its stop
  // line): node 1 is releasing, the successor is about to acquire.
  wait_for_stop(c, 0, 1, 20s);
  for (auto& f : std::filesystem::directory_iterator{c.leases})
    if (f.is_regular_file())
      std::filesystem::remove(f.path());
  auto next = wait_for_instance_elsewhere(c, {c.ps[0]->addr()}, 30s);
  CHECK(next.token
        > instances_on(read_journal(c.journal), c.ps[0]->addr()).at(0).token);
  CHECK(c.ps[0]->proc().reap(30s));
  // The successor keeps running (a loss of the deleted record restarts
  // its instance once, with a new acquisition).
  auto ok = eventually(
    [&] {
      size_t effects = 0;
      for (auto& w : instances_on(read_journal(c.journal), next.node))
        effects += w.effects;
      return effects >= 40;
    },
    20s);
  INFO(outputs(c.ps) << "---- journal\n" << journal_text(c.journal));
  REQUIRE(ok);
  check_effects(c);
  check_oracle(c.journal, true);
}

TEST_CASE("singleton fault: the oldest killed and restarted at once on the "
          "same port with its old flags (a new incarnation): one instance at "
          "a time, tokens increase, and a singleton runs") {
  leased_cluster c;
  wait_for_effects(c, 0, 1, 5);
  auto old = c.ps[0]->addr();
  auto port = old.substr(old.find(':') + 1, old.find('#') - old.find(':') - 1);
  c.ps[0]->proc().signal(SIGKILL);
  REQUIRE(c.ps[0]->proc().reap(10s));
  // The same flags as before: the node is its own first seed, so it may
  // form a new cluster of its own before the others answer; the lease keeps
  // the two clusters' singletons apart.
  auto flags = cluster_node_flags(
    "127.0.0.1", static_cast<uint16_t>(std::stoi(port)), "127.0.0.1:" + port);
  for (auto& f : with_file_lease(singleton_flags(c.journal), c.leases, "3s"))
    flags.push_back(f);
  c.ps.push_back(
    std::make_unique<cluster_process>(c.dir, "node1b", std::move(flags)));
  c.ps.back()->wait_ready();
  REQUIRE(c.ps.back()->addr() != old);
  auto ok = eventually(
    [&] {
      for (auto& w : instance_windows(read_journal(c.journal)))
        if (w.node != old && w.effects >= 20)
          return true;
      return false;
    },
    45s);
  INFO(outputs(c.ps) << "---- journal\n" << journal_text(c.journal));
  CHECK(ok);
  check_effects(c);
}
