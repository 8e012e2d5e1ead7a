#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "troupe/runtime/clock.hpp"

/// @file
/// The demo launcher's command line: flags, their checks and defaults.

namespace troupe::demo {

/// Where the nodes' leases live (`--lease`).
enum class lease_kind { file, etcd, kubernetes };

/// What the scripted failure does to the singleton's host (`--failure`).
enum class failure_kind { kill, partition, none };

/// What `troupe-demo` was asked to do.
struct options {
  /// Cluster nodes (3..9: keep_majority needs a majority left after one
  /// node fails).
  int nodes = 3;
  /// How long the demo runs before the failure and again after the
  /// failover (3s..1h).
  runtime::timespan duration = std::chrono::seconds{10};
  lease_kind lease = lease_kind::file;
  /// `host:port` of the etcd for lease_kind::etcd.
  std::string etcd_endpoint;
  failure_kind failure = failure_kind::kill;
  /// Print only the verdict.
  bool quiet = false;
  /// Working directory (store files, node-N.log, client.log, leases/).
  std::string dir;
  /// Where troupe-demo-node, troupe-demo-store and troupe-k8s-emulator
  /// are (default: next to troupe-demo).
  std::string bin_dir;
};

/// "file", "etcd://HOST:PORT", "kubernetes".
std::string to_string(const options& o, lease_kind k);

/// "kill", "partition", "none".
std::string to_string(failure_kind k);

/// Parses the flags; nullopt after printing the help on `out`
/// (`exit_code` 0) or one line naming what was wrong on `err` (`exit_code`
/// 2), e.g. `troupe-demo: --lease: "zk" is not file, etcd://HOST:PORT or
/// kubernetes; see --help` (process/cli_error.hpp).
std::optional<options> parse_flags(int argc, const char* const* argv,
                                   int& exit_code, std::ostream& out,
                                   std::ostream& err);

/// Fills in the --bin-dir default (the directory of troupe-demo) and the
/// --dir default (a fresh /tmp/troupe-demo-XXXXXX), creates --dir and
/// checks that troupe-demo-node and troupe-demo-store (and, for
/// `--lease kubernetes`, troupe-k8s-emulator) are executable regular files
/// in --bin-dir; false after printing why not (`troupe-demo: --bin-dir
/// /x: troupe-demo-node: No such file or directory`). Starts nothing.
bool complete(options& o);

} // namespace troupe::demo
