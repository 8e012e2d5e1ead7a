#pragma once

// The pieces of the multi-process singleton tests (singleton_multiprocess_test,
// singleton_fault_test): waits on the shared journal with a deadline, the
// journal oracle's final checks, and three leased cluster_node processes.

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "cluster_process.hpp"
#include "singleton_journal.hpp"

namespace troupe::test {

/// Waits until `node` started its `n`-th instance; returns its window.
inline instance_window wait_for_instance(const cluster_processes& ps,
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
inline instance_window wait_for_successor(const cluster_processes& ps,
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

/// The checks every test ends with: I1 from the journal, and with a lease
/// strictly increasing tokens.
inline void check_oracle(const std::filesystem::path& journal, bool lease) {
  auto j = read_journal(journal);
  INFO("journal\n" << journal_text(journal));
  CHECK(overlap_violation(j) == "");
  if (lease)
    CHECK(token_violation(j) == "");
}

/// `n` (3) processes with the singleton and a file lease (ttl 3 s), all up.
struct leased_cluster {
  temp_dir dir;
  std::filesystem::path journal = dir.path / "journal";
  std::filesystem::path leases = dir.path / "leases";
  cluster_processes ps;

  explicit leased_cluster(size_t n = 3)
    : ps(loopback_processes(
      dir, n, with_file_lease(singleton_flags(journal), leases, "3s"))) {
    require_all_up(ps);
  }
};

} // namespace troupe::test
