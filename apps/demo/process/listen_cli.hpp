#pragma once

#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "process/cli_error.hpp"

/// @file
/// The command line of the demo's helper servers (troupe-demo-store,
/// troupe-k8s-emulator): `--bind` and `--port` flags, parsing (errors in
/// cli_error.hpp's one style) and the `listening on HOST:PORT` line a
/// launcher reads.

namespace troupe::demo::process {

/// Where a server listens.
struct listen_flags {
  std::string bind = "127.0.0.1";
  /// 0: a free port, chosen at bind time.
  int port = 0;
};

/// Adds `--bind` and `--port` (0 to 65535) to `app`, defaulting to `f`'s
/// values.
inline void add_listen_flags(CLI::App& app, listen_flags& f) {
  app.add_option("--bind", f.bind, "Address to listen on")
    ->capture_default_str();
  app.add_option("--port", f.port, "Port to listen on (0: a free one)")
    ->check(whole_number_in(0, 65535))
    ->capture_default_str();
}

/// Parses the command line. Nullopt when the program should go on;
/// otherwise its exit code: 0 after `--help` (usage on stdout), 2 after an
/// error (`PROGRAM: what was wrong; see --help` on stderr: cli_error.hpp).
inline std::optional<int> parse_cli(CLI::App& app, int argc, char** argv,
                                    std::string_view program) {
  return parse_cli(app, argc, argv, program, std::cout, std::cerr);
}

/// `listening on HOST:PORT`, an IPv6 host in brackets (the launcher's
/// parse_endpoint reads it back).
inline std::string listening_line(const std::string& bind, uint16_t port) {
  if (bind.find(':') == std::string::npos)
    return fmt::format("listening on {}:{}", bind, port);
  return fmt::format("listening on [{}]:{}", bind, port);
}

} // namespace troupe::demo::process
