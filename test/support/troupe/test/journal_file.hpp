#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

/// @file
/// The pieces every multi-process oracle shares (DESIGN.md §10 "Demo and
/// chaos oracles"): the clock its journals are stamped with, and reading a
/// journal that other processes are still appending to. Free of any test
/// framework.

namespace troupe::test {

/// CLOCK_MONOTONIC now, in nanoseconds: the clock of the journals (one
/// clock for every process of the host).
inline uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u
         + static_cast<uint64_t>(ts.tv_nsec);
}

/// The whole text of `p` (empty if it does not exist).
inline std::string journal_text(const std::filesystem::path& p) {
  std::ifstream in{p};
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

/// The complete lines of `p` (a line still being written is left out).
inline std::vector<std::string> journal_lines(const std::filesystem::path& p) {
  auto text = journal_text(p);
  std::vector<std::string> result;
  size_t start = 0;
  for (auto end = text.find('\n'); end != std::string::npos;
       start = end + 1, end = text.find('\n', start))
    result.push_back(text.substr(start, end - start));
  return result;
}

/// Seconds from `from_ns` to `to_ns` (negative if `to_ns` is earlier).
inline double seconds_between(uint64_t from_ns, uint64_t to_ns) {
  return static_cast<double>(static_cast<int64_t>(to_ns - from_ns)) / 1e9;
}

} // namespace troupe::test
