#pragma once

#include <optional>
#include <string>

#include "troupe/runtime/clock.hpp"

/// @file
/// The demo launcher's command line: flags, their checks and defaults.

namespace troupe::demo {

/// What `troupe-demo` was asked to do.
struct options {
  /// Competing node processes (2..20).
  int nodes = 3;
  /// The lease's ttl (500ms..60s).
  runtime::timespan ttl = std::chrono::seconds{2};
  /// SIGKILLs of the holder; fewer than `nodes`.
  int kills = 2;
  /// After the kills, SIGSTOP the holder until another takes over.
  bool freeze = false;
  /// Print only the verdict.
  bool quiet = false;
  /// Working directory (ledger.txt, node-N.log, leases/, .demo.lock).
  std::string dir;
  /// Path of troupe-demo-node.
  std::string node_binary;
};

/// Parses the flags; nullopt after printing the help (`exit_code` 0) or a
/// usage error naming the flag (`exit_code` 2), e.g. `--nodes 2 leaves no
/// survivor for the default --kills 2; use --kills 1 or more nodes`.
std::optional<options> parse_flags(int argc, char** argv, int& exit_code);

/// Fills in the --node-binary default (next to troupe-demo) and the --dir
/// default (a fresh /tmp/troupe-demo-XXXXXX), creates --dir and checks
/// that the node binary is an executable regular file; false after
/// printing why not. Starts nothing.
bool complete(options& o);

} // namespace troupe::demo
