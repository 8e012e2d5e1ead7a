#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "client/http_connection.hpp"
#include "troupe/test/child_process.hpp"
#include "troupe/test/eventually.hpp"

/// @file
/// Helpers of the demo's process tests: reading a child's output file,
/// waiting for a server's `listening on HOST:PORT` line, exit codes.

namespace troupe::demo::test_support {

/// The whole file ("" if missing).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in{p};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The lines of `text`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

/// Waits up to 10 s until `out` starts with a complete `listening on
/// HOST:PORT` line; its endpoint, or nullopt.
inline std::optional<client::endpoint>
wait_listening(const std::filesystem::path& out) {
  std::optional<client::endpoint> ep;
  constexpr std::string_view prefix = "listening on ";
  test::eventually([&] {
    auto text = slurp(out);
    auto nl = text.find('\n');
    if (nl == std::string::npos || !text.starts_with(prefix))
      return false;
    ep = client::parse_endpoint(
      std::string_view{text}.substr(prefix.size(), nl - prefix.size()));
    return true;
  });
  return ep;
}

/// The exit code of `c` (waits up to 20 s; it must exit, not die of a
/// signal).
inline int exit_code(test::child& c) {
  REQUIRE(c.reap(std::chrono::seconds{20}));
  REQUIRE(c.status());
  REQUIRE(WIFEXITED(*c.status()));
  return WEXITSTATUS(*c.status());
}

} // namespace troupe::demo::test_support
